// Finding the real BLAS. With TILEDMM_BLAS_FALLBACK set, only that library (a path
// or a name dlopen understands) is tried. Otherwise, in order:
//   1. the next sgemm_ after this library in the process's lookup order
//      (dlsym(RTLD_NEXT)): the BLAS the program itself linked, when the library is
//      preloaded in front of it;
//   2. libblas.so.3, the system BLAS (Debian's alternatives: reference or OpenBLAS);
//   3. libopenblas.so.0.
// A candidate whose sgemm_ lies in this library, or in another copy of it, is
// refused: the fallback must never call back into tiledmm.
//
// The other routines (dgemm_, cblas_sgemm and cblas_dgemm for CBLAS calls, the ILP64
// names) come from the library that provides sgemm_, so that one BLAS answers for
// everything, in both precisions. The wheels' prefixed names are found apart
// (wheel_fallback): each the next definition of its own name.
#include "support/fallback.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "support/config.hpp"
#include "support/log.hpp"
#include "support/once.hpp"
#include "support/wheel_names.hpp"

namespace tiledmm::blas {
namespace {

// Any function of this library, to learn where it is loaded.
void anchor() {}

const void* own_base() {
  static const void* base = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&anchor), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  return base;
}

template <class Fn>
Fn as_function(void* symbol) {
  return reinterpret_cast<Fn>(symbol);
}

// A handle on the library that contains `address` (already loaded: RTLD_NOLOAD).
void* handle_of(const void* address, std::string& path) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  // The file itself, not the alternatives' link to it (for the log and describe).
  char resolved[PATH_MAX];
  path = realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
  return dlopen(info.dli_fname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
}

// `name` from the library `lib` as a function of type Fn, unless it is missing or
// this library's (or a copy's): then nullptr.
template <class Fn>
Fn routine_of(void* lib, const char* name) {
  void* sym = lib != nullptr ? dlsym(lib, name) : nullptr;
  return sym != nullptr && !is_tiledmm_blas(sym) ? as_function<Fn>(sym) : nullptr;
}

// Takes sgemm_ from `handle` (or from `direct`, found by RTLD_NEXT) into `out`,
// unless it is this library; notes a refusal. The other routines from its library.
bool adopt(void* handle, void* direct, const std::string& name, Fallback& out) {
  void* sym = direct != nullptr ? direct : (handle ? dlsym(handle, "sgemm_") : nullptr);
  if (sym == nullptr) return false;
  if (is_tiledmm_blas(sym)) {
    out.refused +=
        (out.refused.empty() ? "" : "; ") + name + " (it is libtiledmm_blas itself, or a copy)";
    return false;
  }
  std::string path = name;
  void* lib = handle_of(sym, path);
  out.sgemm = as_function<FortranSgemm<int>>(sym);
  out.path = path;
  out.cblas_sgemm = routine_of<CblasSgemm<int>>(lib, "cblas_sgemm");
  out.dgemm = routine_of<FortranDgemm<int>>(lib, "dgemm_");
  out.cblas_dgemm = routine_of<CblasDgemm<int>>(lib, "cblas_dgemm");
  return true;
}

Fallback* find_fallback() {
  auto* f = new Fallback;
  const Config& cfg = config();
  if (!cfg.fallback.empty()) {
    void* h = dlopen(cfg.fallback.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* why = dlerror();
      f->refused = cfg.fallback + " (" + (why ? why : "cannot be loaded") + ")";
    } else if (!adopt(h, nullptr, cfg.fallback, *f) && f->refused.empty()) {
      f->refused = cfg.fallback + " (no sgemm_ in it)";
    }
  } else {
    bool found = adopt(nullptr, dlsym(RTLD_NEXT, "sgemm_"), "the next sgemm_ (RTLD_NEXT)", *f);
    for (const char* name : {"libblas.so.3", "libopenblas.so.0"}) {
      if (found) break;
      void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      found = h != nullptr && adopt(h, nullptr, name, *f);
    }
  }
  if (f->sgemm == nullptr) {
    std::string text = "no fallback BLAS";
    if (!f->refused.empty()) text += " (refused: " + f->refused + ")";
    text += ": every call goes to tiledmm, whatever its size";
    Log::note(text.c_str());
  } else {
    Log::line("note: fallback BLAS %s%s%s", f->path.c_str(), f->refused.empty() ? "" : "; refused ",
              f->refused.c_str());
  }
  return f;
}

Fallback64* find_fallback64() {
  auto* f = new Fallback64;
  const Fallback& lp64 = fallback();
  // OpenBLAS's suffixed ILP64 names, in the same library as the LP64 ones.
  if (!lp64.path.empty()) {
    if (void* h = dlopen(lp64.path.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD)) {
      f->sgemm = routine_of<FortranSgemm<int64_t>>(h, "sgemm_64_");
      if (f->sgemm != nullptr) {
        f->path = lp64.path;
        f->cblas_sgemm = routine_of<CblasSgemm<int64_t>>(h, "cblas_sgemm64_");
        f->dgemm = routine_of<FortranDgemm<int64_t>>(h, "dgemm_64_");
        f->cblas_dgemm = routine_of<CblasDgemm<int64_t>>(h, "cblas_dgemm64_");
      }
    }
  }
  // An ILP64 library with the plain names (Debian's libblas64.so.3). Its own
  // cblas_sgemm and cblas_dgemm are not used: they call sgemm_ and dgemm_ through the
  // PLT, which are this library's LP64 entry points.
  const std::string& name = config().fallback64;
  if (f->sgemm == nullptr && !name.empty()) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      void* s = dlsym(h, "sgemm_64_");
      const bool suffixed = s != nullptr;
      if (s == nullptr) s = dlsym(h, "sgemm_");
      if (s != nullptr && !is_tiledmm_blas(s)) {
        std::string path;
        if (void* lib = handle_of(s, path)) {
          f->sgemm = as_function<FortranSgemm<int64_t>>(s);
          f->dgemm = routine_of<FortranDgemm<int64_t>>(lib, suffixed ? "dgemm_64_" : "dgemm_");
          f->path = path;
        }
      }
    }
  }
  if (f->sgemm != nullptr) {
    Log::line("note: ILP64 fallback BLAS %s", f->path.c_str());
  } else {
    Log::note(
        "no ILP64 fallback BLAS: 64-bit calls whose sizes fit in 32 bits use the LP64 "
        "fallback, larger ones go to tiledmm");
  }
  return f;
}

// The next definition of `name` after this library (WheelFallback), as Fn.
template <class Fn>
Fn next_definition(const char* name, const std::vector<std::string>& loaded, std::string& where) {
  void* sym = dlsym(RTLD_NEXT, name);
  if (sym == nullptr || is_tiledmm_blas(sym)) {
    sym = nullptr;
    for (const std::string& lib : loaded) {
      void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
      if (h == nullptr) continue;
      void* s = dlsym(h, name);
      dlclose(h);  // balances the RTLD_NOLOAD reference; the library stays loaded
      if (s != nullptr && !is_tiledmm_blas(s)) {
        sym = s;
        break;
      }
    }
  }
  if (sym == nullptr) return nullptr;
  Dl_info info{};
  if (dladdr(sym, &info) != 0 && info.dli_fname != nullptr &&
      where.find(info.dli_fname) == std::string::npos)
    where += (where.empty() ? "" : ",") + std::string(info.dli_fname);
  return as_function<Fn>(sym);
}

// The paths of the objects loaded now (collected first: dlopen is not called while
// dl_iterate_phdr holds the loader's lock).
std::vector<std::string> loaded_objects() {
  std::vector<std::string> names;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(out)->emplace_back(info->dlpi_name);
        return 0;
      },
      &names);
  return names;
}

// Each wheel name's next definition, by support/wheel_names.hpp's table: the rows of
// integer type Int.
template <class T, class Int, class RowInt>
void adopt_fortran(const char* name, WheelFallback<Int>& out,
                   const std::vector<std::string>& loaded) {
  if constexpr (std::is_same_v<Int, RowInt>) {
    const auto f = next_definition<FortranGemm<T, Int>>(name, loaded, out.where);
    if constexpr (sizeof(T) == sizeof(float)) {
      out.sgemm = f;
    } else {
      out.dgemm = f;
    }
  }
}
template <class T, class Int, class RowInt>
void adopt_cblas(const char* name, WheelFallback<Int>& out,
                 const std::vector<std::string>& loaded) {
  if constexpr (std::is_same_v<Int, RowInt>) {
    const auto f = next_definition<CblasGemm<T, Int>>(name, loaded, out.where);
    if constexpr (sizeof(T) == sizeof(float)) {
      out.cblas_sgemm = f;
    } else {
      out.cblas_dgemm = f;
    }
  }
}

template <class Int>
WheelFallback<Int>* find_wheel_fallback() {
  config();  // opens the log: this may be the process's first BLAS call
  auto* w = new WheelFallback<Int>;
  const std::vector<std::string> loaded = loaded_objects();
#define TMM_ADOPT_FORTRAN(name, T, RowInt) adopt_fortran<T, Int, RowInt>(#name, *w, loaded);
#define TMM_ADOPT_CBLAS(name, T, RowInt) adopt_cblas<T, Int, RowInt>(#name, *w, loaded);
  TMM_BLAS_WHEEL_FORTRAN(TMM_ADOPT_FORTRAN)
  TMM_BLAS_WHEEL_CBLAS(TMM_ADOPT_CBLAS)
#undef TMM_ADOPT_FORTRAN
#undef TMM_ADOPT_CBLAS
  Log::line(
      "note: the wheels' prefixed %s names fall back to %s",
      sizeof(Int) == sizeof(int) ? "LP64" : "ILP64",
      w->where.empty() ? "their twins' fallback (no library defines them)" : w->where.c_str());
  return w;
}

}  // namespace

bool is_tiledmm_blas(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0) return false;
  if (info.dli_fbase == own_base()) return true;
  if (info.dli_fname == nullptr) return false;
  void* h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (h == nullptr) return false;
  void* marker = dlsym(h, "tmm_blas_version");
  Dl_info where{};
  const bool copy =
      marker != nullptr && dladdr(marker, &where) != 0 && where.dli_fbase == info.dli_fbase;
  dlclose(h);  // balances the RTLD_NOLOAD reference; the library stays loaded
  return copy;
}

namespace {

// Found once; afterwards every call reads one pointer (the BLAS calls' fast path). A
// child of fork() finds it itself when its parent was still looking (once.hpp).
template <class T, T* (*find)()>
const T& found_once() {
  static ForkSafeOnce<T> found;
  return found.get([]() noexcept -> const T* {
    try {
      return find();
    } catch (...) {
      static const T none;
      return &none;
    }
  });
}

}  // namespace

const Fallback& fallback() { return found_once<Fallback, find_fallback>(); }

const Fallback64& fallback64() { return found_once<Fallback64, find_fallback64>(); }

const WheelFallback<int>& wheel_fallback_lp64() {
  return found_once<WheelFallback<int>, find_wheel_fallback<int>>();
}

const WheelFallback<int64_t>& wheel_fallback_ilp64() {
  return found_once<WheelFallback<int64_t>, find_wheel_fallback<int64_t>>();
}

namespace {

// The global definition first (the program's override, as the reference BLAS's own
// calls would find it), else the fallback library's.
void* lookup_global_then_fallback(const char* name) {
  void* sym = dlsym(RTLD_DEFAULT, name);
  if (sym != nullptr && !is_tiledmm_blas(sym)) return sym;
  const Fallback& f = fallback();
  if (f.path.empty()) return nullptr;
  void* h = dlopen(f.path.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  return h != nullptr ? dlsym(h, name) : nullptr;
}

}  // namespace

Xerbla find_xerbla() { return as_function<Xerbla>(lookup_global_then_fallback("xerbla_")); }

CblasXerbla find_cblas_xerbla() {
  return as_function<CblasXerbla>(lookup_global_then_fallback("cblas_xerbla"));
}

Pilaenv next_pilaenv() {
  static const Pilaenv next = [] {
    void* sym = dlsym(RTLD_NEXT, "pilaenv_");
    return sym != nullptr && !is_tiledmm_blas(sym) ? as_function<Pilaenv>(sym) : nullptr;
  }();
  return next;
}

}  // namespace tiledmm::blas
