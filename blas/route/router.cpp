// The routing of a checked call (router.hpp):
//   1. the reference SGEMM's quick returns, made here: m or n = 0, or (alpha = 0 or
//      k = 0) with beta = 1: nothing is read or written; alpha = 0 or k = 0 otherwise:
//      C = beta * C, A and B unread, and beta = 0 writes exact zeros without reading
//      C. Neither tiledmm nor the fallback sees these calls: a fallback may get them
//      wrong (OpenBLAS's Zen kernels multiply NaN in A or B by alpha = 0);
//   2. tiledmm when the threshold says so (or when no fallback can take the call);
//   3. if tiledmm fails, the fallback computes the call, and the log says so once per
//      kind of failure. Only TMM_ERROR_INVALID_VALUE and TMM_ERROR_NO_DEVICE (the
//      argument and device checks, such as C overlapping A) are sure to come before
//      tiledmm wrote C; any other failure may come after tiles of C were written
//      back (a late cudaErrorMemoryAllocation is TMM_ERROR_OUT_OF_MEMORY, a kernel
//      launch of the streamed path may fail NOT_SUPPORTED or INTERNAL, and CUDA and
//      CALLBACK errors come at any time). Then with beta = 0 the fallback recomputes
//      C from A and B alone; with beta != 0 from the copy of C taken before the call
//      (TILEDMM_BLAS_KEEP_C), restored first; without a copy C is filled with NaN and
//      the log says so: never silently wrong data. After TMM_ERROR_CUDA tiledmm is off
//      for the rest of the process;
//   4. otherwise the fallback: for a CBLAS call, the fallback's own CBLAS routine on
//      the caller's arguments when it has one (what the fallback alone would run),
//      else its Fortran SGEMM.
// The small calls of step 4 usually never get here: entry/shim.cpp sends them to the
// fallback itself, from the Route made below.
#include "route/router.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "route/cost_model.hpp"
#include "route/engine.hpp"
#include "support/config.hpp"
#include "support/fallback.hpp"
#include "support/log.hpp"
#include "tiledmm/tiledmm_version.h"

namespace tiledmm::blas {

__thread int t_fallback_depth __attribute__((tls_model("initial-exec"))) = 0;
const Route g_no_route;  // every call the general way
const Route64 g_no_route64;
std::atomic<const Route*> g_route{&g_no_route};
std::atomic<const Route64*> g_route64{&g_no_route64};
__thread unsigned t_inner_calls = 0;

namespace {

// Logged once per process each.
std::atomic<bool> g_logged_status[8];
std::atomic<bool> g_logged_no_copy{false};
std::atomic<bool> g_logged_lost{false};

uint64_t flops_of(const GemmCall& c) {
  if (c.alpha == 0.0f || c.k == 0) return 0;
  // m, n, k < 2^63 each: the product of the first two fits in 128 bits; saturate.
  const unsigned __int128 mn = (unsigned __int128)uint64_t(c.m) * uint64_t(c.n);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  if (mn > max / 2) return max;
  const unsigned __int128 f = mn * 2u * uint64_t(c.k);
  return f > max ? max : uint64_t(f);
}

bool fits_int(int64_t v) { return v >= INT_MIN && v <= INT_MAX; }

bool fits32(const GemmCall& c) {
  return fits_int(c.m) && fits_int(c.n) && fits_int(c.k) && fits_int(c.lda) && fits_int(c.ldb) &&
         fits_int(c.ldc);
}

bool is_wide(Routine r) { return r == Routine::kSgemm64 || r == Routine::kCblasSgemm64; }

// Which fallback routine can compute the call.
enum class Plan { kNone, kLp64, kIlp64 };

Plan fallback_plan(const GemmCall& c) {
  if (!is_wide(c.routine)) return fallback().sgemm != nullptr ? Plan::kLp64 : Plan::kNone;
  if (fallback64().sgemm != nullptr) return Plan::kIlp64;
  if (fits32(c) && fallback().sgemm != nullptr) return Plan::kLp64;
  return Plan::kNone;
}

// The caller's CBLAS call, turned back from column-major terms (GemmCall).
template <class Int>
void call_cblas(CblasSgemm<Int> fn, const GemmCall& c) {
  const bool row = c.row_major;
  const int ta = (row ? c.trans_b : c.trans_a) ? kTrans : kNoTrans;
  const int tb = (row ? c.trans_a : c.trans_b) ? kTrans : kNoTrans;
  if (row) {
    fn(kRowMajor, ta, tb, Int(c.n), Int(c.m), Int(c.k), c.alpha, c.b, Int(c.ldb), c.a, Int(c.lda),
       c.beta, c.c, Int(c.ldc));
  } else {
    fn(kColMajor, ta, tb, Int(c.m), Int(c.n), Int(c.k), c.alpha, c.a, Int(c.lda), c.b, Int(c.ldb),
       c.beta, c.c, Int(c.ldc));
  }
}

void call_fallback(Plan plan, const GemmCall& c) {
  FallbackScope scope;
  if (c.routine == Routine::kCblasSgemm || c.routine == Routine::kCblasSgemm64) {
    // kLp64 for a 64-bit call: its sizes fit in 32 bits (fallback_plan).
    if (plan == Plan::kIlp64 && fallback64().cblas_sgemm != nullptr)
      return call_cblas<int64_t>(fallback64().cblas_sgemm, c);
    if (plan == Plan::kLp64 && fallback().cblas_sgemm != nullptr)
      return call_cblas<int>(fallback().cblas_sgemm, c);
  }
  const char ta = c.trans_a ? 'T' : 'N', tb = c.trans_b ? 'T' : 'N';
  if (plan == Plan::kIlp64) {
    const int64_t m = c.m, n = c.n, k = c.k, lda = c.lda, ldb = c.ldb, ldc = c.ldc;
    fallback64().sgemm(&ta, &tb, &m, &n, &k, &c.alpha, c.a, &lda, c.b, &ldb, &c.beta, c.c, &ldc, 1,
                       1);
  } else {
    const int m = int(c.m), n = int(c.n), k = int(c.k), lda = int(c.lda), ldb = int(c.ldb),
              ldc = int(c.ldc);
    fallback().sgemm(&ta, &tb, &m, &n, &k, &c.alpha, c.a, &lda, c.b, &ldb, &c.beta, c.c, &ldc, 1,
                     1);
  }
}

int cpus() {
  static const int count = usable_cpus();
  return count;
}

// The model for the GPU read so far, made again only when that changes (at most a
// few times per process; the old ones are leaked on purpose: another thread may be
// reading one).
struct CachedModel {
  int multiprocessors;
  CostModel model;
};
std::atomic<const CachedModel*> g_model{nullptr};

const CostModel& current_model(const Config& cfg) {
  const int sms = Engine::instance().multiprocessors();
  const CachedModel* cached = g_model.load(std::memory_order_acquire);
  if (cached != nullptr && cached->multiprocessors == sms) return cached->model;
  const CachedModel* fresh = new CachedModel{sms, make_cost_model(cfg, cpus(), sms)};
  g_model.store(fresh, std::memory_order_release);
  return fresh->model;
}

// The flops the CPU computes within tiledmm's fixed overhead, with the CPU's rate
// alone (before any GPU was read).
double floor_flops(const Config& cfg) {
  static const double floor = [&cfg] {
    const CostModel m = make_cost_model(cfg, cpus(), 0);
    return m.overhead_s() * m.cpu_flops_per_s();
  }();
  return floor;
}

bool wants_tiledmm(const Config& cfg, const GemmCall& c, uint64_t flops) {
  switch (cfg.threshold) {
    case ThresholdMode::kNever:
      return false;
    case ThresholdMode::kAll:
      return true;
    case ThresholdMode::kFlops:
      return double(flops) >= cfg.threshold_flops;
    case ThresholdMode::kAuto:
      break;
  }
  if (flops == 0 || cfg.backend == BackendChoice::kCpu) return false;
  // A product the CPU finishes within tiledmm's fixed overhead never goes there: the
  // small calls' fast path (Route), which needs neither the engine nor the GPU's
  // figures.
  if (double(flops) <= floor_flops(cfg)) return false;
  if (Engine::instance().disabled()) return false;
  return current_model(cfg).prefers_tiledmm(c.m, c.n, c.k, c.beta != 0.0f);
}

// C's m x n part, column by column, into the slot's scratch, and back; C's span fits
// (span_fits), so m n and j ldc do too.
bool save_c(Slot& s, const GemmCall& c) {
  try {
    const size_t need = size_t(c.m) * size_t(c.n);
    if (s.saved_c.size() < need) {
      s.saved_c.clear();
      s.saved_c.shrink_to_fit();
      s.saved_c.resize(need);
    }
  } catch (...) {
    return false;
  }
  for (int64_t j = 0; j < c.n; ++j)
    std::memcpy(s.saved_c.data() + j * c.m, c.c + j * c.ldc, size_t(c.m) * sizeof(float));
  return true;
}

void restore_c(const Slot& s, const GemmCall& c) {
  for (int64_t j = 0; j < c.n; ++j)
    std::memcpy(c.c + j * c.ldc, s.saved_c.data() + j * c.m, size_t(c.m) * sizeof(float));
}

// C = beta * C, as the reference SGEMM's alpha = 0 branch: beta = 0 stores zeros
// without reading C (NaN there does not stay), beta = 1 is no call of this.
void scale_c(const GemmCall& c) {
  for (int64_t j = 0; j < c.n; ++j) {
    float* col = c.c + j * c.ldc;
    if (c.beta == 0.0f) {
      std::fill(col, col + c.m, 0.0f);
    } else {
      for (int64_t i = 0; i < c.m; ++i) col[i] *= c.beta;
    }
  }
}

void poison_c(const GemmCall& c) {
  if (!span_fits(c.m, c.n, c.ldc)) return;  // not memory: nothing to fill, j ldc overflows
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t j = 0; j < c.n; ++j) std::fill(c.c + j * c.ldc, c.c + j * c.ldc + c.m, nan);
}

enum class Outcome {
  kDone,      // tiledmm computed C
  kDeclined,  // tiledmm did not run; C untouched
  kRecover,   // tiledmm failed; C is as before the call (or beta = 0): recompute
  kLost       // tiledmm failed, may have written C, and C cannot be restored
};

struct Attempt {
  tmm_status status = TMM_SUCCESS;
  int device = -1;
};

void log_failure_once(tmm_status st, const char* detail) {
  const int index = int(st) >= 0 && int(st) < 8 ? int(st) : 7;
  if (!Log::first(g_logged_status[index])) return;
  Log::line(
      "note: tiledmm failed (%s: %s); the fallback BLAS computes the call (logged once "
      "per kind of failure)",
      tmm_status_string(st), detail);
}

// The failures tmm_sgemm reports from its checks of the arguments and the device,
// before any work: C is as the caller left it. Every other failure may come after C
// was partly written.
bool fails_before_c(tmm_status st) {
  return st == TMM_ERROR_INVALID_VALUE || st == TMM_ERROR_NO_DEVICE;
}

Outcome try_tiledmm(const Config& cfg, const GemmCall& c, Attempt& at) {
  Engine& engine = Engine::instance();
  Slot* s = engine.acquire();
  if (s == nullptr) return Outcome::kDeclined;
  at.device = s->device;
  if (cfg.threshold == ThresholdMode::kAuto) {
    if (!s->cuda) {
      engine.release(s);
      engine.disable("no usable GPU, and automatic routing never uses the CPU backend");
      return Outcome::kDeclined;
    }
    // The device's own figures are known now: ask the model again.
    if (!current_model(cfg).prefers_tiledmm(c.m, c.n, c.k, c.beta != 0.0f)) {
      engine.release(s);
      return Outcome::kDeclined;
    }
  }
  const bool reads_c = c.beta != 0.0f;
  // A C whose span passes INT64_MAX bytes cannot be memory: nothing to copy, and
  // tiledmm rejects the call before it touches C.
  const bool keep = reads_c && cfg.keep_c && span_fits(c.m, c.n, c.ldc);
  const bool saved = keep && save_c(*s, c);
  if (keep && !saved) {
    engine.release(s);
    if (Log::first(g_logged_no_copy))
      Log::note(
          "no memory for the copy of C a routed call keeps: the fallback BLAS computes "
          "such calls (logged once)");
    return Outcome::kDeclined;
  }
  const tmm_status st = tmm_sgemm(s->handle, TMM_COL_MAJOR, c.trans_a ? TMM_TRANS : TMM_NO_TRANS,
                                  c.trans_b ? TMM_TRANS : TMM_NO_TRANS, c.m, c.n, c.k, c.alpha, c.a,
                                  c.lda, c.b, c.ldb, c.beta, c.c, c.ldc);
  at.status = st;
  if (st == TMM_SUCCESS) {
    engine.release(s);
    return Outcome::kDone;
  }
  log_failure_once(st, tmm_get_error_message(s->handle));
  // C may hold tiles written before the failure, unless the failure is one of the
  // checks made before any work (the top of this file).
  Outcome outcome = Outcome::kRecover;
  if (reads_c && !fails_before_c(st)) {
    if (saved) {
      restore_c(*s, c);
    } else {
      outcome = Outcome::kLost;
    }
  }
  if (st == TMM_ERROR_CUDA) {
    // The handle's context may be gone.
    engine.abandon(s);
    engine.disable("a CUDA error (TMM_ERROR_CUDA)");
    return outcome;
  }
  engine.release(s);
  if (st == TMM_ERROR_NO_DEVICE || st == TMM_ERROR_INTERNAL) engine.disable(tmm_status_string(st));
  return outcome;
}

// One line per call in the caller's own terms (a row-major call turned back).
void log_call(const GemmCall& c, const char* where, double ms) {
  if (!Log::enabled()) return;
  const bool row = c.row_major;
  const bool ta = row ? c.trans_b : c.trans_a, tb = row ? c.trans_a : c.trans_b;
  Log::line(
      "%s %s %c%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld alpha=%g beta=%g -> %s "
      "%.3f ms",
      routine_name(c.routine), row ? "row" : "col", ta ? 'T' : 'N', tb ? 'T' : 'N',
      (long long)(row ? c.n : c.m), (long long)(row ? c.m : c.n), (long long)c.k,
      (long long)(row ? c.ldb : c.lda), (long long)(row ? c.lda : c.ldb), (long long)c.ldc,
      double(c.alpha), double(c.beta), where, ms);
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// pilaenv_'s widening is on when local products of PANEL width may go to tiledmm.
bool panels_on(const Config& cfg) {
  Engine& engine = Engine::instance();
  switch (cfg.threshold) {
    case ThresholdMode::kNever:
      return false;
    case ThresholdMode::kAll:
    case ThresholdMode::kFlops:
      return !engine.disabled();
    case ThresholdMode::kAuto:
      break;
  }
  if (cfg.backend == BackendChoice::kCpu || engine.disabled()) return false;
  // The first psgemm_ asks before any local product: find out now whether a GPU is
  // there (this is the call that starts CUDA).
  Slot* s = engine.acquire();
  if (s == nullptr) return false;
  const bool cuda = s->cuda;
  engine.release(s);
  if (!cuda) engine.disable("no usable GPU, and automatic routing never uses the CPU backend");
  return cuda;
}

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

void run_gemm(const GemmCall& c) noexcept {
  try {
    // Made by the first call; later ones may take the fast path (entry/shim.cpp).
    if (is_wide(c.routine)) {
      route64();
    } else {
      route();
    }
    const Config& cfg = config();
    const bool logging = Log::enabled();
    if (c.m == 0 || c.n == 0 || c.alpha == 0.0f || c.k == 0) {
      // Nothing to multiply: the reference's quick returns (the fast path never takes
      // these calls: its sizes start at 1 and it tests alpha's bits).
      const bool scales = c.m != 0 && c.n != 0 && c.beta != 1.0f;
      if (scales) scale_c(c);
      Counters::add(c.routine, Counter::kNoop);
      log_call(c, scales ? "none (C = beta C)" : "none", 0.0);
      return;
    }
    const auto start =
        logging ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    const uint64_t flops = flops_of(c);
    const Plan plan = fallback_plan(c);
    const char* recovered = nullptr;
    if (plan == Plan::kNone || wants_tiledmm(cfg, c, flops)) {
      Attempt at;
      const Outcome outcome = try_tiledmm(cfg, c, at);
      if (outcome == Outcome::kDone) {
        Counters::add_call(c.routine, Counter::kTiledmmCalls, Counter::kTiledmmFlops, flops);
        Counters::note_k(c.routine, c.k);
        if (logging) {
          char where[32];
          if (at.device >= 0) {
            std::snprintf(where, sizeof where, "tiledmm cuda:%d", at.device);
          } else {
            std::snprintf(where, sizeof where, "tiledmm cpu");
          }
          log_call(c, where, ms_since(start));
        }
        return;
      }
      if (outcome == Outcome::kLost || plan == Plan::kNone) {
        poison_c(c);
        Counters::add(c.routine, Counter::kLost);
        if (Log::first(g_logged_lost) || logging)
          Log::line("note: %s m=%lld n=%lld k=%lld could not be computed (%s); C is set to NaN",
                    routine_name(c.routine), (long long)c.m, (long long)c.n, (long long)c.k,
                    plan == Plan::kNone
                        ? "tiledmm failed and there is no fallback BLAS"
                        : "tiledmm failed after it may have written C, and no copy of C");
        log_call(c, "lost", ms_since(start));
        return;
      }
      if (outcome == Outcome::kRecover) {
        Counters::add(c.routine, Counter::kRecovered);
        recovered = tmm_status_string(at.status);
      }
    }
    call_fallback(plan, c);
    Counters::add_call(c.routine, Counter::kFallbackCalls, Counter::kFallbackFlops, flops);
    if (logging) {
      char where[160];
      if (recovered != nullptr) {
        std::snprintf(where, sizeof where, "fallback (recovered: %.120s)", recovered);
      } else {
        std::snprintf(where, sizeof where, "fallback");
      }
      log_call(c, where, ms_since(start));
    }
  } catch (...) {
    // Nothing above throws once C may have been touched (logging uses fixed buffers).
  }
}

int pilaenv(const int* ictxt, const char* prec) noexcept {
  try {
    const Config& cfg = config();
    const char p = prec != nullptr ? char(std::toupper(static_cast<unsigned char>(*prec))) : ' ';
    if (p == 'S' && cfg.panel > 0 && panels_on(cfg)) {
      const int width = int(std::min<int64_t>(cfg.panel, INT_MAX));
      Counters::add(Routine::kPilaenv, Counter::kTiledmmCalls);
      Log::line("pilaenv_ %c -> %d (widened for tiledmm)", p, width);
      return width;
    }
    const Pilaenv next = next_pilaenv();
    const int width = next != nullptr ? next(ictxt, prec) : 32;
    Counters::add(Routine::kPilaenv, Counter::kFallbackCalls);
    Log::line("pilaenv_ %c -> %d (%s)", p, width, next != nullptr ? "ScaLAPACK's" : "default");
    return width;
  } catch (...) {
    return 32;
  }
}

namespace {

// The fast path of the entry points as the Route has it: jump (to the fallback's
// routine), scoped (to it inside a FallbackScope), off, or unmade (no call yet).
template <class Int>
std::string fast_path_text(const RouteOf<Int>* r, const RouteOf<Int>* none, const char* fortran,
                           const char* cblas) {
  auto one = [&](bool fast, bool direct) {
    return r == none ? "unmade" : !fast ? "off" : direct ? "jump" : "scoped";
  };
  return std::string(fortran) + "=" + one(r->fast, r->sgemm_direct) + " " + cblas + "=" +
         one(r->fast_cblas, r->cblas_direct);
}

}  // namespace

std::string describe() {
  const Config& cfg = config();
  const Fallback& f = fallback();
  const Fallback64& f64 = fallback64();
  const CostModel& model = current_model(cfg);
  std::string devices;
  for (int d : cfg.devices) devices += (devices.empty() ? "" : ",") + std::to_string(d);
  std::string threshold = threshold_name(cfg.threshold);
  if (cfg.threshold == ThresholdMode::kFlops) {
    char text[40];
    std::snprintf(text, sizeof text, "%g flops", cfg.threshold_flops);
    threshold = text;
  }
  char model_text[256];
  std::snprintf(model_text, sizeof model_text,
                "link %.3g GB/s, gpu %.3g TFLOP/s%s, cpu %.4g GFLOP/s (%d CPUs), overhead %.3g us",
                model.link_bytes_per_s() / 1e9, model.gpu_flops_per_s() / 1e12,
                cfg.gpu_tflops > 0                         ? " (set)"
                : Engine::instance().multiprocessors() > 0 ? " (from the device)"
                                                           : " (default until a device is read)",
                model.cpu_flops_per_s() / 1e9, cpus(), model.overhead_s() * 1e6);
  const std::string version = std::to_string(TILEDMM_VERSION_MAJOR) + "." +
                              std::to_string(TILEDMM_VERSION_MINOR) + "." +
                              std::to_string(TILEDMM_VERSION_PATCH);
  return "libtiledmm_blas " + version + ": threshold=" + threshold +
         " backend=" + backend_name(cfg.backend) + " devices=" + devices +
         " math=" + effective_math(cfg) + " panel=" + std::to_string(cfg.panel) +
         " keep_c=" + (cfg.keep_c ? "1" : "0") + " log=" + (cfg.log.empty() ? "off" : cfg.log) +
         " config=" + (cfg.config_file.empty() ? "none" : cfg.config_file) +
         "; fallback=" + (f.path.empty() ? "none" : f.path) +
         (f.refused.empty() ? "" : " (refused: " + f.refused + ")") +
         "; fallback64=" + (f64.path.empty() ? "none" : f64.path) + "; fast path: " +
         fast_path_text(g_route.load(std::memory_order_acquire), &g_no_route, "sgemm_",
                        "cblas_sgemm") +
         " " +
         fast_path_text(g_route64.load(std::memory_order_acquire), &g_no_route64, "sgemm_64_",
                        "cblas_sgemm64_") +
         "; model: " + model_text + "; tiledmm: " + Engine::instance().describe();
}

}  // namespace tiledmm::blas
