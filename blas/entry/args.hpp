// The argument rules of sgemm_ and cblas_sgemm, dgemm_ and cblas_dgemm (and of their
// ILP64 twins), stated once (the reference DGEMM checks its arguments exactly as
// SGEMM does, in the same order with the same numbers): which calls are valid, and for an invalid
// one the parameter number the reference BLAS's xerbla reports. Everything that checks arguments
// derives from gemm_info below:
//   fortran_info, cblas_info    the number, for the general way (entry/shim.cpp);
//   fortran_valid, cblas_valid  whether it is 0, for the small calls' fast path, on
//                               the sizes it takes (fast_sizes);
//   trampolines_x86_64.S        a conservative subset of fortran_valid and
//                               cblas_valid: it takes a call only where they say
//                               valid, and leaves every other to the C++, which
//                               decides again (fast_path.hpp).
// tests/blas/entry/test_args.cpp checks these against the reference's rules as
// the tests state them independently (tests/blas/reference_checks.hpp), and
// test_blas_conformance that the exported entry points, the assembly included, count
// each call as those rules say.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "support/fallback.hpp"  // the CBLAS enum values

namespace tiledmm::blas {

// LSAME's rule: ASCII letters, either case (no locale, no call).
inline char upper(const char* c) { return *c >= 'a' && *c <= 'z' ? char(*c - 'a' + 'A') : *c; }

// LSAME's classes of a transpose character, by its byte: 0 invalid, 1 N or n (no
// transpose), 2 T, t, C or c. One load instead of a chain of tests.
struct TransClasses {
  unsigned char of[256];
};
constexpr TransClasses make_trans_classes() {
  TransClasses t{};
  for (unsigned char c : {'N', 'n'}) t.of[c] = 1;
  for (unsigned char c : {'T', 't', 'C', 'c'}) t.of[c] = 2;
  return t;
}
inline constexpr TransClasses kTransClasses = make_trans_classes();
constexpr unsigned trans_class(char c) { return kTransClasses.of[static_cast<unsigned char>(c)]; }

// CblasNoTrans, CblasTrans, CblasConjTrans, tested as one range.
static_assert(kTrans == kNoTrans + 1 && kConjTrans == kNoTrans + 2);
constexpr bool cblas_trans_valid(int t) { return unsigned(t) - unsigned(kNoTrans) <= 2u; }

// ---- The rule --------------------------------------------------------------------

// The reference BLAS checks a GEMM's arguments in this order and reports the first
// that fails (xerbla's INFO):
//   layout (CBLAS only), transa, transb   one of the values the routine knows;
//   m, n, k                               >= 0;
//   lda, ldb, ldc                         >= max(1, rows), the rows of A, B and C as
//                                         stored (in row-major order, their columns).
// sgemm_ and cblas_sgemm number these parameters each its own way; sgemm_ has no
// layout (its GemmArgs::layout_valid is always true). The ILP64 twins number them
// alike.
struct ParameterNumbers {
  int layout, transa, transb, m, n, k, lda, ldb, ldc;
};
inline constexpr ParameterNumbers kSgemmNumbers{0, 1, 2, 3, 4, 5, 8, 10, 13};
inline constexpr ParameterNumbers kCblasNumbers{1, 2, 3, 4, 5, 6, 9, 11, 14};

// A call's arguments as the rule reads them: the routine's own spellings of the
// layout and the transposes already judged (fortran_args, cblas_args), and for each
// leading dimension the rows it must cover. Int is int, or int64_t for the ILP64
// entry points.
template <class Int>
struct GemmArgs {
  bool layout_valid, transa_valid, transb_valid;
  Int m, n, k;
  Int lda, ldb, ldc;
  Int rows_a, rows_b, rows_c;
};

// What a caller already knows of the sizes: nothing, or that they pass fast_sizes
// (1 <= m, n, k <= 65536). Then m, n, k >= 0 hold and max(1, rows) is rows, and the
// small calls' fast path tests neither.
enum class SizesKnown { kNothing, kFast };

// The parameter number of the first argument the rule refuses; 0: valid.
template <SizesKnown kKnown = SizesKnown::kNothing, class Int>
constexpr int gemm_info(const ParameterNumbers& number, const GemmArgs<Int>& x) {
  if (!x.layout_valid) return number.layout;
  if (!x.transa_valid) return number.transa;
  if (!x.transb_valid) return number.transb;
  if constexpr (kKnown == SizesKnown::kNothing) {
    if (x.m < 0) return number.m;
    if (x.n < 0) return number.n;
    if (x.k < 0) return number.k;
  }
  const auto least = [](Int rows) {
    return kKnown == SizesKnown::kFast ? rows : std::max<Int>(1, rows);
  };
  if (x.lda < least(x.rows_a)) return number.lda;
  if (x.ldb < least(x.rows_b)) return number.ldb;
  if (x.ldc < least(x.rows_c)) return number.ldc;
  return 0;
}

// sgemm_'s arguments (TRANSA and TRANSB in either case): column-major, A m x k (k x m
// transposed), B k x n (n x k).
template <class Int>
constexpr GemmArgs<Int> fortran_args(char transa, char transb, Int m, Int n, Int k, Int lda,
                                     Int ldb, Int ldc) {
  const unsigned ta = trans_class(transa), tb = trans_class(transb);
  return {true, ta != 0, tb != 0, m, n, k, lda, ldb, ldc, ta == 1 ? m : k, tb == 1 ? k : n, m};
}

// cblas_sgemm's arguments: in row-major order a matrix's leading dimension covers its
// columns.
template <class Int>
constexpr GemmArgs<Int> cblas_args(int layout, int ta, int tb, Int m, Int n, Int k, Int lda,
                                   Int ldb, Int ldc) {
  const bool row = layout == kRowMajor, nota = ta == kNoTrans, notb = tb == kNoTrans;
  const bool layout_valid = row || layout == kColMajor;
  // Row-major A (B) is column-major A^T (B^T): the transpose flips with the layout.
  const Int rows_a = nota != row ? m : k;
  const Int rows_b = notb != row ? k : n;
  const Int rows_c = row ? n : m;
  const bool ta_valid = cblas_trans_valid(ta), tb_valid = cblas_trans_valid(tb);
  return {layout_valid, ta_valid, tb_valid, m, n, k, lda, ldb, ldc, rows_a, rows_b, rows_c};
}

// The reference SGEMM's INFO; 0: valid.
template <class Int>
constexpr int fortran_info(char ta, char tb, Int m, Int n, Int k, Int lda, Int ldb, Int ldc) {
  return gemm_info(kSgemmNumbers, fortran_args(ta, tb, m, n, k, lda, ldb, ldc));
}

// The reference CBLAS's parameter number; 0: valid.
template <class Int>
constexpr int cblas_info(int layout, int ta, int tb, Int m, Int n, Int k, Int lda, Int ldb,
                         Int ldc) {
  return gemm_info(kCblasNumbers, cblas_args(layout, ta, tb, m, n, k, lda, ldb, ldc));
}

// ---- The small calls' fast path ------------------------------------------------

// The fast path takes products with 1 <= m, n, k <= 65536 only: then 2 m n k cannot
// overflow (it is at most 2^49), there is no quick return (with alpha != 0), and the
// reference's bounds max(1, x) on the leading dimensions are the sizes themselves.
// Larger products take the general way, whose cost is nothing next to theirs. Int is
// int, or int64_t for the ILP64 entry points.
template <class Int>
inline bool fast_sizes(Int m, Int n, Int k) {
  using U = std::make_unsigned_t<Int>;
  return ((U(m) - 1u) | (U(n) - 1u) | (U(k) - 1u)) <= 0xFFFFu;
}

// x != 0, tested on its bits with integer instructions (all but the sign bit zero:
// +-0; NaN is nonzero, as in the comparison): the Fortran fast path, which gets alpha
// by reference, needs no floating-point instruction.
inline bool nonzero(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits << 1) != 0;
}
inline bool nonzero(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits << 1) != 0;
}

// flops_of (route/router.cpp) for fast_sizes and alpha != 0.
template <class Int>
inline uint64_t fast_flops(Int m, Int n, Int k) {
  return 2 * uint64_t(m) * uint64_t(n) * uint64_t(k);
}

// fortran_info(...) == 0, for sizes that pass fast_sizes.
template <class Int>
inline bool fortran_valid(const char* transa, const char* transb, Int m, Int n, Int k, Int lda,
                          Int ldb, Int ldc) {
  return gemm_info<SizesKnown::kFast>(kSgemmNumbers,
                                      fortran_args(*transa, *transb, m, n, k, lda, ldb, ldc)) == 0;
}

// cblas_info(...) == 0, for sizes that pass fast_sizes. The rule once per layout, so
// that each folds its layout's choices of rows (GCC otherwise computes both and
// spills: 12 more instructions a call).
template <class Int>
inline bool cblas_valid(int layout, int ta, int tb, Int m, Int n, Int k, Int lda, Int ldb,
                        Int ldc) {
  const auto valid_as = [&](int known_layout) {
    return gemm_info<SizesKnown::kFast>(
               kCblasNumbers, cblas_args(known_layout, ta, tb, m, n, k, lda, ldb, ldc)) == 0;
  };
  if (layout == kRowMajor) return valid_as(kRowMajor);
  if (layout == kColMajor) return valid_as(kColMajor);
  return false;
}

}  // namespace tiledmm::blas
