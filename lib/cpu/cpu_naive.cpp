// The sequential baseline of the seed reports: for each element of C, one dot
// product of a row of op(A) with a column of op(B), accumulated in float.
#include "cpu/cpu_kernels.hpp"

namespace tiledmm {

void cpu_scale_c(const GemmView<float>& p) {
  for (int64_t i = 0; i < p.m; ++i) {
    float* row = p.c + i * p.ldc;
    for (int64_t j = 0; j < p.n; ++j) row[j] = p.beta == 0.0f ? 0.0f : p.beta * row[j];
  }
}

void cpu_naive_gemm(const GemmView<float>& p) {
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      float acc = 0.0f;
      for (int64_t q = 0; q < p.k; ++q) acc += element_a(p, i, q) * element_b(p, q, j);
      float* c = p.c + i * p.ldc + j;
      *c = p.beta == 0.0f ? p.alpha * acc : p.alpha * acc + p.beta * *c;
    }
  }
}

}  // namespace tiledmm
