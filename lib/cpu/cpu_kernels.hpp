// The CPU implementations of GEMM, on the canonical row-major problem, in the element
// type T of the view (float or double: instantiated for both in cpu_naive.cpp and
// cpu_blocked.cpp; products and sums in T). Each one applies full BLAS semantics
// (alpha, beta, beta = 0 never reads C).
#pragma once

#include <vector>

#include "core/gemm_problem.hpp"

namespace tiledmm {

class WorkerPool;

// op(A) and op(B) elements in the canonical row-major form.
template <class T>
T element_a(const GemmView<T>& p, int64_t i, int64_t q) {
  return p.trans_a ? p.a[q * p.lda + i] : p.a[i * p.lda + q];
}
template <class T>
T element_b(const GemmView<T>& p, int64_t q, int64_t j) {
  return p.trans_b ? p.b[j * p.ldb + q] : p.b[q * p.ldb + j];
}

// C = beta * C, writing zeros (without reading C) when beta is 0.
template <class T>
void cpu_scale_c(const GemmView<T>& p);

// The seeds' sequential triple loop: one dot product per element of C.
template <class T>
void cpu_naive_gemm(const GemmView<T>& p);

// One thread's packing buffers for cpu_blocked_gemm. The backend keeps them across
// calls (its calls are serialised), so steady-state calls allocate nothing.
template <class T>
struct BlockedWorkspace {
  std::vector<T> a, b;
};

// Cache-blocked, packed and multi-threaded over blocks of rows of C, on up to
// `host_threads` threads of `pool` (0 = one per core). Grows `workspaces` as needed
// before it touches C; once it touches C it cannot fail. Returns the threads used.
template <class T>
int cpu_blocked_gemm(const GemmView<T>& p, int host_threads,
                     std::vector<BlockedWorkspace<T>>& workspaces, WorkerPool& pool);

// The threads cpu_blocked_gemm uses for p (1 for a product under 4 MFLOP).
template <class T>
int cpu_blocked_threads(const GemmView<T>& p, int host_threads);

// A strided batch of `batch` products (product b's matrices b * p.stride_x elements past
// p's), whole products to a thread over up to `host_threads` threads of `pool`, each
// computed on one thread with the bits cpu_blocked_gemm gives it (a thread's share of C
// changes no element's order of summation). A and B must take part (k > 0, alpha != 0).
// Grows `workspaces` before it touches C. Returns the threads used.
template <class T>
int cpu_blocked_gemm_batch(const GemmView<T>& p, int64_t batch, int host_threads,
                           std::vector<BlockedWorkspace<T>>& workspaces, WorkerPool& pool);

extern template void cpu_scale_c(const GemmView<float>&);
extern template void cpu_scale_c(const GemmView<double>&);
extern template void cpu_naive_gemm(const GemmView<float>&);
extern template void cpu_naive_gemm(const GemmView<double>&);
extern template int cpu_blocked_gemm(const GemmView<float>&, int,
                                     std::vector<BlockedWorkspace<float>>&, WorkerPool&);
extern template int cpu_blocked_gemm(const GemmView<double>&, int,
                                     std::vector<BlockedWorkspace<double>>&, WorkerPool&);
extern template int cpu_blocked_threads(const GemmView<float>&, int);
extern template int cpu_blocked_threads(const GemmView<double>&, int);
extern template int cpu_blocked_gemm_batch(const GemmView<float>&, int64_t, int,
                                           std::vector<BlockedWorkspace<float>>&, WorkerPool&);
extern template int cpu_blocked_gemm_batch(const GemmView<double>&, int64_t, int,
                                           std::vector<BlockedWorkspace<double>>&, WorkerPool&);

}  // namespace tiledmm
