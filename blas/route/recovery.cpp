// tiledmm's attempt at a call, and C after a failure (route/recovery.hpp).
#include "route/recovery.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

#include "route/cost_model.hpp"
#include "route/engine.hpp"
#include "support/log.hpp"

namespace tiledmm::blas {
namespace {

// Logged once per process each.
std::atomic<bool> g_logged_status[8];
std::atomic<bool> g_logged_no_copy{false};

// C's m x n part, column by column, into the slot's scratch (bytes, either
// precision), and back; C's span fits (span_fits), so m n and j ldc do too.
template <class T>
bool save_c(Slot& s, const GemmCallOf<T>& c) {
  try {
    const size_t need = size_t(c.m) * size_t(c.n) * sizeof(T);
    if (s.saved_c.size() < need) {
      s.saved_c.clear();
      s.saved_c.shrink_to_fit();
      s.saved_c.resize(need);
    }
  } catch (...) {
    return false;
  }
  for (int64_t j = 0; j < c.n; ++j)
    std::memcpy(s.saved_c.data() + size_t(j * c.m) * sizeof(T), c.c + j * c.ldc,
                size_t(c.m) * sizeof(T));
  return true;
}

template <class T>
void restore_c(const Slot& s, const GemmCallOf<T>& c) {
  for (int64_t j = 0; j < c.n; ++j)
    std::memcpy(c.c + j * c.ldc, s.saved_c.data() + size_t(j * c.m) * sizeof(T),
                size_t(c.m) * sizeof(T));
}

// tiledmm's GEMM of the element type, on host memory, column-major.
tmm_status tiledmm_gemm(tmm_handle h, const GemmCallOf<float>& c) {
  return tmm_sgemm(h, TMM_COL_MAJOR, c.trans_a ? TMM_TRANS : TMM_NO_TRANS,
                   c.trans_b ? TMM_TRANS : TMM_NO_TRANS, c.m, c.n, c.k, c.alpha, c.a, c.lda, c.b,
                   c.ldb, c.beta, c.c, c.ldc);
}

tmm_status tiledmm_gemm(tmm_handle h, const GemmCallOf<double>& c) {
  return tmm_dgemm(h, TMM_COL_MAJOR, c.trans_a ? TMM_TRANS : TMM_NO_TRANS,
                   c.trans_b ? TMM_TRANS : TMM_NO_TRANS, c.m, c.n, c.k, c.alpha, c.a, c.lda, c.b,
                   c.ldb, c.beta, c.c, c.ldc);
}

void log_failure_once(tmm_status st, const char* detail) {
  const int index = int(st) >= 0 && int(st) < 8 ? int(st) : 7;
  if (!Log::first(g_logged_status[index])) return;
  Log::line(
      "note: tiledmm failed (%s: %s); the fallback BLAS computes the call (logged once "
      "per kind of failure)",
      tmm_status_string(st), detail);
}

// The failures tmm_sgemm and tmm_dgemm report from their checks of the arguments and
// the device, before any work: C is as the caller left it. Every other failure may come after C
// was partly written.
bool fails_before_c(tmm_status st) {
  return st == TMM_ERROR_INVALID_VALUE || st == TMM_ERROR_NO_DEVICE;
}

}  // namespace

template <class T>
void poison_c(const GemmCallOf<T>& c) {
  if (!span_fits<T>(c.m, c.n, c.ldc)) return;  // not memory: nothing to fill, j ldc overflows
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (int64_t j = 0; j < c.n; ++j) std::fill(c.c + j * c.ldc, c.c + j * c.ldc + c.m, nan);
}

template <class T>
Outcome try_tiledmm(const Config& cfg, const GemmCallOf<T>& c, Attempt& at) {
  Engine& engine = Engine::instance();
  Slot* s = engine.acquire();
  if (s == nullptr) return Outcome::kDeclined;
  at.device = s->device;
  at.devices = s->devices;
  if (cfg.threshold == ThresholdMode::kAuto) {
    if (!s->cuda) {
      engine.release(s);
      engine.disable("no usable GPU, and automatic routing never uses the CPU backend");
      return Outcome::kDeclined;
    }
    // The device's own figures are known now: ask the model again.
    if (!current_model(cfg, precision_of<T>()).prefers_tiledmm(c.m, c.n, c.k, c.beta != T(0))) {
      engine.release(s);
      return Outcome::kDeclined;
    }
  }
  const bool reads_c = c.beta != T(0);
  // A C whose span passes INT64_MAX bytes cannot be memory: nothing to copy, and
  // tiledmm rejects the call before it touches C.
  const bool keep = reads_c && cfg.keep_c && span_fits<T>(c.m, c.n, c.ldc);
  const bool saved = keep && save_c(*s, c);
  if (keep && !saved) {
    engine.release(s);
    if (Log::first(g_logged_no_copy))
      Log::note(
          "no memory for the copy of C a routed call keeps: the fallback BLAS computes "
          "such calls (logged once)");
    return Outcome::kDeclined;
  }
  const tmm_status st = tiledmm_gemm(s->handle, c);
  at.status = st;
  if (st == TMM_SUCCESS) {
    engine.release(s);
    return Outcome::kDone;
  }
  log_failure_once(st, tmm_get_error_message(s->handle));
  // C may hold tiles written before the failure, unless the failure is one of the
  // checks made before any work (route/recovery.hpp).
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

template Outcome try_tiledmm<float>(const Config&, const GemmCallOf<float>&, Attempt&);
template Outcome try_tiledmm<double>(const Config&, const GemmCallOf<double>&, Attempt&);
template void poison_c<float>(const GemmCallOf<float>&);
template void poison_c<double>(const GemmCallOf<double>&);

}  // namespace tiledmm::blas
