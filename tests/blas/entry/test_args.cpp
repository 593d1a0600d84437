// blas/entry/args: the argument rule against the reference's (reference_checks.hpp),
// and the fast path's checks against the rule.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <ios>
#include <limits>

#include "../reference_checks.hpp"
#include "entry/args.hpp"

namespace {

// ---- The fast path's checks ----------------------------------------------------

TEST(BlasFastPath, SizesItTakes) {
  using tiledmm::blas::fast_sizes;
  EXPECT_TRUE(fast_sizes(1, 1, 1));
  EXPECT_TRUE(fast_sizes(65536, 65536, 65536));
  EXPECT_EQ(tiledmm::blas::fast_flops(65536, 65536, 65536), uint64_t(1) << 49);
  for (int bad : {0, -1, 65537, INT_MAX, INT_MIN}) {
    EXPECT_FALSE(fast_sizes(bad, 1, 1)) << bad;
    EXPECT_FALSE(fast_sizes(1, bad, 1)) << bad;
    EXPECT_FALSE(fast_sizes(1, 1, bad)) << bad;
  }
  EXPECT_TRUE(fast_sizes(32768, 32767, 1));  // no bit of one hides another's
}

// The ILP64 versions of the fast path's checks agree with the reference's on values
// beyond 32 bits, negative ones and the edges of the sizes it takes.
TEST(BlasFastPath, Ilp64ChecksAgreeWithTheReference) {
  using tiledmm::blas::fast_sizes;
  const int64_t values[] = {INT64_MIN,
                            -(int64_t(1) << 32),
                            INT_MIN,
                            -1,
                            0,
                            1,
                            2,
                            3,
                            65535,
                            65536,
                            65537,
                            INT_MAX,
                            int64_t(1) << 31,
                            int64_t(1) << 32,
                            (int64_t(1) << 32) + 1,
                            int64_t(1) << 48,
                            INT64_MAX};
  int taken = 0;
  for (int64_t m : values)
    for (int64_t n : values)
      for (int64_t k : values) {
        const bool fast = fast_sizes<int64_t>(m, n, k);
        ASSERT_EQ(fast, m >= 1 && m <= 65536 && n >= 1 && n <= 65536 && k >= 1 && k <= 65536)
            << m << " " << n << " " << k;
        taken += fast;
        if (!fast) continue;
        for (int64_t ld : values) {
          const char t = 'T', nn = 'n';
          EXPECT_EQ(tiledmm::blas::fortran_valid<int64_t>(&t, &nn, m, n, k, ld, ld, ld),
                    tiledmm::blas::fortran_info<int64_t>('T', 'N', m, n, k, ld, ld, ld) == 0);
          for (int layout : {101, 102})
            EXPECT_EQ(
                tiledmm::blas::cblas_valid<int64_t>(layout, 112, 111, m, n, k, ld, ld, ld),
                tiledmm::blas::cblas_info<int64_t>(layout, 112, 111, m, n, k, ld, ld, ld) == 0);
        }
      }
  EXPECT_EQ(taken, 5 * 5 * 5);  // 1, 2, 3, 65535, 65536 each
}

// The fast path's integer test of alpha agrees with alpha != 0.0f on every kind of
// float, and on every bit pattern of the exponent and top of the mantissa.
TEST(BlasFastPath, NonzeroAgreesWithTheComparison) {
  using tiledmm::blas::nonzero;
  const float special[] = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::min(),
                           1.0f,
                           -2.5f,
                           std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           -std::numeric_limits<float>::quiet_NaN()};
  for (float x : special) EXPECT_EQ(nonzero(x), x != 0.0f) << x;
  int zeros = 0;
  for (uint32_t high = 0; high < (1u << 16); ++high) {
    for (uint32_t low : {0u, 1u, 0x8000u}) {
      const uint32_t bits = (high << 16) | low;
      float x;
      std::memcpy(&x, &bits, sizeof x);
      ASSERT_EQ(nonzero(x), x != 0.0f) << std::hex << bits;
      zeros += x == 0.0f;
    }
  }
  EXPECT_EQ(zeros, 2);  // +0 and -0
}

// The same for double (dgemm_'s alpha), on every kind of double and every pattern of
// the sign, the exponent and the top of the mantissa, with low bits set and clear.
TEST(BlasFastPath, NonzeroOfDoubleAgreesWithTheComparison) {
  using tiledmm::blas::nonzero;
  const double special[] = {0.0,
                            -0.0,
                            std::numeric_limits<double>::denorm_min(),
                            -std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::min(),
                            1.0,
                            -2.5,
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(),
                            -std::numeric_limits<double>::quiet_NaN()};
  for (double x : special) EXPECT_EQ(nonzero(x), x != 0.0) << x;
  int zeros = 0;
  for (uint64_t high = 0; high < (uint64_t(1) << 16); ++high) {
    for (uint64_t low : {uint64_t(0), uint64_t(1), uint64_t(1) << 32}) {
      const uint64_t bits = (high << 48) | low;
      double x;
      std::memcpy(&x, &bits, sizeof x);
      ASSERT_EQ(nonzero(x), x != 0.0) << std::hex << bits;
      zeros += x == 0.0;
    }
  }
  EXPECT_EQ(zeros, 2);  // +0 and -0
}

// For every size the fast path takes, its one test agrees with the rule's number
// (args.hpp; BlasArgs.InfoIsTheReferencesNumber checks that against the reference):
// same calls valid, same calls invalid. The x86-64 assembly's fast path makes a
// conservative subset of these tests (trampolines_x86_64.S); test_blas_conformance
// checks through the counters that it takes only calls the reference calls valid.
TEST(BlasFastPath, ChecksAgreeWithTheReference) {
  const int sizes[] = {1, 2, 3};
  const int lds[] = {INT_MIN, -1, 0, 1, 2, 3, 4};
  int64_t cases = 0, valid = 0;
  for (int layout = 100; layout <= 103; ++layout)
    for (int ta = 110; ta <= 114; ++ta)
      for (int tb = 110; tb <= 114; ++tb)
        for (int m : sizes)
          for (int n : sizes)
            for (int k : sizes)
              for (int lda : lds)
                for (int ldb : lds)
                  for (int ldc : lds) {
                    const bool ref =
                        tiledmm::blas::cblas_info<int>(layout, ta, tb, m, n, k, lda, ldb, ldc) == 0;
                    ASSERT_EQ(tiledmm::blas::cblas_valid(layout, ta, tb, m, n, k, lda, ldb, ldc),
                              ref)
                        << layout << " " << ta << " " << tb << " m=" << m << " n=" << n
                        << " k=" << k << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc;
                    ++cases;
                    valid += ref;
                  }
  EXPECT_GT(valid, 0);
  EXPECT_LT(valid, cases);
  // Fortran: every byte for each character, then the sizes with the valid letters.
  for (int x = 0; x < 256; ++x) {
    const char c = char(x), n = 'N';
    const bool ta_ref =
        tiledmm::blas::fortran_info<int>(tiledmm::blas::upper(&c), 'N', 2, 2, 2, 2, 2, 2) == 0;
    const bool tb_ref =
        tiledmm::blas::fortran_info<int>('N', tiledmm::blas::upper(&c), 2, 2, 2, 2, 2, 2) == 0;
    EXPECT_EQ(tiledmm::blas::fortran_valid(&c, &n, 2, 2, 2, 2, 2, 2), ta_ref) << x;
    EXPECT_EQ(tiledmm::blas::fortran_valid(&n, &c, 2, 2, 2, 2, 2, 2), tb_ref) << x;
  }
  const char letters[] = {'N', 'n', 'T', 't', 'C', 'c', 'X'};
  for (char ta : letters)
    for (char tb : letters)
      for (int m : sizes)
        for (int n : sizes)
          for (int k : sizes)
            for (int lda : lds)
              for (int ldb : lds)
                for (int ldc : lds) {
                  const bool ref = tiledmm::blas::fortran_info<int>(tiledmm::blas::upper(&ta),
                                                                    tiledmm::blas::upper(&tb), m, n,
                                                                    k, lda, ldb, ldc) == 0;
                  ASSERT_EQ(tiledmm::blas::fortran_valid(&ta, &tb, m, n, k, lda, ldb, ldc), ref)
                      << ta << tb << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda
                      << " ldb=" << ldb << " ldc=" << ldc;
                }
}

// args.hpp's rule gives the reference's parameter number for every call
// (reference_checks.hpp: the tests' own statement of the reference's checks), for
// sgemm_ and both CBLAS layouts, with every byte as a transpose character, negative
// sizes and leading dimensions, and for the ILP64 entry points values past 32 bits.
TEST(BlasArgs, InfoIsTheReferencesNumber) {
  namespace ref = tmm_blas_reference;
  using tiledmm::blas::cblas_info;
  using tiledmm::blas::fortran_info;
  for (int x = 0; x < 256; ++x) {
    const char c = char(x);
    ASSERT_EQ(fortran_info<int>(c, 'n', 2, 2, 2, 2, 2, 2),
              ref::sgemm_info<int>(c, 'n', 2, 2, 2, 2, 2, 2))
        << x;
    ASSERT_EQ(fortran_info<int>('t', c, 2, 2, 2, 2, 2, 2),
              ref::sgemm_info<int>('t', c, 2, 2, 2, 2, 2, 2))
        << x;
  }
  const int sizes[] = {-1, 0, 1, 2, 3};
  const int lds[] = {INT_MIN, -1, 0, 1, 2, 3, 4};
  int64_t cases = 0, valid = 0;
  for (char ta : {'N', 'n', 'T', 't', 'C', 'c', 'X'})
    for (char tb : {'N', 'n', 'T', 't', 'C', 'c', '?'})
      for (int m : sizes)
        for (int n : sizes)
          for (int k : sizes)
            for (int lda : lds)
              for (int ldb : lds)
                for (int ldc : lds) {
                  const int want = ref::sgemm_info(ta, tb, m, n, k, lda, ldb, ldc);
                  ASSERT_EQ(fortran_info(ta, tb, m, n, k, lda, ldb, ldc), want)
                      << ta << tb << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda
                      << " ldb=" << ldb << " ldc=" << ldc;
                  ++cases;
                  valid += want == 0;
                }
  for (int layout = 100; layout <= 103; ++layout)
    for (int ta = 110; ta <= 114; ++ta)
      for (int tb = 110; tb <= 114; ++tb)
        for (int m : sizes)
          for (int n : sizes)
            for (int k : sizes)
              for (int lda : lds)
                for (int ldb : lds)
                  for (int ldc : lds) {
                    const int want = ref::cblas_sgemm_info(layout, ta, tb, m, n, k, lda, ldb, ldc);
                    ASSERT_EQ(cblas_info(layout, ta, tb, m, n, k, lda, ldb, ldc), want)
                        << layout << " " << ta << " " << tb << " m=" << m << " n=" << n
                        << " k=" << k << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc;
                    ++cases;
                    valid += want == 0;
                  }
  EXPECT_GT(valid, 0);
  EXPECT_LT(valid, cases);
  const int64_t wide[] = {INT64_MIN, -(int64_t(1) << 32), INT_MIN,          -1,       0, 1,
                          2,         int64_t(1) << 31,    int64_t(1) << 32, INT64_MAX};
  for (int64_t m : wide)
    for (int64_t n : wide)
      for (int64_t k : wide)
        for (int64_t lda : wide)
          for (int64_t ldb : wide)
            for (int64_t ldc : wide) {
              for (char ta : {'N', 't'})
                ASSERT_EQ(fortran_info<int64_t>(ta, 'C', m, n, k, lda, ldb, ldc),
                          ref::sgemm_info<int64_t>(ta, 'C', m, n, k, lda, ldb, ldc))
                    << ta << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda
                    << " ldb=" << ldb << " ldc=" << ldc;
              for (int layout : {ref::kRowMajor, ref::kColMajor})
                for (int ta : {ref::kNoTrans, ref::kConjTrans})
                  ASSERT_EQ(cblas_info<int64_t>(layout, ta, ref::kTrans, m, n, k, lda, ldb, ldc),
                            ref::cblas_sgemm_info<int64_t>(layout, ta, ref::kTrans, m, n, k, lda,
                                                           ldb, ldc))
                      << layout << " " << ta << " m=" << m << " n=" << n << " k=" << k
                      << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc;
            }
}

}  // namespace
