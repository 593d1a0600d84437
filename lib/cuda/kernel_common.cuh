// What every SGEMM kernel shares: reading op(A) and op(B) in the canonical
// row-major form, the BLAS epilogue, and launching over grids taller than CUDA's
// 65535-block limit on gridDim.y.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "../gemm_problem.hpp"

namespace tiledmm {

// op(A)[i][q]: A is stored m x k, or k x m when transposed.
template <bool TransA>
__device__ __forceinline__ float load_a(const GemmProblem& p, int64_t i, int64_t q) {
  return TransA ? p.a[q * p.lda + i] : p.a[i * p.lda + q];
}

// op(B)[q][j]: B is stored k x n, or n x k when transposed.
template <bool TransB>
__device__ __forceinline__ float load_b(const GemmProblem& p, int64_t q, int64_t j) {
  return TransB ? p.b[j * p.ldb + q] : p.b[q * p.ldb + j];
}

// C[i][j] = alpha * acc + beta * C[i][j]; C is not read when beta is 0, so a NaN
// there cannot leak into the result.
__device__ __forceinline__ void store_c(const GemmProblem& p, int64_t i, int64_t j, float acc) {
  float* c = p.c + i * p.ldc + j;
  *c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * *c;
}

// Launches `launch(first_block_row, grid)` once per slice of at most 65535 rows of
// blocks; kernels add first_block_row to blockIdx.y.
template <class Launch>
void launch_in_row_slices(int64_t block_rows, unsigned block_cols, Launch launch) {
  constexpr int64_t kMaxGridY = 65535;
  for (int64_t first = 0; first < block_rows; first += kMaxGridY) {
    const unsigned rows = unsigned(std::min(kMaxGridY, block_rows - first));
    launch(first, dim3(block_cols, rows));
  }
}

__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Threads of a square block of edge `edge` (for __launch_bounds__, which
// clang-format would otherwise print as "T* T").
constexpr int square_block_threads(int edge) { return edge * edge; }

// Calls f(TransA, TransB) with the problem's transposes as compile-time constants
// (std::true_type / std::false_type), so a kernel file instantiates its four
// variants in one place: f(ta, tb) uses decltype(ta)::value as a template argument.
template <class F>
void with_transposes(const GemmProblem& p, F&& f) {
  if (p.trans_a) {
    p.trans_b ? f(std::true_type{}, std::true_type{}) : f(std::true_type{}, std::false_type{});
  } else {
    p.trans_b ? f(std::false_type{}, std::true_type{}) : f(std::false_type{}, std::false_type{});
  }
}

}  // namespace tiledmm
