// launch_pack (pack.hpp): an operand copied, or transposed, into a K-major layout.
// A plain copy runs along rows, a block per row and slice of 1024 columns
// (cudaMemcpy2DAsync between unaligned rows measured several times slower on the
// H100); a transpose goes through 32 x 32 tiles of shared memory (rows padded by one
// float: the column reads hit 32 different banks), read and written along rows, so
// both sides are coalesced. With `small`, each value x is written split for 3xTF32
// (as tf32x3_mma_kernel.cu splits it): big = x rounded to TF32 (to nearest, ties
// away from zero) to dst, small = (x - big) 2^11 to `small`. A batch's products go side
// by side, product blockIdx.z (src, dst and small advanced by their strides).
#include <algorithm>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "cuda/kernels/pack.hpp"

namespace tiledmm {
namespace {

constexpr int kEdge = 32, kRowsPerPass = 8;
constexpr int kCopyThreads = 256, kCopyColumns = 1024;  // per block of the plain copy

// dst[i] = x, or x's split: dst[i] = big, small[i] = (x - big) 2^11. Integer rounding
// (half a unit added to the magnitude, then cut), so any architecture builds it: a
// finite x within 2^-11 of FLT_MAX rounds to Inf, and Inf or NaN leaves a NaN small
// part, as with cvt.rna (the 3xTF32 kernels then fall back to the big products).
template <bool kSplit>
__device__ __forceinline__ void put(float* dst, float* small, int64_t i, float x) {
  if (kSplit) {
    const float big = isfinite(x) ? __uint_as_float((__float_as_uint(x) + 0x1000u) & ~0x1fffu) : x;
    dst[i] = big;
    small[i] = (x - big) * 2048.0f;
  } else {
    dst[i] = x;
  }
}

// Product blockIdx.z's offsets: of its operand, and of its packed copy (and small part).
__device__ __forceinline__ int64_t src_offset(const PackStrides& strides) {
  return int64_t(blockIdx.z) * strides.src;
}
__device__ __forceinline__ int64_t dst_offset(const PackStrides& strides) {
  return int64_t(blockIdx.z) * strides.dst;
}

// dst[r][c] = src[r][c] for row first_row + blockIdx.y, columns of slice blockIdx.x.
template <bool kSplit>
__global__ void __launch_bounds__(kCopyThreads)
    copy_kernel(const float* __restrict__ src, int64_t ld_src, int64_t cols,
                float* __restrict__ dst, float* __restrict__ small, int64_t ld_dst,
                int64_t first_row, PackStrides strides) {
  src += src_offset(strides);
  dst += dst_offset(strides);
  if (kSplit) small += dst_offset(strides);
  const int64_t r = first_row + blockIdx.y;
  const int64_t c0 = int64_t(blockIdx.x) * kCopyColumns + threadIdx.x;
  const float* s = src + r * ld_src;
  float v[kCopyColumns / kCopyThreads];
#pragma unroll
  for (int i = 0; i < kCopyColumns / kCopyThreads; ++i) {
    const int64_t c = c0 + i * kCopyThreads;
    v[i] = c < cols ? s[c] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kCopyColumns / kCopyThreads; ++i) {
    const int64_t c = c0 + i * kCopyThreads;
    if (c < cols) put<kSplit>(dst, small, r * ld_dst + c, v[i]);
  }
}

// dst[r][c] = src[c][r] for the 32 x 32 tile at (first_row + blockIdx.y, blockIdx.x).
template <bool kSplit>
__global__ void __launch_bounds__(kEdge* kRowsPerPass)
    transpose_kernel(const float* __restrict__ src, int64_t ld_src, int64_t rows, int64_t cols,
                     float* __restrict__ dst, float* __restrict__ small, int64_t ld_dst,
                     int64_t first_row, PackStrides strides) {
  src += src_offset(strides);
  dst += dst_offset(strides);
  if (kSplit) small += dst_offset(strides);
  __shared__ float tile[kEdge][kEdge + 1];
  const int64_t r0 = (first_row + blockIdx.y) * kEdge, c0 = int64_t(blockIdx.x) * kEdge;
  // Read src's rows c0.. (dst's columns), along r.
  for (int i = threadIdx.y; i < kEdge; i += kRowsPerPass) {
    const int64_t c = c0 + i, r = r0 + threadIdx.x;
    if (c < cols && r < rows) tile[i][threadIdx.x] = src[c * ld_src + r];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kEdge; i += kRowsPerPass) {
    const int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) put<kSplit>(dst, small, r * ld_dst + c, tile[threadIdx.x][i]);
  }
}

}  // namespace

void launch_pack(const float* src, int64_t ld_src, bool transpose, int64_t rows, int64_t cols,
                 float* dst, int64_t ld_dst, cudaStream_t stream, float* small, unsigned products,
                 PackStrides strides) {
  if (rows == 0 || cols == 0 || products == 0) return;
  require(products <= 65535, Status::Internal, "pack: more than 65535 products in one launch");
  if (!transpose) {
    const int64_t slices = ceil_div(cols, kCopyColumns);
    require(slices <= int64_t(0x7fffffff), Status::NotSupported, "pack: too many columns");
    launch_in_row_slices(rows, unsigned(slices), [&](int64_t first, dim3 grid) {
      grid.z = products;
      const auto kernel = small != nullptr ? copy_kernel<true> : copy_kernel<false>;
      launch_kernel("pack: copy kernel launch", kernel, grid, kCopyThreads, 0, stream, src, ld_src,
                    cols, dst, small, ld_dst, first, strides);
    });
    return;
  }
  const int64_t block_cols = ceil_div(cols, kEdge);
  require(block_cols <= int64_t(0x7fffffff), Status::NotSupported, "pack: too many columns");
  launch_in_row_slices(ceil_div(rows, kEdge), unsigned(block_cols), [&](int64_t first, dim3 grid) {
    grid.z = products;
    const auto kernel = small != nullptr ? transpose_kernel<true> : transpose_kernel<false>;
    launch_kernel("pack: transpose kernel launch", kernel, grid, dim3(kEdge, kRowsPerPass), 0,
                  stream, src, ld_src, rows, cols, dst, small, ld_dst, first, strides);
  });
}

}  // namespace tiledmm
