// C = beta * C, for calls where A and B take no part (k = 0 or alpha = 0). With
// beta = 0 it writes zeros without reading C, as BLAS requires. Over the element type T,
// picked from the problem's precision.
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"

namespace tiledmm {
namespace {

template <class T>
__global__ void scale_kernel(GemmView<T> p, int64_t first_block_row) {
  const int64_t row = (first_block_row + blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= p.m || col >= p.n) return;
  T* c = p.c + row * p.ldc + col;
  const T beta = scalars_of(p).beta;
  *c = beta == T(0) ? T(0) : beta * *c;
}

}  // namespace

void launch_scale(const GemmProblem& p, cudaStream_t stream) {
  const dim3 block(32, 8);
  visit_precision(p.precision, [&](auto zero) {
    using T = decltype(zero);
    launch_in_row_slices(ceil_div(p.m, 8), unsigned(ceil_div(p.n, 32)),
                         [&](int64_t first, dim3 grid) {
                           launch_kernel("scale kernel launch", scale_kernel<T>, grid, block, 0,
                                         stream, view_of<T>(p), first);
                         });
  });
}

}  // namespace tiledmm
