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
std::atomic<const Route*> g_route{&g_no_route};
std::atomic<const Route64*> g_route64{&g_no_route64};
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
// the fast path would make it, tells: a CBLAS calls its SGEMM for every product or
// for none (the reference and BLIS do; OpenBLAS, MKL and ATLAS do not), and no
// SGEMM known calls back.
template <class Call>
bool calls_back(Call call) {
  const unsigned before = t_inner_calls;
  {
    FallbackScope scope;
    call();
  }
  return t_inner_calls != before;
}

template <class Int>
bool sgemm_calls_back(FortranSgemm<Int> fn) {
  return calls_back([fn] {
    const float a = 1.0f, b = 1.0f, zero = 0.0f, one = 1.0f;
    const Int n1 = 1;
    float c = 0.0f;
    fn("N", "N", &n1, &n1, &n1, &one, &a, &n1, &b, &n1, &zero, &c, &n1, 1, 1);
  });
}

template <class Int>
bool cblas_calls_back(CblasSgemm<Int> fn) {
  return calls_back([fn] {
    const float a = 1.0f, b = 1.0f;
    float c = 0.0f;
    fn(kColMajor, kNoTrans, kNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
  });
}

// The bound of the fast path, and whether it applies at all (RouteOf::fast, without
// its fallback).
template <class Int>
RouteOf<Int> route_base() {
  const Config& cfg = config();  // opens the log
  RouteOf<Int> r;
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
      r.fallback_max_flops =
          cfg.backend == BackendChoice::kCpu ? UINT64_MAX : largest_at_most(floor_flops(cfg));
      break;
  }
  r.fast = r.fast && r.fallback_max_flops > 0;
  return r;
}

Route build_route() {
  Route r = route_base<int>();
  const Fallback& f = fallback();
  r.sgemm = f.sgemm;
  r.cblas_sgemm = f.cblas_sgemm;
  r.fast = r.fast && f.sgemm != nullptr;
  r.sgemm_direct = r.fast && !sgemm_calls_back(r.sgemm);
  r.fast_cblas = r.fast && r.cblas_sgemm != nullptr;
  r.cblas_direct = r.fast_cblas && !cblas_calls_back(r.cblas_sgemm);
  return r;
}

// ILP64: the fast path only jumps (entry/shim.cpp has no FallbackScope wrappers for it).
Route64 build_route64() {
  Route64 r = route_base<int64_t>();
  const Fallback64& f = fallback64();
  r.sgemm = f.sgemm;
  r.cblas_sgemm = f.cblas_sgemm;
  r.sgemm_direct = r.fast && f.sgemm != nullptr && !sgemm_calls_back(r.sgemm);
  r.fast = r.sgemm_direct;
  r.cblas_direct = r.fast && f.cblas_sgemm != nullptr && !cblas_calls_back(r.cblas_sgemm);
  r.fast_cblas = r.cblas_direct;
  return r;
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

const Route& route() { return made_once<Route, build_route>(g_route, g_no_route); }

const Route64& route64() { return made_once<Route64, build_route64>(g_route64, g_no_route64); }

}  // namespace tiledmm::blas
