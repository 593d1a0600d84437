// What every GEMM kernel shares: reading op(A) and op(B) in the canonical
// row-major form (over the element type T), the BLAS epilogue, launching over grids taller than
// CUDA's 65535-block limit on gridDim.y, and the grouped order of tiles that the fast kernels
// share.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/gemm_problem.hpp"
#include "cuda/kernels/kernels.hpp"

namespace tiledmm {

// op(A)[i][q]: A is stored m x k, or k x m when transposed.
template <bool TransA, class T>
__device__ __forceinline__ T load_a(const GemmView<T>& p, int64_t i, int64_t q) {
  return TransA ? p.a[q * p.lda + i] : p.a[i * p.lda + q];
}

// op(B)[q][j]: B is stored k x n, or n x k when transposed.
template <bool TransB, class T>
__device__ __forceinline__ T load_b(const GemmView<T>& p, int64_t q, int64_t j) {
  return TransB ? p.b[j * p.ldb + q] : p.b[q * p.ldb + j];
}

// The BLAS scalars of a product: the view's, or where the call gave them in device
// memory (tmm_sgemm_device_scalars: alpha_at and beta_at set), the values there, read
// when the kernel runs.
template <class T>
struct Scalars {
  T alpha, beta;
};
template <class T>
__device__ __forceinline__ Scalars<T> scalars_of(T alpha, T beta, const T* alpha_at,
                                                 const T* beta_at) {
  if (alpha_at == nullptr) return {alpha, beta};
  return {__ldg(alpha_at), __ldg(beta_at)};
}
template <class T>
__device__ __forceinline__ Scalars<T> scalars_of(const GemmView<T>& p) {
  return scalars_of(p.alpha, p.beta, p.alpha_at, p.beta_at);
}

// alpha * acc + beta * old(), old() (C's element) not called where beta is 0, so that
// a NaN there cannot leak into the result. alpha 0 comes only from device memory (a
// call passing 0 by value runs scale_kernel): it leaves beta * C, as scale_kernel, A's
// and B's values (NaN, Inf) in acc not showing.
template <class T, class Old>
__device__ __forceinline__ T blas_value(Scalars<T> s, T acc, Old old) {
  if (s.alpha == T(0)) return s.beta == T(0) ? T(0) : s.beta * old();
  return s.beta == T(0) ? s.alpha * acc : s.alpha * acc + s.beta * old();
}

// C[i][j] = alpha * acc + beta * C[i][j] (blas_value).
template <class T>
__device__ __forceinline__ void store_c(const GemmView<T>& p, int64_t i, int64_t j, T acc) {
  T* c = p.c + i * p.ldc + j;
  *c = blas_value(scalars_of(p), acc, [&] { return *c; });
}

// Two adjacent elements of T as one vector access: float2 or double2.
template <class T>
struct PairOf;
template <>
struct PairOf<float> {
  using type = float2;
};
template <>
struct PairOf<double> {
  using type = double2;
};

// C[row][col, col + 1] = alpha * v + beta * C, inside the matrix only; one vector
// access (8 bytes for floats, 16 for doubles) where both columns exist and C is aligned
// for it (and alpha is not 0: store_c's rule).
template <class T>
__device__ __forceinline__ void store_pair(const GemmView<T>& p, int64_t row, int64_t col, T v0,
                                           T v1) {
  using Pair = typename PairOf<T>::type;
  if (row >= p.m || col >= p.n) return;
  T* c = p.c + row * p.ldc + col;
  const Scalars<T> s = scalars_of(p);
  if (col + 1 < p.n && (reinterpret_cast<uintptr_t>(c) & (sizeof(Pair) - 1)) == 0 &&
      s.alpha != T(0)) {
    Pair out{s.alpha * v0, s.alpha * v1};
    if (s.beta != T(0)) {
      const Pair old = *reinterpret_cast<const Pair*>(c);
      out.x += s.beta * old.x;
      out.y += s.beta * old.y;
    }
    *reinterpret_cast<Pair*>(c) = out;
  } else {
    store_c(p, row, col, v0);
    if (col + 1 < p.n) store_c(p, row, col + 1, v1);
  }
}

// kernel<<<grid, block, shared_bytes, stream>>>(args...), throwing its launch error
// named by `what`. The error comes from the launch itself (cudaLaunchKernelEx), not
// from the thread's last-error state: an error the caller left pending there is not
// taken for this launch's, nor cleared.
template <class... Params, class... Args>
void launch_kernel(const char* what, void (*kernel)(Params...), dim3 grid, dim3 block,
                   size_t shared_bytes, cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  const LastErrorScope scope;
  const cudaError_t err = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (err != cudaSuccess) {
    scope.clear_if_ours();
    check_cuda(err, what);
  }
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

// A batched kernel's product: the matrices of product blockIdx.z of the launch's slice
// of a strided batch (launch_in_product_slices); the one product of a single call.
template <class T>
__device__ __forceinline__ void select_product(GemmView<T>& p) {
  const int64_t z = blockIdx.z;
  p.a += z * p.stride_a;
  p.b += z * p.stride_b;
  p.c += z * p.stride_c;
}

// Launches `launch(slice, products)` once per slice of at most 65535 products of a strided
// batch (gridDim.z's limit), `slice` the batch from its first product; a single call's
// problem once, as it is.
template <class Launch>
void launch_in_product_slices(const GemmProblem& p, Launch launch) {
  constexpr int64_t kMaxGridZ = 65535;
  if (p.batch <= 1) {
    launch(p, 1u);
    return;
  }
  for (int64_t first = 0; first < p.batch; first += kMaxGridZ) {
    const int64_t count = std::min(kMaxGridZ, p.batch - first);
    launch(products_of(p, first, count), unsigned(count));
  }
}

// a >= 0, b > 0; exact up to INT64_MAX (no a + b - 1).
__host__ __device__ inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// The tile of C a block owns: its first row and column.
struct TileOrigin {
  int64_t row0, col0;
};

// Tile `id` of BM x BN tiles, numbered down groups of GROUP_M tile rows, then
// across, so that blocks running at the same time share rows of A and columns of B
// in L2.
template <int BM, int BN, int GROUP_M>
__device__ __forceinline__ TileOrigin grouped_tile(int64_t id, int64_t m, int64_t n) {
  const int64_t tiles_m = ceil_div(m, BM), tiles_n = ceil_div(n, BN);
  const int64_t group = id / (GROUP_M * tiles_n);
  const int64_t first_m = group * GROUP_M;
  const int64_t group_rows = min(tiles_m - first_m, int64_t(GROUP_M));
  return {(first_m + id % group_rows) * BM, ((id % (GROUP_M * tiles_n)) / group_rows) * BN};
}

// The tile of block blockIdx.x in that order.
template <int BM, int BN, int GROUP_M>
__device__ __forceinline__ TileOrigin grouped_tile_of_block(int64_t m, int64_t n) {
  return grouped_tile<BM, BN, GROUP_M>(blockIdx.x, m, n);
}

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

// Calls f(VecA, VecB) with whether each operand's rows are all 16-byte aligned (so that
// 16-byte copies can read them; in every product of a batch) as compile-time constants,
// as with_transposes does.
template <class F>
void with_alignment(const GemmProblem& p, F&& f) {
  const int bytes = element_bytes(p.precision);
  const bool vec_a = rows_16_byte_aligned(p.a, p.lda, p.stride_a, p.batch, bytes);
  const bool vec_b = rows_16_byte_aligned(p.b, p.ldb, p.stride_b, p.batch, bytes);
  if (vec_a) {
    vec_b ? f(std::true_type{}, std::true_type{}) : f(std::true_type{}, std::false_type{});
  } else {
    vec_b ? f(std::false_type{}, std::true_type{}) : f(std::false_type{}, std::false_type{});
  }
}

}  // namespace tiledmm
