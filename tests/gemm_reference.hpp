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

// The arithmetic a result is checked against: strict FP32, or TF32 inputs with FP32
// sums (TMM_MATH_TF32, the tensor-core kernels).
enum class Arithmetic { Fp32, Tf32 };

// x rounded to TF32 as cvt.rna.tf32.f32 does it: to 10 mantissa bits, to nearest,
// ties away from zero (adding half a unit of the last kept bit to the magnitude, then
// cutting, rounds the magnitude half up); or, with ties_to_even, as the copy engine's
// TFLOAT32 conversion does (the Hopper kernel): ties to the even neighbour. For
// finite x below FLT_MAX's last binade.
inline float round_to_tf32(float x, bool ties_to_even = false) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint32_t half = ties_to_even ? 0xfffu + ((bits >> 13) & 1u) : 0x1000u;
  bits = (bits + half) & ~0x1fffu;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// Compares g.c with a double-precision reference computed from g.c0.
//
// Fp32: the bound per element is the classic dot-product bound, gamma_k * (|alpha|
// sum |a||b| + |beta c0|), gamma_k = 2 (k + 2) 2^-23, with slack for summation
// orders other than sequential (and for sums that truncate, as tensor cores do).
//
// Tf32: each input is rounded to TF32, a' = a (1 + d), |d| <= u = 2^-11 (10 stored
// mantissa bits, to nearest), so |a'b' - ab| <= (2u + u^2) |ab|: the rounding moves
// the exact sum by at most (2^-10 + 2^-22) sum |a||b|, whatever k and the order; the
// products a'b' are exact in FP32 (11 x 11 significant bits) and the tensor cores add
// them in FP32, which the FP32 bound above covers. So
//   |C - C_exact| <= (2^-10 + 2^-22) |alpha| sum |a||b| + gamma_k (|alpha| sum |a'||b'|
//                    + |beta c0|).
// The rounding term is a worst case (every rounding at its largest, all of one sign);
// random data lands near 2^-11 sqrt(k) of a typical |ab|, so a dropped, doubled or
// misplaced term of k (about |ab| ~ 1/3 here) shows far outside it. Second, tighter:
// the result must equal the FP64 product of the rounded inputs within the FP32 bound
// alone, which proves the inputs were rounded (to nearest) and nothing else was lost.
// Ties go away from zero (cvt.rna, the mma.sync kernels) or to even (the copy
// engine, the Hopper kernel): one input on a tie moves a whole row or column of C by
// a TF32 unit, so the check takes an element that matches either rule.
inline ::testing::AssertionResult check_case(const GemmCase& g,
                                             Arithmetic arithmetic = Arithmetic::Fp32) {
  const double eps = std::numeric_limits<float>::epsilon();
  const double gamma = 2.0 * double(g.k + 2) * eps;
  const double tf32_rounding = std::ldexp(1.0, -10) + std::ldexp(1.0, -22);
  const bool tf32 = arithmetic == Arithmetic::Tf32;
  int64_t bad = 0;
  std::string first;
  auto report = [&](int64_t i, int64_t j, float got, double ref, double bound, const char* what) {
    if (bad++ == 0)
      first = std::string(what) + "C(" + std::to_string(i) + "," + std::to_string(j) +
              ") = " + std::to_string(got) + ", expected " + std::to_string(ref) + " +- " +
              std::to_string(bound);
  };
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double dot = 0, mag = 0, dot_t = 0, mag_t = 0, dot_e = 0;
      for (int64_t q = 0; q < g.k; ++q) {
        const double x = g.op_a(i, q) * g.op_b(q, j);
        dot += x;
        mag += std::fabs(x);
        if (tf32) {
          const float a = float(g.op_a(i, q)), b = float(g.op_b(q, j));
          const double xt = double(round_to_tf32(a)) * double(round_to_tf32(b));
          dot_t += xt;
          mag_t += std::fabs(xt);
          dot_e += double(round_to_tf32(a, true)) * double(round_to_tf32(b, true));
        }
      }
      const double c0 = g.c0[g.at(i, j, g.ldc)];
      const double beta_c0 = g.beta == 0.0f ? 0.0 : g.beta * c0;
      const double alpha = std::fabs(g.alpha);
      const double ref = g.alpha * dot + beta_c0;
      const double fp32 = gamma * (alpha * (tf32 ? mag_t : mag) + std::fabs(beta_c0)) + 1e-30;
      const double bound = tf32 ? tf32_rounding * alpha * mag + fp32 : fp32;
      const float got = g.c[g.at(i, j, g.ldc)];
      if (!(std::fabs(double(got) - ref) <= bound)) {
        report(i, j, got, ref, bound, "");
      } else if (tf32) {
        const double ref_t = g.alpha * dot_t + beta_c0, ref_e = g.alpha * dot_e + beta_c0;
        if (!(std::fabs(double(got) - ref_t) <= fp32) && !(std::fabs(double(got) - ref_e) <= fp32))
          report(i, j, got, ref_t, fp32, "against the product of the TF32-rounded inputs: ");
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
