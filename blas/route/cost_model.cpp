// The routing cost model (cost_model.hpp has the formula and the defaults), and the
// process's model, read by the router, the Route and describe.
#include "route/cost_model.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "route/engine.hpp"
#include "support/config.hpp"

namespace tiledmm::blas {

CostModel make_cost_model(const Config& config, int cpus, int gpu_multiprocessors,
                          Precision precision, int compute_capability) {
  const double link = (config.link_gbps > 0 ? config.link_gbps : kDefaultLinkGBps) * 1e9;
  const bool single = precision == Precision::kSingle;
  double gpu = (single ? kDefaultGpuTflopsUnread : kDefaultGpuTflopsUnreadFp64) * 1e12;
  const double gpu_set = single ? config.gpu_tflops : config.gpu_tflops_fp64;
  if (gpu_set > 0) {
    gpu = gpu_set * 1e12;
  } else if (gpu_multiprocessors > 0) {
    const double per_sm = single ? kDefaultGpuTflopsPerSm
                          : full_rate_fp64(compute_capability)
                              ? kDefaultGpuTflopsPerSmFp64
                              : kDefaultGpuTflopsPerSm * kDefaultGpuFp64ShareElsewhere;
    gpu = double(gpu_multiprocessors) * per_sm * 1e12;
  }
  double cpu = config.cpu_gflops > 0 ? config.cpu_gflops * 1e9
                                     : double(std::max(1, cpus)) * kDefaultCpuGflopsPerCpu * 1e9;
  if (!single)
    cpu = config.cpu_gflops_fp64 > 0 ? config.cpu_gflops_fp64 * 1e9 : cpu * kDefaultCpuFp64Share;
  const double overhead =
      (config.overhead_us >= 0 ? config.overhead_us : kDefaultOverheadUs) * 1e-6;
  return CostModel(link, gpu, cpu, overhead, single ? 4.0 : 8.0);
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

int cpus() {
  static const int count = usable_cpus();
  return count;
}

namespace {

// The models for the GPU read so far, made again only when that changes (at most a
// few times per process; the old ones are leaked on purpose: another thread may be
// reading one). One per precision.
struct CachedModel {
  int multiprocessors, compute_capability;
  CostModel model;
};
std::atomic<const CachedModel*> g_model[2] = {nullptr, nullptr};

}  // namespace

const CostModel& current_model(const Config& cfg, Precision precision) {
  const Engine& engine = Engine::instance();
  const int sms = engine.multiprocessors(), cc = engine.compute_capability();
  std::atomic<const CachedModel*>& slot = g_model[precision == Precision::kSingle ? 0 : 1];
  const CachedModel* cached = slot.load(std::memory_order_acquire);
  if (cached != nullptr && cached->multiprocessors == sms && cached->compute_capability == cc)
    return cached->model;
  const CachedModel* fresh =
      new CachedModel{sms, cc, make_cost_model(cfg, cpus(), sms, precision, cc)};
  slot.store(fresh, std::memory_order_release);
  return fresh->model;
}

// The flops the CPU computes within tiledmm's fixed overhead, with the CPU's rate
// alone (before any GPU was read).
double floor_flops(const Config& cfg, Precision precision) {
  const auto floor_of = [&cfg](Precision p) {
    const CostModel m = make_cost_model(cfg, cpus(), 0, p);
    return m.overhead_s() * m.cpu_flops_per_s();
  };
  static const double single = floor_of(Precision::kSingle);
  static const double dbl = floor_of(Precision::kDouble);
  return precision == Precision::kSingle ? single : dbl;
}

}  // namespace tiledmm::blas
