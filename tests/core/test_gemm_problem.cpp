// The problem's canonical form and its checks (lib/core/gemm_problem.hpp): the
// aliasing test against a brute-force comparison of addresses, the column-major
// call turned into the row-major one, strided batches (their checks, and their outputs'
// and inputs' overlaps against counting elements), and the element type's tag
// (lib/core/precision.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
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

// ---- Strided batches ------------------------------------------------------------

GemmProblem batch_of(Layout layout, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                     int64_t sa, const float* b, int64_t ldb, int64_t sb, float* c, int64_t ldc,
                     int64_t sc, int64_t batch, double alpha = 1.0) {
  return make_batched_problem(Precision::F32, layout, false, false, m, n, k, alpha, a, lda, sa, b,
                              ldb, sb, 0.0, c, ldc, sc, batch);
}

// The column-major call swaps the strides with their operands; batch 1 is make_problem's
// problem whatever the (non-negative) strides.
TEST(BatchedProblem, ColumnMajorSwapsStridesAndBatchOneIsTheSingleProblem) {
  std::vector<float> a(100), b(100), c(100);
  const GemmProblem p =
      batch_of(Layout::ColMajor, 2, 3, 4, a.data(), 2, 8, b.data(), 4, 12, c.data(), 2, 6, 5);
  EXPECT_EQ(p.a, b.data());
  EXPECT_EQ(p.stride_a, 12);
  EXPECT_EQ(p.b, a.data());
  EXPECT_EQ(p.stride_b, 8);
  EXPECT_EQ(p.stride_c, 6);
  EXPECT_EQ(p.batch, 5);
  const GemmProblem one =
      batch_of(Layout::RowMajor, 3, 3, 3, a.data(), 3, 0, b.data(), 3, 0, c.data(), 3, 0, 1);
  EXPECT_EQ(one.batch, 1);
  EXPECT_NO_THROW(check_no_alias(one));
  EXPECT_THROW(
      batch_of(Layout::RowMajor, 3, 3, 3, a.data(), 3, 0, b.data(), 3, 0, c.data(), 3, -1, 1),
      Error);
}

TEST(BatchedProblem, NegativeBatchOrStrideIsInvalid) {
  std::vector<float> x(64);
  for (const auto& [sa, sb, sc, batch] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{-1, 0, 4, 2},
        {0, -4, 4, 2},
        {0, 0, -4, 2},
        {0, 0, 4, -1}}) {
    try {
      batch_of(Layout::RowMajor, 2, 2, 2, x.data(), 2, sa, x.data(), 2, sb, x.data() + 32, 2, sc,
               batch);
      ADD_FAILURE() << "accepted " << sa << " " << sb << " " << sc << " " << batch;
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::InvalidValue);
      EXPECT_NE(std::string(e.what()).find("must be >= 0"), std::string::npos) << e.what();
    }
  }
}

// Every matrix's last product must end within 64 bits of bytes from its first element;
// matrices the call does not read are not counted (alpha 0: A and B).
TEST(BatchedProblem, TheLastProductsByteOffsetMustFit64Bits) {
  float x[4] = {};
  const int64_t huge = int64_t(1) << 61;  // 2^61 elements: 2^63 bytes of float
  EXPECT_THROW(batch_of(Layout::RowMajor, 1, 1, 1, x, 1, huge, x, 1, 0, x + 2, 1, 1, 2), Error);
  EXPECT_THROW(batch_of(Layout::RowMajor, 1, 1, 1, x, 1, 0, x, 1, 0, x + 2, 1, 1, INT64_MAX),
               Error);
  EXPECT_THROW(batch_of(Layout::RowMajor, 1, 1, 1, x, 1, INT64_MAX, x, 1, 0, x + 2, 1, 1, 2),
               Error);
  EXPECT_NO_THROW(
      batch_of(Layout::RowMajor, 1, 1, 1, x, 1, huge / 2, x, 1, 0, x + 2, 1, 1, 2));  // 2^62 bytes
  EXPECT_NO_THROW(
      batch_of(Layout::RowMajor, 1, 1, 1, x, 1, INT64_MAX, x, 1, 0, x + 2, 1, 1, 2, 0.0));
  EXPECT_THROW(make_batched_problem(Precision::F64, Layout::RowMajor, false, false, 1, 1, 1, 1.0, x,
                                    1, huge / 2, x, 1, 0, 0.0, x + 2, 1, 1, 2),
               Error)
      << "2^62 doubles are 2^65 bytes";
}

// No product, or an empty C: nothing is read or written, no pointer is needed, strides
// are only checked for sign.
TEST(BatchedProblem, AnEmptyBatchNeedsNoPointers) {
  const GemmProblem none =
      make_batched_problem(Precision::F32, Layout::RowMajor, false, false, 5, 5, 5, 1.0, nullptr, 5,
                           25, nullptr, 5, 25, 1.0, nullptr, 5, 0, 0);
  EXPECT_TRUE(is_empty(none));
  EXPECT_NO_THROW(check_no_alias(none));
  EXPECT_TRUE(
      is_empty(make_batched_problem(Precision::F32, Layout::RowMajor, false, false, 0, 5, 5, 1.0,
                                    nullptr, 5, 25, nullptr, 5, 25, 1.0, nullptr, 5, 0, 1000)));
}

TEST(BatchedProblem, ProductsOfAdvanceEachPointerByItsStride) {
  std::vector<double> a(1000), b(1000), c(1000);
  const GemmProblem p =
      make_batched_problem(Precision::F64, Layout::RowMajor, false, false, 2, 3, 4, 1.0, a.data(),
                           4, 8, b.data(), 3, 0, 0.0, c.data(), 3, 6, 10);
  const GemmProblem q = products_of(p, 3, 4);
  EXPECT_EQ(q.a, a.data() + 24);
  EXPECT_EQ(q.b, b.data());
  EXPECT_EQ(q.c, c.data() + 18);
  EXPECT_EQ(q.batch, 4);
  EXPECT_EQ(q.stride_a, 8);
  const GemmProblem one = product_of(p, 9);
  EXPECT_EQ(one.c, c.data() + 54);
  EXPECT_EQ(one.batch, 1);
  EXPECT_EQ(one.stride_c, 0);
}

// A and B are not read where alpha = 0 (or k = 0): as in the single call, their
// pointers and strides are not looked at, and products_of leaves them where they are
// (advancing them by an unchecked stride could overflow).
TEST(BatchedProblem, UnreadInputsMayHaveAnyStride) {
  float a[4] = {}, c[64] = {};
  const GemmProblem p =
      make_batched_problem(Precision::F32, Layout::RowMajor, false, false, 2, 2, 2, 0.0, a, 2,
                           INT64_MAX, a, 2, INT64_MAX, 1.0, c, 2, 8, 3);
  const GemmProblem last = product_of(p, 2);
  EXPECT_EQ(last.a, a);
  EXPECT_EQ(last.b, a);
  EXPECT_EQ(last.c, c + 16);
  EXPECT_NO_THROW(check_no_alias(p));
}

// The elements of a batch of matrices (rows x cols, ld, products stride apart).
std::set<const float*> elements_of(const float* x, int64_t rows, int64_t cols, int64_t ld,
                                   int64_t stride, int64_t batch) {
  std::set<const float*> all;
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) all.insert(x + i * stride + r * ld + c);
  return all;
}

// C's products share no element: make_batched_problem rejects exactly the batches whose
// products overlap (stride 0 included), against counting every element, over random
// small lattices (interleaved products that share nothing among them).
TEST(BatchedAliasing, OverlappingOutputsAreRejectedExactly) {
  std::vector<float> buf(8192);
  std::mt19937 rng(4321);
  auto pick = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  int overlapping = 0, apart = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int64_t m = pick(1, 6), n = pick(1, 6), batch = pick(2, 7);
    const int64_t ldc = n + pick(0, 10);
    const int64_t sc = pick(0, 3) == 0 ? pick(0, 4) : pick(0, m * ldc + 3);
    float* c = buf.data() + pick(0, 100);
    size_t total = 0;
    for (int64_t i = 0; i < batch; ++i) total += elements_of(c + i * sc, m, n, ldc, 0, 1).size();
    const bool want = elements_of(c, m, n, ldc, sc, batch).size() < total;
    bool got = false;
    try {
      batch_of(Layout::RowMajor, m, n, 1, buf.data() + 4000, 1, 1, buf.data() + 6000, n, 0, c, ldc,
               sc, batch);
    } catch (const Error& e) {
      got = true;
      EXPECT_EQ(e.status(), Status::InvalidValue);
    }
    ASSERT_EQ(got, want) << "m " << m << " n " << n << " ldc " << ldc << " stride_c " << sc
                         << " batch " << batch;
    (want ? overlapping : apart)++;
  }
  EXPECT_GT(overlapping, 400);
  EXPECT_GT(apart, 400);
}

// No product of C may share an element with any product of A (or B): check_no_alias
// against counting elements, over random batches in one array (stride 0 for A
// included, inputs overlapping one another allowed), C's products apart from one
// another.
TEST(BatchedAliasing, InputsMeetingAnyOutputAreRejectedExactly) {
  std::vector<float> buf(16384);
  std::vector<float> other(64);
  std::mt19937 rng(98765);
  auto pick = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  int shared = 0, apart = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t m = pick(1, 5), n = pick(1, 5), k = pick(1, 5), batch = pick(1, 6);
    const int64_t lda = k + pick(0, 8), ldc = n + pick(0, 8);
    // C's products apart: a stride past a whole product, or interleaved in wide rows.
    const int64_t sc = pick(0, 1) ? m * ldc + pick(0, 5) : n + pick(0, 2);
    // A's stride: 0 (one A), C's (the check's O(batch) path), or any.
    const int kind = int(pick(0, 2));
    const int64_t sa = kind == 0 ? 0 : kind == 1 ? sc : pick(1, m * lda + 6);
    const int64_t ldc_used = sc < m * ldc ? std::max(ldc, sc * batch) : ldc;
    const float* a = buf.data() + pick(0, 600);
    float* c = buf.data() + pick(0, 600);
    GemmProblem p;
    try {
      p = batch_of(Layout::RowMajor, m, n, k, a, lda, sa, other.data(), n, 0, c, ldc_used, sc,
                   batch);
    } catch (const Error&) {
      continue;  // C's products overlap (the test above): not this test's case
    }
    const std::set<const float*> as = elements_of(a, m, k, lda, sa, batch);
    bool want = false;
    for (const float* x : elements_of(c, m, n, ldc_used, sc, batch)) want = want || as.count(x);
    bool got = false;
    try {
      check_no_alias(p);
    } catch (const Error& e) {
      got = true;
      EXPECT_EQ(e.status(), Status::InvalidValue);
      EXPECT_NE(std::string(e.what()).find("shares elements with A"), std::string::npos)
          << e.what();
    }
    ASSERT_EQ(got, want) << "m " << m << " n " << n << " k " << k << " lda " << lda << " stride_a "
                         << sa << " ldc " << ldc_used << " stride_c " << sc << " batch " << batch
                         << " a+" << (a - buf.data()) << " c+" << (c - buf.data());
    (want ? shared : apart)++;
  }
  EXPECT_GT(shared, 300);
  EXPECT_GT(apart, 300);
}

// Scalars in device memory (tmm_?gemm_device_scalars) may not share a byte with any
// product of C, whatever k (a kernel reads them while others write C; k = 0 included),
// and may lie in A or B, which are only read: check_no_alias against counting elements
// over random batches, the scalar anywhere in the array, at byte offsets too.
TEST(ScalarsAliasing, ScalarsMeetingAnyOutputAreRejectedExactly) {
  std::vector<float> buf(4096);
  std::mt19937 rng(2468);
  auto pick = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  int inside = 0, apart = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t m = pick(1, 5), n = pick(1, 5), k = pick(0, 3), batch = pick(1, 6);
    const int64_t ldc = n + pick(0, 6), sc = m * ldc + pick(0, 5);
    float* c = buf.data() + pick(0, 200);
    const float* a = buf.data() + 3000;  // A and B apart from C
    // Every fourth a single call (strides 0, as the single entry points make it).
    GemmProblem p = trial % 4 == 0 ? make_problem(Precision::F32, Layout::RowMajor, false, false, m,
                                                  n, k, 1.0, a, k + 1, a, n, 0.0, c, ldc)
                                   : batch_of(Layout::RowMajor, m, n, k, a, k + 1, 0, a, n, 0, c,
                                              ldc, sc, batch);
    const int64_t products = trial % 4 == 0 ? 1 : batch;
    // The scalar: a float of the array, or 1 to 3 bytes past one (an unaligned pointer
    // meets the elements it straddles).
    const int64_t byte = pick(0, 240 * int64_t(sizeof(float)) + int64_t(6 * sc * sizeof(float)));
    const char* at = reinterpret_cast<const char*>(buf.data()) + byte;
    const bool beta = pick(0, 1) == 1;
    (beta ? p.beta_at : p.alpha_at) = at;
    (beta ? p.alpha_at : p.beta_at) = a;  // the other one in A: allowed
    bool want = false;
    for (const float* x : elements_of(c, m, n, ldc, sc, products)) {
      const char* e = reinterpret_cast<const char*>(x);
      want = want || (at < e + sizeof(float) && e < at + sizeof(float));
    }
    bool got = false;
    try {
      check_no_alias(p);
    } catch (const Error& e) {
      got = true;
      EXPECT_EQ(e.status(), Status::InvalidValue);
      EXPECT_NE(std::string(e.what()).find(beta ? "beta shares bytes with C"
                                                : "alpha shares bytes with C"),
                std::string::npos)
          << e.what();
    }
    ASSERT_EQ(got, want) << "m " << m << " n " << n << " k " << k << " ldc " << ldc << " stride_c "
                         << sc << " batch " << batch << " c+" << (c - buf.data())
                         << " scalar at byte " << byte;
    (want ? inside : apart)++;
  }
  EXPECT_GT(inside, 200);
  EXPECT_GT(apart, 200);
}

// operand_meeting (the memory given by tmm_set_workspace, which the kernels write)
// against counting bytes: A, B (stride 0 included), C and scalars of random batches in
// one array, a random byte range; A and B not counted where k = 0.
TEST(OperandMeeting, FindsEveryOperandSharingAByteWithTheRange) {
  std::vector<float> buf(8192);
  std::mt19937 rng(1357);
  auto pick = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  int meeting = 0, apart = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t m = pick(1, 4), n = pick(1, 4), k = pick(0, 4), batch = pick(1, 4);
    const int64_t lda = k + pick(1, 3), ldc = n + pick(0, 3);
    const int64_t sa = pick(0, 1) ? 0 : m * lda + pick(0, 3), sc = m * ldc + pick(0, 3);
    const float* a = buf.data() + pick(0, 1500);
    const float* b = buf.data() + pick(2000, 3500);
    float* c = buf.data() + pick(4000, 5500);
    GemmProblem p = batch_of(Layout::RowMajor, m, n, k, a, lda, sa, b, n, n * k, c, ldc, sc, batch);
    p.alpha_at = buf.data() + pick(6000, 6100);
    p.beta_at = buf.data() + pick(6000, 6100);
    // Near an operand's first element (or anywhere), at any byte.
    const void* near[] = {a, b, c, p.alpha_at, p.beta_at, buf.data() + pick(0, 6200)};
    const char* base = static_cast<const char*>(near[pick(0, 5)]);
    const int64_t begin = (base - reinterpret_cast<const char*>(buf.data())) + pick(-40, 120);
    const int64_t bytes = pick(1, 64);
    const char* at = reinterpret_cast<const char*>(buf.data()) + std::max<int64_t>(0, begin);
    const auto hit = [&](const std::set<const float*>& elements) {
      for (const float* x : elements) {
        const char* e = reinterpret_cast<const char*>(x);
        if (e < at + bytes && at < e + sizeof(float)) return true;
      }
      return false;
    };
    const std::set<const float*> alpha{static_cast<const float*>(p.alpha_at)};
    const std::set<const float*> beta{static_cast<const float*>(p.beta_at)};
    const bool uses_ab = k > 0;
    std::string want;
    if (uses_ab && hit(elements_of(a, m, k, lda, sa, batch)))
      want = "A";
    else if (uses_ab && hit(elements_of(b, k, n, n, n * k, batch)))
      want = "B";
    else if (hit(elements_of(c, m, n, ldc, sc, batch)))
      want = "C";
    else if (hit(alpha))
      want = "alpha";
    else if (hit(beta))
      want = "beta";
    const char* got = operand_meeting(p, at, bytes);
    ASSERT_EQ(got ? std::string(got) : std::string(), want)
        << "m " << m << " n " << n << " k " << k << " batch " << batch << " stride_a " << sa
        << " range at byte " << begin << " of " << bytes;
    (want.empty() ? apart : meeting)++;
  }
  EXPECT_GT(meeting, 300);
  EXPECT_GT(apart, 300);
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
