// What the planner knows of a device: read once per device from the CUDA runtime
// (lib/cuda/backend/cuda_backend.cu), or written by hand in tests for GPUs this machine does
// not have. Plain data, no CUDA types.
#pragma once

#include <cstdint>

namespace tiledmm {

struct DeviceProfile {
  int multiprocessors = 0;
  int cc_major = 0, cc_minor = 0;    // compute capability
  double clock_hz = 0;               // SM clock
  double memory_bandwidth = 0;       // bytes/s, from memory clock and bus width
  int64_t shared_memory_per_sm = 0;  // bytes
  int64_t shared_memory_per_block_optin = 0;
  int max_threads_per_sm = 0;
  int registers_per_sm = 0;

  int compute_capability() const { return cc_major * 10 + cc_minor; }
  // FP32 lanes (FMA units) per SM: 64 on Volta, Turing and the A100 (sm_70-80),
  // 128 on the other Ampere parts, Ada and Hopper (sm_86-90) and later.
  int fp32_lanes_per_sm() const {
    const int cc = compute_capability();
    return cc >= 86 ? 128 : 64;
  }
  // Peak FP32 multiply-add rate of the whole device, FLOP/s.
  double fp32_peak() const { return 2.0 * fp32_lanes_per_sm() * clock_hz * multiprocessors; }
  // FP64 multiply-adds per clock per SM: the FP64 tensor cores from 8.0 (64 on the A100,
  // its 19.5 TFLOP/s; 128 on Hopper and later, the H100's 67), else the FP64 lanes: 32
  // on the data-centre parts (6.0, 7.0), 2 on the others (Turing, consumer Ampere, Ada).
  int fp64_fma_per_sm() const {
    const int cc = compute_capability();
    if (cc >= 90) return 128;
    if (cc == 80) return 64;
    if (cc == 60 || cc == 70) return 32;
    return 2;
  }
  // Peak FP64 multiply-add rate of the whole device, FLOP/s.
  double fp64_peak() const { return 2.0 * fp64_fma_per_sm() * clock_hz * multiprocessors; }
  // Whether the FP64 tensor cores (DMMA) are the fast way to multiply in double: on the
  // A100 (8.0) and from Hopper (9.0) on, at twice the FP64 lanes' rate. Consumer Ampere
  // and Ada (8.6, 8.9) have the instruction at 1/64 of the FP32 rate, and devices before
  // 8.0 none: there BLOCKED in double runs the CUDA cores (f64_blocked_kernel.cu).
  bool dmma_pays() const {
    const int cc = compute_capability();
    return cc == 80 || cc >= 90;
  }
  // FP64 multiply-adds per clock per SM on the CUDA cores (plain fma in double): 32 on
  // the data-centre parts 6.0, 7.0 and 8.0, 64 on Hopper and later, 2 on the others.
  int fp64_lanes_per_sm() const {
    const int cc = compute_capability();
    if (cc >= 90) return 64;
    if (cc == 60 || cc == 70 || cc == 80) return 32;
    return 2;
  }
  // Peak FP64 multiply-add rate of the device's CUDA cores, FLOP/s.
  double fp64_lanes_peak() const { return 2.0 * fp64_lanes_per_sm() * clock_hz * multiprocessors; }
};

}  // namespace tiledmm
