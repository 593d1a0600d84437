// The system's optimized BLAS (OpenBLAS, BLIS or MKL), found at run time: the CPU
// backend's AUTO hands a product to its sgemm_ or dgemm_ when one is there, and runs its
// own blocked kernels otherwise. No link-time dependency: the library is dlopen'ed.
//
// Which library: TILEDMM_CPU_BLAS, read once per process at the first product that could
// use one. Unset, empty or "auto": the first of kSystemBlasCandidates that loads; "none":
// no system BLAS (the own kernels); anything else: that library only (a path or a name
// dlopen understands). The reference BLAS (libblas.so.3) is not searched: it is not
// faster than the own kernels.
//
// Symbols come only from the handle this file dlopen'ed (RTLD_LOCAL), never from the
// process's global scope: with libtiledmm_blas preloaded, a global dgemm_ is that shim,
// which would call tiledmm again. A library whose sgemm_ or dgemm_ is libtiledmm_blas's
// (or a copy's) is refused.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/gemm_problem.hpp"

namespace tiledmm {

// The libraries searched when TILEDMM_CPU_BLAS is unset, in order.
inline constexpr const char* kSystemBlasCandidates[] = {
    "libopenblas.so.0",   // Debian/Ubuntu (the alternatives' choice of pthread/OpenMP)
    "libopenblasp.so.0",  // Fedora/RHEL: OpenBLAS with pthreads
    "libopenblaso.so.0",  // Fedora/RHEL: OpenBLAS with OpenMP
    "libblis.so.4",       // BLIS (Debian 12 and later)
    "libblis.so.3",       // BLIS (older)
    "libmkl_rt.so.2",     // Intel oneMKL's single dynamic library
    "libmkl_rt.so",
};

// The Fortran BLAS gemm (LP64: int sizes), with the two hidden lengths of the
// character arguments that gfortran-built libraries expect (C-built ones ignore them).
template <class T>
using FortranGemm = void (*)(const char* trans_a, const char* trans_b, const int* m, const int* n,
                             const int* k, const T* alpha, const T* a, const int* lda, const T* b,
                             const int* ldb, const T* beta, T* c, const int* ldc, std::size_t,
                             std::size_t);

struct SystemBlas {
  const char* kernel_name = nullptr;  // the report's: "system BLAS (libopenblas.so.0)"
  FortranGemm<float> sgemm = nullptr;
  FortranGemm<double> dgemm = nullptr;
  int (*get_threads)() = nullptr;           // the threads it computes with, when it says
  int (*set_threads_local)(int) = nullptr;  // MKL: this thread's count for its calls;
                                            // returns the previous one (0: global)
  template <class T>
  FortranGemm<T> gemm() const {
    if constexpr (sizeof(T) == sizeof(double)) {
      return dgemm;
    } else {
      return sgemm;
    }
  }
};

// The system BLAS of this process, found at the first call; nullptr when there is none
// (TILEDMM_CPU_BLAS=none, or nothing usable found). Thread-safe; allocates nothing with
// operator new.
const SystemBlas* system_blas();

// True when `blas` can run `p` honouring `host_threads` (TMM_OPTION_HOST_THREADS):
// every size and leading dimension fits the LP64 BLAS's int, and either host_threads is
// 0 (the BLAS's own count) or the BLAS takes a count per call (MKL). OpenBLAS's and
// BLIS's counts are global to the process, and tiledmm does not change them.
template <class T>
bool system_blas_can_run(const SystemBlas& blas, const GemmView<T>& p, int host_threads);

// C = alpha * op(A) * op(B) + beta * C on `blas`, for a problem with m, n, k > 0 and a
// finite, non-zero alpha (the caller's quick returns come first). The row-major problem
// is the column-major C^T = op(B)^T * op(A)^T. Returns the threads the BLAS computes
// with (at least 1; it may use fewer on a small product).
template <class T>
int system_blas_gemm(const SystemBlas& blas, const GemmView<T>& p, int host_threads);

extern template bool system_blas_can_run(const SystemBlas&, const GemmView<float>&, int);
extern template bool system_blas_can_run(const SystemBlas&, const GemmView<double>&, int);
extern template int system_blas_gemm(const SystemBlas&, const GemmView<float>&, int);
extern template int system_blas_gemm(const SystemBlas&, const GemmView<double>&, int);

}  // namespace tiledmm
