// The block shapes of the FP64 kernels as plain numbers, for the planner and the
// registry's rows (host C++, no CUDA): the tensor-core kernel's (f64_mma_kernel.cu) and
// the CUDA-core kernel's (f64_blocked_kernel.cu), each of which static_asserts that its
// shapes match these rows. The two share tile settings (128 and 64): dispatch takes the
// tensor-core rows where DMMA pays (DeviceProfile::dmma_pays), the CUDA-core rows
// elsewhere.
#pragma once

#include "plan/blocked_shapes.hpp"
#include "plan/measured_rates.hpp"
#include "plan/mma_shapes.hpp"

namespace tiledmm {

// The depth of one tile of k (the steps plan_tail_split counts).
constexpr int kF64MmaDepth = 16;

// Widest first. Shared memory: stages x (A's tile + B's tile), each padded to lines 4
// doubles longer, the larger layout ([rows][16 + 4]), 8 bytes a double. The widest is
// tile setting 256, as BLOCKED's widest tile in single precision (128 x 256) is.
constexpr MmaShapeInfo kF64Mma128x128{256, 128, 128, 256, 4 * (128 * 20 + 128 * 20) * 8, 64, 1};
constexpr MmaShapeInfo kF64Mma128x64{128, 128, 64, 128, 3 * (128 * 20 + 64 * 20) * 8, 64, 2};
constexpr MmaShapeInfo kF64Mma64x64{64, 64, 64, 128, 3 * (64 * 20 + 64 * 20) * 8, 32, 3};
constexpr MmaShapeInfo kF64MmaShapes[] = {kF64Mma128x128, kF64Mma128x64, kF64Mma64x64};

// Waves of 128 x 128 tiles (one per SM) from which AUTO takes that tile over 128 x 64
// (plan_f64): measured on the H100 (docs/design/double-precision.md, "The widest tile").
constexpr int kF64WideWaves = 16;

// Over deep k AUTO takes a wider tile than 64 x 64 only where its blocks cover at most
// this much more of C than 64 x 64's do (plan_f64): the padding past m and n is computed
// too. 300 x 5000 x 5000 covers 1.2x in 128 x 128 and ran 1.18x slower than in 64 x 64
// (docs/benchmarks/double-precision.md, "One wave of FP64 tiles").
constexpr double kF64MaxPaddingOverNarrowest = 1.1;

// The CUDA-core kernel: 8 x 8 doubles per thread, depth 8 (128 x 128) or 4 (64 x 64),
// two buffers of A's and B's tiles, each padded to lines 4 doubles longer (the larger
// layout), 8 bytes a double.
// Widest first: the planner's order. Their efficiencies: measured_rates.hpp.
constexpr BlockedShapeInfo kF64Blocked128x128{
    128, 128, 128, 256, 1, 2 * 8 * (132 + 132) * 8, 64, kF64BlockedEfficiency128x128, 8};
constexpr BlockedShapeInfo kF64Blocked64x64{
    64, 64, 64, 64, 4, 2 * 4 * (68 + 68) * 8, 64, kF64BlockedEfficiency64x64, 8};
constexpr BlockedShapeInfo kF64BlockedShapes[] = {kF64Blocked128x128, kF64Blocked64x64};

}  // namespace tiledmm
