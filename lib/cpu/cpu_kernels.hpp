// The CPU implementations of SGEMM, on the canonical row-major problem. Each one
// applies full BLAS semantics (alpha, beta, beta = 0 never reads C).
#pragma once

#include <vector>

#include "core/gemm_problem.hpp"

namespace tiledmm {

class WorkerPool;

// op(A) and op(B) elements in the canonical row-major form.
inline float element_a(const GemmView<float>& p, int64_t i, int64_t q) {
  return p.trans_a ? p.a[q * p.lda + i] : p.a[i * p.lda + q];
}
inline float element_b(const GemmView<float>& p, int64_t q, int64_t j) {
  return p.trans_b ? p.b[j * p.ldb + q] : p.b[q * p.ldb + j];
}

// C = beta * C, writing zeros (without reading C) when beta is 0.
void cpu_scale_c(const GemmView<float>& p);

// The seeds' sequential triple loop: one dot product per element of C.
void cpu_naive_gemm(const GemmView<float>& p);

// One thread's packing buffers for cpu_blocked_gemm. The backend keeps them across
// calls (its calls are serialised), so steady-state calls allocate nothing.
struct BlockedWorkspace {
  std::vector<float> a, b;
};

// Cache-blocked, packed and multi-threaded over blocks of rows of C, on up to
// `host_threads` threads of `pool` (0 = one per core). Grows `workspaces` as needed
// before it touches C; once it touches C it cannot fail. Returns the threads used.
int cpu_blocked_gemm(const GemmProblem& p, int host_threads,
                     std::vector<BlockedWorkspace>& workspaces, WorkerPool& pool);

}  // namespace tiledmm
