// The exported entry points of libtiledmm_blas: sgemm_, cblas_sgemm, their ILP64
// twins sgemm_64_ and cblas_sgemm64_, pilaenv_, and the query API of
// tiledmm/tiledmm_blas.h. Each checks its arguments in the reference BLAS's order,
// hands invalid ones to the fallback's own routine (so that xerbla reports them
// exactly as the reference does, with the same routine name and parameter number),
// and turns valid ones into a column-major GemmCall for route/router.cpp. No exception
// leaves this file; nothing here prints, aborts or exits.
//
// The rule, in the reference's order with its parameter numbers, is stated once in
// args.hpp (what the fallback's cblas_sgemm reports is its own affair: the reference
// reports the Fortran routine's numbers for the sizes).
//
// The four GEMM entry points start with the small calls' fast path (fast_path.hpp):
// a valid call with work in it, below the routing threshold (Route,
// route/router.hpp), goes straight to the fallback's routine of the same name with
// the caller's own arguments, and is counted; nothing else is done for it. On x86-64
// the entry points themselves are trampolines in assembly (trampolines_x86_64.S)
// that ask this file's decision functions where to jump. Everything else (invalid
// arguments, quick returns, the log, calls tiledmm may take) goes the general way,
// out of line.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

#include "entry/args.hpp"
#include "entry/fast_path.hpp"
#include "route/router.hpp"
#include "support/config.hpp"
#include "support/counters.hpp"
#include "support/fallback.hpp"
#include "support/log.hpp"
#include "tiledmm/tiledmm_blas.h"

namespace {

using tiledmm::blas::cblas_info;
using tiledmm::blas::cblas_valid;
using tiledmm::blas::Counter;
using tiledmm::blas::Counters;
using tiledmm::blas::fallback;
using tiledmm::blas::fallback64;
using tiledmm::blas::FallbackScope;
using tiledmm::blas::fast_flops;
using tiledmm::blas::fast_sizes;
using tiledmm::blas::fortran_info;
using tiledmm::blas::fortran_valid;
using tiledmm::blas::GemmCall;
using tiledmm::blas::kNoTrans;
using tiledmm::blas::kRowMajor;
using tiledmm::blas::kTrans;
using tiledmm::blas::Log;
using tiledmm::blas::nonzero;
using tiledmm::blas::Route;
using tiledmm::blas::Routine;
using tiledmm::blas::routine_name;
using tiledmm::blas::upper;

template <class Int>
bool fits_int(Int v) {
  return int64_t(v) >= INT_MIN && int64_t(v) <= INT_MAX;
}

void report_xerbla(const char* name, int info) {
  if (auto x = tiledmm::blas::find_xerbla()) {
    x(name, &info, std::strlen(name));
  } else {
    Log::line("note: %s: parameter %d is invalid, and there is no xerbla_ to report it", name,
              info);
  }
}

void report_cblas_xerbla(int info) {
  if (auto x = tiledmm::blas::find_cblas_xerbla()) {
    x(info, "cblas_sgemm", "");
  } else {
    report_xerbla("cblas_sgemm", info);
  }
}

void log_invalid(Routine r, int info) {
  Counters::add(r, Counter::kInvalid);
  Log::line("%s: parameter %d is invalid -> xerbla", routine_name(r), info);
}

// ---- Fortran ------------------------------------------------------------------

using tiledmm::blas::FortranFrame;

// The fallback's SGEMM `f` on the same arguments (the hidden lengths: 1), as an inner
// call: a call back into this library goes straight to the fallback.
template <class Int>
void call_sgemm(tiledmm::blas::FortranSgemm<Int> f, const FortranFrame<Int>& x) {
  FallbackScope scope;
  f(x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c, x.ldc, 1, 1);
}

// The fallback's SGEMM of the entry point's width; nullptr if it has none.
template <class Int>
tiledmm::blas::FortranSgemm<Int> fallback_sgemm() {
  if constexpr (sizeof(Int) == sizeof(int)) {
    return fallback().sgemm;
  } else {
    return fallback64().sgemm;
  }
}

// Invalid arguments: the fallback's own SGEMM reports them through xerbla.
void report_fortran(const FortranFrame<int>& x, int info) {
  if (fallback().sgemm != nullptr) {
    call_sgemm(fallback().sgemm, x);
  } else {
    report_xerbla("SGEMM ", info);
  }
}

void report_fortran(const FortranFrame<int64_t>& x, int info) {
  if (fallback64().sgemm != nullptr) {
    call_sgemm(fallback64().sgemm, x);
    return;
  }
  if (fallback().sgemm != nullptr && fits_int(*x.m) && fits_int(*x.n) && fits_int(*x.k) &&
      fits_int(*x.lda) && fits_int(*x.ldb) && fits_int(*x.ldc)) {
    const int m = int(*x.m), n = int(*x.n), k = int(*x.k), lda = int(*x.lda), ldb = int(*x.ldb),
              ldc = int(*x.ldc);
    call_sgemm<int>(fallback().sgemm, {x.transa, x.transb, &m, &n, &k, x.alpha, nullptr, x.a, &lda,
                                       x.b, &ldb, x.beta, x.c, &ldc});
    return;
  }
  report_xerbla("SGEMM ", info);
}

template <class Int>
void fortran_entry(Routine r, const FortranFrame<Int>& x) noexcept {
  try {
    // An inner call from the fallback itself (its CBLAS calling its SGEMM): what the
    // Route's probes ask.
    if (FallbackScope::active()) {
      ++tiledmm::blas::t_inner_calls;
      if (const auto own = fallback_sgemm<Int>()) {
        call_sgemm(own, x);
        return;
      }
    }
    const char ta = upper(x.transa), tb = upper(x.transb);
    const int info = fortran_info<Int>(ta, tb, *x.m, *x.n, *x.k, *x.lda, *x.ldb, *x.ldc);
    if (info != 0) {
      log_invalid(r, info);
      report_fortran(x, info);
      return;
    }
    GemmCall call;
    call.routine = r;
    call.trans_a = ta != 'N';
    call.trans_b = tb != 'N';
    call.m = *x.m;
    call.n = *x.n;
    call.k = *x.k;
    call.alpha = *x.alpha;
    call.beta = *x.beta;
    call.a = x.a;
    call.lda = *x.lda;
    call.b = x.b;
    call.ldb = *x.ldb;
    call.c = x.c;
    call.ldc = *x.ldc;
    tiledmm::blas::run_gemm(call);
  } catch (...) {
  }
}

// ---- CBLAS --------------------------------------------------------------------

template <class Int>
struct CblasArgs {
  int layout, ta, tb;
  Int m, n, k;
  float alpha;
  const float* a;
  Int lda;
  const float* b;
  Int ldb;
  float beta;
  float* c;
  Int ldc;
};

char trans_char(int t) { return t == kNoTrans ? 'N' : t == kTrans ? 'T' : 'C'; }

void report_cblas(const CblasArgs<int>& x, int info) {
  if (fallback().cblas_sgemm != nullptr) {
    FallbackScope scope;
    fallback().cblas_sgemm(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb,
                           x.beta, x.c, x.ldc);
  } else if (info > 3 && fallback().sgemm != nullptr) {
    // Layout and transposes are valid: the Fortran routine reports the sizes, as the
    // reference CBLAS lets it.
    const bool row = x.layout == kRowMajor;
    const char ta = trans_char(row ? x.tb : x.ta), tb = trans_char(row ? x.ta : x.tb);
    const int m = row ? x.n : x.m, n = row ? x.m : x.n;
    call_sgemm<int>(fallback().sgemm, {&ta, &tb, &m, &n, &x.k, &x.alpha, nullptr, row ? x.b : x.a,
                                       row ? &x.ldb : &x.lda, row ? x.a : x.b,
                                       row ? &x.lda : &x.ldb, &x.beta, x.c, &x.ldc});
  } else {
    report_cblas_xerbla(info);
  }
}

void report_cblas(const CblasArgs<int64_t>& x, int info) {
  if (fallback64().cblas_sgemm != nullptr) {
    FallbackScope scope;
    fallback64().cblas_sgemm(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb,
                             x.beta, x.c, x.ldc);
  } else if (fits_int(x.m) && fits_int(x.n) && fits_int(x.k) && fits_int(x.lda) &&
             fits_int(x.ldb) && fits_int(x.ldc)) {
    const CblasArgs<int> narrow{x.layout,   x.ta,    x.tb, int(x.m),   int(x.n),
                                int(x.k),   x.alpha, x.a,  int(x.lda), x.b,
                                int(x.ldb), x.beta,  x.c,  int(x.ldc)};
    report_cblas(narrow, info);
  } else {
    report_cblas_xerbla(info);
  }
}

template <class Int>
void cblas_entry(Routine r, const CblasArgs<Int>& x) noexcept {
  try {
    // Reached from the fallback itself: what the Route's probes ask.
    if (FallbackScope::active()) ++tiledmm::blas::t_inner_calls;
    const int info = cblas_info<Int>(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.lda, x.ldb, x.ldc);
    if (info != 0) {
      log_invalid(r, info);
      report_cblas(x, info);
      return;
    }
    // Row-major: C^T = op(B)^T op(A)^T, a column-major product with A and B swapped.
    const bool row = x.layout == kRowMajor;
    GemmCall call;
    call.routine = r;
    call.row_major = row;
    call.trans_a = (row ? x.tb : x.ta) != kNoTrans;
    call.trans_b = (row ? x.ta : x.tb) != kNoTrans;
    call.m = row ? x.n : x.m;
    call.n = row ? x.m : x.n;
    call.k = x.k;
    call.alpha = x.alpha;
    call.beta = x.beta;
    call.a = row ? x.b : x.a;
    call.lda = row ? x.ldb : x.lda;
    call.b = row ? x.a : x.b;
    call.ldb = row ? x.lda : x.ldb;
    call.c = x.c;
    call.ldc = x.ldc;
    tiledmm::blas::run_gemm(call);
  } catch (...) {
  }
}

// ---- The small calls' fast path ------------------------------------------------

// The general way, for every call the fast path does not take, with the entry
// point's own parameters (the trampolines jump here with the caller's arguments
// where they are). The first call of the process comes here (run_gemm makes the
// Route), and the first count of each thread (which takes its block).
template <class Int>
__attribute__((noinline, cold)) void sgemm_general(const char* transa, const char* transb,
                                                   const Int* m, const Int* n, const Int* k,
                                                   const float* alpha, const float* a,
                                                   const Int* lda, const float* b, const Int* ldb,
                                                   const float* beta, float* c, const Int* ldc,
                                                   size_t, size_t) noexcept {
  fortran_entry<Int>(sizeof(Int) == sizeof(int) ? Routine::kSgemm : Routine::kSgemm64,
                     {transa, transb, m, n, k, alpha, nullptr, a, lda, b, ldb, beta, c, ldc});
}

template <class Int>
__attribute__((noinline, cold)) void cblas_general(int layout, int transa, int transb, Int m, Int n,
                                                   Int k, float alpha, const float* a, Int lda,
                                                   const float* b, Int ldb, float beta, float* c,
                                                   Int ldc) noexcept {
  cblas_entry<Int>(sizeof(Int) == sizeof(int) ? Routine::kCblasSgemm : Routine::kCblasSgemm64,
                   {layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

// The fallback's cblas_sgemm inside a FallbackScope, for the fast path when it calls
// sgemm_ (through the PLT: this library's), so that such inner calls go straight
// back to the fallback.
__attribute__((noinline)) void cblas_in_scope(int layout, int transa, int transb, int m, int n,
                                              int k, float alpha, const float* a, int lda,
                                              const float* b, int ldb, float beta, float* c,
                                              int ldc) noexcept {
  FallbackScope scope;
  tiledmm::blas::g_route.load(std::memory_order_relaxed)
      ->cblas_sgemm(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The fallback's sgemm_ inside a FallbackScope, for the fast path when that sgemm_
// calls back into this library (Route::sgemm_direct false).
__attribute__((noinline)) void sgemm_in_scope(const char* transa, const char* transb, const int* m,
                                              const int* n, const int* k, const float* alpha,
                                              const float* a, const int* lda, const float* b,
                                              const int* ldb, const float* beta, float* c,
                                              const int* ldc, size_t transa_len,
                                              size_t transb_len) noexcept {
  FallbackScope scope;
  tiledmm::blas::g_route.load(std::memory_order_relaxed)
      ->sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len);
}

template <class Int>
const tiledmm::blas::RouteOf<Int>& current_route() {
  if constexpr (sizeof(Int) == sizeof(int)) {
    return *tiledmm::blas::g_route.load(std::memory_order_acquire);
  } else {
    return *tiledmm::blas::g_route64.load(std::memory_order_acquire);
  }
}

// The decision of sgemm_ (sgemm_64_): the fallback's SGEMM when the Route is made
// and this thread has its counter block (so that nothing on the way is a call), the
// call is not the fallback's own, the sizes are small (fast_sizes), the arguments
// valid, alpha != 0, and 2 m n k within the Route's bound; counted first. Else the
// general way.
template <class Int>
tiledmm::blas::FortranSgemm<Int> sgemm_target(const tiledmm::blas::FortranFrame<Int>& x) {
  const tiledmm::blas::RouteOf<Int>& route = current_route<Int>();
  if (__builtin_expect(route.fast && !FallbackScope::active() && Counters::ready(), 1)) {
    const Int m = *x.m, n = *x.n, k = *x.k;
    if (fast_sizes(m, n, k) && fortran_valid(x.transa, x.transb, m, n, k, *x.lda, *x.ldb, *x.ldc) &&
        nonzero(*x.alpha)) {
      const uint64_t flops = fast_flops(m, n, k);
      if (flops <= route.fallback_max_flops) {
        if constexpr (sizeof(Int) == sizeof(int)) {
          Counters::add_call(Routine::kSgemm, Counter::kFallbackCalls, Counter::kFallbackFlops,
                             flops);
          return route.sgemm_direct ? route.sgemm : sgemm_in_scope;
        } else {
          Counters::add_call(Routine::kSgemm64, Counter::kFallbackCalls, Counter::kFallbackFlops,
                             flops);
          return route.sgemm;  // RouteOf<int64_t>::fast: sgemm_direct
        }
      }
    }
  }
  return sgemm_general<Int>;
}

// The same for cblas_sgemm (cblas_sgemm64_), to the fallback's cblas_sgemm: by a
// jump when it never calls sgemm_, else inside a FallbackScope. Inline in the entry
// point, whose every way out is then one jump with the caller's arguments.
template <class Int>
tiledmm::blas::CblasSgemm<Int> cblas_target(int layout, int transa, int transb, Int m, Int n, Int k,
                                            float alpha, Int lda, Int ldb, Int ldc) {
  const tiledmm::blas::RouteOf<Int>& route = current_route<Int>();
  if (__builtin_expect(route.fast_cblas && Counters::ready(), 1) && fast_sizes(m, n, k) &&
      cblas_valid(layout, transa, transb, m, n, k, lda, ldb, ldc) && alpha != 0.0f) {
    const uint64_t flops = fast_flops(m, n, k);
    if (flops <= route.fallback_max_flops) {
      if constexpr (sizeof(Int) == sizeof(int)) {
        Counters::add_call(Routine::kCblasSgemm, Counter::kFallbackCalls, Counter::kFallbackFlops,
                           flops);
        return route.cblas_direct ? route.cblas_sgemm : cblas_in_scope;
      } else {
        Counters::add_call(Routine::kCblasSgemm64, Counter::kFallbackCalls, Counter::kFallbackFlops,
                           flops);
        return route.cblas_sgemm;  // RouteOf<int64_t>::fast_cblas: cblas_direct
      }
    }
  }
  return cblas_general<Int>;
}

}  // namespace

extern "C" {

tiledmm::blas::FortranSgemm<int> tmm_blas_sgemm_target(
    const tiledmm::blas::FortranFrame<int>* frame) noexcept {
  return sgemm_target<int>(*frame);
}

tiledmm::blas::FortranSgemm<int64_t> tmm_blas_sgemm64_target(
    const tiledmm::blas::FortranFrame<int64_t>* frame) noexcept {
  return sgemm_target<int64_t>(*frame);
}

#if !TMM_BLAS_ASM_ENTRIES
// The entry points without the trampolines (fast_path.hpp): the frame filled here.
// The Fortran ABI's hidden lengths of TRANSA and TRANSB (gfortran passes them after
// the 13 arguments; C callers mostly do not) are passed on as they came.
TMM_BLAS_API void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                         const int* k, const float* alpha, const float* a, const int* lda,
                         const float* b, const int* ldb, const float* beta, float* c,
                         const int* ldc, size_t transa_len, size_t transb_len) noexcept {
  const tiledmm::blas::FortranFrame<int> frame{transa, transb, m, n,   k,    alpha, nullptr,
                                               a,      lda,    b, ldb, beta, c,     ldc};
  const auto target = tmm_blas_sgemm_target(&frame);
  target(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len);
}

TMM_BLAS_API void sgemm_64_(const char* transa, const char* transb, const int64_t* m,
                            const int64_t* n, const int64_t* k, const float* alpha, const float* a,
                            const int64_t* lda, const float* b, const int64_t* ldb,
                            const float* beta, float* c, const int64_t* ldc, size_t transa_len,
                            size_t transb_len) noexcept {
  const tiledmm::blas::FortranFrame<int64_t> frame{transa, transb, m, n,   k,    alpha, nullptr,
                                                   a,      lda,    b, ldb, beta, c,     ldc};
  const auto target = tmm_blas_sgemm64_target(&frame);
  target(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len);
}

#endif  // !TMM_BLAS_ASM_ENTRIES

// cblas_sgemm in C++: every way out is one jump with the caller's arguments (GCC 12
// copies the six stack arguments out and back on the way; clang sees they are
// unchanged). On x86-64 this is tmm_blas_cblas_sgemm_cxx, where the exported
// cblas_sgemm's assembly fast path (trampolines_x86_64.S) jumps for every call it does not
// take; elsewhere it is cblas_sgemm itself.
#if TMM_BLAS_ASM_ENTRIES
__attribute__((hot)) void tmm_blas_cblas_sgemm_cxx
#else
TMM_BLAS_API __attribute__((hot)) void cblas_sgemm
#endif
    (int layout, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda,
     const float* b, int ldb, float beta, float* c, int ldc) noexcept {
  const auto target = cblas_target<int>(layout, transa, transb, m, n, k, alpha, lda, ldb, ldc);
  return target(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

TMM_BLAS_API void cblas_sgemm64_(int layout, int transa, int transb, int64_t m, int64_t n,
                                 int64_t k, float alpha, const float* a, int64_t lda,
                                 const float* b, int64_t ldb, float beta, float* c,
                                 int64_t ldc) noexcept {
  const auto target = cblas_target<int64_t>(layout, transa, transb, m, n, k, alpha, lda, ldb, ldc);
  return target(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

TMM_BLAS_API int pilaenv_(const int* ictxt, const char* prec) noexcept {
  return tiledmm::blas::pilaenv(ictxt, prec);
}

TMM_BLAS_API int tmm_blas_version(void) { return TILEDMM_VERSION; }

TMM_BLAS_API tmm_status tmm_blas_get_counters(tmm_blas_routine routine, tmm_blas_counters* out) {
  if (out == nullptr || out->struct_size < sizeof(tmm_blas_counters))
    return TMM_ERROR_INVALID_VALUE;
  tmm_blas_counters all{};
  if (!Counters::read(int(routine), all)) return TMM_ERROR_INVALID_VALUE;
  all.struct_size = sizeof(tmm_blas_counters);
  std::memcpy(out, &all, sizeof all);
  return TMM_SUCCESS;
}

TMM_BLAS_API void tmm_blas_reset_counters(void) { Counters::reset(); }

TMM_BLAS_API size_t tmm_blas_describe(char* buffer, size_t size) {
  try {
    const std::string text = tiledmm::blas::describe();
    if (buffer != nullptr && size > 0) {
      const size_t n = std::min(size - 1, text.size());
      std::memcpy(buffer, text.data(), n);
      buffer[n] = '\0';
    }
    return text.size();
  } catch (...) {
    if (buffer != nullptr && size > 0) buffer[0] = '\0';
    return 0;
  }
}

}  // extern "C"
