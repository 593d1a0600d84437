// The text of tmm_blas_describe (route/router.hpp): the settings, the fallbacks, the
// fast path as the Route has it, the cost model and the state of the handles.
#include <atomic>
#include <cstdio>
#include <string>

#include "route/cost_model.hpp"
#include "route/engine.hpp"
#include "route/router.hpp"
#include "support/config.hpp"
#include "support/fallback.hpp"
#include "tiledmm/tiledmm_version.h"

namespace tiledmm::blas {

namespace {

// The fast path of the entry points as the Route has it: jump (to the fallback's
// routine), scoped (to it inside a FallbackScope), off, or unmade (no call yet).
template <class T, class Int>
std::string fast_path_text(const char* fortran, const char* cblas) {
  const RouteOf<T, Int>* r = route_global<T, Int>().load(std::memory_order_acquire);
  auto one = [&](bool fast, bool direct) {
    return r == &no_route<T, Int>() ? "unmade" : !fast ? "off" : direct ? "jump" : "scoped";
  };
  return std::string(fortran) + "=" + one(r->fast, r->gemm_direct) + " " + cblas + "=" +
         one(r->fast_cblas, r->cblas_direct);
}

// A precision's GPU and CPU figures: "gpu X TFLOP/s (where from), cpu Y GFLOP/s".
std::string rates_text(const Config& cfg, Precision precision) {
  const CostModel& model = current_model(cfg, precision);
  const bool set = precision == Precision::kSingle ? cfg.gpu_tflops > 0 : cfg.gpu_tflops_fp64 > 0;
  char text[160];
  std::snprintf(text, sizeof text, "gpu %.3g TFLOP/s%s, cpu %.4g GFLOP/s",
                model.gpu_flops_per_s() / 1e12,
                set                                        ? " (set)"
                : Engine::instance().multiprocessors() > 0 ? " (from the device)"
                                                           : " (default until a device is read)",
                model.cpu_flops_per_s() / 1e9);
  return text;
}

}  // namespace

std::string describe() {
  const Config& cfg = config();
  const Fallback& f = fallback();
  const Fallback64& f64 = fallback64();
  const CostModel& model = current_model(cfg, Precision::kSingle);
  std::string devices;
  for (int d : cfg.devices) devices += (devices.empty() ? "" : ",") + std::to_string(d);
  std::string threshold = threshold_name(cfg.threshold);
  if (cfg.threshold == ThresholdMode::kFlops) {
    char text[40];
    std::snprintf(text, sizeof text, "%g flops", cfg.threshold_flops);
    threshold = text;
  }
  char model_text[128];
  std::snprintf(model_text, sizeof model_text, "link %.3g GB/s, %d CPUs, overhead %.3g us",
                model.link_bytes_per_s() / 1e9, cpus(), model.overhead_s() * 1e6);
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
         "; fallback64=" + (f64.path.empty() ? "none" : f64.path) +
         "; fast path: " + fast_path_text<float, int>("sgemm_", "cblas_sgemm") + " " +
         fast_path_text<float, int64_t>("sgemm_64_", "cblas_sgemm64_") + " " +
         fast_path_text<double, int>("dgemm_", "cblas_dgemm") + " " +
         fast_path_text<double, int64_t>("dgemm_64_", "cblas_dgemm64_") + "; model: " + model_text +
         ", single " + rates_text(cfg, Precision::kSingle) + ", double " +
         rates_text(cfg, Precision::kDouble) + "; tiledmm: " + Engine::instance().describe();
}

}  // namespace tiledmm::blas
