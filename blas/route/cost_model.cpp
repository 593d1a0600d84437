// The routing cost model (cost_model.hpp has the formula and the defaults).
#include "route/cost_model.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

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

}  // namespace tiledmm::blas
