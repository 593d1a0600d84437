// Where a checked BLAS call runs: tiledmm or the fallback BLAS, and what happens
// when tiledmm fails. entry/shim.cpp turns each exported entry point into a GemmCall (in
// column-major terms) after checking its arguments the reference way; everything
// after that is here.
//
// Small products are most calls, and each must cost next to nothing on top of the
// fallback BLAS. For them entry/shim.cpp takes a fast path of its own: Route (below) says,
// from one pointer read, whether a call of so many flops goes straight to the
// fallback; if so the entry point hands the caller's own arguments to the fallback's
// routine of the same name, counts the call, and builds no GemmCall.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "support/counters.hpp"
#include "support/fallback.hpp"

namespace tiledmm::blas {

// One product with valid arguments, column-major: a row-major CBLAS call is turned
// around first (C^T = op(B)^T op(A)^T), as the reference CBLAS does. T: float for the
// single-precision entry points, double for the double-precision ones.
template <class T>
struct GemmCallOf {
  Routine routine = gemm_routine<T, int>(false);
  bool row_major = false;  // as the caller made it (for the log only)
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  T alpha = T(1), beta = T(0);
  const T* a = nullptr;
  int64_t lda = 1;
  const T* b = nullptr;
  int64_t ldb = 1;
  T* c = nullptr;
  int64_t ldc = 1;
};
using GemmCall = GemmCallOf<float>;
using DgemmCall = GemmCallOf<double>;

// Whether a column-major matrix of rows x cols elements of T with leading dimension
// ld (valid: ld >= max(1, rows)) can be memory at all: its span, (cols - 1) * ld +
// rows elements, within INT64_MAX bytes, computed without overflow. A larger one
// cannot exist in a 64-bit address space (tiledmm rejects such a call); the front end
// checks C before it copies C or fills it itself, where the offsets j * ldc would
// overflow.
template <class T = float>
inline bool span_fits(int64_t rows, int64_t cols, int64_t ld) {
  if (rows <= 0 || cols <= 0) return true;
  int64_t span = 0;
  return !__builtin_mul_overflow(cols - 1, ld, &span) &&
         !__builtin_add_overflow(span, rows, &span) && span <= INT64_MAX / int64_t(sizeof(T));
}

// Runs the call: a quick return, tiledmm, or the fallback. Never throws. Defined for
// float and double (router.cpp).
template <class T>
void run_gemm(const GemmCallOf<T>& call) noexcept;

// pilaenv_: the widened PBLAS panel for single and double precision ('S', 'D', either
// case) while tiledmm is on, else ScaLAPACK's own answer.
int pilaenv(const int* ictxt, const char* prec) noexcept;

// While the library calls into the fallback, on this thread. A fallback whose
// routines call sgemm_ or dgemm_ through the PLT (the reference CBLAS does) reaches this
// library again; such inner calls go straight back to the fallback.
// (Initial-exec TLS, as in support/counters.hpp: read on every call.)
extern __thread int t_fallback_depth __asm__("tmm_blas_t_fallback_depth")
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

class FallbackScope {
 public:
  FallbackScope() { ++t_fallback_depth; }
  ~FallbackScope() { --t_fallback_depth; }
  FallbackScope(const FallbackScope&) = delete;
  FallbackScope& operator=(const FallbackScope&) = delete;
  static bool active() { return t_fallback_depth > 0; }
};

// What the entry points need to send a small call straight to the fallback. Made
// once, by the first call that reaches run_gemm, from the settings and the fallback,
// which are fixed for the life of the process; the threshold it encodes is exactly
// run_gemm's. Until it is made (its global points to a Route without the fast path)
// every call goes the general way. One per precision T and integer width Int: int for
// sgemm_ and cblas_sgemm (Route), int64_t for sgemm_64_ and cblas_sgemm64_ (Route64,
// made by the first of those calls, so that a program that never makes one never
// loads an ILP64 BLAS), and the same for dgemm_, cblas_dgemm (DRoute) and their ILP64
// twins (DRoute64).
template <class T, class Int>
struct RouteOf {
  // The fast path applies: no log (every call logs a line), a fallback xGEMM (for
  // the ILP64 Routes: one that never calls back into this library), and a threshold
  // other than "all" that leaves some calls to the fallback.
  bool fast = false;
  bool fast_cblas = false;  // fast, and the fallback has cblas_xgemm (ILP64: direct)
  // The fallback's cblas_xgemm never calls xgemm_ (OpenBLAS's does not; the
  // reference CBLAS's does, through the PLT, which reaches this library): then the
  // fast path needs no FallbackScope around it and jumps to it (a tail call).
  bool cblas_direct = false;
  // The fallback's xgemm_ never calls back into this library (no xGEMM known does):
  // then the fast path jumps to it too, with the caller's arguments, the hidden
  // lengths of the two character arguments included. (Each of the *_direct flags
  // implies its fast flag: the assembly fast paths, entry/trampolines_x86_64.S, read only them.)
  bool gemm_direct = false;
  // A call of at most this many flops (flops_of) goes to the fallback without a look
  // at tiledmm: the "auto" threshold's floor (calls the CPU finishes within tiledmm's
  // fixed overhead, at the CPU's rate in this precision), just below a flop
  // threshold, or every call.
  uint64_t fallback_max_flops = 0;
  FortranGemm<T, Int> gemm = nullptr;      // fallback().gemm<T>() (fallback64().gemm<T>())
  CblasGemm<T, Int> cblas_gemm = nullptr;  // fallback().cblas<T>() (may be nullptr)
};
using Route = RouteOf<float, int>;
using Route64 = RouteOf<float, int64_t>;
using DRoute = RouteOf<double, int>;
using DRoute64 = RouteOf<double, int64_t>;

// Never nullptr: the Route, or one without the fast path until it is made.
// (The fast path's assembly, entry/trampolines_x86_64.S, reads g_route and t_fallback_depth by
// their asm names.)
extern std::atomic<const Route*> g_route __asm__("tmm_blas_g_route")
    __attribute__((visibility("hidden")));
extern std::atomic<const Route64*> g_route64 __attribute__((visibility("hidden")));
extern std::atomic<const DRoute*> g_droute __attribute__((visibility("hidden")));
extern std::atomic<const DRoute64*> g_droute64 __attribute__((visibility("hidden")));
// The Routes without the fast path that the globals point to until theirs are made.
extern const Route g_no_route __attribute__((visibility("hidden")));
extern const Route64 g_no_route64 __attribute__((visibility("hidden")));
extern const DRoute g_no_droute __attribute__((visibility("hidden")));
extern const DRoute64 g_no_droute64 __attribute__((visibility("hidden")));

// The global of the Route of T and Int, and its Route without the fast path.
template <class T, class Int>
std::atomic<const RouteOf<T, Int>*>& route_global() {
  if constexpr (sizeof(T) == sizeof(float)) {
    if constexpr (sizeof(Int) == sizeof(int)) {
      return g_route;
    } else {
      return g_route64;
    }
  } else if constexpr (sizeof(Int) == sizeof(int)) {
    return g_droute;
  } else {
    return g_droute64;
  }
}
template <class T, class Int>
const RouteOf<T, Int>& no_route() {
  if constexpr (sizeof(T) == sizeof(float)) {
    if constexpr (sizeof(Int) == sizeof(int)) {
      return g_no_route;
    } else {
      return g_no_route64;
    }
  } else if constexpr (sizeof(Int) == sizeof(int)) {
    return g_no_droute;
  } else {
    return g_no_droute64;
  }
}

// Makes the Route of T and Int on the first call (lock-free: a thread that finds
// another making it, or a call made while it is made, gets a Route without the fast
// path). Defined for float and double, int and int64_t (probes.cpp).
template <class T, class Int>
const RouteOf<T, Int>& route();

// Calls that reached the library inside a FallbackScope on this thread: the Route's
// probes (does this fallback routine call back into the library?) compare it
// before and after one call.
extern __thread unsigned t_inner_calls __attribute__((visibility("hidden")));

// The text of tmm_blas_describe.
std::string describe();

}  // namespace tiledmm::blas
