// The checks of a call's arguments, as the reference BLAS makes them (shim.cpp
// says in which order and why), and the small calls' fast versions of them: one
// test whether everything is valid, for the sizes the fast path takes. Kept
// together, so that tests/blas/test_blas_internals.cpp checks that both agree.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "support/fallback.hpp"  // the CBLAS enum values

namespace tiledmm::blas {

// LSAME's rule: ASCII letters, either case (no locale, no call).
inline char upper(const char* c) { return *c >= 'a' && *c <= 'z' ? char(*c - 'a' + 'A') : *c; }

// The reference SGEMM's INFO for upper-cased TRANSA and TRANSB; 0: valid.
template <class Int>
int fortran_info(char ta, char tb, Int m, Int n, Int k, Int lda, Int ldb, Int ldc) {
  const bool nota = ta == 'N', notb = tb == 'N';
  const Int rows_a = nota ? m : k, rows_b = notb ? k : n;
  if (!nota && ta != 'C' && ta != 'T') return 1;
  if (!notb && tb != 'C' && tb != 'T') return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max<Int>(1, rows_a)) return 8;
  if (ldb < std::max<Int>(1, rows_b)) return 10;
  if (ldc < std::max<Int>(1, m)) return 13;
  return 0;
}

// The reference CBLAS's parameter number; 0: valid.
template <class Int>
int cblas_info(int layout, int ta, int tb, Int m, Int n, Int k, Int lda, Int ldb, Int ldc) {
  auto valid_trans = [](int t) { return t == kNoTrans || t == kTrans || t == kConjTrans; };
  if (layout != kRowMajor && layout != kColMajor) return 1;
  if (!valid_trans(ta)) return 2;
  if (!valid_trans(tb)) return 3;
  if (m < 0) return 4;
  if (n < 0) return 5;
  if (k < 0) return 6;
  const bool row = layout == kRowMajor, nota = ta == kNoTrans, notb = tb == kNoTrans;
  const Int a_min = row ? (nota ? k : m) : (nota ? m : k);
  const Int b_min = row ? (notb ? n : k) : (notb ? k : n);
  if (lda < std::max<Int>(1, a_min)) return 9;
  if (ldb < std::max<Int>(1, b_min)) return 11;
  if (ldc < std::max<Int>(1, row ? n : m)) return 14;
  return 0;
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

// x != 0.0f, tested on its bits with integer instructions (all but the sign bit
// zero: +-0; NaN is nonzero, as in the comparison): the Fortran fast path, which
// gets alpha by reference, needs no floating-point instruction.
inline bool nonzero(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits << 1) != 0;
}

// flops_of (route/router.cpp) for fast_sizes and alpha != 0.
template <class Int>
inline uint64_t fast_flops(Int m, Int n, Int k) {
  return 2 * uint64_t(m) * uint64_t(n) * uint64_t(k);
}

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

// fortran_info(upper(transa), upper(transb), ...) == 0, for sizes that pass
// fast_sizes (then max(1, x) is x).
template <class Int>
inline bool fortran_valid(const char* transa, const char* transb, Int m, Int n, Int k, Int lda,
                          Int ldb, Int ldc) {
  const unsigned ta = kTransClasses.of[static_cast<unsigned char>(*transa)];
  const unsigned tb = kTransClasses.of[static_cast<unsigned char>(*transb)];
  const bool nota = ta == 1, notb = tb == 1;
  return ta != 0 && tb != 0 && lda >= (nota ? m : k) && ldb >= (notb ? k : n) && ldc >= m;
}

// cblas_info(...) == 0, for sizes that pass fast_sizes.
template <class Int>
inline bool cblas_valid(int layout, int ta, int tb, Int m, Int n, Int k, Int lda, Int ldb,
                        Int ldc) {
  if (unsigned(ta) - unsigned(kNoTrans) > 2u || unsigned(tb) - unsigned(kNoTrans) > 2u)
    return false;
  const bool nota = ta == kNoTrans, notb = tb == kNoTrans;
  if (layout == kRowMajor) return lda >= (nota ? k : m) && ldb >= (notb ? n : k) && ldc >= n;
  if (layout == kColMajor) return lda >= (nota ? m : k) && ldb >= (notb ? k : n) && ldc >= m;
  return false;
}

}  // namespace tiledmm::blas
