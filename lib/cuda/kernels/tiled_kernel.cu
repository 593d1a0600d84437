// TILED: the shared-memory kernel of the seed reports, for any shape and both
// transposes.
//
// A block of T x T threads owns a T x T tile of C. Each phase, the block copies a
// T x T tile of op(A) and one of op(B) into shared memory (each thread one element
// of each, zero past the matrix edges so the inner loop needs no test), then every
// thread takes a dot product of length T from shared memory. Each global element is
// read once per tile instead of once per thread: T times less global traffic.
//
// Global reads are coalesced for every transpose: a transposed operand is read
// along its stored rows and written to shared memory transposed. Rows are padded to
// T + 1 elements so that the transposed writes fall in different banks.
//
// Over the element type E (float or double), picked by the launcher from the problem's
// precision; in double the largest tile, 32, takes 2 * 32 * 33 * 8 = 16,896 bytes.
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"

namespace tiledmm {
namespace {

template <class E, int T, bool TransA, bool TransB>
__global__ void __launch_bounds__(square_block_threads(T))
    tiled_kernel(GemmView<E> p, int64_t first_block_row) {
  // A batch's products side by side: the one of blockIdx.z (kernel_common.cuh).
  // One thread per element of the tile: the block is T x T threads.
  static_assert(T > 0 && T * T <= 1024, "a block has at most 1024 threads: T <= 32");
  __shared__ E a_tile[T][T + 1];  // a_tile[i][q] = op(A)[row0 + i][q0 + q]
  __shared__ E b_tile[T][T + 1];  // b_tile[q][j] = op(B)[q0 + q][col0 + j]
  static_assert(sizeof(a_tile) + sizeof(b_tile) <= 48 * 1024,
                "static shared memory is limited to 48 KiB per block");
  select_product(p);  // a strided batch's product blockIdx.z
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int64_t row0 = (first_block_row + blockIdx.y) * T;
  const int64_t col0 = int64_t(blockIdx.x) * T;

  E acc = E(0);
  for (int64_t q0 = 0; q0 < p.k; q0 += T) {
    if (TransA) {  // consecutive tx read consecutive stored columns = rows of op(A)
      const int64_t i = row0 + tx, q = q0 + ty;
      a_tile[tx][ty] = (i < p.m && q < p.k) ? load_a<true>(p, i, q) : E(0);
    } else {
      const int64_t i = row0 + ty, q = q0 + tx;
      a_tile[ty][tx] = (i < p.m && q < p.k) ? load_a<false>(p, i, q) : E(0);
    }
    if (TransB) {  // consecutive tx read consecutive stored columns = depths of op(B)
      const int64_t q = q0 + tx, j = col0 + ty;
      b_tile[tx][ty] = (q < p.k && j < p.n) ? load_b<true>(p, q, j) : E(0);
    } else {
      const int64_t q = q0 + ty, j = col0 + tx;
      b_tile[ty][tx] = (q < p.k && j < p.n) ? load_b<false>(p, q, j) : E(0);
    }
    // Wait until the whole tile is in shared memory before anyone reads it.
    __syncthreads();
#pragma unroll
    for (int q = 0; q < T; ++q) acc += a_tile[ty][q] * b_tile[q][tx];
    // Wait again, so faster threads do not overwrite the tile while slower threads
    // still read it.
    __syncthreads();
  }
  const int64_t row = row0 + ty, col = col0 + tx;
  if (row < p.m && col < p.n) store_c(p, row, col, acc);
}

template <class E, int T, bool TransA, bool TransB>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const dim3 block(T, T);
  launch_in_product_slices(p, [&](const GemmProblem& q, unsigned products) {
    launch_in_row_slices(ceil_div(q.m, T), unsigned(ceil_div(q.n, T)),
                         [&](int64_t first, dim3 grid) {
                           grid.z = products;
                           launch_kernel("tiled kernel launch", tiled_kernel<E, T, TransA, TransB>,
                                         grid, block, 0, stream, view_of<E>(q), first);
                         });
  });
}

template <int T>
void launch_for_tile(const GemmProblem& p, cudaStream_t stream) {
  visit_precision(p.precision, [&](auto zero) {
    with_transposes(p, [&](auto ta, auto tb) {
      launch<decltype(zero), T, decltype(ta)::value, decltype(tb)::value>(p, stream);
    });
  });
}

}  // namespace

void launch_tiled(const GemmProblem& p, const KernelPlan& plan, void*, void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  switch (plan.tile) {
    case 8:
      launch_for_tile<8>(p, stream);
      break;
    case 16:
      launch_for_tile<16>(p, stream);
      break;
    case 32:
      launch_for_tile<32>(p, stream);
      break;
    default:
      throw Error(Status::Internal, "tiled kernel: unsupported tile size");
  }
}

}  // namespace tiledmm
