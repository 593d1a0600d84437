// The block shapes of the FP64 tensor-core kernel (f64_mma_kernel.cu, which
// static_asserts that its shapes match) as plain numbers, for the planner and the
// registry's rows (host C++, no CUDA).
#pragma once

#include "plan/mma_shapes.hpp"

namespace tiledmm {

// The depth of one tile of k (the steps plan_tail_split counts).
constexpr int kF64MmaDepth = 16;

// Widest first. Shared memory: stages x (A's tile + B's tile), each padded to lines 4
// doubles longer, the larger layout ([rows][16 + 4]), 8 bytes a double.
constexpr MmaShapeInfo kF64Mma128x64{128, 128, 64, 128, 3 * (128 * 20 + 64 * 20) * 8, 64, 2};
constexpr MmaShapeInfo kF64Mma64x64{64, 64, 64, 128, 3 * (64 * 20 + 64 * 20) * 8, 32, 3};
constexpr MmaShapeInfo kF64MmaShapes[] = {kF64Mma128x64, kF64Mma64x64};

}  // namespace tiledmm
