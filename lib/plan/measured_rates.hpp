// Every rate the models measured rather than derived, in one place: what BLOCKED
// reaches of a device's FP32 peak, the latencies the planner counts, and what the host
// side of the streamed path moves per second. Each was measured on the H100 machine of
// BENCHMARKS.md; a new measurement changes this file only. Host C++, no CUDA.
#pragma once

namespace tiledmm {

// BLOCKED's fraction of the FP32 peak at large sizes, per shape (lib/plan/
// blocked_shapes.hpp), measured on the H100 (49.5, 45.0 and 42.0 TFLOP/s of 66.9):
// between shapes only the ratios steer the planner's choices; the widest shape's is
// also the kernel rate of the streamed path's model (lib/cuda/backend/cuda_backend.cu).
constexpr double kBlockedEfficiency128x256 = 0.74;
constexpr double kBlockedEfficiency128x128 = 0.67;
constexpr double kBlockedEfficiency64x64 = 0.63;

// Below this time at the device's peak a product is latency-bound and the wave model
// does not hold; the 64 x 64 tile (four blocks per SM) was fastest at every such
// size measured on the H100 (256^3 to 1024^3, under 1.6 GFLOP there).
constexpr double kLatencyBoundSeconds = 25e-6;
constexpr double kLaunchSeconds = 3e-6;  // one more launch: the split-K reduction
// The fraction of the device's memory bandwidth that BLOCKED's split-K reduction reaches.
constexpr double kSplitReductionBandwidth = 0.75;

// What the host side can do, for the model below (measured on the H100's host: see
// BENCHMARKS.md).
struct HostRates {
  double pageable_h2d = 9e9, pageable_d2h = 15e9;  // the driver's own pageable copies
  double pinned_link = 45e9;                       // each way, both ways at once
  double pack_per_thread = 4e9, pack_max = 30e9;   // memcpy into and out of staging
  double step_overhead_s = 20e-6;                  // host work per chunk and tile
};

}  // namespace tiledmm
