// The Route of the small calls' fast path (route/router.hpp): made once per process,
// from the settings and the fallback, and from probes of the fallback's routines
// (does a CBLAS or SGEMM call back into this library?), which decide whether the
// entry points may jump to them. Also the globals the entry points' assembly reads.
#include <atomic>
#include <cmath>
#include <cstdint>

#include "route/cost_model.hpp"
#include "route/router.hpp"
#include "support/config.hpp"
#include "support/fallback.hpp"
#include "support/log.hpp"

namespace tiledmm::blas {

__thread int t_fallback_depth __attribute__((tls_model("initial-exec"))) = 0;
const Route g_no_route;  // every call the general way
const Route64 g_no_route64;
const DRoute g_no_droute;
const DRoute64 g_no_droute64;
std::atomic<const Route*> g_route{&g_no_route};
std::atomic<const Route64*> g_route64{&g_no_route64};
std::atomic<const DRoute*> g_droute{&g_no_droute};
std::atomic<const DRoute64*> g_droute64{&g_no_droute64};
__thread unsigned t_inner_calls = 0;

namespace {

// The largest x with double(x) <= bound: the test of wants_tiledmm on a double,
// made on the integer itself (double(x) grows with x). 0 when no x > 0 passes.
uint64_t largest_at_most(double bound) {
  if (!(bound >= 1)) return 0;
  if (double(UINT64_MAX) <= bound) return UINT64_MAX;
  uint64_t lo = uint64_t(bound), hi = UINT64_MAX;  // double(lo) <= bound < double(hi)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (double(mid) <= bound ? lo : hi) = mid;
  }
  return lo;
}

// Whether `call`, made inside a FallbackScope, reaches this library again (each
// entry point counts such inner calls in t_inner_calls). One 1 x 1 x 1 product, as
// the fast path would make it, tells: a CBLAS calls its xGEMM for every product or
// for none (the reference and BLIS do; OpenBLAS, MKL and ATLAS do not), and no
// xGEMM known calls back. Each precision's routines are probed for themselves.
template <class Call>
bool calls_back(Call call) {
  const unsigned before = t_inner_calls;
  {
    FallbackScope scope;
    call();
  }
  return t_inner_calls != before;
}

template <class T, class Int>
bool gemm_calls_back(FortranGemm<T, Int> fn) {
  return calls_back([fn] {
    const T a = 1, b = 1, zero = 0, one = 1;
    const Int n1 = 1;
    T c = 0;
    fn("N", "N", &n1, &n1, &n1, &one, &a, &n1, &b, &n1, &zero, &c, &n1, 1, 1);
  });
}

template <class T, class Int>
bool cblas_calls_back(CblasGemm<T, Int> fn) {
  return calls_back([fn] {
    const T a = 1, b = 1;
    T c = 0;
    fn(kColMajor, kNoTrans, kNoTrans, 1, 1, 1, T(1), &a, 1, &b, 1, T(0), &c, 1);
  });
}

// The bound of the fast path, and whether it applies at all (RouteOf::fast, without
// its fallback).
template <class T, class Int>
RouteOf<T, Int> route_base() {
  const Config& cfg = config();  // opens the log
  RouteOf<T, Int> r;
  r.fast = !Log::enabled();
  switch (cfg.threshold) {
    case ThresholdMode::kNever:
      r.fallback_max_flops = UINT64_MAX;
      break;
    case ThresholdMode::kAll:
      r.fast = false;
      break;
    case ThresholdMode::kFlops:
      // double(flops) >= threshold goes to tiledmm: the fallback takes every double
      // below it, that is up to the next double down.
      r.fallback_max_flops = largest_at_most(std::nextafter(cfg.threshold_flops, -HUGE_VAL));
      break;
    case ThresholdMode::kAuto:
      r.fallback_max_flops = cfg.backend == BackendChoice::kCpu
                                 ? UINT64_MAX
                                 : largest_at_most(floor_flops(cfg, precision_of<T>()));
      break;
  }
  r.fast = r.fast && r.fallback_max_flops > 0;
  return r;
}

// The LP64 Route of T: the fast path jumps to the fallback's routines, or calls them
// inside a FallbackScope (entry/shim.cpp's *_in_scope) when they call back.
template <class T>
RouteOf<T, int> build_route() {
  RouteOf<T, int> r = route_base<T, int>();
  const Fallback& f = fallback();
  r.gemm = f.gemm<T>();
  r.cblas_gemm = f.cblas<T>();
  r.fast = r.fast && r.gemm != nullptr;
  r.gemm_direct = r.fast && !gemm_calls_back(r.gemm);
  r.fast_cblas = r.fast && r.cblas_gemm != nullptr;
  r.cblas_direct = r.fast_cblas && !cblas_calls_back(r.cblas_gemm);
  return r;
}

// ILP64: the fast path only jumps (entry/shim.cpp has no FallbackScope wrappers for it).
template <class T>
RouteOf<T, int64_t> build_route64() {
  RouteOf<T, int64_t> r = route_base<T, int64_t>();
  const Fallback64& f = fallback64();
  r.gemm = f.gemm<T>();
  r.cblas_gemm = f.cblas<T>();
  r.gemm_direct = r.fast && r.gemm != nullptr && !gemm_calls_back(r.gemm);
  r.fast = r.gemm_direct;
  r.cblas_direct = r.fast && r.cblas_gemm != nullptr && !cblas_calls_back(r.cblas_gemm);
  r.fast_cblas = r.cblas_direct;
  return r;
}

template <class T, class Int>
RouteOf<T, Int> build() {
  if constexpr (sizeof(Int) == sizeof(int)) {
    return build_route<T>();
  } else {
    return build_route64<T>();
  }
}

// Makes a Route once. No lock: a child of fork() never waits for a thread its parent
// had, and the probes may call back into the library.
template <class R, R (*build)()>
const R& made_once(std::atomic<const R*>& published, const R& none) {
  const R* r = published.load(std::memory_order_acquire);
  if (r != &none) return *r;
  static R made;  // constant-initialised: no guard, no destructor
  static std::atomic<bool> making{false};
  if (making.exchange(true, std::memory_order_acq_rel)) return none;
  made = build();
  published.store(&made, std::memory_order_release);
  return made;
}

}  // namespace

template <class T, class Int>
const RouteOf<T, Int>& route() {
  return made_once<RouteOf<T, Int>, build<T, Int>>(route_global<T, Int>(), no_route<T, Int>());
}

template const Route& route<float, int>();
template const Route64& route<float, int64_t>();
template const DRoute& route<double, int>();
template const DRoute64& route<double, int64_t>();

}  // namespace tiledmm::blas
