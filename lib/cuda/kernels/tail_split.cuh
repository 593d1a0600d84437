// Splitting the partial last wave along k, for kernels that run one tile of C per block
// (the Hopper tensor-core kernels, one block per SM, and the FP64 tensor-core kernel,
// whose planner counts its blocks per SM), over floats or doubles.
//
// 8192^3 in 128 x 128 tiles is 4096 tiles on 132 SMs: 31 full waves and a 32nd of 4
// tiles, during which 128 SMs idle (3% of the time). The planner (plan_tail_split,
// lib/plan/planner.cpp) may split the last r tiles (r = tiles % SMs) into `slices` blocks
// each, every block summing one slice of k (`slice_steps` steps of the kernel's depth;
// the last slice shorter) into a partial tile in the workspace. Those blocks are the
// launch's last (blocks run roughly in order, so they fill the last wave), and a
// second kernel, tail_reduce_kernel, adds each tile's partials in slice order (the
// result does not depend on which block finished first) and writes C through the
// BLAS epilogue. 4 tiles in 13 slices run in 52 blocks at 1/13 of a tile's time. The
// same inputs give the same partials and the same sums, so a split call gives the same
// bits run to run.
// Where all the tiles fit in one wave and k is deep, every tile splits (no whole
// tiles): 64 x 64 x 2^23 in TF32 runs its one tile as 132 blocks, each summing 1/132 of
// k, instead of one block summing all of it.
//
// A slice's steps past its end are copied from past k, so the copy engine fills them
// with zeros, as it does past k for an unsplit tile (the kernels copy whole groups of
// steps).
#pragma once

#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {

// Which blocks of a launch own a whole tile and which a slice of one.
struct TailSplit {
  int64_t whole_tiles;  // blocks [0, whole_tiles): tile b, every step of k
  int64_t tail_tiles;   // then per tail tile `slices` blocks, one slice each
  int slices;
  int slice_steps;  // steps of k per slice (the last slice: what is left)
  int steps;        // steps of k in all
  float* partials;  // per split block, its partial tile(s) of BM x BN elements:
                    // floats, or doubles (the FP64 kernel), through partials_of<T>
};

// The partials as elements of T.
template <class T>
__host__ __device__ __forceinline__ T* partials_of(const TailSplit& t) {
  if constexpr (std::is_same_v<T, float>) {
    return t.partials;
  } else {
    return reinterpret_cast<T*>(t.partials);
  }
}

// The split `plan` asks for (plan_tail hooks in the kernel files), for `tiles` tiles of
// `steps` steps of k; none when the plan has none.
inline TailSplit make_tail_split(int64_t tiles, int steps, const KernelPlan& plan, void* partials) {
  TailSplit t{tiles, 0, 1, steps, steps, nullptr};
  if (plan.splits < 2 || plan.tail_tiles <= 0 || plan.tail_tiles > tiles || partials == nullptr)
    return t;
  const int slice = int(ceil_div(steps, plan.splits));
  const int slices = int(ceil_div(steps, slice));
  if (slices < 2) return t;
  return {tiles - plan.tail_tiles,      plan.tail_tiles, slices, slice, steps,
          static_cast<float*>(partials)};
}

inline int64_t tail_split_blocks(const TailSplit& t) {
  return t.whole_tiles + t.tail_tiles * t.slices;
}

// Elements of partials the plan needs, `tile_elements` per split block (at most
// plan.splits blocks per tail tile).
inline size_t tail_partial_elements(const KernelPlan& plan, size_t tile_elements) {
  if (plan.splits < 2 || plan.tail_tiles <= 0) return 0;
  return size_t(plan.tail_tiles) * size_t(plan.splits) * tile_elements;
}

// What this block computes: tile `tile` (in the kernel's grouped order) over steps
// [first_step, first_step + steps) of k; split >= 0 numbers its partial tile, -1 for a
// whole tile.
struct BlockWork {
  int64_t tile;
  int first_step, steps;
  int64_t split;
};

__device__ __forceinline__ BlockWork block_work(const TailSplit& t) {
  const int64_t b = blockIdx.x;
  if (b < t.whole_tiles) return {b, 0, t.steps, -1};
  const int64_t split = b - t.whole_tiles;
  const int slice = int(split % t.slices);
  const int first = slice * t.slice_steps;
  return {t.whole_tiles + split / t.slices, first, min(t.slice_steps, t.steps - first), split};
}

// Partial tile `index` of split block `split`, BM x BN elements of T row-major;
// `per_block` tiles per block (2: a 3xTF32 sum and its correction).
template <int BM, int BN, class T = float>
__device__ __forceinline__ T* partial_tile(const TailSplit& t, int64_t split, int per_block,
                                           int index) {
  return partials_of<T>(t) + (split * per_block + index) * int64_t(BM * BN);
}

__device__ __forceinline__ void store_partial_pair(float* tile, int bn, int row, int col, float v0,
                                                   float v1) {
  *reinterpret_cast<float2*>(tile + row * bn + col) = make_float2(v0, v1);
}

__device__ __forceinline__ void store_partial_pair(double* tile, int bn, int row, int col,
                                                   double v0, double v1) {
  *reinterpret_cast<double2*>(tile + row * bn + col) = make_double2(v0, v1);
}

// The pair at (row, col) of a partial tile whose first element is D's (row0, col0),
// stored only where (row, col) lies inside D's rows x cols: tail_reduce_kernel reads no
// other element, so a tile that C covers in part (a small C over deep k, whose one tile
// is split over every SM) writes no more than C's share of it.
template <class T>
__device__ __forceinline__ void store_partial_pair_inside(T* tile, int bn, int row, int col,
                                                          const TileOrigin& origin, int64_t rows,
                                                          int64_t cols, T v0, T v1) {
  if (origin.row0 + row < rows && origin.col0 + col < cols)
    store_partial_pair(tile, bn, row, col, v0, v1);
}

// a + b rounded to nearest, never fused into a multiply-add.
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

// C from the partials of the tail tiles: blockIdx.y is the tail tile, threads take its
// elements, adding the partials in slice order in T. D (rows x cols) is C, or C^T when
// kTransposed. With kCorrected (floats) a block's partials are a 3xTF32 pair (sum,
// correction scaled by 2^11, tf32x3_wgmma_kernel.cu): the sums are added with TwoSum,
// their rounding errors into the correction, and the value is sum + 2^-11 correction, or
// the sum alone where the correction is not finite.
template <int BM, int BN, int GROUP_M, bool kTransposed, bool kCorrected, class T>
__global__ void tail_reduce_kernel(GemmView<T> p, TailSplit t, int64_t rows, int64_t cols) {
  static_assert(!kCorrected || sizeof(T) == 4, "3xTF32 corrections are floats");
  const int i = int(blockIdx.x) * blockDim.x + threadIdx.x;  // element of the tile
  if (i >= BM * BN) return;
  const TileOrigin origin = grouped_tile<BM, BN, GROUP_M>(t.whole_tiles + blockIdx.y, rows, cols);
  const int64_t row = origin.row0 + i / BN, col = origin.col0 + i % BN;
  if (row >= rows || col >= cols) return;
  constexpr int kPer = kCorrected ? 2 : 1;
  const int64_t first = int64_t(blockIdx.y) * t.slices;
  const T* part = partials_of<T>(t) + first * kPer * int64_t(BM * BN) + i;
  constexpr int64_t kStride = kPer * int64_t(BM * BN);  // from one split block to the next
  T sum = part[0];
  float corr = kCorrected ? float(part[BM * BN]) : 0.0f;
  for (int j = 1; j < t.slices; ++j) {
    const T x = part[j * kStride];
    const T s = add_rn(sum, x);
    if constexpr (kCorrected) {  // TwoSum: s + e = sum + x exactly
      const float xs = __fsub_rn(s, sum);
      const float e = __fadd_rn(__fsub_rn(sum, __fsub_rn(s, xs)), __fsub_rn(x, xs));
      corr = __fadd_rn(corr, __fmaf_rn(e, 2048.0f, part[j * kStride + BM * BN]));
    }
    sum = s;
  }
  const T v =
      kCorrected && fabsf(corr) <= FLT_MAX ? T(__fmaf_rn(corr, 1.0f / 2048.0f, float(sum))) : sum;
  if (kTransposed) {
    store_c(p, col, row, v);
  } else {
    store_c(p, row, col, v);
  }
}

// Enqueues tail_reduce_kernel when `t` splits any tile; throws Error on a launch failure.
template <int BM, int BN, int GROUP_M, bool kTransposed, bool kCorrected, class T>
void launch_tail_reduce(const GemmView<T>& p, const TailSplit& t, int64_t rows, int64_t cols,
                        cudaStream_t stream) {
  if (t.tail_tiles == 0) return;
  constexpr int kThreads = 256;
  const dim3 grid(unsigned(ceil_div(BM * BN, kThreads)), unsigned(t.tail_tiles));
  launch_kernel("tail reduction kernel launch",
                tail_reduce_kernel<BM, BN, GROUP_M, kTransposed, kCorrected, T>, grid, kThreads, 0,
                stream, p, t, rows, cols);
}

}  // namespace tiledmm
