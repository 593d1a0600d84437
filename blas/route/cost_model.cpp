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

CostModel make_cost_model(const Config& config, int cpus, int gpu_multiprocessors) {
  const double link = (config.link_gbps > 0 ? config.link_gbps : kDefaultLinkGBps) * 1e9;
  double gpu = kDefaultGpuTflopsUnread * 1e12;
  if (config.gpu_tflops > 0) {
    gpu = config.gpu_tflops * 1e12;
  } else if (gpu_multiprocessors > 0) {
    gpu = double(gpu_multiprocessors) * kDefaultGpuTflopsPerSm * 1e12;
  }
  const double cpu = config.cpu_gflops > 0
                         ? config.cpu_gflops * 1e9
                         : double(std::max(1, cpus)) * kDefaultCpuGflopsPerCpu * 1e9;
  const double overhead =
      (config.overhead_us >= 0 ? config.overhead_us : kDefaultOverheadUs) * 1e-6;
  return CostModel(link, gpu, cpu, overhead);
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

// The model for the GPU read so far, made again only when that changes (at most a
// few times per process; the old ones are leaked on purpose: another thread may be
// reading one).
struct CachedModel {
  int multiprocessors;
  CostModel model;
};
std::atomic<const CachedModel*> g_model{nullptr};

}  // namespace

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

}  // namespace tiledmm::blas
