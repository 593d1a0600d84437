// The block shapes of BLOCKED as plain numbers, for the planner (host C++, no CUDA).
// blocked_kernel.cu static_asserts that its shapes match these rows, and the registry's
// rows (cuda/kernels/kernel_table.cu) take their tile and outputs per thread from them.
#pragma once

#include "plan/measured_rates.hpp"

namespace tiledmm {

struct BlockedShapeInfo {
  int tile;               // the tile_size setting that selects it
  int rows, cols;         // the tile of C one block owns
  int threads;            // per block
  int min_blocks_per_sm;  // __launch_bounds__: registers are capped so this many fit
  int shared_bytes;       // static shared memory per block, at most (padded strides)
  int outputs_per_thread;
  // Fraction of the peak of its precision's lanes reached at large sizes
  // (plan/measured_rates.hpp).
  double efficiency;
  // Bytes of an element: the FP64 CUDA-core shapes (plan/f64_shapes.hpp) are 8, so that
  // each kernel asserts that it reads its own precision's rows.
  int element_bytes = 4;
};

constexpr BlockedShapeInfo kBlocked128x256{
    256, 128, 256, 256, 1, 2 * 8 * (132 + 260) * 4, 128, kBlockedEfficiency128x256};
constexpr BlockedShapeInfo kBlocked128x128{
    128, 128, 128, 256, 1, 2 * 16 * (132 + 132) * 4, 64, kBlockedEfficiency128x128};
constexpr BlockedShapeInfo kBlocked64x64{
    64, 64, 64, 64, 4, 2 * 16 * (68 + 68) * 4, 64, kBlockedEfficiency64x64};

// Widest first: the planner's order.
constexpr BlockedShapeInfo kBlockedShapes[] = {kBlocked128x256, kBlocked128x128, kBlocked64x64};

}  // namespace tiledmm
