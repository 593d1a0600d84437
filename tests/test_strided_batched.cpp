// Strided batched products (tmm_sgemm_strided_batched and its kin, tiledmm.h "Strided
// batched products") through the public API on the CPU backend: every product equals
// the single call on it bit for bit (both layouts, transposes, padded leading
// dimensions, dense, padded, broadcast and interleaved strides, beta 0 over NaN, both
// precisions), nothing outside the products' m x n parts is written, batch 0 and 1,
// every argument error before anything is written, the report's batch; on a GPU, the
// CUDA backend's refusal of batch > 1 (until its batched path lands).
#include <gtest/gtest.h>
#include <tiledmm/tiledmm.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gemm_reference.hpp"

namespace {

template <class T>
struct Ops;
template <>
struct Ops<float> {
  static constexpr auto single = tmm_sgemm;
  static constexpr auto batched = tmm_sgemm_strided_batched;
};
template <>
struct Ops<double> {
  static constexpr auto single = tmm_dgemm;
  static constexpr auto batched = tmm_dgemm_strided_batched;
};

// A batch laid out in three arrays, with its arguments.
template <class T>
struct Batch {
  tmm_layout layout = TMM_ROW_MAJOR;
  tmm_transpose ta = TMM_NO_TRANS, tb = TMM_NO_TRANS;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, sa = 0, sb = 0, sc = 0, batch = 0;
  T alpha = T(1), beta = T(0);
  std::vector<T> a, b, c;
};

// Rows and columns of a matrix as the caller stores it.
int64_t outer(tmm_layout l, int64_t rows, int64_t cols) { return l == TMM_ROW_MAJOR ? rows : cols; }

template <class T>
Batch<T> random_batch(std::mt19937& rng, int variant) {
  auto pick = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  Batch<T> g;
  g.layout = variant % 2 ? TMM_COL_MAJOR : TMM_ROW_MAJOR;
  g.ta = (variant / 2) % 2 ? TMM_TRANS : TMM_NO_TRANS;
  g.tb = (variant / 4) % 2 ? TMM_TRANS : TMM_NO_TRANS;
  g.m = pick(1, 13), g.n = pick(1, 13), g.k = pick(1, 40), g.batch = pick(2, 6);
  const bool row = g.layout == TMM_ROW_MAJOR;
  const int64_t ar = g.ta == TMM_TRANS ? g.k : g.m, ac = g.ta == TMM_TRANS ? g.m : g.k;
  const int64_t br = g.tb == TMM_TRANS ? g.n : g.k, bc = g.tb == TMM_TRANS ? g.k : g.n;
  g.lda = (row ? ac : ar) + pick(0, 3);
  g.ldb = (row ? bc : br) + pick(0, 3);
  const int64_t a_span = (outer(g.layout, ar, ac) - 1) * g.lda + (row ? ac : ar);
  const int64_t b_span = (outer(g.layout, br, bc) - 1) * g.ldb + (row ? bc : br);
  const int kind = (variant / 8) % 4;  // dense, padded, broadcast A or B, interleaved C
  g.sa = kind == 2 ? 0 : a_span + (kind == 1 ? pick(1, 7) : 0);
  g.sb = kind == 3 ? 0 : b_span + (kind == 1 ? pick(1, 7) : 0);
  const int64_t c_inner = row ? g.n : g.m, c_outer = row ? g.m : g.n;
  if (kind == 3) {  // products side by side in wide rows
    g.sc = c_inner + pick(0, 2);
    g.ldc = g.sc * g.batch + pick(0, 2);
  } else {
    g.ldc = c_inner + pick(0, 3);
    g.sc = (c_outer - 1) * g.ldc + c_inner + (kind == 1 ? pick(1, 7) : 0);
  }
  g.alpha = T(0.75);
  g.beta = variant % 3 == 0 ? T(0) : T(-1.5);
  std::uniform_real_distribution<double> u(-1, 1);
  g.a.resize(size_t((g.batch - 1) * g.sa + a_span));
  g.b.resize(size_t((g.batch - 1) * g.sb + b_span));
  g.c.resize(size_t((g.batch - 1) * g.sc + (c_outer - 1) * g.ldc + c_inner + 5));
  for (T& x : g.a) x = T(u(rng));
  for (T& x : g.b) x = T(u(rng));
  for (T& x : g.c) x = g.beta == T(0) ? std::numeric_limits<T>::quiet_NaN() : T(u(rng));
  return g;
}

template <class T>
tmm_status run(tmm_handle h, Batch<T>& g) {
  return Ops<T>::batched(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a.data(), g.lda, g.sa,
                         g.b.data(), g.ldb, g.sb, g.beta, g.c.data(), g.ldc, g.sc, g.batch);
}

class StridedBatched : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }

  template <class T>
  void every_product_is_the_single_call(uint32_t seed) {
    std::mt19937 rng(seed);
    for (int variant = 0; variant < 96; ++variant) {
      Batch<T> g = random_batch<T>(rng, variant);
      SCOPED_TRACE("variant " + std::to_string(variant) + " m " + std::to_string(g.m) + " n " +
                   std::to_string(g.n) + " k " + std::to_string(g.k) + " batch " +
                   std::to_string(g.batch) + " strides " + std::to_string(g.sa) + " " +
                   std::to_string(g.sb) + " " + std::to_string(g.sc) + " ldc " +
                   std::to_string(g.ldc));
      std::vector<T> want = g.c;
      for (int64_t p = 0; p < g.batch; ++p) {
        ASSERT_EQ(Ops<T>::single(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha,
                                 g.a.data() + p * g.sa, g.lda, g.b.data() + p * g.sb, g.ldb, g.beta,
                                 want.data() + p * g.sc, g.ldc),
                  TMM_SUCCESS)
            << tmm_get_error_message(h_);
      }
      ASSERT_EQ(run(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
      // Bit for bit (NaN where the single calls left NaN: outside every m x n part).
      ASSERT_EQ(want.size(), g.c.size());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(std::memcmp(&want[i], &g.c[i], sizeof(T)), 0)
            << "element " << i << ": " << g.c[i] << ", the single calls give " << want[i];
      }
      tmm_report r{};
      r.struct_size = sizeof r;
      ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
      EXPECT_EQ(r.batch, g.batch);
    }
  }

  tmm_handle h_ = nullptr;
};

TEST_F(StridedBatched, EveryProductIsTheSingleCallBitForBit) {
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  every_product_is_the_single_call<float>(seed);
  every_product_is_the_single_call<double>(seed + 1);
}

// batch 0: success, nothing read or written, no pointer needed; the report says 0.
// batch 1: the single call, whatever the strides.
TEST_F(StridedBatched, BatchZeroChangesNothingAndBatchOneIsTheSingleCall) {
  ASSERT_EQ(tmm_sgemm_strided_batched(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f,
                                      nullptr, 4, 16, nullptr, 4, 16, 1.0f, nullptr, 4, 16, 0),
            TMM_SUCCESS)
      << tmm_get_error_message(h_);
  tmm_report r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.batch, 0);
  std::mt19937 rng(7);
  Batch<double> g = random_batch<double>(rng, 5);
  g.batch = 1;
  g.sc = 0;  // any stride: one product
  std::vector<double> want = g.c;
  ASSERT_EQ(tmm_dgemm(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a.data(), g.lda,
                      g.b.data(), g.ldb, g.beta, want.data(), g.ldc),
            TMM_SUCCESS);
  ASSERT_EQ(run(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  EXPECT_EQ(std::memcmp(want.data(), g.c.data(), want.size() * sizeof(double)), 0);
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.batch, 1);
  EXPECT_EQ(r.precision, TMM_PRECISION_DOUBLE);
  // A caller built against 1.1 (its struct ends before precision) is still served.
  tmm_report old{};
  old.struct_size = offsetof(tmm_report, math_mode) + sizeof(tmm_math_mode);
  ASSERT_EQ(tmm_get_last_report(h_, &old), TMM_SUCCESS);
  EXPECT_EQ(old.struct_size, offsetof(tmm_report, math_mode) + sizeof(tmm_math_mode));
}

// Every argument error is INVALID_VALUE with a message naming it, before anything is
// written: C keeps its bits.
TEST_F(StridedBatched, BadArgumentsAreInvalidAndWriteNothing) {
  std::vector<float> a(4096, 1.0f), b(4096, 1.0f), c(4096, 7.0f);
  struct Bad {
    int64_t sa, sb, sc, batch, ldc;
    const float* a;
    float* c;
    const char* words;
  };
  const float* A = a.data();
  float* C = c.data();
  const Bad cases[] = {
      {16, 16, 16, -1, 4, A, C, "batch must be >= 0"},
      {-16, 16, 16, 2, 4, A, C, "stride_a must be >= 0"},
      {16, -1, 16, 2, 4, A, C, "stride_b must be >= 0"},
      {16, 16, -16, 2, 4, A, C, "stride_c must be >= 0"},
      {16, 16, 0, 2, 4, A, C, "stride_c must be > 0"},
      {16, 16, 15, 2, 4, A, C, "share elements"},  // products overlapping by one element
      {16, 16, 4, 3, 4, A, C, "share elements"},   // rows of one the next's
      {INT64_MAX / 2, 16, 16, 3, 4, A, C, "too large"},
      {16, 16, 16, 3, 4, A, const_cast<float*>(A) + 40, "C's product"},  // C_0 meets A_2
  };
  for (const Bad& x : cases) {
    SCOPED_TRACE(x.words);
    const std::vector<float> before = c;
    const std::vector<float> a_before = a;
    const tmm_status s =
        tmm_sgemm_strided_batched(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f, x.a,
                                  4, x.sa, b.data(), 4, x.sb, 0.0f, x.c, x.ldc, x.sc, x.batch);
    EXPECT_EQ(s, TMM_ERROR_INVALID_VALUE);
    EXPECT_NE(std::string(tmm_get_error_message(h_)).find(x.words), std::string::npos)
        << tmm_get_error_message(h_);
    EXPECT_EQ(c, before);
    EXPECT_EQ(a, a_before);
  }
  // Interleaved products that share no element are fine: 3 products of 4 x 4 side by
  // side in rows of 12.
  EXPECT_EQ(tmm_sgemm_strided_batched(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f,
                                      A, 4, 16, b.data(), 4, 0, 0.0f, C, 12, 4, 3),
            TMM_SUCCESS)
      << tmm_get_error_message(h_);
  EXPECT_EQ(c[0], 4.0f);
  EXPECT_EQ(c[11], 4.0f);
}

TEST_F(StridedBatched, DeviceCallsOnTheCpuAreNotSupported) {
  float x[16] = {};
  EXPECT_EQ(tmm_sgemm_strided_batched_device(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 2, 2, 2,
                                             1.0f, x, 2, 4, x + 8, 2, 0, 0.0f, x + 12, 2, 0, 1),
            TMM_ERROR_NOT_SUPPORTED);
  double y[16] = {};
  EXPECT_EQ(tmm_dgemm_strided_batched_device(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 2, 2, 2,
                                             1.0, y, 2, 4, y + 8, 2, 0, 0.0, y + 12, 2, 0, 1),
            TMM_ERROR_NOT_SUPPORTED);
}

// The CUDA backend runs no batch of more than one product yet: NOT_SUPPORTED, with C
// untouched; batch 1 runs.
TEST(StridedBatchedCuda, MoreThanOneProductIsNotSupportedYet) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  std::vector<float> a(64, 1.0f), b(64, 1.0f), c(64, 7.0f);
  EXPECT_EQ(tmm_sgemm_strided_batched(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f,
                                      a.data(), 4, 16, b.data(), 4, 16, 0.0f, c.data(), 4, 16, 2),
            TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(c, std::vector<float>(64, 7.0f));
  EXPECT_EQ(tmm_sgemm_strided_batched(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f,
                                      a.data(), 4, 16, b.data(), 4, 16, 0.0f, c.data(), 4, 16, 1),
            TMM_SUCCESS)
      << tmm_get_error_message(h);
  EXPECT_EQ(c[0], 4.0f);
  EXPECT_EQ(c[16], 7.0f);
  tmm_destroy(h);
}

}  // namespace
