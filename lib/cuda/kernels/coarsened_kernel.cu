// COARSENED: the tiled kernel where each thread computes C outputs instead of one
// (seed 001's "granularity").
//
// A block of T x T threads owns a T x (C*T) strip of C: C horizontally adjacent
// tiles. Each phase it loads one T x T tile of op(A) and C tiles of op(B); each
// thread reads its element of the A tile once from shared memory and uses it for
// its C outputs, which sit T columns apart (so a warp still writes consecutive
// addresses). Fewer blocks load the same A tile, and each shared-memory read of A
// feeds C multiply-adds instead of one.
//
// Over the element type E (float or double), picked by the launcher from the problem's
// precision; in double the largest, 32 x4, takes (32 * 33 + 4 * 32 * 33) * 8 = 42,240
// bytes of shared memory, inside the 48 KiB of static shared memory.
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"

namespace tiledmm {
namespace {

template <class E, int T, int C, bool TransA, bool TransB>
__global__ void __launch_bounds__(square_block_threads(T))
    coarsened_kernel(GemmView<E> p, int64_t first_block_row) {
  // One thread per element of each tile: the block is T x T threads. Coarsening
  // widens the strip rather than splitting the tile, so C need not divide T; each
  // of the C columns is guarded on its own.
  static_assert(T > 0 && T * T <= 1024, "a block has at most 1024 threads: T <= 32");
  static_assert(C >= 1, "each thread computes at least one output");
  __shared__ E a_tile[T][T + 1];     // op(A)[row0 + i][q0 + q]
  __shared__ E b_tile[C][T][T + 1];  // op(B)[q0 + q][col0 + c*T + j]
  static_assert(sizeof(a_tile) + sizeof(b_tile) <= 48 * 1024,
                "static shared memory is limited to 48 KiB per block");
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int64_t row0 = (first_block_row + blockIdx.y) * T;
  const int64_t col0 = int64_t(blockIdx.x) * T * C;

  E acc[C] = {};
  for (int64_t q0 = 0; q0 < p.k; q0 += T) {
    if (TransA) {
      const int64_t i = row0 + tx, q = q0 + ty;
      a_tile[tx][ty] = (i < p.m && q < p.k) ? load_a<true>(p, i, q) : E(0);
    } else {
      const int64_t i = row0 + ty, q = q0 + tx;
      a_tile[ty][tx] = (i < p.m && q < p.k) ? load_a<false>(p, i, q) : E(0);
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const int64_t tile_col0 = col0 + c * T;
      if (TransB) {
        const int64_t q = q0 + tx, j = tile_col0 + ty;
        b_tile[c][tx][ty] = (q < p.k && j < p.n) ? load_b<true>(p, q, j) : E(0);
      } else {
        const int64_t q = q0 + ty, j = tile_col0 + tx;
        b_tile[c][ty][tx] = (q < p.k && j < p.n) ? load_b<false>(p, q, j) : E(0);
      }
    }
    // The tiles must be complete before anyone reads them.
    __syncthreads();
#pragma unroll
    for (int q = 0; q < T; ++q) {
      const E a = a_tile[ty][q];  // read once, used C times
#pragma unroll
      for (int c = 0; c < C; ++c) acc[c] += a * b_tile[c][q][tx];
    }
    // And no one may overwrite them while others still read.
    __syncthreads();
  }
  const int64_t row = row0 + ty;
  if (row >= p.m) return;
#pragma unroll
  for (int c = 0; c < C; ++c) {
    const int64_t col = col0 + c * T + tx;
    if (col < p.n) store_c(p, row, col, acc[c]);
  }
}

template <class E, int T, int C, bool TransA, bool TransB>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const dim3 block(T, T);
  launch_in_row_slices(
      ceil_div(p.m, T), unsigned(ceil_div(p.n, int64_t(T) * C)), [&](int64_t first, dim3 grid) {
        launch_kernel("coarsened kernel launch", coarsened_kernel<E, T, C, TransA, TransB>, grid,
                      block, 0, stream, view_of<E>(p), first);
      });
}

template <int T, int C>
void launch_for_config(const GemmProblem& p, cudaStream_t stream) {
  visit_precision(p.precision, [&](auto zero) {
    with_transposes(p, [&](auto ta, auto tb) {
      launch<decltype(zero), T, C, decltype(ta)::value, decltype(tb)::value>(p, stream);
    });
  });
}

template <int T>
void launch_for_tile(const GemmProblem& p, int coarsening, cudaStream_t stream) {
  switch (coarsening) {
    case 1:
      launch_for_config<T, 1>(p, stream);
      break;
    case 2:
      launch_for_config<T, 2>(p, stream);
      break;
    case 4:
      launch_for_config<T, 4>(p, stream);
      break;
    default:
      throw Error(Status::Internal, "coarsened kernel: unsupported coarsening");
  }
}

}  // namespace

void launch_coarsened(const GemmProblem& p, const KernelPlan& plan, void*, void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  switch (plan.tile) {
    case 8:
      launch_for_tile<8>(p, plan.coarsening, stream);
      break;
    case 16:
      launch_for_tile<16>(p, plan.coarsening, stream);
      break;
    case 32:
      launch_for_tile<32>(p, plan.coarsening, stream);
      break;
    default:
      throw Error(Status::Internal, "coarsened kernel: unsupported tile size");
  }
}

}  // namespace tiledmm
