// The thin kernel's blocks as plain numbers, for the planner (host C++, no CUDA) and the
// kernel (lib/cuda/kernels/thin_kernel.cu), which static_asserts that its blocks are
// these.
//
// A thin product has one side of C at most kThinMaxSmall wide (m or n): it reads its
// other operand, "W" (L x K, L the long side of C), once, and is bound by memory
// bandwidth, not arithmetic. The small operand "X" (S x K) and C (S x L) are small
// beside W. W is read along whichever direction it is contiguous in:
//   - along K: a warp owns 2 or 4 rows of W (thin_rows_per_warp), its lanes read each
//     row 16 bytes apart, and a block of kThinWarpsAlongK warps sums one slice of k for
//     its rows;
//   - along L: a thread owns one 16-byte vector of a row of W, a block of
//     kThinThreadsAlongL threads owns kThinThreadsAlongL vectors of L, and sums one
//     slice of k for them.
// Slices of k run as separate blocks (grid.y) where the tiles of L are fewer than the
// SMs can hold, each writing raw sums that a second kernel adds in slice order.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/gemm_problem.hpp"

namespace tiledmm {

// Columns of X (the short side of C) one pass of the kernel takes; more run in passes.
constexpr int kThinMaxSmall = 16;
// The widest short side AUTO gives the thin kernel: 16 in float (from 1 to 16 columns it
// beat BLOCKED's 64 x 64 tile, 1.2x-4.8x at S x 8192 x 4096 and 8192 x S x 8192); in
// double 8 where W is read along L and 4 along K (past those the FP64 tensor cores' 64 x
// 64 tile was faster: 0.93x-0.95x cuBLAS against 0.74x-0.76x at 12 and 16 columns along
// L, 0.64x at 8 along K; docs/benchmarks/device-kernels.md, "The thin kernel").
constexpr int kThinMaxSmallF32 = 16, kThinMaxSmallF64AlongL = 8, kThinMaxSmallF64AlongK = 4;

constexpr int kThinWarpsAlongK = 8;
constexpr int kThinVectorsPerLane = 2;  // along K: 16-byte vectors per lane per row per chunk
constexpr int kThinThreadsAlongL = 128;
constexpr int kThinChunkAlongL = 64;  // along L: rows of W (steps of k) per chunk

// The planner's rule (plan/planner.hpp, thin_pays and plan_thin): a long side of at
// least kThinMinLong and a large operand of at least kThinMinElements elements. Starting
// values (docs/design/thin-products.md, section 6), not measured one by one yet.
constexpr int64_t kThinMinLong = 256;
constexpr double kThinMinElements = 1 << 20;

// The columns of X a pass's kernel is compiled for: the least of 1, 2, 4, 8 and 16 that
// holds `small` (at most 16).
constexpr int thin_bucket(int64_t small) {
  return small <= 1 ? 1 : small <= 2 ? 2 : small <= 4 ? 4 : small <= 8 ? 8 : 16;
}

// Rows of W (along K) a warp owns for a bucket of X's columns: 4, or 2 in double from 8
// columns (4 rows of 8 doubles took 130 registers, one block of 256 threads per SM, and
// read W at 1.3 TB/s at 8192 x 8 x 8192; 2 rows 1.6). Fewer rows for floats was slower:
// X, staged per chunk for the block's rows, then costs as much traffic as W
// (docs/benchmarks/device-kernels.md, "The thin kernel").
constexpr int thin_rows_per_warp(int element_bytes, int bucket) {
  return element_bytes == 8 && bucket >= 8 ? 2 : 4;
}

// The elements of a 16-byte vector.
constexpr int thin_vector(int element_bytes) { return 16 / element_bytes; }

// How a thin problem reads: which operand is W, and whether W is contiguous along K.
// With m <= n, W = op(B) (L = n, S = m), contiguous along K when B is transposed;
// otherwise W = op(A) (L = m, S = n), contiguous along K unless A is transposed.
struct ThinForm {
  bool w_is_b;
  bool along_k;
  int64_t long_side, small_side;
};

inline ThinForm thin_form(const GemmProblem& p) {
  return p.m <= p.n ? ThinForm{true, p.trans_b, p.n, p.m} : ThinForm{false, !p.trans_a, p.m, p.n};
}

// Steps of k per chunk: a slice of k is a whole number of chunks, so that its start
// keeps W's 16-byte vectors aligned.
inline int64_t thin_chunk(const GemmProblem& p) {
  return thin_form(p).along_k
             ? int64_t(32) * kThinVectorsPerLane * thin_vector(element_bytes(p.precision))
             : kThinChunkAlongL;
}

// Threads of a block of p's form.
inline int thin_block_threads(const GemmProblem& p) {
  return thin_form(p).along_k ? 32 * kThinWarpsAlongK : kThinThreadsAlongL;
}

// The shallowest slice of k a split makes: a whole chunk, and at least 16 steps per
// column of X, so that the slices' partial sums (written and read once) stay within
// about 1/16 of W's traffic each way.
inline int64_t thin_min_slice_depth(const GemmProblem& p) {
  const int64_t small = std::min<int64_t>(thin_form(p).small_side, kThinMaxSmall);
  return std::max<int64_t>(thin_chunk(p), 16 * small);
}

// Tiles of L (blocks of one slice of k) of p.
inline int64_t thin_tiles(const GemmProblem& p) {
  const ThinForm f = thin_form(p);
  const int bytes = element_bytes(p.precision);
  const int bucket = thin_bucket(std::min<int64_t>(f.small_side, kThinMaxSmall));
  const int64_t per_tile = f.along_k ? int64_t(kThinWarpsAlongK) * thin_rows_per_warp(bytes, bucket)
                                     : int64_t(kThinThreadsAlongL) * thin_vector(bytes);
  return f.long_side / per_tile + (f.long_side % per_tile != 0);
}

// Split of k into `splits` slices: each slice's depth, ceil(k / splits) rounded up to
// whole chunks, and the slices that depth leaves non-empty (at most `splits`).
inline int64_t thin_slice_depth(const GemmProblem& p, int splits) {
  const int64_t chunk = thin_chunk(p);
  const int64_t per = p.k / splits + (p.k % splits != 0);
  return (per / chunk + (per % chunk != 0)) * chunk;
}
inline int thin_launched_slices(const GemmProblem& p, int splits) {
  if (splits <= 1 || p.k == 0) return 1;
  const int64_t depth = thin_slice_depth(p, splits);
  return int(p.k / depth + (p.k % depth != 0));
}

}  // namespace tiledmm
