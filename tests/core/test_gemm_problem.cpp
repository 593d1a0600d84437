// The problem's canonical form and its checks (lib/core/gemm_problem.hpp): the
// aliasing test against a brute-force comparison of addresses, the column-major
// call turned into the row-major one, and the element type's tag
// (lib/core/precision.hpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/precision.hpp"

namespace tiledmm {
namespace {

// ---- Aliasing: check_no_alias against a brute-force element comparison -------

bool brute_force_share(const float* x, int64_t xr, int64_t xc, int64_t xld, const float* y,
                       int64_t yr, int64_t yc, int64_t yld) {
  std::set<const float*> xs;
  for (int64_t r = 0; r < xr; ++r)
    for (int64_t c = 0; c < xc; ++c) xs.insert(x + r * xld + c);
  for (int64_t r = 0; r < yr; ++r)
    for (int64_t c = 0; c < yc; ++c)
      if (xs.count(y + r * yld + c)) return true;
  return false;
}

TEST(Aliasing, MatchesBruteForceOnRandomSubmatricesOfOneArray) {
  std::vector<float> buf(4096);
  std::vector<float> other(64);
  std::mt19937 rng(1234);
  auto pick = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  int shared = 0, apart = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int64_t m = pick(1, 9), n = pick(1, 9), k = pick(1, 9);
    const int64_t lda = k + pick(0, 12), ldc = n + pick(0, 12);
    const float* a = buf.data() + pick(0, 300);
    float* c = buf.data() + pick(0, 300);
    GemmProblem p = make_problem(Layout::RowMajor, false, false, m, n, k, 1.0f, a, lda,
                                 other.data(), n, 0.0f, c, ldc);
    const bool want = brute_force_share(a, m, k, lda, c, m, n, ldc);
    bool got = false;
    try {
      check_no_alias(p);
    } catch (const Error& e) {
      got = true;
      EXPECT_EQ(e.status(), Status::InvalidValue);
    }
    ASSERT_EQ(got, want) << "m " << m << " n " << n << " k " << k << " lda " << lda << " ldc "
                         << ldc << " a+" << (a - buf.data()) << " c+" << (c - buf.data());
    (want ? shared : apart)++;
  }
  EXPECT_GT(shared, 400);
  EXPECT_GT(apart, 400);
}

TEST(Problem, ColumnMajorSwapsOperandsAndRemembersTheLayout) {
  float a = 0, b = 0, c = 0;
  const GemmProblem p =
      make_problem(Layout::ColMajor, true, false, 2, 3, 4, 1.0f, &a, 4, &b, 4, 0.0f, &c, 2);
  EXPECT_TRUE(p.col_major);
  EXPECT_EQ(p.m, 3);
  EXPECT_EQ(p.n, 2);
  EXPECT_EQ(p.a, &b);
  EXPECT_EQ(p.b, &a);
  EXPECT_FALSE(p.trans_a);
  EXPECT_TRUE(p.trans_b);
}

// ---- The element type's tag ---------------------------------------------------

static_assert(element_bytes(Precision::F32) == sizeof(float), "F32 is float");
static_assert(element_bytes(Precision::F64) == sizeof(double), "F64 is double");
static_assert(precision_of<float> == Precision::F32 && precision_of<double> == Precision::F64,
              "each element type has its tag");

// Rows are 16-byte aligned when the base is and ld spans whole 16 bytes: every 4th
// float, every 2nd double.
TEST(Precision, RowsAreSixteenByteAlignedByTheElementSize) {
  alignas(16) double d[4] = {};
  alignas(16) float f[8] = {};
  EXPECT_TRUE(rows_16_byte_aligned(d, 2));
  EXPECT_FALSE(rows_16_byte_aligned(d, 3));
  EXPECT_FALSE(rows_16_byte_aligned(d + 1, 2));  // 8 bytes off
  EXPECT_TRUE(rows_16_byte_aligned(f, 4));
  EXPECT_FALSE(rows_16_byte_aligned(f, 2));
  EXPECT_FALSE(rows_16_byte_aligned(f + 2, 4));  // 8 bytes off
  EXPECT_TRUE(rows_16_byte_aligned(static_cast<const void*>(d), 6, 8));
  EXPECT_FALSE(rows_16_byte_aligned(static_cast<const void*>(d), 6, 4));
  EXPECT_TRUE(rows_16_byte_aligned(static_cast<const void*>(d), INT64_MAX - 1, 8));  // no overflow
}

// make_problem tags the problem and counts bytes by its precision.
TEST(Precision, ProblemsCarryTheirPrecisionAndCheckItsByteSize) {
  double x = 0;
  const GemmProblem p = make_problem(Precision::F64, Layout::RowMajor, false, false, 1, 1, 1, 2.0,
                                     &x, 1, &x, 1, 0.0, &x, 1);
  EXPECT_EQ(p.precision, Precision::F64);
  EXPECT_EQ(p.a_as<double>(), &x);
  EXPECT_EQ(view_of<double>(p).alpha, 2.0);
  // A row of 2^60 elements: 2^63 bytes of doubles overflow 64 bits, 2^62 of floats do not.
  const int64_t rows = int64_t(1) << 60;
  EXPECT_THROW(make_problem(Precision::F64, Layout::RowMajor, false, false, 1, 1, rows, 1.0, &x,
                            rows, &x, 2, 0.0, &x, 1),
               Error);
  EXPECT_NO_THROW(make_problem(Precision::F32, Layout::RowMajor, false, false, 1, 1, rows, 1.0, &x,
                               rows, &x, 2, 0.0, &x, 1));
}

TEST(Precision, VisitCallsWithTheTaggedType) {
  auto bytes = [](auto x) { return int(sizeof(x)); };
  EXPECT_EQ(visit_precision(Precision::F32, bytes), 4);
  EXPECT_EQ(visit_precision(Precision::F64, bytes), 8);
}

}  // namespace
}  // namespace tiledmm
