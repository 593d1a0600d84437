// The streamed host path's epilogue: out = alpha * acc + beta * c over one tile of
// C, where acc holds the raw sums of products over all chunks of k. alpha multiplies
// the whole sum, as in every kernel (see tmm_sgemm in the header); c is not read when
// beta is 0. One thread per element, a warp along a row. Over the element type T of the
// call (float or double), instantiated for both below.
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"

namespace tiledmm {
namespace {

template <class T>
__global__ void epilogue_kernel(int64_t m, int64_t n, T alpha, const T* acc, int64_t ld_acc, T beta,
                                const T* c, int64_t ldc, T* out, int64_t ld_out,
                                int64_t first_block_row) {
  const int64_t row = (first_block_row + blockIdx.y) * blockDim.y + threadIdx.y;
  const int64_t col = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= m || col >= n) return;
  const T sum = acc[row * ld_acc + col];
  out[row * ld_out + col] = beta == T(0) ? alpha * sum : alpha * sum + beta * c[row * ldc + col];
}

}  // namespace

template <class T>
void launch_epilogue(int64_t m, int64_t n, T alpha, const T* acc, int64_t ld_acc, T beta,
                     const T* c, int64_t ldc, T* out, int64_t ld_out, cudaStream_t stream) {
  const dim3 block(32, 8);
  launch_in_row_slices(ceil_div(m, 8), unsigned(ceil_div(n, 32)), [&](int64_t first, dim3 grid) {
    launch_kernel("epilogue kernel launch", epilogue_kernel<T>, grid, block, 0, stream, m, n, alpha,
                  acc, ld_acc, beta, c, ldc, out, ld_out, first);
  });
}

template void launch_epilogue(int64_t, int64_t, float, const float*, int64_t, float, const float*,
                              int64_t, float*, int64_t, cudaStream_t);
template void launch_epilogue(int64_t, int64_t, double, const double*, int64_t, double,
                              const double*, int64_t, double*, int64_t, cudaStream_t);

}  // namespace tiledmm
