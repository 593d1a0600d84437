// BLOCKED's tile 32, the "small" kernel: strided batches of products of up to 32 x 32,
// each a block of its own, the batch's products side by side (blockIdx.z).
//
// The tiled kernel's 32 x 32 tile (tiled_kernel.cu) with a quarter of the threads: a
// block of 32 x 4 threads owns a 32 x 32 tile of C, each thread 8 of its rows (4 apart)
// in one column. Each phase the block copies a 32 x 32 tile of op(A) and one of op(B)
// into shared memory (8 elements of each a thread, zero past the edges, coalesced along
// the stored rows whatever the transposes; rows padded to 33 so that transposed writes
// spread over the banks), then each thread sums over the tile's depth: one element of
// op(B) from shared memory feeds its 8 outputs, the A elements are broadcast across the
// warp (its threads share their rows). With 128 threads a block, an SM keeps 16 blocks,
// 16 products, in flight where the tiled kernel keeps 2: a batch of small products is
// bound by how many loads are in flight, and those are what a product of 32 x 32 x 32
// is made of. Strict arithmetic (fused multiply-adds in the element type); correct for
// any shape (a larger product is a grid of such tiles), fast only for small ones.
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"

namespace tiledmm {
namespace {

constexpr int kTile = 32;                            // the tile of C a block owns, and its depth
constexpr int kThreadRows = 4;                       // rows of threads: the block is 32 x 4 threads
constexpr int kRowsPerThread = kTile / kThreadRows;  // outputs per thread, 4 rows apart

template <class E, bool TransA, bool TransB>
__global__ void __launch_bounds__(kTile* kThreadRows)
    small_kernel(GemmView<E> p, int64_t first_block_row) {
  __shared__ E a_tile[kTile][kTile + 1];  // op(A)[row0 + i][q0 + q]
  __shared__ E b_tile[kTile][kTile + 1];  // op(B)[q0 + q][col0 + j]
  select_product(p);                      // a strided batch's product blockIdx.z
  const int tx = threadIdx.x;             // a column of the tile (and, loading, a contiguous index)
  const int ty = threadIdx.y;             // the first of the thread's rows
  const int64_t row0 = (first_block_row + blockIdx.y) * kTile;
  const int64_t col0 = int64_t(blockIdx.x) * kTile;

  E acc[kRowsPerThread] = {};
  for (int64_t q0 = 0; q0 < p.k; q0 += kTile) {
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int line = ty + kThreadRows * r;  // the loaded tile's other index
      if (TransA) {  // consecutive tx read consecutive stored columns = rows of op(A)
        const int64_t i = row0 + tx, q = q0 + line;
        a_tile[tx][line] = (i < p.m && q < p.k) ? load_a<true>(p, i, q) : E(0);
      } else {
        const int64_t i = row0 + line, q = q0 + tx;
        a_tile[line][tx] = (i < p.m && q < p.k) ? load_a<false>(p, i, q) : E(0);
      }
      if (TransB) {  // consecutive tx read consecutive stored columns = depths of op(B)
        const int64_t q = q0 + tx, j = col0 + line;
        b_tile[tx][line] = (q < p.k && j < p.n) ? load_b<true>(p, q, j) : E(0);
      } else {
        const int64_t q = q0 + line, j = col0 + tx;
        b_tile[line][tx] = (q < p.k && j < p.n) ? load_b<false>(p, q, j) : E(0);
      }
    }
    __syncthreads();  // the whole tile in shared memory before anyone reads it
#pragma unroll
    for (int q = 0; q < kTile; ++q) {
      const E b = b_tile[q][tx];
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r) acc[r] += a_tile[ty + kThreadRows * r][q] * b;
    }
    __syncthreads();  // every read done before the next phase overwrites the tile
  }
  const int64_t col = col0 + tx;
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r) {
    const int64_t row = row0 + ty + kThreadRows * r;
    if (row < p.m && col < p.n) store_c(p, row, col, acc[r]);
  }
}

template <class E, bool TransA, bool TransB>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const dim3 block(kTile, kThreadRows);
  launch_in_product_slices(p, [&](const GemmProblem& q, unsigned products) {
    launch_in_row_slices(ceil_div(q.m, kTile), unsigned(ceil_div(q.n, kTile)),
                         [&](int64_t first, dim3 grid) {
                           grid.z = products;
                           launch_kernel("small kernel launch", small_kernel<E, TransA, TransB>,
                                         grid, block, 0, stream, view_of<E>(q), first);
                         });
  });
}

}  // namespace

void launch_small(const GemmProblem& p, const KernelPlan& plan, void*, void* stream_ptr) {
  require(plan.tile == kTile, Status::Internal, "small kernel: unsupported tile");
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  visit_precision(p.precision, [&](auto zero) {
    with_transposes(p, [&](auto ta, auto tb) {
      launch<decltype(zero), decltype(ta)::value, decltype(tb)::value>(p, stream);
    });
  });
}

}  // namespace tiledmm
