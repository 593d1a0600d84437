// The block shapes of the TF32 tensor-core kernels as plain numbers, for the planner
// (host C++, no CUDA). tf32_mma_kernel.cu and tf32x3_mma_kernel.cu static_assert that
// their shapes match.
#pragma once

namespace tiledmm {

struct Tf32ShapeInfo {
  int tile;          // the tile_size setting that selects it
  int rows, cols;    // the tile of C one block owns
  int threads;       // per block
  int shared_bytes;  // dynamic shared memory per block, the most over the transposes
  int outputs_per_thread;
};

// Widest first. Shared memory: stages x (A's tile + B's tile), each padded as
// [rows][depth + 4] (the larger of the two layouts here), 4 bytes a float.
constexpr Tf32ShapeInfo kTf32Shapes[] = {
    {256, 128, 256, 256, 3 * (128 * 36 + 256 * 36) * 4, 128},
    {128, 128, 128, 128, 4 * (128 * 20 + 128 * 20) * 4, 128},
};

// The FP32_ACCURATE kernel (3xTF32, tf32x3_mma_kernel.cu static_asserts these): warps
// of 32 x 32, three accumulators per output. Widest first; depth 32, so a K-contiguous
// tile is [rows][36] (an MN-contiguous one, [32][cols + 8], is no larger here).
constexpr Tf32ShapeInfo kTf32x3Shapes[] = {
    {128, 128, 64, 256, 3 * (128 * 36 + 64 * 36) * 4, 32},
    {64, 64, 64, 128, 4 * (64 * 36 + 64 * 36) * 4, 32},
};

}  // namespace tiledmm
