// The sequential baseline of the seed reports: for each element of C, one dot
// product of a row of op(A) with a column of op(B), accumulated in the element type.
#include "cpu/cpu_kernels.hpp"

namespace tiledmm {

template <class T>
void cpu_scale_c(const GemmView<T>& p) {
  for (int64_t i = 0; i < p.m; ++i) {
    T* row = p.c + i * p.ldc;
    for (int64_t j = 0; j < p.n; ++j) row[j] = p.beta == T(0) ? T(0) : p.beta * row[j];
  }
}

template <class T>
void cpu_naive_gemm(const GemmView<T>& p) {
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      T acc = T(0);
      for (int64_t q = 0; q < p.k; ++q) acc += element_a(p, i, q) * element_b(p, q, j);
      T* c = p.c + i * p.ldc + j;
      *c = p.beta == T(0) ? p.alpha * acc : p.alpha * acc + p.beta * *c;
    }
  }
}

template void cpu_scale_c(const GemmView<float>&);
template void cpu_scale_c(const GemmView<double>&);
template void cpu_naive_gemm(const GemmView<float>&);
template void cpu_naive_gemm(const GemmView<double>&);

}  // namespace tiledmm
