// The exported entry points of libtiledmm_blas: sgemm_, cblas_sgemm, their ILP64
// twins sgemm_64_ and cblas_sgemm64_, the same in double precision (dgemm_,
// cblas_dgemm, dgemm_64_, cblas_dgemm64_), pilaenv_, and the query API of
// tiledmm/tiledmm_blas.h. Each checks its arguments in the reference BLAS's order,
// hands invalid ones to the fallback's own routine (so that xerbla reports them
// exactly as the reference does, with the same routine name and parameter number),
// and turns valid ones into a column-major GemmCallOf<T> for route/router.cpp. No
// exception leaves this file; nothing here prints, aborts or exits.
//
// Everything below is written once over the element type T (float: the SGEMM names,
// double: the DGEMM names) and the integer type Int (int, or int64_t for the ILP64
// names); the exported functions at the end only name their instance.
//
// The names pip's NumPy and SciPy wheels call (scipy_sgemm_, scipy_cblas_dgemm64_, ...:
// support/wheel_names.hpp's table, from which they are defined at the end) are the same
// code with Wheel = true: the same checks, quick returns, routing and cost model as
// their standard twins, their own counters, and the wheel's own routine of the same
// name (support/fallback.hpp: wheel_fallback) in front of the twin's fallback, for the
// calls tiledmm does not take and for the argument errors. Such an error is reported as
// the twin reports it: the wheel's OpenBLAS reports through its own xerbla with the
// routine's unprefixed name ("DGEMM ", as OpenBLAS's interface/gemm.c names it; its
// prefix renames symbols, not that string), and without a wheel the twin's fallback
// reports it as for the standard name ("SGEMM "/"DGEMM ", cblas_sgemm/cblas_dgemm):
// a caller of a prefixed name expects the routine's own name in the message either
// way. They have no fast path of their own: every call goes the general way (the
// fast path's Route jumps to the standard fallback, not the wheel's).
//
// The rule, in the reference's order with its parameter numbers, is stated once in
// args.hpp (what the fallback's cblas_xgemm reports is its own affair: the reference
// reports the Fortran routine's numbers for the sizes).
//
// The eight GEMM entry points start with the small calls' fast path (fast_path.hpp):
// a valid call with work in it, below the routing threshold (Route,
// route/router.hpp), goes straight to the fallback's routine of the same name with
// the caller's own arguments, and is counted; nothing else is done for it. On x86-64
// the Fortran entry points and cblas_sgemm are trampolines in assembly
// (trampolines_x86_64.S) that ask this file's decision functions where to jump.
// Everything else (invalid arguments, quick returns, the log, calls tiledmm may take)
// goes the general way, out of line.
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
#include "support/wheel_names.hpp"
#include "tiledmm/tiledmm_blas.h"

namespace {

using tiledmm::blas::cblas_info;
using tiledmm::blas::cblas_valid;
using tiledmm::blas::CblasGemm;
using tiledmm::blas::Counter;
using tiledmm::blas::Counters;
using tiledmm::blas::fallback;
using tiledmm::blas::fallback64;
using tiledmm::blas::FallbackScope;
using tiledmm::blas::fast_flops;
using tiledmm::blas::fast_sizes;
using tiledmm::blas::fortran_info;
using tiledmm::blas::fortran_valid;
using tiledmm::blas::FortranFrame;
using tiledmm::blas::FortranGemm;
using tiledmm::blas::gemm_routine;
using tiledmm::blas::GemmCallOf;
using tiledmm::blas::kNoTrans;
using tiledmm::blas::kRowMajor;
using tiledmm::blas::kTrans;
using tiledmm::blas::Log;
using tiledmm::blas::nonzero;
using tiledmm::blas::RouteOf;
using tiledmm::blas::Routine;
using tiledmm::blas::routine_name;
using tiledmm::blas::upper;
using tiledmm::blas::wheel_fallback;

template <class Int>
bool fits_int(Int v) {
  return int64_t(v) >= INT_MIN && int64_t(v) <= INT_MAX;
}

// The names the reference's xerbla reports: SRNAME of the Fortran routine (padded
// to six characters, as the reference passes it), and the CBLAS routine's.
template <class T>
constexpr const char* fortran_name() {
  return sizeof(T) == sizeof(float) ? "SGEMM " : "DGEMM ";
}
template <class T>
constexpr const char* cblas_name() {
  return sizeof(T) == sizeof(float) ? "cblas_sgemm" : "cblas_dgemm";
}

void report_xerbla(const char* name, int info) {
  if (auto x = tiledmm::blas::find_xerbla()) {
    x(name, &info, std::strlen(name));
  } else {
    Log::line("note: %s: parameter %d is invalid, and there is no xerbla_ to report it", name,
              info);
  }
}

template <class T>
void report_cblas_xerbla(int info) {
  if (auto x = tiledmm::blas::find_cblas_xerbla()) {
    x(info, cblas_name<T>(), "");
  } else {
    report_xerbla(cblas_name<T>(), info);
  }
}

void log_invalid(Routine r, int info) {
  Counters::add(r, Counter::kInvalid);
  Log::line("%s: parameter %d is invalid -> xerbla", routine_name(r), info);
}

// ---- Fortran ------------------------------------------------------------------

// The fallback's xGEMM `f` on the same arguments (the hidden lengths: 1), as an inner
// call: a call back into this library goes straight to the fallback.
template <class T, class Int>
void call_gemm(FortranGemm<T, Int> f, const FortranFrame<T, Int>& x) {
  FallbackScope scope;
  f(x.transa, x.transb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c, x.ldc, 1, 1);
}

// The fallback's xGEMM of the entry point's precision and width; nullptr if it has
// none.
template <class T, class Int>
FortranGemm<T, Int> fallback_gemm() {
  if constexpr (sizeof(Int) == sizeof(int)) {
    return fallback().gemm<T>();
  } else {
    return fallback64().gemm<T>();
  }
}

// Invalid arguments: the fallback's own xGEMM reports them through xerbla.
template <class T>
void report_fortran(const FortranFrame<T, int>& x, int info) {
  if (const auto f = fallback().gemm<T>()) {
    call_gemm<T, int>(f, x);
  } else {
    report_xerbla(fortran_name<T>(), info);
  }
}

template <class T>
void report_fortran(const FortranFrame<T, int64_t>& x, int info) {
  if (const auto f = fallback64().gemm<T>()) {
    call_gemm<T, int64_t>(f, x);
    return;
  }
  const auto f = fallback().gemm<T>();
  if (f != nullptr && fits_int(*x.m) && fits_int(*x.n) && fits_int(*x.k) && fits_int(*x.lda) &&
      fits_int(*x.ldb) && fits_int(*x.ldc)) {
    const int m = int(*x.m), n = int(*x.n), k = int(*x.k), lda = int(*x.lda), ldb = int(*x.ldb),
              ldc = int(*x.ldc);
    call_gemm<T, int>(f, {x.transa, x.transb, &m, &n, &k, x.alpha, nullptr, x.a, &lda, x.b, &ldb,
                          x.beta, x.c, &ldc});
    return;
  }
  report_xerbla(fortran_name<T>(), info);
}

template <class T, class Int, bool Wheel = false>
void fortran_entry(const FortranFrame<T, Int>& x) noexcept {
  try {
    // A wheel's name: the wheel's own routine of that name, if it has one.
    const auto wheel = Wheel ? wheel_fallback<Int>().template gemm<T>() : nullptr;
    // An inner call from the fallback itself (its CBLAS calling its xGEMM): what the
    // Route's probes ask.
    if (FallbackScope::active()) {
      ++tiledmm::blas::t_inner_calls;
      if (const auto own = wheel != nullptr ? wheel : fallback_gemm<T, Int>()) {
        call_gemm(own, x);
        return;
      }
    }
    constexpr Routine r = gemm_routine<T, Int, Wheel>(false);
    const char ta = upper(x.transa), tb = upper(x.transb);
    const int info = fortran_info<Int>(ta, tb, *x.m, *x.n, *x.k, *x.lda, *x.ldb, *x.ldc);
    if (info != 0) {
      log_invalid(r, info);
      if (wheel != nullptr) {
        call_gemm(wheel, x);
      } else {
        report_fortran(x, info);
      }
      return;
    }
    GemmCallOf<T> call;
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

template <class T, class Int>
struct CblasArgs {
  int layout, ta, tb;
  Int m, n, k;
  T alpha;
  const T* a;
  Int lda;
  const T* b;
  Int ldb;
  T beta;
  T* c;
  Int ldc;
};

char trans_char(int t) { return t == kNoTrans ? 'N' : t == kTrans ? 'T' : 'C'; }

template <class T>
void report_cblas(const CblasArgs<T, int>& x, int info) {
  if (const auto cblas = fallback().cblas<T>()) {
    FallbackScope scope;
    cblas(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c, x.ldc);
  } else if (info > 3 && fallback().gemm<T>() != nullptr) {
    // Layout and transposes are valid: the Fortran routine reports the sizes, as the
    // reference CBLAS lets it.
    const bool row = x.layout == kRowMajor;
    const char ta = trans_char(row ? x.tb : x.ta), tb = trans_char(row ? x.ta : x.tb);
    const int m = row ? x.n : x.m, n = row ? x.m : x.n;
    call_gemm<T, int>(
        fallback().gemm<T>(),
        {&ta, &tb, &m, &n, &x.k, &x.alpha, nullptr, row ? x.b : x.a, row ? &x.ldb : &x.lda,
         row ? x.a : x.b, row ? &x.lda : &x.ldb, &x.beta, x.c, &x.ldc});
  } else {
    report_cblas_xerbla<T>(info);
  }
}

template <class T>
void report_cblas(const CblasArgs<T, int64_t>& x, int info) {
  if (const auto cblas = fallback64().cblas<T>()) {
    FallbackScope scope;
    cblas(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c, x.ldc);
  } else if (fits_int(x.m) && fits_int(x.n) && fits_int(x.k) && fits_int(x.lda) &&
             fits_int(x.ldb) && fits_int(x.ldc)) {
    const CblasArgs<T, int> narrow{x.layout,   x.ta,    x.tb, int(x.m),   int(x.n),
                                   int(x.k),   x.alpha, x.a,  int(x.lda), x.b,
                                   int(x.ldb), x.beta,  x.c,  int(x.ldc)};
    report_cblas(narrow, info);
  } else {
    report_cblas_xerbla<T>(info);
  }
}

template <class T, class Int, bool Wheel = false>
void cblas_entry(const CblasArgs<T, Int>& x) noexcept {
  try {
    // Reached from the fallback itself: what the Route's probes ask.
    if (FallbackScope::active()) ++tiledmm::blas::t_inner_calls;
    constexpr Routine r = gemm_routine<T, Int, Wheel>(true);
    const int info = cblas_info<Int>(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.lda, x.ldb, x.ldc);
    if (info != 0) {
      log_invalid(r, info);
      // A wheel's name: the wheel's own CBLAS routine of that name reports it.
      const auto wheel = Wheel ? wheel_fallback<Int>().template cblas<T>() : nullptr;
      if (wheel != nullptr) {
        FallbackScope scope;
        wheel(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c,
              x.ldc);
      } else {
        report_cblas(x, info);
      }
      return;
    }
    // Row-major: C^T = op(B)^T op(A)^T, a column-major product with A and B swapped.
    const bool row = x.layout == kRowMajor;
    GemmCallOf<T> call;
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
template <class T, class Int>
__attribute__((noinline, cold)) void gemm_general(const char* transa, const char* transb,
                                                  const Int* m, const Int* n, const Int* k,
                                                  const T* alpha, const T* a, const Int* lda,
                                                  const T* b, const Int* ldb, const T* beta, T* c,
                                                  const Int* ldc, size_t, size_t) noexcept {
  fortran_entry<T, Int>({transa, transb, m, n, k, alpha, nullptr, a, lda, b, ldb, beta, c, ldc});
}

template <class T, class Int>
__attribute__((noinline, cold)) void cblas_general(int layout, int transa, int transb, Int m, Int n,
                                                   Int k, T alpha, const T* a, Int lda, const T* b,
                                                   Int ldb, T beta, T* c, Int ldc) noexcept {
  cblas_entry<T, Int>({layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

// The fallback's cblas_xgemm inside a FallbackScope, for the fast path when it calls
// xgemm_ (through the PLT: this library's), so that such inner calls go straight
// back to the fallback.
template <class T>
__attribute__((noinline)) void cblas_in_scope(int layout, int transa, int transb, int m, int n,
                                              int k, T alpha, const T* a, int lda, const T* b,
                                              int ldb, T beta, T* c, int ldc) noexcept {
  FallbackScope scope;
  tiledmm::blas::route_global<T, int>()
      .load(std::memory_order_relaxed)
      ->cblas_gemm(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The fallback's xgemm_ inside a FallbackScope, for the fast path when that xgemm_
// calls back into this library (Route::gemm_direct false).
template <class T>
__attribute__((noinline)) void gemm_in_scope(const char* transa, const char* transb, const int* m,
                                             const int* n, const int* k, const T* alpha, const T* a,
                                             const int* lda, const T* b, const int* ldb,
                                             const T* beta, T* c, const int* ldc, size_t transa_len,
                                             size_t transb_len) noexcept {
  FallbackScope scope;
  tiledmm::blas::route_global<T, int>()
      .load(std::memory_order_relaxed)
      ->gemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len);
}

template <class T, class Int>
const RouteOf<T, Int>& current_route() {
  return *tiledmm::blas::route_global<T, Int>().load(std::memory_order_acquire);
}

// The decision of xgemm_ (xgemm_64_): the fallback's xGEMM when the Route is made and
// this thread has its counter block (so that nothing on the way is a call), the call
// is not the fallback's own, the sizes are small (fast_sizes), the arguments valid,
// alpha != 0, and 2 m n k within the Route's bound; counted first. Else the general
// way.
template <class T, class Int>
FortranGemm<T, Int> gemm_target(const FortranFrame<T, Int>& x) {
  const RouteOf<T, Int>& route = current_route<T, Int>();
  if (__builtin_expect(route.fast && !FallbackScope::active() && Counters::ready(), 1)) {
    const Int m = *x.m, n = *x.n, k = *x.k;
    if (fast_sizes(m, n, k) && fortran_valid(x.transa, x.transb, m, n, k, *x.lda, *x.ldb, *x.ldc) &&
        nonzero(*x.alpha)) {
      const uint64_t flops = fast_flops(m, n, k);
      if (flops <= route.fallback_max_flops) {
        Counters::add_call(gemm_routine<T, Int>(false), Counter::kFallbackCalls,
                           Counter::kFallbackFlops, flops);
        if constexpr (sizeof(Int) == sizeof(int)) {
          return route.gemm_direct ? route.gemm : gemm_in_scope<T>;
        } else {
          return route.gemm;  // the ILP64 Routes' fast: gemm_direct
        }
      }
    }
  }
  return gemm_general<T, Int>;
}

// The same for cblas_xgemm (cblas_xgemm64_), to the fallback's cblas_xgemm: by a
// jump when it never calls xgemm_, else inside a FallbackScope. Inline in the entry
// point, whose every way out is then one jump with the caller's arguments.
template <class T, class Int>
CblasGemm<T, Int> cblas_target(int layout, int transa, int transb, Int m, Int n, Int k, T alpha,
                               Int lda, Int ldb, Int ldc) {
  const RouteOf<T, Int>& route = current_route<T, Int>();
  if (__builtin_expect(route.fast_cblas && Counters::ready(), 1) && fast_sizes(m, n, k) &&
      cblas_valid(layout, transa, transb, m, n, k, lda, ldb, ldc) && alpha != T(0)) {
    const uint64_t flops = fast_flops(m, n, k);
    if (flops <= route.fallback_max_flops) {
      Counters::add_call(gemm_routine<T, Int>(true), Counter::kFallbackCalls,
                         Counter::kFallbackFlops, flops);
      if constexpr (sizeof(Int) == sizeof(int)) {
        return route.cblas_direct ? route.cblas_gemm : cblas_in_scope<T>;
      } else {
        return route.cblas_gemm;  // the ILP64 Routes' fast_cblas: cblas_direct
      }
    }
  }
  return cblas_general<T, Int>;
}

// A CBLAS entry point's whole body: the decision, then one jump with the caller's
// arguments (GCC 12 copies the six stack arguments out and back on the way; clang
// sees they are unchanged).
template <class T, class Int>
__attribute__((always_inline)) inline void cblas_jump(int layout, int transa, int transb, Int m,
                                                      Int n, Int k, T alpha, const T* a, Int lda,
                                                      const T* b, Int ldb, T beta, T* c,
                                                      Int ldc) noexcept {
  const auto target = cblas_target<T, Int>(layout, transa, transb, m, n, k, alpha, lda, ldb, ldc);
  return target(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

#if !TMM_BLAS_ASM_ENTRIES
// A Fortran entry point without the trampolines (fast_path.hpp): the frame filled
// here, the decision asked, and what it returns called. The Fortran ABI's hidden
// lengths of TRANSA and TRANSB (gfortran passes them after the 13 arguments; C callers
// mostly do not) are passed on as they came.
template <class T, class Int>
__attribute__((always_inline)) inline void fortran_portable(
    const char* transa, const char* transb, const Int* m, const Int* n, const Int* k,
    const T* alpha, const T* a, const Int* lda, const T* b, const Int* ldb, const T* beta, T* c,
    const Int* ldc, size_t transa_len, size_t transb_len) noexcept {
  const FortranFrame<T, Int> frame{transa, transb, m, n,   k,    alpha, nullptr,
                                   a,      lda,    b, ldb, beta, c,     ldc};
  const auto target = gemm_target<T, Int>(frame);
  target(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, transa_len, transb_len);
}
#endif

}  // namespace

extern "C" {

// The decisions the trampolines call (fast_path.hpp).
tiledmm::blas::FortranSgemm<int> tmm_blas_sgemm_target(
    const FortranFrame<float, int>* frame) noexcept {
  return gemm_target<float, int>(*frame);
}

tiledmm::blas::FortranSgemm<int64_t> tmm_blas_sgemm64_target(
    const FortranFrame<float, int64_t>* frame) noexcept {
  return gemm_target<float, int64_t>(*frame);
}

tiledmm::blas::FortranDgemm<int> tmm_blas_dgemm_target(
    const FortranFrame<double, int>* frame) noexcept {
  return gemm_target<double, int>(*frame);
}

tiledmm::blas::FortranDgemm<int64_t> tmm_blas_dgemm64_target(
    const FortranFrame<double, int64_t>* frame) noexcept {
  return gemm_target<double, int64_t>(*frame);
}

#if !TMM_BLAS_ASM_ENTRIES
// The Fortran entry points in C++ (elsewhere trampolines_x86_64.S defines them).
TMM_BLAS_API void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                         const int* k, const float* alpha, const float* a, const int* lda,
                         const float* b, const int* ldb, const float* beta, float* c,
                         const int* ldc, size_t transa_len, size_t transb_len) noexcept {
  fortran_portable<float, int>(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                               transa_len, transb_len);
}

TMM_BLAS_API void sgemm_64_(const char* transa, const char* transb, const int64_t* m,
                            const int64_t* n, const int64_t* k, const float* alpha, const float* a,
                            const int64_t* lda, const float* b, const int64_t* ldb,
                            const float* beta, float* c, const int64_t* ldc, size_t transa_len,
                            size_t transb_len) noexcept {
  fortran_portable<float, int64_t>(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                   transa_len, transb_len);
}

TMM_BLAS_API void dgemm_(const char* transa, const char* transb, const int* m, const int* n,
                         const int* k, const double* alpha, const double* a, const int* lda,
                         const double* b, const int* ldb, const double* beta, double* c,
                         const int* ldc, size_t transa_len, size_t transb_len) noexcept {
  fortran_portable<double, int>(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                transa_len, transb_len);
}

TMM_BLAS_API void dgemm_64_(const char* transa, const char* transb, const int64_t* m,
                            const int64_t* n, const int64_t* k, const double* alpha,
                            const double* a, const int64_t* lda, const double* b,
                            const int64_t* ldb, const double* beta, double* c, const int64_t* ldc,
                            size_t transa_len, size_t transb_len) noexcept {
  fortran_portable<double, int64_t>(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                    transa_len, transb_len);
}

#endif  // !TMM_BLAS_ASM_ENTRIES

// cblas_sgemm in C++. On x86-64 this is tmm_blas_cblas_sgemm_cxx, where the exported
// cblas_sgemm's assembly fast path (trampolines_x86_64.S) jumps for every call it does not
// take; elsewhere it is cblas_sgemm itself.
#if TMM_BLAS_ASM_ENTRIES
__attribute__((hot)) void tmm_blas_cblas_sgemm_cxx
#else
TMM_BLAS_API __attribute__((hot)) void cblas_sgemm
#endif
    (int layout, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda,
     const float* b, int ldb, float beta, float* c, int ldc) noexcept {
  cblas_jump<float, int>(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

TMM_BLAS_API void cblas_sgemm64_(int layout, int transa, int transb, int64_t m, int64_t n,
                                 int64_t k, float alpha, const float* a, int64_t lda,
                                 const float* b, int64_t ldb, float beta, float* c,
                                 int64_t ldc) noexcept {
  cblas_jump<float, int64_t>(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

TMM_BLAS_API __attribute__((hot)) void cblas_dgemm(int layout, int transa, int transb, int m, int n,
                                                   int k, double alpha, const double* a, int lda,
                                                   const double* b, int ldb, double beta, double* c,
                                                   int ldc) noexcept {
  cblas_jump<double, int>(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

TMM_BLAS_API void cblas_dgemm64_(int layout, int transa, int transb, int64_t m, int64_t n,
                                 int64_t k, double alpha, const double* a, int64_t lda,
                                 const double* b, int64_t ldb, double beta, double* c,
                                 int64_t ldc) noexcept {
  cblas_jump<double, int64_t>(layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The wheels' prefixed names (support/wheel_names.hpp), each its twin's code with
// Wheel = true, the general way. The Fortran ones are declared without the hidden
// lengths of the two transpose strings, as the C prototypes of BLAS libraries declare
// them (and as tests/blas/blas_test_util.hpp calls them): the lengths are unused, and
// on the supported ABIs a caller that passes them calls this definition correctly.
// Declared with them, a call through the common prototype is a call through a pointer
// of another function type, which UBSan's -fsanitize=function rejects.
#define TMM_WHEEL_FORTRAN_ENTRY(name, T, Int)                                                  \
  TMM_BLAS_API void name(const char* transa, const char* transb, const Int* m, const Int* n,   \
                         const Int* k, const T* alpha, const T* a, const Int* lda, const T* b, \
                         const Int* ldb, const T* beta, T* c, const Int* ldc) noexcept {       \
    fortran_entry<T, Int, true>(                                                               \
        {transa, transb, m, n, k, alpha, nullptr, a, lda, b, ldb, beta, c, ldc});              \
  }
#define TMM_WHEEL_CBLAS_ENTRY(name, T, Int)                                                \
  TMM_BLAS_API void name(int layout, int transa, int transb, Int m, Int n, Int k, T alpha, \
                         const T* a, Int lda, const T* b, Int ldb, T beta, T* c,           \
                         Int ldc) noexcept {                                               \
    cblas_entry<T, Int, true>(                                                             \
        {layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});           \
  }
TMM_BLAS_WHEEL_FORTRAN(TMM_WHEEL_FORTRAN_ENTRY)
TMM_BLAS_WHEEL_CBLAS(TMM_WHEEL_CBLAS_ENTRY)
#undef TMM_WHEEL_FORTRAN_ENTRY
#undef TMM_WHEEL_CBLAS_ENTRY

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
