// Test helpers: random operands in any layout, a double-precision reference with an
// error bound that grows with k, and the GPU availability rule of the suite.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#if TMM_TEST_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "tiledmm/tiledmm.h"

namespace tmm_test {

// True when this machine has a usable CUDA device. Asked of the CUDA runtime, not of
// the library under test, so that a regression in handle creation fails the CUDA
// tests instead of skipping them.
inline bool cuda_available() {
#if TMM_TEST_WITH_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return count > 0;
#else
  return false;
#endif
}

// TMM_REQUIRE_GPU=1 turns "no GPU, skip" into a failure, so a run on a GPU machine
// proves the GPU tests ran.
inline bool gpu_required() {
  const char* v = std::getenv("TMM_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

// For a fixture's SetUp(): skip without a GPU, or fail when one is required.
#define TMM_SKIP_OR_FAIL_WITHOUT_GPU()                           \
  do {                                                           \
    if (!::tmm_test::cuda_available()) {                         \
      if (::tmm_test::gpu_required()) {                          \
        FAIL() << "TMM_REQUIRE_GPU=1 but no usable CUDA device"; \
      }                                                          \
      GTEST_SKIP() << "no usable CUDA device";                   \
    }                                                            \
  } while (0)

inline uint32_t fresh_seed() { return std::random_device{}(); }

// True under compute-sanitizer (TMM_TEST_SANITIZER=1): tests shrink their largest
// problems, keeping the code paths they exercise, so the instrumented run fits.
inline bool under_sanitizer() {
  const char* v = std::getenv("TMM_TEST_SANITIZER");
  return v != nullptr && std::string(v) == "1";
}

// One SGEMM call in the caller's terms, with its operands.
struct GemmCase {
  tmm_layout layout = TMM_ROW_MAJOR;
  tmm_transpose ta = TMM_NO_TRANS, tb = TMM_NO_TRANS;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  int64_t pad = 0;  // extra leading-dimension elements on every matrix
  int64_t lda = 1, ldb = 1, ldc = 1;
  std::vector<float> a, b, c, c0;

  bool row() const { return layout == TMM_ROW_MAJOR; }
  // Stored shapes (rows x cols in the matrix's own terms).
  int64_t a_rows() const { return ta == TMM_TRANS ? k : m; }
  int64_t a_cols() const { return ta == TMM_TRANS ? m : k; }
  int64_t b_rows() const { return tb == TMM_TRANS ? n : k; }
  int64_t b_cols() const { return tb == TMM_TRANS ? k : n; }
  // Offset of element (r, c) of a stored matrix with leading dimension ld.
  int64_t at(int64_t r, int64_t c, int64_t ld) const { return row() ? r * ld + c : c * ld + r; }
  double op_a(int64_t i, int64_t q) const {
    return ta == TMM_TRANS ? a[at(q, i, lda)] : a[at(i, q, lda)];
  }
  double op_b(int64_t q, int64_t j) const {
    return tb == TMM_TRANS ? b[at(j, q, ldb)] : b[at(q, j, ldb)];
  }
};

// The sentinel written into C's padding: the library must never change it.
constexpr float kPadSentinel = -12345.5f;

// Fills A and B with uniform values in [-1, 1); C with random values, or NaN where
// beta = 0 (it must not be read), and the padding of C with the sentinel.
inline void fill_case(GemmCase& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto ld_of = [&](int64_t rows, int64_t cols) {
    return std::max<int64_t>(1, (g.row() ? cols : rows)) + g.pad;
  };
  auto size_of = [&](int64_t rows, int64_t cols, int64_t ld) {
    return size_t(std::max<int64_t>(1, (g.row() ? rows : cols)) * ld);
  };
  g.lda = ld_of(g.a_rows(), g.a_cols());
  g.ldb = ld_of(g.b_rows(), g.b_cols());
  g.ldc = ld_of(g.m, g.n);
  g.a.assign(size_of(g.a_rows(), g.a_cols(), g.lda), 0.0f);
  g.b.assign(size_of(g.b_rows(), g.b_cols(), g.ldb), 0.0f);
  for (float& x : g.a) x = dist(rng);
  for (float& x : g.b) x = dist(rng);
  g.c.assign(size_of(g.m, g.n, g.ldc), kPadSentinel);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j)
      g.c[g.at(i, j, g.ldc)] = g.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
  g.c0 = g.c;
}

inline tmm_status run_case(tmm_handle h, GemmCase& g) {
  return tmm_sgemm(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a.data(), g.lda, g.b.data(),
                   g.ldb, g.beta, g.c.data(), g.ldc);
}

// Compares g.c with a double-precision reference computed from g.c0. The bound
// per element is the classic dot-product bound, gamma_k * (|alpha| sum |a||b| +
// |beta c0|), with slack for summation orders other than sequential.
inline ::testing::AssertionResult check_case(const GemmCase& g) {
  const double eps = std::numeric_limits<float>::epsilon();
  const double gamma = 2.0 * double(g.k + 2) * eps;
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double dot = 0, mag = 0;
      for (int64_t q = 0; q < g.k; ++q) {
        const double x = g.op_a(i, q) * g.op_b(q, j);
        dot += x;
        mag += std::fabs(x);
      }
      const double c0 = g.c0[g.at(i, j, g.ldc)];
      const double ref = g.alpha * dot + (g.beta == 0.0f ? 0.0 : g.beta * c0);
      const double bound =
          gamma * (std::fabs(g.alpha) * mag + (g.beta == 0.0f ? 0.0 : std::fabs(g.beta * c0))) +
          1e-30;
      const float got = g.c[g.at(i, j, g.ldc)];
      if (!(std::fabs(double(got) - ref) <= bound)) {
        if (bad++ == 0)
          first = "C(" + std::to_string(i) + "," + std::to_string(j) +
                  ") = " + std::to_string(got) + ", expected " + std::to_string(ref) + " +- " +
                  std::to_string(bound);
      }
    }
  }
  // Everything outside the m x n part must be exactly as it was.
  int64_t touched = 0;
  for (size_t idx = 0; idx < g.c.size(); ++idx) {
    const int64_t ld = g.ldc;
    const int64_t outer = int64_t(idx) / ld, inner = int64_t(idx) % ld;
    const bool inside = g.row() ? (outer < g.m && inner < g.n) : (outer < g.n && inner < g.m);
    if (!inside && std::memcmp(&g.c[idx], &g.c0[idx], sizeof(float)) != 0) ++touched;
  }
  if (bad == 0 && touched == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " wrong element(s)" << (bad ? " (first: " + first + ")" : "") << ", " << touched
         << " padding element(s) written";
}

inline std::string describe(const GemmCase& g) {
  return std::string(g.row() ? "row" : "col") + (g.ta == TMM_TRANS ? " T" : " N") +
         (g.tb == TMM_TRANS ? "T" : "N") + " m=" + std::to_string(g.m) +
         " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
         " alpha=" + std::to_string(g.alpha) + " beta=" + std::to_string(g.beta) +
         " pad=" + std::to_string(g.pad);
}

// alpha = +-Inf: every algorithm gives alpha * (exact sum), so +-Inf where the sum
// is non-zero and NaN where it is 0 (the header's "Arithmetic" rule). Small integers
// make every sum exact, so the expected value is exact too.
inline void expect_alpha_inf_rule(tmm_handle h, tmm_algorithm algorithm, int64_t k) {
  const int64_t m = 37, n = 29;
  std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n), 2.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 7 % 5) - 2);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 3 % 5) - 2);
  for (int64_t j = 0; j < n; ++j) b[size_t((k - 1) * n + j)] = j % 3 == 0 ? 0.0f : b[size_t(j)];
  ASSERT_EQ(tmm_set_algorithm(h, algorithm), TMM_SUCCESS);
  for (float alpha : {INFINITY, -INFINITY}) {
    ASSERT_EQ(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, alpha, a.data(), k,
                        b.data(), n, 1.0f, c.data(), n),
              TMM_SUCCESS);
    int zeros = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t q = 0; q < k; ++q) dot += double(a[size_t(i * k + q)]) * b[size_t(q * n + j)];
        const float got = c[size_t(i * n + j)];
        if (dot == 0) {
          ++zeros;
          ASSERT_TRUE(std::isnan(got)) << "(" << i << "," << j << ") got " << got;
        } else {
          ASSERT_EQ(got, (dot > 0) == (alpha > 0) ? INFINITY : -INFINITY)
              << "algorithm " << algorithm << " k " << k << " (" << i << "," << j << ")";
        }
      }
    }
    EXPECT_GT(zeros, 0) << "the data must exercise Inf * 0";
    std::fill(c.begin(), c.end(), 2.0f);
  }
}

// Small integers in [-2, 2]: products and sums of up to 2^22 terms are exact in FP32,
// so a result can be compared with == against an FP64 reference. A dropped, doubled
// or misplaced k-term changes the result.
inline void fill_exact(std::vector<float>& v, uint32_t seed) {
  std::mt19937 rng(seed);
  for (float& x : v) x = float(int(rng() % 5) - 2);
}

}  // namespace tmm_test
