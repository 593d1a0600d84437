// Test helpers of double precision, for DGEMM: operands of a call in any layout, its
// exact result in double-double, and the error bound of strict FP64 (check_case).
// Apart from gemm_reference.hpp, whose FP32 reference takes float operands and builds
// into the CUDA suites: this one shares only the padding sentinel and the layout rules
// with it, and nothing here calls the library (it has no DGEMM yet; the self-test,
// tests/test_reference_f64.cpp, simulates the arithmetic it checks).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gemm_reference.hpp"
#include "tiledmm/tiledmm.h"

namespace tmm_test {

// One DGEMM call in the caller's terms, with its operands: GemmCase in double.
struct DgemmCase {
  tmm_layout layout = TMM_ROW_MAJOR;
  tmm_transpose ta = TMM_NO_TRANS, tb = TMM_NO_TRANS;
  int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
  int64_t pad = 0;  // extra leading-dimension elements on every matrix
  int64_t lda = 1, ldb = 1, ldc = 1;
  std::vector<double> a, b, c, c0;  // c: C as the call leaves it; c0: as it was passed

  bool row() const { return layout == TMM_ROW_MAJOR; }
  // Stored shapes (rows x cols in the matrix's own terms).
  int64_t a_rows() const { return ta == TMM_TRANS ? k : m; }
  int64_t a_cols() const { return ta == TMM_TRANS ? m : k; }
  int64_t b_rows() const { return tb == TMM_TRANS ? n : k; }
  int64_t b_cols() const { return tb == TMM_TRANS ? k : n; }
  // Offset of element (r, c) of a stored matrix with leading dimension ld.
  int64_t at(int64_t r, int64_t c, int64_t ld) const { return row() ? r * ld + c : c * ld + r; }
  double op_a(int64_t i, int64_t q) const {
    return ta == TMM_TRANS ? a[size_t(at(q, i, lda))] : a[size_t(at(i, q, lda))];
  }
  double op_b(int64_t q, int64_t j) const {
    return tb == TMM_TRANS ? b[size_t(at(j, q, ldb))] : b[size_t(at(q, j, ldb))];
  }
};

// Fills A and B with uniform values in [-1, 1) (all 53 bits random: a result that
// rounds an input to FP32 moves by 2^-25 of it); C with random values, or NaN where
// beta = 0 (it must not be read), and the padding of C with the sentinel.
inline void fill_case(DgemmCase& g, uint32_t seed) { fill_uniform_case<double>(g, seed); }

// The case of fill_case with integer operands whose every product is visible in FP32:
// A odd in +-[2^13, 2^14), B odd in +-[2^12, 2^13), so each product is an odd integer
// in +-(2^25, 2^27), of 26 or 27 significant bits: never an FP32 value (24 bits), and
// a product rounded to FP32 moves by at least 1. C (where beta != 0) is integers in
// [-2^26, 2^26]. For k <= 2^26 every partial sum of products is an integer below 2^53,
// so FP64 adds them exactly in any order: strict FP64 is exact up to the roundings of
// alpha and beta, and the bound of DgemmReference stays below |alpha| (its comment
// says why), so a result with any one FP32-rounded product fails.
// The inputs themselves are FP32 values (14 bits): a result that rounds its inputs to
// FP32 passes on this data; fill_case's catches that.
inline void fill_odd_integers(DgemmCase& g, uint32_t seed) {
  fill_case(g, seed);
  std::mt19937 rng(seed ^ 0x5f3759dfu);
  std::uniform_int_distribution<int64_t> odd_a(0, (1 << 12) - 1), odd_b(0, (1 << 11) - 1);
  std::uniform_int_distribution<int64_t> c_values(-(int64_t(1) << 26), int64_t(1) << 26);
  std::uniform_int_distribution<int> sign(0, 1);
  auto odd = [&](int64_t lowest, std::uniform_int_distribution<int64_t>& step) {
    return (sign(rng) ? -1.0 : 1.0) * double(lowest + 2 * step(rng) + 1);
  };
  for (double& x : g.a) x = odd(int64_t(1) << 13, odd_a);
  for (double& x : g.b) x = odd(int64_t(1) << 12, odd_b);
  if (g.beta != 0.0) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) g.c[size_t(g.at(i, j, g.ldc))] = double(c_values(rng));
  }
  g.c0 = g.c;
}

// A value as an unevaluated sum hi + lo, |lo| <= ulp(hi) / 2 once normalized: 106
// significant bits.
struct DoubleDouble {
  double hi = 0, lo = 0;
};

// x + y = s + e exactly (Knuth's TwoSum: no branch, for any magnitudes).
inline DoubleDouble two_sum(double x, double y) {
  const double s = x + y, y_part = s - x, x_part = s - y_part;
  return {s, (x - x_part) + (y - y_part)};
}

// x y = p + e exactly (the fused multiply-add's one rounding gives the error).
inline DoubleDouble two_product(double x, double y) {
  const double p = x * y;
  return {p, std::fma(x, y, -p)};
}

// The exact result of a DGEMM case, more precise than FP64, and the error strict FP64
// may make, element by element.
//
// The reference: sum_l a b by Dot2 (Ogita, Rump and Oishi 2005, "Accurate sum and dot
// product"): each product split exactly into p + e (two_product), p added by two_sum
// into hi with its error, the errors summed apart into lo. hi + lo is within
// gamma_k^2 sum |a b| (gamma_k = k u / (1 - k u), u = 2^-53; 2^-78 sum |a b| at
// k = 16384) of the exact sum: as if summed in twice FP64's precision. Then alpha and
// beta c0 are applied the same way. The error of a result is (C - hi) - lo.
//
// The bound. Per element, with s = sum_l a b, Q = sqrt(sum_l (a b)^2) and
// T = |alpha| (|s| + Q) + |beta c0|, it is gemm_reference.hpp's FP32 bound at FP64's
// unit roundoff:
//   fp64(T) = u (3 sqrt(k) + 2) T     (+ (k + 2) 2^-1074 (|alpha| + 1): subnormal sums)
// (strict FP64 in any order, with or without FMA, errs by about u sqrt(k) T on random
// data; 2: the rounding of alpha s, beta c0 and their sum). The worst-case bound,
// 2 (k + 2) u sum |a b|, cannot serve: it grows like k sum |a b| where one
// FP32-rounded product's error stays one product's, and at k = 16384 it exceeds that
// error on either data set below (uniform [-1, 1): 2^-26, where rounding a typical
// product, |a b| about 1/4, to FP32 moves it by 2^-27 on average; odd integers: about
// 4.5, against a move of 1 to 4).
// What fp64 separates, on each data set:
//  - fill_odd_integers: strict FP64 sums are exact, and fp64 is below |alpha| / 10
//    (+ 2^-18 |beta| from C) at every element for k <= 16384 (at its largest, every
//    product of one sign near 2^27: |s| + Q <= (k + sqrt(k)) 2^27, and
//    u (3 sqrt(k) + 2) (k + sqrt(k)) 2^27 is 0.095 at k = 2^14, 0.76 at k = 2^16),
//    while one FP32-rounded product moves C by at least |alpha|: any one, of any
//    element's chain, fails by 10 times or more; by hundreds at random signs, where
//    |s| is about sqrt(k) 2^26.
//  - fill_case (uniform [-1, 1), 53 random bits): one product p rounded to FP32 moves C
//    by |alpha p| times a random fraction of 2^-25 or so, while fp64 is about
//    2^-53 3 sqrt(k) T: at k = 16384 half the products, rounded so, fail by 700 times
//    or more, but one that is tiny or happens to round almost exactly can stay within
//    it (0.4% of them). This data shows what the odd
//    integers cannot: inputs rounded to FP32 (the odd integers are FP32 values).
// tests/test_reference_f64.cpp runs both for k in {16, 17, 100, 333, 1000, 4096,
// 16384}, every layout and transpose: strict FP64 in seven orders reaches at most 0.22
// of fp64 (0.032 on the odd integers); one FP32-rounded product is at least 495 times
// outside on the odd integers (at any product of any element), 45 times on uniform
// data (the chain's largest product); a result in FP32, or from inputs rounded to
// FP32, at least 10^6 times.
class DgemmReference {
 public:
  // The ratio of a result to the bound: it passes where it is at most 1.
  struct Ratios {
    double bound = 0;            // max over elements of |C - exact| / fp64
    int64_t outside = 0;         // elements over the bound
    int64_t first_outside = -1;  // the first of them (row-major over m x n)
    bool pass() const { return outside == 0; }
  };

  explicit DgemmReference(const DgemmCase& g) : n_(g.n) {
    const int64_t m = g.m, n = g.n, k = g.k;
    // op(A) by rows and op(B) by columns, dense, so the sums below read along k.
    std::vector<double> a(size_t(m * k)), b(size_t(n * k));
    if (g.alpha != 0) {  // alpha = 0 reads neither A nor B
      for (int64_t i = 0; i < m; ++i)
        for (int64_t q = 0; q < k; ++q) a[size_t(i * k + q)] = g.op_a(i, q);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t q = 0; q < k; ++q) b[size_t(j * k + q)] = g.op_b(q, j);
    }
    const double abs_alpha = std::fabs(g.alpha);
    elements_.reserve(size_t(m * n));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Element e;
        e.at = g.at(i, j, g.ldc);
        DoubleDouble sum;  // Dot2: hi by two_sum, lo the sum of every error
        double squares = 0;
        if (g.alpha != 0) {
          const double *ai = a.data() + i * k, *bj = b.data() + j * k;
          for (int64_t q = 0; q < k; ++q) {
            const DoubleDouble p = two_product(ai[q], bj[q]);
            const DoubleDouble s = two_sum(sum.hi, p.hi);
            sum.hi = s.hi;
            sum.lo += s.lo + p.lo;
            squares += p.hi * p.hi;
          }
        }
        sum = two_sum(sum.hi, sum.lo);
        // alpha (hi + lo) + beta c0, c0 unread where beta = 0.
        const DoubleDouble scaled = two_product(g.alpha, sum.hi);
        DoubleDouble beta_c0;
        if (g.beta != 0) beta_c0 = two_product(g.beta, g.c0[size_t(e.at)]);
        const DoubleDouble total = two_sum(scaled.hi, beta_c0.hi);
        e.exact = two_sum(total.hi, total.lo + scaled.lo + g.alpha * sum.lo + beta_c0.lo);
        e.scale = abs_alpha * (std::fabs(sum.hi) + std::sqrt(squares)) + std::fabs(beta_c0.hi);
        elements_.push_back(e);
      }
    }
    const double u = std::ldexp(1.0, -53);
    fp64_ = u * (3 * std::sqrt(double(k)) + 2);
    floor_ = double(k + 2) * std::numeric_limits<double>::denorm_min() * (abs_alpha + 1);
  }

  // The exact value of element (i, j), and its bound.
  DoubleDouble exact(int64_t i, int64_t j) const { return elements_[index(i, j)].exact; }
  double fp64_bound(int64_t i, int64_t j) const { return bound(index(i, j)); }

  // c: a C laid out as the case's (g.c of a run of it).
  Ratios measure(const std::vector<double>& c) const {
    Ratios r;
    for (size_t e = 0; e < elements_.size(); ++e) {
      const double ratio = error(c, e) / bound(e);
      if (!(ratio <= 1)) {
        if (r.outside++ == 0) r.first_outside = int64_t(e);
      }
      if (!(ratio <= r.bound)) r.bound = std::isnan(ratio) ? INFINITY : ratio;
    }
    return r;
  }

  ::testing::AssertionResult check(const std::vector<double>& c) const {
    const Ratios r = measure(c);
    if (r.pass()) return ::testing::AssertionSuccess();
    const size_t e = size_t(r.first_outside);
    const Element& x = elements_[e];
    const int64_t i = r.first_outside / std::max<int64_t>(1, n_);
    const int64_t j = r.first_outside % std::max<int64_t>(1, n_);
    return ::testing::AssertionFailure()
           << r.outside << " element(s) outside the FP64 bound (first: C(" << i << "," << j
           << ") = " << to_string(c[size_t(x.at)]) << ", expected " << to_string(x.exact.hi)
           << " +- " << to_string(bound(e)) << ", off by " << to_string(error(c, e))
           << "; worst at " << r.bound << " times its bound)";
  }

 private:
  static std::string to_string(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
  }

  struct Element {
    int64_t at = 0;      // offset in C
    DoubleDouble exact;  // alpha sum a b + beta c0
    double scale = 0;    // T = |alpha| (|s| + Q) + |beta c0|
  };

  size_t index(int64_t i, int64_t j) const { return size_t(i * n_ + j); }
  double bound(size_t e) const { return fp64_ * elements_[e].scale + floor_; }
  // |C - exact|: C - hi is exact wherever C is within a factor 2 of hi (Sterbenz), and
  // an error beyond that is far outside any bound whatever its last bits.
  double error(const std::vector<double>& c, size_t e) const {
    const Element& x = elements_[e];
    return std::fabs((c[size_t(x.at)] - x.exact.hi) - x.exact.lo);
  }

  int64_t n_;
  std::vector<Element> elements_;
  double fp64_ = 0, floor_ = 0;
};

// Checks g.c against the double-double reference with the FP64 bound (DgemmReference
// above), and that everything of C outside the m x n part is exactly as it was.
inline ::testing::AssertionResult check_case(const DgemmCase& g) {
  return with_padding_check(DgemmReference(g).check(g.c), g);
}

inline tmm_status run_case(tmm_handle h, DgemmCase& g) {
  return tmm_dgemm(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a.data(), g.lda, g.b.data(),
                   g.ldb, g.beta, g.c.data(), g.ldc);
}

inline std::string describe(const DgemmCase& g) {
  char scalars[64];
  std::snprintf(scalars, sizeof scalars, " alpha=%g beta=%g", g.alpha, g.beta);
  return std::string(g.row() ? "row" : "col") + (g.ta == TMM_TRANS ? " T" : " N") +
         (g.tb == TMM_TRANS ? "T" : "N") + " m=" + std::to_string(g.m) +
         " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) + scalars +
         " pad=" + std::to_string(g.pad);
}

}  // namespace tmm_test
