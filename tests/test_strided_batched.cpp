// Strided batched products (tmm_sgemm_strided_batched and its kin, tiledmm.h "Strided
// batched products") through the public API on the CPU backend: every product equals
// the single call on it bit for bit (both layouts, transposes, padded leading
// dimensions, dense, padded, broadcast and interleaved strides, beta 0 over NaN, both
// precisions), nothing outside the products' m x n parts is written, batch 0 and 1,
// every argument error before anything is written, the report's batch; on a GPU, the
// same for host pointers on the CUDA backend, and device pointers against FP64 in every
// form and math mode.
#include <gtest/gtest.h>
#include <tiledmm/tiledmm.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gemm_reference_f64.hpp"

#if TMM_TEST_WITH_CUDA
#include <cuda_runtime.h>
#endif

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

// Products of over 4 MFLOP (the own kernel splits a single one over threads) in a batch
// of more products than threads (whole products to a thread): still the single calls'
// bits, in both precisions and every transpose.
TEST_F(StridedBatched, ManyLargerProductsAreTheSingleCallsBitForBit) {
  std::mt19937 rng(tmm_test::fresh_seed());
  const int64_t batch = 2 * std::max<int64_t>(2, std::thread::hardware_concurrency());
  for (int variant = 0; variant < 4; ++variant) {
    Batch<double> g;
    g.ta = variant % 2 ? TMM_TRANS : TMM_NO_TRANS;
    g.tb = variant / 2 ? TMM_TRANS : TMM_NO_TRANS;
    g.m = 130, g.n = 70, g.k = 260, g.batch = batch, g.alpha = 0.5, g.beta = variant % 2 ? 0 : 2;
    g.lda = g.ta == TMM_TRANS ? g.m : g.k;
    g.ldb = g.tb == TMM_TRANS ? g.k : g.n;
    g.ldc = g.n;
    g.sa = g.m * g.k + 3, g.sb = g.k * g.n + 1, g.sc = g.m * g.n + 2;
    std::uniform_real_distribution<double> u(-1, 1);
    g.a.resize(size_t(batch * g.sa));
    g.b.resize(size_t(batch * g.sb));
    g.c.resize(size_t(batch * g.sc));
    for (double& x : g.a) x = u(rng);
    for (double& x : g.b) x = u(rng);
    for (double& x : g.c) x = u(rng);
    std::vector<double> want = g.c;
    for (int64_t p = 0; p < batch; ++p) {
      ASSERT_EQ(
          tmm_dgemm(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a.data() + p * g.sa, g.lda,
                    g.b.data() + p * g.sb, g.ldb, g.beta, want.data() + p * g.sc, g.ldc),
          TMM_SUCCESS)
          << tmm_get_error_message(h_);
    }
    ASSERT_EQ(run(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
    EXPECT_EQ(std::memcmp(want.data(), g.c.data(), want.size() * sizeof(double)), 0)
        << "variant " << variant;
    tmm_report r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
    EXPECT_EQ(r.batch, batch);
    EXPECT_GE(r.host_threads, 1);
  }
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

// Products with nothing to compute (m or n = 0) need no matrix, so nothing bounds the
// batch: the call returns at once however many there are (no loop over them).
void empty_products_return_at_once(tmm_handle h) {
  for (int64_t batch : {int64_t(1) << 40, INT64_MAX}) {
    EXPECT_EQ(
        tmm_sgemm_strided_batched(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0, 4, 4, 1.0f,
                                  nullptr, 4, 16, nullptr, 4, 16, 1.0f, nullptr, 4, 16, batch),
        TMM_SUCCESS)
        << tmm_get_error_message(h);
    tmm_report r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
    EXPECT_EQ(r.batch, batch);
    EXPECT_STREQ(r.kernel, "none");
  }
}

TEST_F(StridedBatched, EmptyProductsReturnAtOnceWhateverTheBatch) {
  empty_products_return_at_once(h_);
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

// The CUDA backend, host pointers: every product equals the single host call on it bit
// for bit (one host call per product), as on the CPU.
class StridedBatchedCuda : public StridedBatched {
 protected:
  void SetUp() override {
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  }
};

TEST_F(StridedBatchedCuda, EmptyProductsReturnAtOnceWhateverTheBatch) {
  empty_products_return_at_once(h_);
}

TEST_F(StridedBatchedCuda, HostProductsAreTheSingleCallsBitForBit) {
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  every_product_is_the_single_call<float>(seed);
  every_product_is_the_single_call<double>(seed + 1);
}

#if TMM_TEST_WITH_CUDA
template <class T>
struct DeviceOps;
template <>
struct DeviceOps<float> {
  using Case = tmm_test::GemmCase;
  static constexpr auto batched = tmm_sgemm_strided_batched_device;
};
template <>
struct DeviceOps<double> {
  using Case = tmm_test::DgemmCase;
  static constexpr auto batched = tmm_dgemm_strided_batched_device;
};

::testing::AssertionResult check_product(const tmm_test::GemmCase& g, tmm_math_mode mode) {
  return tmm_test::check_case(g, tmm_test::arithmetic_of(mode));
}
::testing::AssertionResult check_product(const tmm_test::DgemmCase& g, tmm_math_mode) {
  return tmm_test::check_case(g);
}

// How a device batch lies in its three arrays: products `gap` elements apart after each
// one's span (an odd gap leaves later products less aligned than the first), A one
// matrix for all (stride 0), or C's products side by side in wide rows.
enum class Lay { Gapped, BroadcastA, InterleavedC };

// `batch` products of one shape, each a case of fill_case (beta 0: NaN in C), run by one
// strided batched device call; each product checked against FP64 with the bound of the
// kernel's arithmetic (the report's math mode), every element of C outside the
// products' m x n parts unchanged.
template <class T>
void device_batch_matches_the_reference(tmm_handle h, tmm_layout layout, tmm_transpose ta,
                                        tmm_transpose tb, int64_t m, int64_t n, int64_t k,
                                        int64_t batch, int64_t pad, int64_t gap, Lay lay, T beta,
                                        uint32_t seed, std::string* kernel = nullptr) {
  using Case = typename DeviceOps<T>::Case;
  std::vector<Case> cases(static_cast<size_t>(batch));
  for (int64_t p = 0; p < batch; ++p) {
    Case& g = cases[size_t(p)];
    g.layout = layout, g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k;
    g.alpha = T(0.75), g.beta = beta, g.pad = pad;
    tmm_test::fill_case(g, seed + uint32_t(p));
    if (lay == Lay::BroadcastA && p > 0) g.a = cases[0].a;
  }
  const Case& g0 = cases[0];
  const int64_t sa = lay == Lay::BroadcastA ? 0 : int64_t(g0.a.size()) + gap;
  const int64_t sb = int64_t(g0.b.size()) + gap;
  const int64_t inner = g0.row() ? n : m, outer = g0.row() ? m : n;
  int64_t ldc = g0.ldc, sc = int64_t(g0.c.size()) + gap;
  if (lay == Lay::InterleavedC) {
    sc = inner + gap;
    ldc = sc * batch + pad;
  }
  const T sentinel = T(tmm_test::kPadSentinel);
  std::vector<T> a(size_t((batch - 1) * sa) + g0.a.size());
  std::vector<T> b(size_t((batch - 1) * sb) + g0.b.size());
  std::vector<T> c(size_t((batch - 1) * sc + (outer - 1) * ldc + inner + gap), sentinel);
  std::vector<char> in_product(c.size(), 0);
  const auto c_at = [&](int64_t p, int64_t i, int64_t j) {
    return size_t(p * sc + g0.at(i, j, ldc));
  };
  for (int64_t p = 0; p < batch; ++p) {
    const Case& g = cases[size_t(p)];
    std::copy(g.a.begin(), g.a.end(), a.begin() + p * sa);
    std::copy(g.b.begin(), g.b.end(), b.begin() + p * sb);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        c[c_at(p, i, j)] = g.c0[size_t(g.at(i, j, g.ldc))];
        in_product[c_at(p, i, j)] = 1;
      }
  }
  T *da = nullptr, *db = nullptr, *dc = nullptr;
  ASSERT_EQ(cudaMalloc(&da, a.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, b.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dc, c.size() * sizeof(T)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(da, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(db, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dc, c.data(), c.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  const tmm_status status = DeviceOps<T>::batched(h, layout, ta, tb, m, n, k, T(0.75), da, g0.lda,
                                                  sa, db, g0.ldb, sb, beta, dc, ldc, sc, batch);
  ASSERT_EQ(tmm_synchronize(h), TMM_SUCCESS) << tmm_get_error_message(h);
  ASSERT_EQ(cudaMemcpy(c.data(), dc, c.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  ASSERT_EQ(status, TMM_SUCCESS) << tmm_get_error_message(h);
  tmm_report r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
  EXPECT_EQ(r.batch, batch);
  if (kernel != nullptr) *kernel = r.kernel;
  SCOPED_TRACE(std::string("kernel ") + r.kernel + " splits " + std::to_string(r.splits));
  for (size_t i = 0; i < c.size(); ++i) {
    if (!in_product[i]) {
      ASSERT_EQ(std::memcmp(&c[i], &sentinel, sizeof(T)), 0) << "element " << i << " outside";
    }
  }
  for (int64_t p = 0; p < batch; ++p) {
    Case& g = cases[size_t(p)];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) g.c[size_t(g.at(i, j, g.ldc))] = c[c_at(p, i, j)];
    EXPECT_TRUE(check_product(g, r.math_mode)) << "product " << p;
  }
}

// Device pointers: random shapes (thin, odd, tensor-core sized, deep k that splits) in
// both layouts, all transposes, padded leading dimensions, odd gaps between products,
// A broadcast and C interleaved, beta 0 and not, every math mode, both precisions.
TEST_F(StridedBatchedCuda, DeviceProductsMatchTheReferenceInEveryForm) {
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  const tmm_math_mode modes[] = {TMM_MATH_FP32, TMM_MATH_TF32, TMM_MATH_FP32_ACCURATE};
  for (int variant = 0; variant < 72; ++variant) {
    const tmm_layout layout = variant % 2 ? TMM_COL_MAJOR : TMM_ROW_MAJOR;
    const tmm_transpose ta = (variant / 2) % 2 ? TMM_TRANS : TMM_NO_TRANS;
    const tmm_transpose tb = (variant / 4) % 2 ? TMM_TRANS : TMM_NO_TRANS;
    const Lay lay = Lay((variant / 8) % 3);
    const tmm_math_mode mode = modes[variant % 3];
    int64_t m = pick(1, 150), n = pick(1, 150), k = pick(1, 200);
    switch (variant % 4) {
      case 1:  // tensor-core tiles with ragged edges
        m = pick(129, 300), n = pick(129, 300), k = pick(100, 300);
        break;
      case 2:  // small C, deep k: the planners split k (the products share the workspace)
        m = pick(8, 48), n = pick(8, 48), k = pick(2000, 5000);
        break;
      case 3:  // thin
        n = pick(1, 12);
        break;
      default:
        break;
    }
    const int64_t batch = pick(2, 4), pad = pick(0, 3), gap = pick(0, 3);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, mode), TMM_SUCCESS);
    SCOPED_TRACE("variant " + std::to_string(variant) + " m " + std::to_string(m) + " n " +
                 std::to_string(n) + " k " + std::to_string(k) + " batch " + std::to_string(batch) +
                 " pad " + std::to_string(pad) + " gap " + std::to_string(gap) + " mode " +
                 std::to_string(int(mode)));
    const uint32_t case_seed = uint32_t(rng());
    device_batch_matches_the_reference<float>(h_, layout, ta, tb, m, n, k, batch, pad, gap, lay,
                                              variant % 5 == 0 ? 0.0f : -1.5f, case_seed);
    device_batch_matches_the_reference<double>(h_, layout, ta, tb, m, n, k, batch, pad, gap, lay,
                                               variant % 5 == 0 ? 0.0 : -1.5, case_seed + 7);
  }
}

// Whether the Hopper rows run here (their sm_90a code loaded for this device): the row
// that BLOCKED's tile 256 under TF32 runs.
bool hopper_rows_run(tmm_handle h) {
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, TMM_MATH_TF32), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_ALGORITHM, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_TILE_SIZE, 256), TMM_SUCCESS);
  float* x = nullptr;
  EXPECT_EQ(cudaMalloc(&x, 3 * 64 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemset(x, 0, 3 * 64 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(tmm_sgemm_device(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 8, 8, 8, 1.0f, x, 8,
                             x + 64, 8, 0.0f, x + 128, 8),
            TMM_SUCCESS);
  EXPECT_EQ(tmm_synchronize(h), TMM_SUCCESS);
  cudaFree(x);
  tmm_report r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_ALGORITHM, TMM_ALGO_AUTO), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_TILE_SIZE, 0), TMM_SUCCESS);
  return std::string(r.kernel) == "tf32_wgmma_128x256";
}

// Large batches on the Hopper rows, through the API, in both layouts and every transpose,
// pads and gaps of 16 bytes, beta 0 and not: a TF32 batch of 512 x 512 products (ragged
// k) on tf32_wgmma_128x256, which reads them through maps of three dimensions (but where
// both operands are MN-major, which it would pack: the batched mma.sync row), and an
// FP32_ACCURATE batch of 1000 x 1000 x 264 products on tf32x3_wgmma_128x128, packed in
// groups of 14 (tf32x3_batch_pays; a batch of 20 in row-major NN: a last group of 6);
// each product within its arithmetic's bound of FP64.
TEST_F(StridedBatchedCuda, LargeBatchesRunOnTheHopperRows) {
  const bool hopper = hopper_rows_run(h_);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed) + (hopper ? "" : " (no Hopper rows here)"));
  for (int variant = 0; variant < 17; ++variant) {
    const tmm_layout layout = variant % 2 && variant < 16 ? TMM_COL_MAJOR : TMM_ROW_MAJOR;
    const tmm_transpose ta = (variant / 2) % 2 && variant < 16 ? TMM_TRANS : TMM_NO_TRANS;
    const tmm_transpose tb = (variant / 4) % 2 && variant < 16 ? TMM_TRANS : TMM_NO_TRANS;
    const bool accurate = variant >= 8;
    const int64_t m = accurate ? 1000 : 512, n = m, k = accurate ? 264 : 100;
    const int64_t batch = variant == 16 ? 20 : 3;
    const int64_t pad = 4 * (variant % 2), gap = 4 * ((variant / 2) % 2);
    ASSERT_EQ(
        tmm_set_option(h_, TMM_OPTION_MATH_MODE, accurate ? TMM_MATH_FP32_ACCURATE : TMM_MATH_TF32),
        TMM_SUCCESS);
    SCOPED_TRACE("variant " + std::to_string(variant));
    std::string kernel;
    device_batch_matches_the_reference<float>(h_, layout, ta, tb, m, n, k, batch, pad, gap,
                                              Lay::Gapped, variant % 3 == 0 ? 0.0f : -1.5f,
                                              seed + uint32_t(variant), &kernel);
    if (!hopper) continue;
    // Both operands MN-major: row-major TN, column-major NT.
    const bool packs = layout == TMM_ROW_MAJOR ? ta == TMM_TRANS && tb == TMM_NO_TRANS
                                               : ta == TMM_NO_TRANS && tb == TMM_TRANS;
    EXPECT_EQ(kernel, accurate ? "tf32x3_wgmma_128x128"
                      : packs  ? "tf32_mma_128x256"
                               : "tf32_wgmma_128x256");
  }
}

// The checks come before anything runs on the CUDA backend too: C's products sharing an
// element, or C meeting A, are INVALID_VALUE with C untouched.
TEST_F(StridedBatchedCuda, DeviceArgumentErrorsWriteNothing) {
  std::vector<float> host(256, 7.0f);
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, host.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  EXPECT_EQ(
      tmm_sgemm_strided_batched_device(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f,
                                       d, 4, 16, d + 64, 4, 16, 0.0f, d + 128, 4, 15, 2),
      TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("share elements"), std::string::npos)
      << tmm_get_error_message(h_);
  EXPECT_EQ(tmm_sgemm_strided_batched_device(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4,
                                             1.0f, d, 4, 16, d + 64, 4, 16, 0.0f, d + 32, 4, 16, 3),
            TMM_ERROR_INVALID_VALUE);  // C_0 is A_2
  std::vector<float> after(host.size());
  ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
  ASSERT_EQ(cudaMemcpy(after.data(), d, after.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(d);
  EXPECT_EQ(after, host);
}
#endif

}  // namespace
