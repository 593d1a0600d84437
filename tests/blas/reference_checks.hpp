// The reference BLAS's argument checks of SGEMM and CBLAS_SGEMM, written out from
// its sources (sgemm.f, cblas_sgemm.c) as the tests' oracle. This is deliberately a
// second statement of the rule that blas/entry/args.hpp states for the library: a
// test that took the library's own rule as its oracle could not see a mistake in it.
// test_blas_internals compares args.hpp's fortran_info and cblas_info with these,
// number for number, and test_blas_conformance counts the exported entry points'
// calls (the x86-64 assembly's fast path included) against them. Nothing of the
// library is included here.
// DGEMM and CBLAS_DGEMM (dgemm.f, cblas_dgemm.c) check their arguments exactly as
// SGEMM and CBLAS_SGEMM do, in the same order with the same numbers: these two serve
// the double-precision names too.
#pragma once

#include <algorithm>

namespace tmm_blas_reference {

// The values of cblas.h's CBLAS_LAYOUT and CBLAS_TRANSPOSE.
constexpr int kRowMajor = 101, kColMajor = 102;
constexpr int kNoTrans = 111, kTrans = 112, kConjTrans = 113;

// SGEMM's INFO (0: valid), for TRANSA and TRANSB as given (LSAME: either case).
// Int: INTEGER, 32 or 64 bits.
template <class Int>
int sgemm_info(char ta, char tb, Int m, Int n, Int k, Int lda, Int ldb, Int ldc) {
  auto up = [](char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; };
  const char a = up(ta), b = up(tb);
  const bool nota = a == 'N', notb = b == 'N';
  if (!nota && a != 'T' && a != 'C') return 1;
  if (!notb && b != 'T' && b != 'C') return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max<Int>(1, nota ? m : k)) return 8;
  if (ldb < std::max<Int>(1, notb ? k : n)) return 10;
  if (ldc < std::max<Int>(1, m)) return 13;
  return 0;
}

// CBLAS_SGEMM's parameter number (0: valid). (The reference CBLAS checks the layout
// and the transposes itself and lets SGEMM report the rest by its own numbers; these
// are the CBLAS parameters' positions, which is what the library reports.)
template <class Int>
int cblas_sgemm_info(int layout, int ta, int tb, Int m, Int n, Int k, Int lda, Int ldb, Int ldc) {
  auto trans_ok = [](int t) { return t == kNoTrans || t == kTrans || t == kConjTrans; };
  if (layout != kRowMajor && layout != kColMajor) return 1;
  if (!trans_ok(ta)) return 2;
  if (!trans_ok(tb)) return 3;
  if (m < 0) return 4;
  if (n < 0) return 5;
  if (k < 0) return 6;
  const bool row = layout == kRowMajor, nota = ta == kNoTrans, notb = tb == kNoTrans;
  if (lda < std::max<Int>(1, row ? (nota ? k : m) : (nota ? m : k))) return 9;
  if (ldb < std::max<Int>(1, row ? (notb ? n : k) : (notb ? k : n))) return 11;
  if (ldc < std::max<Int>(1, row ? n : m)) return 14;
  return 0;
}

}  // namespace tmm_blas_reference
