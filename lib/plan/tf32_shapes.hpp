// The block shapes of the TF32 tensor-core kernels as plain numbers, for the planner
// (host C++, no CUDA). tf32_mma_kernel.cu and tf32x3_mma_kernel.cu static_assert that
// their shapes match, and the registry's rows take their tile and outputs per thread
// from them.
#pragma once

#include <cstdint>

#include "plan/mma_shapes.hpp"

namespace tiledmm {

// Widest first. Shared memory: stages x (A's tile + B's tile), each padded as
// [rows][depth + 4] (the larger of the two layouts here), 4 bytes a float.
constexpr MmaShapeInfo kTf32Mma128x256{256, 128, 256, 256, 3 * (128 * 36 + 256 * 36) * 4, 128};
constexpr MmaShapeInfo kTf32Mma128x128{128, 128, 128, 128, 4 * (128 * 20 + 128 * 20) * 4, 128};
// Warps of 32 x 32, depth 32 (as the 3xTF32 64 x 64 tile below): 72 KiB, two blocks per
// SM on the A100 and H100. Small products: four times the 128 x 128 tile's blocks.
constexpr MmaShapeInfo kTf32Mma64x64{64, 64, 64, 128, 4 * (64 * 36 + 64 * 36) * 4, 32, 2};
constexpr MmaShapeInfo kTf32Shapes[] = {kTf32Mma128x256, kTf32Mma128x128, kTf32Mma64x64};

// The FP32_ACCURATE kernel (3xTF32, tf32x3_mma_kernel.cu static_asserts these): warps
// of 32 x 32, three accumulators per output. Widest first; depth 32, so a K-contiguous
// tile is [rows][36] (an MN-contiguous one, [32][cols + 8], is no larger here).
constexpr MmaShapeInfo kTf32x3Mma128x64{128, 128, 64, 256, 3 * (128 * 36 + 64 * 36) * 4, 32};
constexpr MmaShapeInfo kTf32x3Mma64x64{64, 64, 64, 128, 4 * (64 * 36 + 64 * 36) * 4, 32};
constexpr MmaShapeInfo kTf32x3Shapes[] = {kTf32x3Mma128x64, kTf32x3Mma64x64};

// The Hopper rows (wgmma, sm_90a code, cc 9.0): the tile of D one block owns and the
// depth of one step of k, which tf32_wgmma_kernel.cu and tf32x3_wgmma_kernel.cu take
// from here, and the floats of one split block's partial sums, which their plan_tail
// hooks pass to plan_tail_split (planner.hpp). tests/planner_golden.cpp makes the
// same last-wave split from these.
struct WgmmaShapeInfo {
  int tile;        // the tile_size setting that selects it
  int rows, cols;  // the tile of D one block owns
  int depth;       // k per step: one tile of k
  int outputs_per_thread;
  int partial_floats;  // a split block's partial sums (and, for 3xTF32, corrections)
  bool may_transpose;  // computes D = C^T where A is K-major and B is not (TF32 only)
};

// The largest m, n and k the wgmma kernels take (their TMA boxes of 256 elements and the
// tiles past k keep 32-bit coordinates); sm90_common.cuh's kMaxExtent is this.
constexpr int64_t kWgmmaMaxExtent = 0x7fffffff - 512;
inline bool wgmma_takes(int64_t m, int64_t n, int64_t k) {
  return m <= kWgmmaMaxExtent && n <= kWgmmaMaxExtent && k <= kWgmmaMaxExtent;
}

constexpr WgmmaShapeInfo kTf32Wgmma128x256{256, 128, 256, 32, 128, 128 * 256, true};
constexpr WgmmaShapeInfo kTf32x3Wgmma128x128{128, 128, 128, 32, 64, 2 * 128 * 128, false};

}  // namespace tiledmm
