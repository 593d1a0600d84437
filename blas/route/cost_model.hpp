// The cost model behind TILEDMM_BLAS_THRESHOLD=auto: a call goes to tiledmm when
// its modelled time there is below its modelled time on the CPU BLAS.
//
//   flops    = 2 m n k
//   bytes    = e (m k + k n + m n) + e m n if beta != 0 (C travels both ways), e the
//              element's bytes: 4 (single precision), 8 (double)
//   t_cpu    = flops / cpu_rate
//   t_tiledmm = overhead + bytes / link_rate + flops / gpu_rate
//
// The link and the GPU are added, not overlapped: near the crossover tiledmm takes
// its direct path (copy, multiply, copy back), which does not overlap them.
//
// Inputs, each overridable (TILEDMM_BLAS_*):
//   link_rate  LINK_GBPS, default 20 GB/s: what tiledmm's host path moves per second
//              between pageable user memory and the GPU (pinned staging + packing),
//              below PCIe 4/5 x16 peak on purpose; the same in both precisions;
//   gpu_rate   single: GPU_TFLOPS, default multiprocessors x 0.35 TFLOP/s from the
//              device (BLOCKED's measured rate per H100 SM), read at the first routed
//              call; 40 TFLOP/s until a device was read.
//              double: GPU_TFLOPS_FP64, default multiprocessors x 0.30 TFLOP/s on
//              compute capability 8.0 and 9.0 (the GPUs with full-rate FP64 tensor
//              cores, which tiledmm's dgemm uses there: 0.30 is the FP64 kernel's
//              rate per H100 SM, docs/benchmarks/double-precision.md, rounded down),
//              and 1/32 of the single-precision default per multiprocessor on every
//              other GPU (their FP64 units run at 1/32 to 1/64 of FP32); 30 TFLOP/s
//              until a device was read. GPU_TFLOPS does not change it;
//   cpu_rate   single: CPU_GFLOPS, default 40 GFLOP/s per CPU this process may run on
//              (sched_getaffinity): an optimised SGEMM on AVX2/AVX-512 cores, with
//              two hardware threads per core.
//              double: CPU_GFLOPS_FP64, default half the single-precision rate (set
//              or derived): a vector holds half as many doubles;
//   overhead   OVERHEAD_US, default 50 us: a call's fixed cost in tiledmm (launches,
//              synchronisation, copy latency); the same in both precisions.
//
// With the defaults on a 16-CPU host and an H100 (132 SMs), square products go to
// tiledmm from n ~ 330 (beta = 0); ScaLAPACK's default local update, m x n x 32 with
// beta = 1, never does (about 8 bytes over the link per 64 flops), which is why the
// library widens PBLAS's panel (pilaenv_ in entry/shim.cpp). In double the same host
// sends squares from n ~ 290 (beta = 0): the CPU's rate halves, the bytes double.
#pragma once

#include <cstdint>

namespace tiledmm::blas {

constexpr double kDefaultLinkGBps = 20.0;
constexpr double kDefaultGpuTflopsPerSm = 0.35;
constexpr double kDefaultGpuTflopsUnread = 40.0;
constexpr double kDefaultCpuGflopsPerCpu = 40.0;
constexpr double kDefaultOverheadUs = 50.0;
// Double precision (see above).
constexpr double kDefaultGpuTflopsPerSmFp64 = 0.30;         // compute capability 8.0, 9.0
constexpr double kDefaultGpuFp64ShareElsewhere = 1.0 / 32;  // of kDefaultGpuTflopsPerSm
constexpr double kDefaultGpuTflopsUnreadFp64 = 30.0;
constexpr double kDefaultCpuFp64Share = 0.5;  // of the single-precision CPU rate

// The element type of a call, for the figures that depend on it.
enum class Precision { kSingle, kDouble };
template <class T>
constexpr Precision precision_of() {
  return sizeof(T) == sizeof(float) ? Precision::kSingle : Precision::kDouble;
}

// Whether a GPU of this compute capability (major * 10 + minor) runs FP64 at the
// tensor cores' full rate: the default GPU rate of double depends on it.
constexpr bool full_rate_fp64(int compute_capability) {
  return compute_capability == 80 || compute_capability == 90;
}

struct Config;

// Kept as seconds per unit, so that a decision (on every BLAS call with work in it)
// costs a few multiplications and no division.
class CostModel {
 public:
  CostModel(double link_bytes_per_s, double gpu_flops_per_s, double cpu_flops_per_s,
            double overhead_s, double element_bytes = 4.0)
      : element_bytes_(element_bytes),
        per_byte_(1.0 / link_bytes_per_s),
        per_gpu_flop_(1.0 / gpu_flops_per_s),
        per_cpu_flop_(1.0 / cpu_flops_per_s),
        overhead_s_(overhead_s) {}

  double cpu_seconds(int64_t m, int64_t n, int64_t k) const {
    return flops(m, n, k) * per_cpu_flop_;
  }
  double tiledmm_seconds(int64_t m, int64_t n, int64_t k, bool reads_c) const {
    const double dm = double(m), dn = double(n), dk = double(k);
    const double bytes = element_bytes_ * (dm * dk + dk * dn + dm * dn * (reads_c ? 2.0 : 1.0));
    return overhead_s_ + bytes * per_byte_ + flops(m, n, k) * per_gpu_flop_;
  }
  bool prefers_tiledmm(int64_t m, int64_t n, int64_t k, bool reads_c) const {
    return tiledmm_seconds(m, n, k, reads_c) < cpu_seconds(m, n, k);
  }

  double link_bytes_per_s() const { return 1.0 / per_byte_; }
  double gpu_flops_per_s() const { return 1.0 / per_gpu_flop_; }
  double cpu_flops_per_s() const { return 1.0 / per_cpu_flop_; }
  double overhead_s() const { return overhead_s_; }
  double element_bytes() const { return element_bytes_; }

 private:
  static double flops(int64_t m, int64_t n, int64_t k) {
    return 2.0 * double(m) * double(n) * double(k);
  }
  double element_bytes_, per_byte_, per_gpu_flop_, per_cpu_flop_, overhead_s_;
};

// The model from the settings, for calls of `precision`: `cpus` CPUs this process may
// use, and the GPU's multiprocessors (0: not read yet) and compute capability (major
// * 10 + minor; 0: not read).
CostModel make_cost_model(const Config& config, int cpus, int gpu_multiprocessors,
                          Precision precision = Precision::kSingle, int compute_capability = 0);

// CPUs this process may run on (its affinity mask), at least 1.
int usable_cpus();

// usable_cpus(), read once per process.
int cpus();

// The process's model for calls of `precision`: the settings, cpus(), and the GPU of
// the last handle made.
const CostModel& current_model(const Config& cfg, Precision precision = Precision::kSingle);

// The flops the CPU computes within tiledmm's fixed overhead, with the CPU's rate in
// `precision` alone (before any GPU was read): the "auto" threshold's floor.
double floor_flops(const Config& cfg, Precision precision = Precision::kSingle);

}  // namespace tiledmm::blas
