// The real BLAS underneath: the library that computes every call tiledmm does not
// take, found at run time (dlopen/dlsym), never at link time, and never this library
// itself. fallback.cpp says where it looks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tiledmm::blas {

// Fortran xGEMM in element type T (float: SGEMM, double: DGEMM): every argument by
// reference, then the hidden lengths of the two character arguments (gfortran's
// convention; reference BLAS ignores them). noexcept: C and Fortran code never
// throws, and a call through a pointer that may throw cannot be a tail call from the
// library's noexcept entry points.
template <class T, class Int>
using FortranGemm = void (*)(const char*, const char*, const Int*, const Int*, const Int*, const T*,
                             const T*, const Int*, const T*, const Int*, const T*, T*, const Int*,
                             size_t, size_t) noexcept;
template <class Int>
using FortranSgemm = FortranGemm<float, Int>;
template <class Int>
using FortranDgemm = FortranGemm<double, Int>;
// CBLAS enum values (CBLAS_LAYOUT, CBLAS_TRANSPOSE).
constexpr int kRowMajor = 101, kColMajor = 102;
constexpr int kNoTrans = 111, kTrans = 112, kConjTrans = 113;

// CBLAS xgemm: the enums are ints; Int is int, or int64_t for the *64_ names.
template <class T, class Int>
using CblasGemm = void (*)(int, int, int, Int, Int, Int, T, const T*, Int, const T*, Int, T, T*,
                           Int) noexcept;
template <class Int>
using CblasSgemm = CblasGemm<float, Int>;
template <class Int>
using CblasDgemm = CblasGemm<double, Int>;

// One BLAS library's GEMM routines of one integer width, in both precisions, each
// nullptr where the library has none. gemm<T>() and cblas<T>() pick a precision's
// pair, for the code that is written once over the element type.
template <class Int>
struct GemmRoutines {
  FortranSgemm<Int> sgemm = nullptr;
  CblasSgemm<Int> cblas_sgemm = nullptr;  // for CBLAS calls (route/router.cpp, entry/shim.cpp)
  FortranDgemm<Int> dgemm = nullptr;
  CblasDgemm<Int> cblas_dgemm = nullptr;

  template <class T>
  FortranGemm<T, Int> gemm() const {
    if constexpr (sizeof(T) == sizeof(float)) {
      return sgemm;
    } else {
      return dgemm;
    }
  }
  template <class T>
  CblasGemm<T, Int> cblas() const {
    if constexpr (sizeof(T) == sizeof(float)) {
      return cblas_sgemm;
    } else {
      return cblas_dgemm;
    }
  }
};

// The fallback: the library whose sgemm_ was found (fallback.cpp), and its dgemm_,
// cblas_sgemm and cblas_dgemm, so that one BLAS answers for everything.
struct Fallback : GemmRoutines<int> {
  std::string path;     // the library sgemm comes from; empty: none
  std::string refused;  // candidates refused, and why
};

// ILP64 (64-bit integer) routines: OpenBLAS's suffixed names (sgemm_64_, dgemm_64_,
// cblas_sgemm64_, cblas_dgemm64_) in the fallback above, else the library
// TILEDMM_BLAS_FALLBACK64 names (default libblas64.so.3, Debian's ILP64 BLAS, whose
// sgemm_ and dgemm_ take 64-bit integers).
struct Fallback64 : GemmRoutines<int64_t> {
  std::string path;
};

// The wheels' prefixed routines of one integer width (support/wheel_names.hpp:
// scipy_sgemm_, scipy_cblas_dgemm, ... for int; scipy_sgemm_64_, scipy_cblas_dgemm64_,
// ... for int64_t), each the next definition of its own name after this library: the
// first found by dlsym(RTLD_NEXT), else in any library already loaded (a Python
// extension loads its wheel's OpenBLAS with RTLD_LOCAL, out of RTLD_NEXT's reach), never
// this library or a copy. nullptr where none is loaded; the wheel name's call then goes
// to its twin's fallback above.
template <class Int>
struct WheelFallback : GemmRoutines<Int> {
  std::string where;  // the libraries they come from, for the log
};

// Found on first use (thread-safe), then fixed for the life of the process.
const Fallback& fallback();
const Fallback64& fallback64();
// Each width found at the first call of one of its wheel names: by then the library
// that calls it has loaded its own OpenBLAS. The widths apart, because NumPy's wheel
// (the ILP64 names) and SciPy's (the LP64 ones) each bring their own, and a program
// may import SciPy after NumPy's first product.
const WheelFallback<int>& wheel_fallback_lp64();
const WheelFallback<int64_t>& wheel_fallback_ilp64();
template <class Int>
const WheelFallback<Int>& wheel_fallback() {
  if constexpr (sizeof(Int) == sizeof(int)) {
    return wheel_fallback_lp64();
  } else {
    return wheel_fallback_ilp64();
  }
}

// The process's xerbla_ and cblas_xerbla as the reference BLAS would reach them
// (the program's own, else the fallback's), for errors no fallback routine can
// report; nullptr when there is none.
using Xerbla = void (*)(const char*, const int*, size_t);
using CblasXerbla = void (*)(int, const char*, const char*, ...);
Xerbla find_xerbla();
CblasXerbla find_cblas_xerbla();

// pilaenv_ as ScaLAPACK defines it (the next definition after this library), or
// nullptr.
using Pilaenv = int (*)(const int*, const char*);
Pilaenv next_pilaenv();

// True when `address` lies in this library, or in any library that is a copy of it
// (it exports tmm_blas_version): such a "fallback" would call back into tiledmm.
bool is_tiledmm_blas(const void* address);

}  // namespace tiledmm::blas
