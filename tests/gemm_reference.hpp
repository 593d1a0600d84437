// Test helpers: random operands in any layout, a double-precision reference with the
// error bounds of each arithmetic (strict FP32, FP32_ACCURATE, TF32), and the GPU
// availability rule of the suite.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
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

// The edge of a square C whose rows x cols tiles leave a last wave at most a quarter
// full on `sms` multiprocessors: where the Hopper kernels split the last wave along k.
inline int64_t partial_wave_edge(int64_t rows, int64_t cols, int64_t sms) {
  for (int64_t edge = 256;; edge += 128) {
    const int64_t tiles = ((edge + rows - 1) / rows) * ((edge + cols - 1) / cols);
    if (tiles > sms && tiles % sms > 0 && tiles % sms <= sms / 4) return edge;
  }
}

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

// Fills A and B with uniform values in [-1, 1) of type T (every bit of T's mantissa
// random); C with random values, or NaN where beta = 0 (it must not be read), and the
// padding of C with the sentinel. For a case of T (GemmCase: float, DgemmCase: double).
template <class T, class Case>
void fill_uniform_case(Case& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> dist(T(-1), T(1));
  auto ld_of = [&](int64_t rows, int64_t cols) {
    return std::max<int64_t>(1, (g.row() ? cols : rows)) + g.pad;
  };
  auto size_of = [&](int64_t rows, int64_t cols, int64_t ld) {
    return size_t(std::max<int64_t>(1, (g.row() ? rows : cols)) * ld);
  };
  g.lda = ld_of(g.a_rows(), g.a_cols());
  g.ldb = ld_of(g.b_rows(), g.b_cols());
  g.ldc = ld_of(g.m, g.n);
  g.a.assign(size_of(g.a_rows(), g.a_cols(), g.lda), T(0));
  g.b.assign(size_of(g.b_rows(), g.b_cols(), g.ldb), T(0));
  for (T& x : g.a) x = dist(rng);
  for (T& x : g.b) x = dist(rng);
  g.c.assign(size_of(g.m, g.n, g.ldc), T(kPadSentinel));
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j)
      g.c[size_t(g.at(i, j, g.ldc))] =
          g.beta == T(0) ? std::numeric_limits<T>::quiet_NaN() : dist(rng);
  g.c0 = g.c;
}

inline void fill_case(GemmCase& g, uint32_t seed) { fill_uniform_case<float>(g, seed); }

// Values u 2^e, u uniform in [1, 2) with a random sign, e a uniform integer in
// [lowest, highest]: products over many binades, sums dominated by a few terms.
inline void fill_exponents(std::vector<float>& v, int lowest, int highest, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(1.0f, 2.0f);
  std::uniform_int_distribution<int> e(lowest, highest), sign(0, 1);
  for (float& x : v) x = (sign(rng) ? -1.0f : 1.0f) * std::ldexp(u(rng), e(rng));
}

inline tmm_status run_case(tmm_handle h, GemmCase& g) {
  return tmm_sgemm(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a.data(), g.lda, g.b.data(),
                   g.ldb, g.beta, g.c.data(), g.ldc);
}

// The arithmetic a result is checked against (check_case):
//   Fp32          strict FP32: products and sums rounded to FP32, in any order (the
//                 CPU, the CUDA ladder, split-K, the BLAS fallbacks);
//   Fp32Accurate  TMM_MATH_FP32_ACCURATE: 3xTF32 with error correction on tensor cores,
//                 which must keep FP32's accuracy;
//   Tf32          TMM_MATH_TF32: each input rounded to TF32, the products summed in FP32.
enum class Arithmetic { Fp32, Fp32Accurate, Tf32 };

// The arithmetic of a kernel that reports `mode` (tmm_report.math_mode,
// tmm_kernel_info.math_mode).
inline Arithmetic arithmetic_of(tmm_math_mode mode) {
  return mode == TMM_MATH_TF32            ? Arithmetic::Tf32
         : mode == TMM_MATH_FP32_ACCURATE ? Arithmetic::Fp32Accurate
                                          : Arithmetic::Fp32;
}

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

// The exact result of a case (FP64: the products of two floats are exact there, and k
// sums lose about k 2^-53 of sum |a b|) and what each arithmetic may give instead,
// element by element. Per element, with s = sum_l a b, Q = sqrt(sum_l (a b)^2) and
// T = |alpha| (|s| + Q) + |beta c0|:
//
// Fp32. Summing k products, in whatever order, rounds partial sums: the error is
// sum_i d_i S_i with |d_i| <= u = 2^-24. The worst case, u sum_i |S_i| <= k u
// sum |a b|, takes every rounding at its largest and of one sign; rounding errors of
// random data are independent and of either sign, so the error is about
// u sqrt(sum_i S_i^2), and a partial sum of random terms is about their sum plus a
// random walk, |s| + Q: so the error is about u sqrt(k) T whatever the order
// (sequential, in lanes, split-K, pairwise; with or without FMA). The bound is
//   fp32(T) = u (3 sqrt(k) + 2) T    (+ (k + 2) 2^-149 (|alpha| + 1): subnormal sums)
// (2: the rounding of alpha sum, beta c0 and their sum). It assumes random data:
// structured inputs whose roundings do not cancel (a row of one inexact constant)
// can exceed it; test those with fill_exact instead.
//
// TF32 rounding moves each product by a relative 2^-11 or so, of random sign: the
// exact sum by about 2^-11 Q, which in units of u sqrt(k) T is 2^13 Q / (sqrt(k) T):
// it falls with k, but at k = 16384 a TF32 result is still several times outside
// fp32 at most elements.
//
// tests/test_reference.cpp runs these bounds for every k from 16 to 16384 on the
// suite's data (uniform [-1, 1) inputs, and exponents spread over [-16, 16]): strict
// FP32 in five orders reaches at most 0.61 of fp32, 0.43 of x3 (below); a TF32 result
// is at least 5.9 times outside fp32 and 4.4 times outside x3 (at its farthest
// element, at the worst k); the TF32 checks below pass TF32 at 0.58 of their bounds
// or less and fail strict FP32 by 2.8 times or more.
//
// Fp32Accurate. 3xTF32 drops a_small b_small and rounds the small parts: at most
// 3 2^-22 |a b| per product (12 u); the tensor cores truncate as they add, within
// each tile's sum (32 or 96 in k). The bound is
//   x3 = u ((4 sqrt(k) + 2) T + 12 |alpha| min(sum |a b|, 2 Q))   (+ twice fp32's floor)
// (the dropped parts at their worst for a few products, as a random sum for many).
// A TF32 result fails it as it fails fp32.
//
// Tf32. Each input is rounded to TF32, a' = a (1 + d), |d| <= 2^-11, so the rounding
// moves the exact sum by at most (2^-10 + 2^-22) sum |a b|; the products a' b' are
// exact in FP32 (11 x 11 significant bits) and the tensor cores add them in FP32,
// truncating (Fasi et al. 2021) over the whole of k. Three checks:
//  - the TF32 bound: |C - exact| <= (2^-10 + 2^-22) |alpha| sum |a b| + tc(T'), where
//    tc(T') = u (8 sqrt(k) + 2) T' + twice fp32's floor, T' the T of the rounded
//    inputs: the tensor cores' sums, with more room than fp32 for their truncation;
//  - near the rounded product: |C - C'| <= tc(T'), C' the FP64 product of the
//    rounded inputs, per element, for either tie rule (cvt.rna, the mma.sync
//    kernels, ties away from zero; the copy engine, the Hopper kernel, ties to even:
//    one input on a tie moves a whole row or column of C by a TF32 unit). A dropped,
//    doubled or misplaced term of k shows here far outside;
//  - the proof that the inputs were rounded: over the m x n part,
//      ||C - C'||_F <= ||fp32(T')||_F + ||C - C_exact||_F / 4,
//    C at least 4 times nearer the product of the rounded inputs than the exact
//    product, beyond FP32's own rounding. A strict FP32 result fails it (its distance
//    to C' is the TF32 rounding's, many times fp32 at every k the self-test runs);
//    data that TF32 represents exactly (small integers) pass it with C = C' = exact.
class Reference {
 public:
  // The ratios of a result to the bounds: it passes where each is at most 1.
  struct Ratios {
    double bound = 0;              // max over elements of |C - exact| / the arithmetic's bound
    double near = 0;               // Tf32: max over elements of |C - C'| / tc(T')
    double proof = 0;              // Tf32: ||C - C'||_F / (||fp32(T')||_F + ||C - exact||_F / 4)
    int64_t outside = 0, far = 0;  // elements over `bound`, over `near`
    int64_t first_outside = -1, first_far = -1;  // their first index
    bool pass() const { return outside == 0 && far == 0 && !(proof > 1); }
  };

  // tf32: also the products of the TF32-rounded inputs (for Arithmetic::Tf32).
  explicit Reference(const GemmCase& g, bool tf32 = true) : n_(g.n), tf32_(tf32) {
    const int64_t m = g.m, n = g.n, k = g.k;
    // op(A) by rows and op(B) by columns, dense, so the sums below read along k.
    std::vector<float> a(size_t(m * k)), b(size_t(n * k));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t q = 0; q < k; ++q) a[size_t(i * k + q)] = float(g.op_a(i, q));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < k; ++q) b[size_t(j * k + q)] = float(g.op_b(q, j));
    std::vector<float> a_rna, b_rna, a_rne, b_rne;
    if (tf32) {
      auto rounded = [](const std::vector<float>& v, bool even) {
        std::vector<float> out(v.size());
        for (size_t i = 0; i < v.size(); ++i) out[i] = round_to_tf32(v[i], even);
        return out;
      };
      a_rna = rounded(a, false);
      b_rna = rounded(b, false);
      a_rne = rounded(a, true);
      b_rne = rounded(b, true);
    }
    const double alpha = g.alpha, abs_alpha = std::fabs(alpha);
    elements_.reserve(size_t(m * n));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Element e;
        e.at = g.at(i, j, g.ldc);
        const double c0 = g.c0[size_t(e.at)];
        const double beta_c0 = g.beta == 0.0f ? 0.0 : double(g.beta) * c0;
        double s = 0, p = 0, q2 = 0, s_rna = 0, q2_rna = 0, s_rne = 0;
        if (alpha != 0) {
          const float *ai = a.data() + i * k, *bj = b.data() + j * k;
          for (int64_t q = 0; q < k; ++q) {
            const double x = double(ai[q]) * double(bj[q]);
            s += x;
            p += std::fabs(x);
            q2 += x * x;
          }
          if (tf32) {
            const float *ti = a_rna.data() + i * k, *tj = b_rna.data() + j * k;
            const float *ei = a_rne.data() + i * k, *ej = b_rne.data() + j * k;
            for (int64_t q = 0; q < k; ++q) {
              const double x = double(ti[q]) * double(tj[q]);
              s_rna += x;
              q2_rna += x * x;
              s_rne += double(ei[q]) * double(ej[q]);
            }
          }
        }
        e.exact = alpha * s + beta_c0;
        e.scale = abs_alpha * (std::fabs(s) + std::sqrt(q2)) + std::fabs(beta_c0);
        e.dropped = abs_alpha * std::min(p, 2 * std::sqrt(q2));
        e.tf32_rounding = abs_alpha * p;
        e.rna = alpha * s_rna + beta_c0;
        e.rne = alpha * s_rne + beta_c0;
        e.scale_tf32 = abs_alpha * (std::fabs(s_rna) + std::sqrt(q2_rna)) + std::fabs(beta_c0);
        elements_.push_back(e);
      }
    }
    const double u = std::ldexp(1.0, -24), root = std::sqrt(double(k));
    floor_ = double(k + 2) * std::ldexp(1.0, -149) * (abs_alpha + 1);
    fp32_ = u * (3 * root + 2);
    x3_ = u * (4 * root + 2);
    tc_ = u * (8 * root + 2);
    x3_dropped_ = 12 * u;
  }

  // The bounds of one element (its index in row-major order over m x n).
  double fp32_bound(size_t e) const { return fp32_ * elements_[e].scale + floor_; }
  double x3_bound(size_t e) const {
    return x3_ * elements_[e].scale + x3_dropped_ * elements_[e].dropped + 2 * floor_;
  }
  double tc_bound(size_t e) const { return tc_ * elements_[e].scale_tf32 + 2 * floor_; }
  double tf32_bound(size_t e) const {
    return (std::ldexp(1.0, -10) + std::ldexp(1.0, -22)) * elements_[e].tf32_rounding + tc_bound(e);
  }

  // c: a C laid out as the case's (g.c of a run of it).
  Ratios measure(const std::vector<float>& c, Arithmetic arithmetic) const {
    Ratios r;
    const bool tf32 = arithmetic == Arithmetic::Tf32;
    double off_tf32 = 0, allowed = 0, off_exact = 0;  // the proof's sums of squares
    for (size_t e = 0; e < elements_.size(); ++e) {
      const Element& x = elements_[e];
      const double got = c[size_t(x.at)];
      const double bound = arithmetic == Arithmetic::Fp32           ? fp32_bound(e)
                           : arithmetic == Arithmetic::Fp32Accurate ? x3_bound(e)
                                                                    : tf32_bound(e);
      const double error = std::fabs(got - x.exact);
      const double ratio = error / bound;
      if (!(ratio <= 1)) {
        if (r.outside++ == 0) r.first_outside = int64_t(e);
      }
      if (!(ratio <= r.bound)) r.bound = std::isnan(ratio) ? INFINITY : ratio;
      if (!tf32) continue;
      if (!tf32_) throw std::logic_error("Reference built without the TF32 products");
      const double near = std::min(std::fabs(got - x.rna), std::fabs(got - x.rne));
      const double near_ratio = near / tc_bound(e);
      if (!(near_ratio <= 1)) {
        if (r.far++ == 0) r.first_far = int64_t(e);
      }
      if (!(near_ratio <= r.near)) r.near = std::isnan(near_ratio) ? INFINITY : near_ratio;
      const double fp32 = fp32_ * x.scale_tf32 + floor_;
      off_tf32 += near * near;
      allowed += fp32 * fp32;
      off_exact += error * error;
    }
    if (tf32) {
      const double proof = std::sqrt(off_tf32) / (std::sqrt(allowed) + std::sqrt(off_exact) / 4);
      r.proof = std::isnan(proof) ? INFINITY : proof;
    }
    return r;
  }

  ::testing::AssertionResult check(const std::vector<float>& c, Arithmetic arithmetic) const {
    const Ratios r = measure(c, arithmetic);
    if (r.pass()) return ::testing::AssertionSuccess();
    auto element = [&](int64_t e, double want, double bound) {
      const int64_t i = e / std::max<int64_t>(1, n_), j = e % std::max<int64_t>(1, n_);
      const Element& x = elements_[size_t(e)];
      return "C(" + std::to_string(i) + "," + std::to_string(j) +
             ") = " + to_string(c[size_t(x.at)]) + ", expected " + to_string(want) + " +- " +
             to_string(bound);
    };
    ::testing::AssertionResult out = ::testing::AssertionFailure();
    const char* name = arithmetic == Arithmetic::Fp32           ? "FP32"
                       : arithmetic == Arithmetic::Fp32Accurate ? "FP32_ACCURATE"
                                                                : "TF32";
    if (r.outside > 0) {
      const size_t e = size_t(r.first_outside);
      const double bound = arithmetic == Arithmetic::Fp32           ? fp32_bound(e)
                           : arithmetic == Arithmetic::Fp32Accurate ? x3_bound(e)
                                                                    : tf32_bound(e);
      out << r.outside << " element(s) outside the " << name
          << " bound (first: " << element(r.first_outside, elements_[e].exact, bound)
          << "; worst at " << r.bound << " times its bound); ";
    }
    if (r.far > 0) {
      const size_t e = size_t(r.first_far);
      out << r.far << " element(s) farther from the product of the TF32-rounded inputs than "
          << "its sums allow (first: " << element(r.first_far, elements_[e].rna, tc_bound(e))
          << "; worst at " << r.near << " times); ";
    }
    if (r.proof > 1) {
      out << "not the product of TF32-rounded inputs: ||C - C_tf32||_F is " << r.proof
          << " times FP32's allowance plus a quarter of ||C - C_exact||_F; ";
    }
    return out;
  }

 private:
  static std::string to_string(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", x);
    return buf;
  }

  struct Element {
    int64_t at = 0;            // offset in C
    double exact = 0;          // alpha sum a b + beta c0
    double scale = 0;          // |alpha| (|s| + Q) + |beta c0|
    double dropped = 0;        // |alpha| min(sum |a b|, 2 Q)
    double tf32_rounding = 0;  // |alpha| sum |a b|
    double rna = 0, rne = 0;   // the same of the TF32-rounded inputs, by tie rule
    double scale_tf32 = 0;     // scale of the rounded inputs (ties away)
  };
  int64_t n_;
  bool tf32_;
  std::vector<Element> elements_;
  double floor_ = 0, fp32_ = 0, x3_ = 0, tc_ = 0, x3_dropped_ = 0;
};

// `values` (a check of C's m x n part), failed too if anything of C outside that part
// differs from C as it was: the library must never write a leading dimension's padding.
// For a case of any element type (GemmCase, DgemmCase).
template <class Case>
::testing::AssertionResult with_padding_check(const ::testing::AssertionResult& values,
                                              const Case& g) {
  int64_t touched = 0;
  for (size_t idx = 0; idx < g.c.size(); ++idx) {
    const int64_t outer = int64_t(idx) / g.ldc, inner = int64_t(idx) % g.ldc;
    const bool inside = g.row() ? (outer < g.m && inner < g.n) : (outer < g.n && inner < g.m);
    if (!inside && std::memcmp(&g.c[idx], &g.c0[idx], sizeof(g.c[idx])) != 0) ++touched;
  }
  if (values && touched == 0) return ::testing::AssertionSuccess();
  ::testing::AssertionResult out = ::testing::AssertionFailure();
  if (!values) out << values.message();
  if (touched > 0) out << (values ? "" : "; ") << touched << " padding element(s) written";
  return out;
}

// The worst ratio seen of some result to a bound, and where (the references'
// self-tests).
struct Worst {
  double ratio = 0;
  int64_t k = -1;
  std::string what;
  void max(double r, int64_t at, const std::string& name) {
    if (k < 0 || r > ratio) ratio = r, k = at, what = name;
  }
  void min(double r, int64_t at, const std::string& name) {
    if (k < 0 || r < ratio) ratio = r, k = at, what = name;
  }
};

inline std::string show(const Worst& w) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%.3g (k = %lld, %s)", w.ratio, static_cast<long long>(w.k),
                w.what.c_str());
  return buf;
}

// Checks g.c against FP64 with the bounds of `arithmetic` (Reference above), and that
// everything of C outside the m x n part is exactly as it was.
inline ::testing::AssertionResult check_case(const GemmCase& g,
                                             Arithmetic arithmetic = Arithmetic::Fp32) {
  return with_padding_check(Reference(g, arithmetic == Arithmetic::Tf32).check(g.c, arithmetic), g);
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
