// The prefixed GEMM names pip's NumPy and SciPy wheels call, in one table: each is a
// twin of a standard name (scipy_dgemm_64_ of dgemm_64_, scipy_cblas_sgemm of
// cblas_sgemm, ...) and behaves exactly like it (entry/shim.cpp defines them from this
// table), but falls back first to the next definition of its own name, the wheel's
// bundled OpenBLAS (support/fallback.cpp finds them from this table).
//
//   NumPy 2.x wheels: _multiarray_umath imports scipy_cblas_sgemm64_ and
//     scipy_cblas_dgemm64_ (ILP64); its libscipy_openblas64_ also exports the Fortran
//     scipy_sgemm_64_ and scipy_dgemm_64_.
//   SciPy wheels: cython_blas, _fblas, _flapack, ... import scipy_sgemm_ and
//     scipy_dgemm_ (LP64); its libscipy_openblas also exports scipy_cblas_sgemm and
//     scipy_cblas_dgemm.
//
// Each row: X(name, element type, integer type), Fortran names in
// TMM_BLAS_WHEEL_FORTRAN, CBLAS names in TMM_BLAS_WHEEL_CBLAS.
#pragma once

#include <cstdint>  // the rows name int64_t

#define TMM_BLAS_WHEEL_FORTRAN(X)    \
  X(scipy_sgemm_, float, int)        \
  X(scipy_sgemm_64_, float, int64_t) \
  X(scipy_dgemm_, double, int)       \
  X(scipy_dgemm_64_, double, int64_t)

#define TMM_BLAS_WHEEL_CBLAS(X)           \
  X(scipy_cblas_sgemm, float, int)        \
  X(scipy_cblas_sgemm64_, float, int64_t) \
  X(scipy_cblas_dgemm, double, int)       \
  X(scipy_cblas_dgemm64_, double, int64_t)
