// Every rate the models measured rather than derived, in one place: what BLOCKED
// reaches of a device's FP32 peak, the latencies the planner counts, and what the host
// side of the streamed path moves per second. Each constant names the run it came from:
// the machine, the date, the page and section of docs/benchmarks/ that records the run,
// and the commit that first typed the number (git log -S finds it under its old path).
// Where no page records the number itself, the comment says so. A new measurement
// changes this file only, with its run. Host C++, no CUDA.
#pragma once

#include <cstdint>

namespace tiledmm {

// BLOCKED's fraction of the FP32 peak at large sizes, per shape (lib/plan/
// blocked_shapes.hpp): 49.5, 45.0 and 42.0 TFLOP/s of the H100's 66.9 (132 SMs at
// 1.98 GHz). Run: H100 80GB HBM3, CUDA 13.0, 2026-11-22, docs/benchmarks/
// device-kernels.md "Every configuration, as a ratio to cuBLAS" (4096^3 to 16384^3:
// blocked256 0.95x-0.97x, blocked128 0.87x-0.88x, blocked64 0.80x-0.83x of cuBLAS's
// ~52 TFLOP/s); typed in a8bb102 (the registry and planner), and 0.74 again in
// 838dd34 as the streamed model's kernel rate (one copy since 392d5bf). Between shapes
// only the ratios steer the planner's choices; the widest shape's is also the kernel
// rate of the streamed path's model (lib/cuda/backend/cuda_backend.cu).
constexpr double kBlockedEfficiency128x256 = 0.74;
constexpr double kBlockedEfficiency128x128 = 0.67;
constexpr double kBlockedEfficiency64x64 = 0.63;

// The FP64 tensor-core kernel's fraction of the FP64 peak at large sizes (f64_mma_128x64,
// what AUTO runs in double): 47.5 TFLOP/s at 8192^3 of the H100's 66.9 (132 SMs at
// 1.98 GHz, 128 FP64 multiply-adds a clock per SM). Run: H100 80GB HBM3, CUDA 13.0,
// 2026-11-26, docs/benchmarks/double-precision.md "AUTO against cuBLAS DGEMM, the large
// squares" (41.7-49.2 TFLOP/s at 4096^3-16384^3), commit 958d2b0. The streamed path's
// model takes it as the kernel rate of a double call; before compute capability 8.0 (the
// ladder, not measured in double) the same fraction of the FP64 lanes' peak.
constexpr double kF64MmaEfficiency = 0.70;

// The FP64 CUDA-core kernel's fraction of the peak of the FP64 lanes
// (DeviceProfile::fp64_lanes_peak: 33.4 TFLOP/s on the H100, 64 lanes a clock per SM) at
// large sizes, per shape (lib/plan/f64_shapes.hpp): 22.07 and 21.59 TFLOP/s at 8192^3
// (21.28 and 20.85 at 2048^3), each row through its own launcher. Run: H100 80GB HBM3,
// CUDA 13.0, 2026-11-26, `TMM_TIME_ROWS=f64_blocked_128x128,f64_blocked_64x64
// TMM_TIME_SIZE=8192 test_kernel_table --gtest_also_run_disabled_tests
// --gtest_filter='RowTiming.*'`, docs/benchmarks/runs/
// f64-blocked-rows-h100-2026-11-26-4d12b81.txt (commit 4d12b81). Between the two shapes
// only their ratio steers the planner (plan_f64_blocked).
constexpr double kF64BlockedEfficiency128x128 = 0.66;
constexpr double kF64BlockedEfficiency64x64 = 0.645;

// Where FP32_ACCURATE takes strict FP32 (planner.hpp, fp32_accurate_takes_strict): C of
// at most 256 x 256 elements and k of at least 16384. Run: H100 80GB HBM3, CUDA 13.0,
// 2026-11-26, `tmm_bench --suite bench/shapes.txt --math all` at 62e8d46
// (docs/benchmarks/runs/suite-h100-2026-11-26-62e8d46.txt): AUTO in strict FP32 took
// 0.053, 0.054, 0.217, 0.295 and 1.946 ms at 200 x 100 x 16384, 96 x 96 x 32768, 256 x
// 256 x 65536, 64 x 64 x 2^20 and 2^23, FP32_ACCURATE 0.065, 0.077, 0.290, 1.005 and 7.731;
// at 1000 x 1000 x 32768 (C of 10^6) and 31 x 33 x 8191 (k under 16384) FP32_ACCURATE was
// the faster (0.867 against 1.634 ms, 0.040 against 0.056).
constexpr double kAccurateStrictMaxOutputs = 65536;
constexpr int64_t kAccurateStrictMinDepth = 16384;

// An FP32_ACCURATE strided batch runs the 3xTF32 Hopper row (its products packed in
// groups) where each product's tiles of 128 x 128 times k reach this volume (2^28: 512 x
// 512 x 1024, 1024 x 1024 x 256) over k of at least this depth, else strict FP32's
// batched rows (tf32x3_batch_pays). Run: H100 80GB HBM3, 2026-11-27, `tmm_bench --suite
// <11 batched shapes> --math fp32_accurate --algos auto,blocked128` at 764e244
// (docs/benchmarks/batched.md, "FP32_ACCURATE batches on the 3xTF32 Hopper row"): the
// Hopper row against strict 1.02x-1.81x at that volume or more (512 x 512 x 1024 to 20 x
// 2048^3, 1000 x 500 x 700 NT 1.34x), 0.58x-0.93x below it (256^3, 384^3, 512^3).
constexpr double kX3BatchMinVolume = double(1 << 28);
constexpr int64_t kX3BatchMinDepth = 256;

// Strided batches of products up to this side and depth run one block per product
// (small_batch_pays: TILED 16 up to 16 x 16, else the small kernel): in BLOCKED's 64 x 64
// tile a 16 x 16 or 32 x 32 product fills 1/16 or 1/4 of the tile, 0.33x and 0.39x
// cuBLAS's strided batched SGEMM at 100000 x 16^3 and 50000 x 32^3 on the H100, against
// TILED 16's 1.36x and the small kernel's 0.88x (docs/benchmarks/batched.md, "Small
// products: TILED 16 and the small kernel"). The depth bound is a guess: not measured.
constexpr int64_t kSmallBatchMaxSide = 32;
constexpr int64_t kSmallBatchMaxDepth = 128;

// One product (not a batch) in strict FP32 with C of at most this many elements and k at
// most this deep runs TILED 16 (tiny_pays), not BLOCKED's 64 x 64 tile: 64 x 64 x 64 is one
// block of 64 threads in BLOCKED (9.5 us on the GPU under ncu, cuBLAS's kernel 6.6) and
// 16 blocks of 256 threads in TILED 16 (5.5 us). A loop of device calls, us a call to the
// final synchronisation, BLOCKED (AUTO before) against TILED 16: 32^3 11.5 / 6.2, 64^3 11.1 /
// 7.3, 96^3 16.6 / 8.1, 128^3 14.8 / 8.9, 192^3 18.3 / 12.0, 256^3 22.0 / 14.2, 64 x 64 x
// 512 36.0 / 17.9, 512 x 64 x 64 11.2 / 7.4, 1024 x 64 x 64 11.1 / 8.1; outside the bounds
// TILED 16 loses or ties: 384^3 29.0 / 29.6, 512^3 36.1 / 53.6, 128 x 128 x 2048 39.3 /
// 55.2, 2048 x 2048 x 64 24.1 / 95.9. Run: H100 80GB HBM3, CUDA 13.0, 2026-11-27,
// docs/benchmarks/device-kernels.md "Per-call cost by kernel" (`tmm_call_bench
// --algorithm auto|tiled --tile 16`), commit 6643b0a.
constexpr double kTinyMaxOutputs = 65536;
constexpr int64_t kTinyMaxDepth = 512;

// Small single products on Hopper under the tensor-core modes (small_product): at most
// kSmallProductMaxVolume multiply-adds and k at most kSmallProductMaxDepth. The wgmma
// rows' 128 x 256 (TF32) and 128 x 128 (3xTF32) tiles leave most SMs idle there, each
// block a long way through k. Under TF32 the 64 x 64 mma.sync row ran them faster, and
// TILED 16 (strict) the tinier still (C of at most kTf32TinyMaxOutputs, k within
// kTinyMaxDepth); under FP32_ACCURATE strict FP32 (AUTO's rows) ran faster than 3xTF32.
// The run (H100 80GB HBM3, CUDA 13.0, 2026-11-27, `tmm_bench --suite bench/shapes.txt
// --groups small,odd,mid,deep-k,thin,batched --math tf32 --algos auto,blocked64,tiled16
// --no-host`, docs/benchmarks/tensor-cores.md "Small products on Hopper"), ms, wgmma /
// 64 x 64 / TILED 16: 64^3 0.0204 / 0.0149 / 0.0124, 100^3 0.0219 / 0.0172 / 0.0148,
// 128^3 0.0206 / 0.0152 / 0.0139, 256^3 0.0260 / 0.0181 / 0.0180, 640 x 480 x 320
// 0.0277 / 0.0207 / 0.0504, 512^3 0.0358 / 0.0203 / 0.0589, 333 x 777 x 555 0.0437 /
// 0.0346 / 0.0640, 7 x 13 x 17 0.0254 / 0.0126 / 0.0111; past the bounds the wgmma row
// won: 1023 x 1025 x 1027 0.0589 / 0.0901, 1536^3 0.0517 / 0.1067, and every deep k
// (31 x 33 x 8191 0.0336 / 0.3284: the 64 x 64 row does not split k).
constexpr double kSmallProductMaxVolume = double(1 << 28);
constexpr int64_t kSmallProductMaxDepth = 1024;
constexpr double kTf32TinyMaxOutputs = 16384;

// Where both tensor-core modes take strict FP32 (tiny_c_deep_k): C of at most
// kTinyCDeepMaxOutputs elements (one 64 x 64 tile) over k of at least kTinyCDeepMinDepth,
// where BLOCKED splits k into slices of 64 over every SM (since 65a4151) and the
// tensor-core rows' last-wave split of their one wide tile is slower. H100, 2026-11-27
// (docs/benchmarks/tensor-cores.md, "A tiny C over deep k"), ms, strict AUTO / TF32 wgmma /
// 3xTF32 wgmma: 31 x 33 x 8191 0.0220 / 0.0294 / 0.0352, 64 x 64 x 2^20 0.266 / 0.289 /
// (strict already), 64 x 64 x 2^23 1.93 / 2.13 / (strict already); at 96 x 96 x 32768
// and 200 x 100 x 16384 (C past one tile) TF32's wgmma row was the faster (0.043 against
// 0.048, 0.038 against 0.049).
constexpr double kTinyCDeepMaxOutputs = 4096;
constexpr int64_t kTinyCDeepMinDepth = 4096;

// Below this time at the device's peak a product is latency-bound and the wave model
// does not hold; the 64 x 64 tile (four blocks per SM) was fastest at every such
// size measured (256^3 to 1024^3, under 1.6 GFLOP). Run: H100 80GB HBM3, 2026-11-22,
// docs/benchmarks/device-kernels.md "Every configuration, as a ratio to cuBLAS"
// (blocked64 0.785x and 0.600x at 256^3 and 512^3, against blocked256's 0.357x and
// 0.250x) and "AUTO against cuBLAS SGEMM, 19 shapes" (26 and 43 us there); the
// 1.6 GFLOP bound in 509fdc1, as 25e-6 s in a8bb102.
constexpr double kLatencyBoundSeconds = 25e-6;
// One more launch: the split-K reduction. Typed in 509fdc1 (BLOCKED's split-K,
// 2026-11-22) for the H100; no page of docs/benchmarks/ records it as a measurement.
constexpr double kLaunchSeconds = 3e-6;
// The fraction of the device's memory bandwidth that BLOCKED's split-K reduction
// reaches. Typed in a8bb102 (2026-11-22) for the H100; no page of docs/benchmarks/
// records it as a measurement.
constexpr double kSplitReductionBandwidth = 0.75;

// What the host side can do, for the streamed path's model. All typed in 838dd34
// (streamed path step 1, H100 80GB HBM3 machine's host, 2026-11-22); no page of
// docs/benchmarks/ records these numbers themselves. The runs nearest to them, all on
// that machine and date, in docs/benchmarks/host-path.md:
//  - pageable copies: "The 1.0 host call at 8192^3 (the direct path)" (the driver's
//    pageable upload at 7.6 GB/s and download at 9.5 GB/s in that run);
//  - the link and the packing: "Streamed path, step 1, against cuBLAS-XT" (the report's
//    packing 17.3 ms and link 20.3 ms for 8192^3); "The host's copy rate" (33-43 GB/s
//    with memcpy, 16 threads, link busy) was measured after these were typed;
//  - step_overhead_s: an estimate, no run isolates it.
// pack_shared_max, the packing of several lanes (a handle of several devices) at once:
// 2 lanes on the nvidia-h100-x2 machine (2 H100s, 32 cores), 2026-11-27, d45c93f, moved
// 10.7 GB through staging in 505 ms of packing summed over the lanes, each lane packing
// about 250 ms of its 430: about 42 GB/s together, where one lane alone packed at 43-51
// GB/s while it packed but the call's packing is serial with its waits (docs/benchmarks/
// multi-gpu.md, "First scaling run"). The one-lane figure stays pack_max.
struct HostRates {
  double pageable_h2d = 9e9, pageable_d2h = 15e9;  // the driver's own pageable copies
  double pinned_link = 45e9;                       // each way, both ways at once
  double pack_per_thread = 4e9, pack_max = 30e9;   // memcpy into and out of staging
  double pack_shared_max = 42e9;                   // several lanes' packing together
  // A call of several lanes: starting their threads, carving, the barrier and joining
  // (an estimate, typed 2026-11-27; no run isolates it).
  double lane_overhead_s = 1e-3;
  double step_overhead_s = 20e-6;  // host work per chunk and tile
};

}  // namespace tiledmm
