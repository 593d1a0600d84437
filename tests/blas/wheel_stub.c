/* A stand-in for a wheel's bundled OpenBLAS (libscipy_openblas64_ of NumPy,
 * libscipy_openblas of SciPy) in tests/blas/run_wheel_names.sh: it defines the eight
 * prefixed GEMM names the wheels export (blas/support/wheel_names.hpp), computes
 * them with a plain loop, and counts its calls, so that wheel_client can tell that
 * libtiledmm_blas fell back to the next definition of the same prefixed name (this
 * library, preloaded after it) rather than to the system BLAS. An invalid call
 * (m < 0, the only error the client makes) is recorded with the number the reference
 * gives it (Fortran: 3; CBLAS: 4), not reported. */
#include <stdint.h>

/* Read by wheel_client with dlsym. */
int wheel_stub_calls = 0;
int wheel_stub_last_info = 0;

/* C = alpha op(A) op(B) + beta C, column-major; ta/tb nonzero: transposed. */
#define STUB_GEMM(name, T, Int)                                                                   \
  static void name(int ta, int tb, Int m, Int n, Int k, T alpha, const T* a, Int lda, const T* b, \
                   Int ldb, T beta, T* c, Int ldc) {                                              \
    for (Int j = 0; j < n; ++j)                                                                   \
      for (Int i = 0; i < m; ++i) {                                                               \
        T s = 0;                                                                                  \
        for (Int l = 0; l < k; ++l)                                                               \
          s += (ta ? a[i * lda + l] : a[l * lda + i]) * (tb ? b[l * ldb + j] : b[j * ldb + l]);   \
        c[j * ldc + i] = alpha * s + (beta == 0 ? 0 : beta * c[j * ldc + i]);                     \
      }                                                                                           \
  }
STUB_GEMM(gemm_s32, float, int)
STUB_GEMM(gemm_s64, float, int64_t)
STUB_GEMM(gemm_d32, double, int)
STUB_GEMM(gemm_d64, double, int64_t)

static int is_trans(char t) { return t != 'N' && t != 'n'; }

#define STUB_FORTRAN(name, T, Int, gemm)                                                           \
  void name(const char* ta, const char* tb, const Int* m, const Int* n, const Int* k,              \
            const T* alpha, const T* a, const Int* lda, const T* b, const Int* ldb, const T* beta, \
            T* c, const Int* ldc) {                                                                \
    ++wheel_stub_calls;                                                                            \
    if (*m < 0) {                                                                                  \
      wheel_stub_last_info = 3;                                                                    \
      return;                                                                                      \
    }                                                                                              \
    gemm(is_trans(*ta), is_trans(*tb), *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc);      \
  }
STUB_FORTRAN(scipy_sgemm_, float, int, gemm_s32)
STUB_FORTRAN(scipy_sgemm_64_, float, int64_t, gemm_s64)
STUB_FORTRAN(scipy_dgemm_, double, int, gemm_d32)
STUB_FORTRAN(scipy_dgemm_64_, double, int64_t, gemm_d64)

/* Row-major: C^T = op(B)^T op(A)^T, column-major with A and B swapped. */
#define STUB_CBLAS(name, T, Int, gemm)                                                     \
  void name(int layout, int ta, int tb, Int m, Int n, Int k, T alpha, const T* a, Int lda, \
            const T* b, Int ldb, T beta, T* c, Int ldc) {                                  \
    ++wheel_stub_calls;                                                                    \
    if (m < 0) {                                                                           \
      wheel_stub_last_info = 4;                                                            \
      return;                                                                              \
    }                                                                                      \
    if (layout == 101)                                                                     \
      gemm(tb != 111, ta != 111, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc);            \
    else                                                                                   \
      gemm(ta != 111, tb != 111, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);            \
  }
STUB_CBLAS(scipy_cblas_sgemm, float, int, gemm_s32)
STUB_CBLAS(scipy_cblas_sgemm64_, float, int64_t, gemm_s64)
STUB_CBLAS(scipy_cblas_dgemm, double, int, gemm_d32)
STUB_CBLAS(scipy_cblas_dgemm64_, double, int64_t, gemm_d64)
