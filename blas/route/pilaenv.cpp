// pilaenv_: the panel width PBLAS asks ScaLAPACK for (route/router.hpp). Widened for
// the precisions tiledmm multiplies, single ('S': PSGEMM's local sgemm_) and double
// ('D': PDGEMM's local dgemm_), while tiledmm may take the local products, so that
// they are large enough to be worth sending (route/cost_model.hpp says why); else,
// and for the complex precisions, ScaLAPACK's own answer.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>

#include "route/engine.hpp"
#include "route/router.hpp"
#include "support/config.hpp"
#include "support/counters.hpp"
#include "support/fallback.hpp"
#include "support/log.hpp"

namespace tiledmm::blas {
namespace {

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

}  // namespace

int pilaenv(const int* ictxt, const char* prec) noexcept {
  try {
    const Config& cfg = config();
    const char p = prec != nullptr ? char(std::toupper(static_cast<unsigned char>(*prec))) : ' ';
    if ((p == 'S' || p == 'D') && cfg.panel > 0 && panels_on(cfg)) {
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

}  // namespace tiledmm::blas
