// NAIVE: one thread per element of C, reading A and B straight from global memory.
//
// A block of E x E threads owns an E x E block of C. threadIdx.x walks the columns,
// so a warp writes consecutive elements of a row of C and, without transposes,
// reads consecutive elements of a row of B (coalesced), while all its threads read
// the same element of A (a broadcast). Every operand element is read from global
// memory k times per use: this is the baseline the tiled kernels improve on.
//
// Over the element type T (float or double): the launcher picks it by the problem's
// precision.
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"

namespace tiledmm {
namespace {

template <class T, bool TransA, bool TransB>
__global__ void naive_kernel(GemmView<T> p, int64_t first_block_row) {
  const int64_t row = (first_block_row + blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= p.m || col >= p.n) return;
  T acc = T(0);
  for (int64_t q = 0; q < p.k; ++q) {
    acc += load_a<TransA>(p, row, q) * load_b<TransB>(p, q, col);
  }
  store_c(p, row, col, acc);
}

template <class T, bool TransA, bool TransB>
void launch(const GemmProblem& p, int edge, cudaStream_t stream) {
  const dim3 block(edge, edge);
  launch_in_row_slices(ceil_div(p.m, edge), unsigned(ceil_div(p.n, edge)),
                       [&](int64_t first, dim3 grid) {
                         launch_kernel("naive kernel launch", naive_kernel<T, TransA, TransB>, grid,
                                       block, 0, stream, view_of<T>(p), first);
                       });
}

}  // namespace

void launch_naive(const GemmProblem& p, const KernelPlan& plan, void*, void* stream) {
  // One thread per element of an edge x edge block of C.
  require(plan.tile > 0 && plan.tile * plan.tile <= 1024, Status::Internal,
          "naive kernel: a block has at most 1024 threads");
  visit_precision(p.precision, [&](auto zero) {
    with_transposes(p, [&](auto ta, auto tb) {
      launch<decltype(zero), decltype(ta)::value, decltype(tb)::value>(
          p, plan.tile, static_cast<cudaStream_t>(stream));
    });
  });
}

}  // namespace tiledmm
