// The routing of a checked call (route/router.hpp), the same in both precisions
// (run_gemm over float for sgemm_ and cblas_sgemm, over double for dgemm_ and
// cblas_dgemm, and their ILP64 twins):
//   1. the reference xGEMM's quick returns, made here: m or n = 0, or (alpha = 0 or
//      k = 0) with beta = 1: nothing is read or written; alpha = 0 or k = 0 otherwise:
//      C = beta * C, A and B unread, and beta = 0 writes exact zeros without reading
//      C. Neither tiledmm nor the fallback sees these calls: a fallback may get them
//      wrong (OpenBLAS's Zen kernels multiply NaN in A or B by alpha = 0);
//   2. tiledmm when the threshold says so (or when no fallback can take the call);
//   3. if tiledmm fails (route/recovery.cpp), the fallback computes the call, and the
//      log says so once per kind of failure. Only TMM_ERROR_INVALID_VALUE and TMM_ERROR_NO_DEVICE
//      (the argument and device checks, such as C overlapping A) are sure to come before tiledmm
//      wrote C; any other failure may come after tiles of C were written back (a late
//      cudaErrorMemoryAllocation is TMM_ERROR_OUT_OF_MEMORY, a kernel launch of the streamed path
//      may fail NOT_SUPPORTED or INTERNAL, and CUDA and CALLBACK errors come at any time). Then
//      with beta = 0 the fallback recomputes C from A and B alone; with beta != 0 from the copy of
//      C taken before the call (TILEDMM_BLAS_KEEP_C), restored first; without a copy C is filled
//      with NaN and the log says so: never silently wrong data. After TMM_ERROR_CUDA tiledmm is off
//      for the rest of the process;
//   4. otherwise the fallback: for a CBLAS call, the fallback's own CBLAS routine on
//      the caller's arguments when it has one (what the fallback alone would run),
//      else its Fortran xGEMM. A wheel's prefixed name (scipy_dgemm_64_, ...) goes
//      first to the next definition of the same name (the wheel's OpenBLAS), else as
//      its standard twin would.
// The small calls of step 4 usually never get here: entry/shim.cpp sends them to the
// fallback itself, from the Route (route/probes.cpp).
#include "route/router.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <limits>

#include "route/cost_model.hpp"
#include "route/engine.hpp"
#include "route/recovery.hpp"
#include "support/config.hpp"
#include "support/fallback.hpp"
#include "support/log.hpp"

namespace tiledmm::blas {

namespace {

// Logged once per process.
std::atomic<bool> g_logged_lost{false};

template <class T>
uint64_t flops_of(const GemmCallOf<T>& c) {
  if (c.alpha == T(0) || c.k == 0) return 0;
  // m, n, k < 2^63 each: the product of the first two fits in 128 bits; saturate.
  const unsigned __int128 mn = (unsigned __int128)uint64_t(c.m) * uint64_t(c.n);
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  if (mn > max / 2) return max;
  const unsigned __int128 f = mn * 2u * uint64_t(c.k);
  return f > max ? max : uint64_t(f);
}

bool fits_int(int64_t v) { return v >= INT_MIN && v <= INT_MAX; }

template <class T>
bool fits32(const GemmCallOf<T>& c) {
  return fits_int(c.m) && fits_int(c.n) && fits_int(c.k) && fits_int(c.lda) && fits_int(c.ldb) &&
         fits_int(c.ldc);
}

// Which fallback routine can compute the call: a wheel's own (the next definition of
// a wheel's prefixed name, support/fallback.hpp), or the standard fallbacks' of the
// call's width or of 32 bits.
enum class Plan { kNone, kLp64, kIlp64, kWheel };

// The wheel's routines of the call's width, when it is a wheel's name and the wheel
// has the routine it names (a CBLAS name: its cblas_xgemm, else its xgemm_).
template <class T>
bool wheel_has(const GemmCallOf<T>& c) {
  if (!is_wheel(c.routine)) return false;
  if (is_wide(c.routine)) {
    const WheelFallback<int64_t>& w = wheel_fallback<int64_t>();
    return w.gemm<T>() != nullptr || (is_cblas(c.routine) && w.cblas<T>() != nullptr);
  }
  const WheelFallback<int>& w = wheel_fallback<int>();
  return w.gemm<T>() != nullptr || (is_cblas(c.routine) && w.cblas<T>() != nullptr);
}

template <class T>
Plan fallback_plan(const GemmCallOf<T>& c) {
  if (wheel_has(c)) return Plan::kWheel;
  const bool lp64 = fallback().gemm<T>() != nullptr;
  if (!is_wide(c.routine)) return lp64 ? Plan::kLp64 : Plan::kNone;
  if (fallback64().gemm<T>() != nullptr) return Plan::kIlp64;
  if (fits32(c) && lp64) return Plan::kLp64;
  return Plan::kNone;
}

// The caller's CBLAS call, turned back from column-major terms (GemmCall).
template <class T, class Int>
void call_cblas(CblasGemm<T, Int> fn, const GemmCallOf<T>& c) {
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

// The call as the wheel's routine of its width Int computes it (Plan::kWheel).
template <class T, class Int>
void call_wheel(const GemmRoutines<Int>& w, const GemmCallOf<T>& c) {
  if (is_cblas(c.routine) && w.template cblas<T>() != nullptr)
    return call_cblas<T, Int>(w.template cblas<T>(), c);
  const char ta = c.trans_a ? 'T' : 'N', tb = c.trans_b ? 'T' : 'N';
  const Int m = Int(c.m), n = Int(c.n), k = Int(c.k), lda = Int(c.lda), ldb = Int(c.ldb),
            ldc = Int(c.ldc);
  w.template gemm<T>()(&ta, &tb, &m, &n, &k, &c.alpha, c.a, &lda, c.b, &ldb, &c.beta, c.c, &ldc, 1,
                       1);
}

template <class T>
void call_fallback(Plan plan, const GemmCallOf<T>& c) {
  FallbackScope scope;
  if (plan == Plan::kWheel) {
    if (is_wide(c.routine)) return call_wheel<T, int64_t>(wheel_fallback<int64_t>(), c);
    return call_wheel<T, int>(wheel_fallback<int>(), c);
  }
  if (is_cblas(c.routine)) {
    // kLp64 for a 64-bit call: its sizes fit in 32 bits (fallback_plan).
    if (plan == Plan::kIlp64 && fallback64().cblas<T>() != nullptr)
      return call_cblas<T, int64_t>(fallback64().cblas<T>(), c);
    if (plan == Plan::kLp64 && fallback().cblas<T>() != nullptr)
      return call_cblas<T, int>(fallback().cblas<T>(), c);
  }
  const char ta = c.trans_a ? 'T' : 'N', tb = c.trans_b ? 'T' : 'N';
  if (plan == Plan::kIlp64) {
    const int64_t m = c.m, n = c.n, k = c.k, lda = c.lda, ldb = c.ldb, ldc = c.ldc;
    fallback64().gemm<T>()(&ta, &tb, &m, &n, &k, &c.alpha, c.a, &lda, c.b, &ldb, &c.beta, c.c, &ldc,
                           1, 1);
  } else {
    const int m = int(c.m), n = int(c.n), k = int(c.k), lda = int(c.lda), ldb = int(c.ldb),
              ldc = int(c.ldc);
    fallback().gemm<T>()(&ta, &tb, &m, &n, &k, &c.alpha, c.a, &lda, c.b, &ldb, &c.beta, c.c, &ldc,
                         1, 1);
  }
}

template <class T>
bool wants_tiledmm(const Config& cfg, const GemmCallOf<T>& c, uint64_t flops) {
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
  constexpr Precision precision = precision_of<T>();
  if (double(flops) <= floor_flops(cfg, precision)) return false;
  if (Engine::instance().disabled()) return false;
  return current_model(cfg, precision).prefers_tiledmm(c.m, c.n, c.k, c.beta != T(0));
}

// C = beta * C, as the reference xGEMM's alpha = 0 branch: beta = 0 stores zeros
// without reading C (NaN there does not stay), beta = 1 is no call of this.
template <class T>
void scale_c(const GemmCallOf<T>& c) {
  for (int64_t j = 0; j < c.n; ++j) {
    T* col = c.c + j * c.ldc;
    if (c.beta == T(0)) {
      std::fill(col, col + c.m, T(0));
    } else {
      for (int64_t i = 0; i < c.m; ++i) col[i] *= c.beta;
    }
  }
}

// One line per call in the caller's own terms (a row-major call turned back).
template <class T>
void log_call(const GemmCallOf<T>& c, const char* where, double ms) {
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

}  // namespace

template <class T>
void run_gemm(const GemmCallOf<T>& c) noexcept {
  try {
    // Made by the first call; later ones may take the fast path (entry/shim.cpp).
    if (is_wide(c.routine)) {
      route<T, int64_t>();
    } else {
      route<T, int>();
    }
    const Config& cfg = config();
    const bool logging = Log::enabled();
    if (c.m == 0 || c.n == 0 || c.alpha == T(0) || c.k == 0) {
      // Nothing to multiply: the reference's quick returns (the fast path never takes
      // these calls: its sizes start at 1 and it tests alpha's bits).
      const bool scales = c.m != 0 && c.n != 0 && c.beta != T(1);
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
          char where[48];
          if (at.device >= 0 && at.devices > 1) {
            std::snprintf(where, sizeof where, "tiledmm cuda:%d and %d more", at.device,
                          at.devices - 1);
          } else if (at.device >= 0) {
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

template void run_gemm<float>(const GemmCallOf<float>&) noexcept;
template void run_gemm<double>(const GemmCallOf<double>&) noexcept;

}  // namespace tiledmm::blas
