// The FP64 bound and the double-double reference of tests/gemm_reference_f64.hpp
// (DgemmReference, check_case of a DgemmCase), tested on arithmetic simulated here so
// that a check can fail for the reason in its name. For k in {16, 17, 100, 333, 1000,
// 4096, 16384}, on 3 x 4 products in every layout and transpose (padded leading
// dimensions, alpha and beta varying), on both data sets (fill_case: uniform [-1, 1);
// fill_odd_integers: every product an odd integer of 26 or 27 bits):
//  - strict FP64 in seven orders (products rounded then added, forward and backward;
//    fused multiply-adds, forward and backward; in 8 interleaved lanes; in blocks of
//    64; pairwise) passes;
//  - the same with one product of one element's chain rounded to FP32 fails: on the
//    odd integers at the chain's first, middle and last product (and, from the exact
//    sums, at every product of every element), on uniform data at the chain's largest
//    product (a tiny product, or one that rounds almost exactly, can stay within the
//    bound: the test counts those at k = 16384);
//  - a result in FP32 fails; one from inputs rounded to FP32 fails on uniform data.
// The test prints the worst ratio of each to the bound. Then a dropped or doubled
// term, beta = 0 and alpha = 0, the reference against exact integer sums, and the
// padding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gemm_reference_f64.hpp"

namespace {

using tmm_test::DgemmCase;
using tmm_test::DgemmReference;
using tmm_test::show;
using tmm_test::Worst;

constexpr int64_t kRows = 3, kCols = 4;
constexpr int64_t kDepths[] = {16, 17, 100, 333, 1000, 4096, 16384};

enum class Data { Uniform, OddIntegers };
const char* data_name(Data d) { return d == Data::Uniform ? "uniform" : "odd integers"; }

// A kRows x kCols x k case in the layout and transposes of `variant` (0..7: bit 2 the
// layout, bit 1 A's transpose, bit 0 B's), padded by variant % 3.
DgemmCase make_case(int64_t k, int variant, double alpha, double beta, Data data, uint32_t seed) {
  DgemmCase g;
  g.layout = variant & 4 ? TMM_COL_MAJOR : TMM_ROW_MAJOR;
  g.ta = variant & 2 ? TMM_TRANS : TMM_NO_TRANS;
  g.tb = variant & 1 ? TMM_TRANS : TMM_NO_TRANS;
  g.m = kRows;
  g.n = kCols;
  g.k = k;
  g.alpha = alpha;
  g.beta = beta;
  g.pad = variant % 3;
  if (data == Data::Uniform) {
    tmm_test::fill_case(g, seed);
  } else {
    tmm_test::fill_odd_integers(g, seed);
  }
  return g;
}

// One element's chain: op(A)'s row i and op(B)'s column j, and the one product a
// faulty kernel would round to FP32 (fp32_at; none where negative).
struct Chain {
  std::vector<double> a, b;
  int64_t fp32_at = -1;
  Chain(const DgemmCase& g, int64_t i, int64_t j) : a(size_t(g.k)), b(size_t(g.k)) {
    for (int64_t q = 0; q < g.k; ++q) {
      a[size_t(q)] = g.op_a(i, q);
      b[size_t(q)] = g.op_b(q, j);
    }
  }
  int64_t k() const { return int64_t(a.size()); }
  // a b rounded to FP64 (its own statement: no compiler contracts it into the add
  // that follows, as ISO C++ builds do not contract across statements), or to FP32.
  double product(int64_t q) const {
    const double p = a[size_t(q)] * b[size_t(q)];
    return q == fp32_at ? double(float(p)) : p;
  }
  // acc + a b with one rounding; the FP32 product rounded first, then added.
  double fused(double acc, int64_t q) const {
    return q == fp32_at ? acc + product(q) : std::fma(a[size_t(q)], b[size_t(q)], acc);
  }
};

// The strict FP64 orders of a chain's sum.
enum class Order { Forward, Backward, FusedForward, FusedBackward, Lanes, Blocks, Pairwise };
constexpr Order kOrders[] = {Order::Forward,       Order::Backward, Order::FusedForward,
                             Order::FusedBackward, Order::Lanes,    Order::Blocks,
                             Order::Pairwise};
const char* order_name(Order o) {
  switch (o) {
    case Order::Forward:
      return "forward";
    case Order::Backward:
      return "backward";
    case Order::FusedForward:
      return "fused forward";
    case Order::FusedBackward:
      return "fused backward";
    case Order::Lanes:
      return "8 lanes";
    case Order::Blocks:
      return "blocks of 64";
    case Order::Pairwise:
      return "pairwise";
  }
  return "?";
}

// Pairwise: the halves summed apart, then added; runs of up to 8 in sequence.
double pairwise(const Chain& c, int64_t lo, int64_t hi) {
  if (hi - lo <= 8) {
    double acc = 0;
    for (int64_t q = lo; q < hi; ++q) acc = acc + c.product(q);
    return acc;
  }
  const int64_t mid = lo + (hi - lo) / 2;
  const double left = pairwise(c, lo, mid), right = pairwise(c, mid, hi);
  return left + right;
}

double strict_sum(const Chain& c, Order order) {
  const int64_t k = c.k();
  double acc = 0;
  switch (order) {
    case Order::Forward:
      for (int64_t q = 0; q < k; ++q) acc = acc + c.product(q);
      break;
    case Order::Backward:
      for (int64_t q = k - 1; q >= 0; --q) acc = acc + c.product(q);
      break;
    case Order::FusedForward:
      for (int64_t q = 0; q < k; ++q) acc = c.fused(acc, q);
      break;
    case Order::FusedBackward:
      for (int64_t q = k - 1; q >= 0; --q) acc = c.fused(acc, q);
      break;
    case Order::Lanes: {
      double lane[8] = {};
      for (int64_t q = 0; q < k; ++q) lane[q % 8] = c.fused(lane[q % 8], q);
      for (double x : lane) acc = acc + x;
      break;
    }
    case Order::Blocks:
      for (int64_t lo = 0; lo < k; lo += 64) {
        double block = 0;
        for (int64_t q = lo; q < std::min(k, lo + 64); ++q) block = c.fused(block, q);
        acc = acc + block;
      }
      break;
    case Order::Pairwise:
      acc = pairwise(c, 0, k);
      break;
  }
  return acc;
}

// alpha sum + beta c0 in FP64 (beta = 0 reads no C): fused after fused sums, else
// rounded twice.
double strict_element(const DgemmCase& g, int64_t i, int64_t j, double sum, Order order) {
  if (g.beta == 0) return g.alpha * sum;
  const double beta_c0 = g.beta * g.c0[size_t(g.at(i, j, g.ldc))];
  if (order == Order::FusedForward || order == Order::FusedBackward || order == Order::Lanes ||
      order == Order::Blocks) {
    return std::fma(g.alpha, sum, beta_c0);
  }
  const double scaled = g.alpha * sum;
  return scaled + beta_c0;
}

// The C of strict FP64 in `order`: a copy of g.c0 (its padding kept) with the m x n
// part computed.
std::vector<double> strict_result(const DgemmCase& g, Order order) {
  std::vector<double> c = g.c0;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j)
      c[size_t(g.at(i, j, g.ldc))] =
          strict_element(g, i, j, strict_sum(Chain(g, i, j), order), order);
  return c;
}

// The C of a case computed entirely in FP32 (inputs, products, sums, alpha and beta),
// in sequence.
std::vector<double> fp32_result(const DgemmCase& g) {
  std::vector<double> c = g.c0;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      float acc = 0;
      for (int64_t q = 0; q < g.k; ++q) {
        const float p = float(g.op_a(i, q)) * float(g.op_b(q, j));
        acc = acc + p;
      }
      double& out = c[size_t(g.at(i, j, g.ldc))];
      const float scaled = float(g.alpha) * acc;
      out = g.beta == 0 ? scaled : scaled + float(g.beta) * float(out);
    }
  }
  return c;
}

// The case with A and B rounded to FP32: strict FP64 of it is what a kernel that
// loads its inputs through FP32 computes.
DgemmCase with_fp32_inputs(DgemmCase g) {
  for (double& x : g.a) x = double(float(x));
  for (double& x : g.b) x = double(float(x));
  return g;
}

// alpha and beta of variant v at the i-th k: short and long alphas (1.5 is exact in
// any product, 0.1 rounds), beta 0 (C unread) at every variant in turn.
double alpha_of(int v, size_t i) {
  const double alphas[] = {1.0, -1.5, 0.75, 0.1};
  return alphas[(size_t(v) + i) % 4];
}
double beta_of(int v, size_t i) {
  const double betas[] = {0.0, 0.5, -1.25, 2.0};
  return betas[(size_t(v) / 2 + i) % 4];
}

TEST(ReferenceF64, StrictFp64PassesAndOneFp32ProductFailsAtEveryK) {
  Worst strict[2], one_fp32[2], any_fp32;  // pass, fail (min), fail (min)
  int64_t hidden = 0, positions = 0;       // uniform data's products the bound cannot see
  int64_t wrong = 0;
  std::string first_wrong;
  auto expect = [&](bool ok, const DgemmCase& g, const std::string& what) {
    if (!ok && wrong++ == 0) first_wrong = tmm_test::describe(g) + ": " + what;
  };
  for (Data data : {Data::Uniform, Data::OddIntegers}) {
    const int d = int(data);
    for (size_t ki = 0; ki < std::size(kDepths); ++ki) {
      const int64_t k = kDepths[ki];
      for (int v = 0; v < 8; ++v) {
        const DgemmCase g =
            make_case(k, v, alpha_of(v, ki), beta_of(v, ki), data, uint32_t(k * 8 + v));
        const DgemmReference ref(g);
        const std::string where = std::string(data_name(data)) + ", " + tmm_test::describe(g);
        for (size_t o = 0; o < std::size(kOrders); ++o) {
          const Order order = kOrders[o];
          std::vector<double> c = strict_result(g, order);
          const double ratio = ref.measure(c).bound;
          strict[d].max(ratio, k, std::string(order_name(order)) + ", " + where);
          expect(ratio <= 1, g, std::string("strict FP64 (") + order_name(order) + ") fails");

          // One element's chain again, one product of it rounded to FP32.
          const int64_t i = int64_t(o + size_t(v)) % kRows, j = int64_t(o) % kCols;
          Chain chain(g, i, j);
          std::vector<int64_t> at = {0, k / 2, k - 1};
          if (data == Data::Uniform) {  // the largest product: a tiny one can hide
            int64_t largest = 0;
            for (int64_t q = 1; q < k; ++q) {
              if (std::fabs(chain.a[size_t(q)] * chain.b[size_t(q)]) >
                  std::fabs(chain.a[size_t(largest)] * chain.b[size_t(largest)])) {
                largest = q;
              }
            }
            at = {largest};
          }
          const double strict_value = c[size_t(g.at(i, j, g.ldc))];
          for (int64_t q : at) {
            chain.fp32_at = q;
            c[size_t(g.at(i, j, g.ldc))] = strict_element(g, i, j, strict_sum(chain, order), order);
            const double fp32_ratio = ref.measure(c).bound;
            one_fp32[d].min(fp32_ratio, k,
                            std::string(order_name(order)) + ", product " + std::to_string(q) +
                                " of C(" + std::to_string(i) + "," + std::to_string(j) + "), " +
                                where);
            expect(fp32_ratio > 1, g,
                   std::string("one FP32 product (") + order_name(order) + ", " +
                       std::to_string(q) + ") passes");
          }
          c[size_t(g.at(i, j, g.ldc))] = strict_value;
        }

        // Every product of every element, from the exact value: the result with
        // product q rounded is the exact one moved by alpha (fl32(p) - p), up to the
        // roundings strict FP64 makes anyway (on the odd integers only alpha's and beta's).
        for (int64_t i = 0; i < g.m; ++i) {
          for (int64_t j = 0; j < g.n; ++j) {
            const Chain chain(g, i, j);
            const double bound = ref.fp64_bound(i, j);
            double smallest = INFINITY;
            for (int64_t q = 0; q < k; ++q) {
              const double p = chain.a[size_t(q)] * chain.b[size_t(q)];
              const double moved = std::fabs(g.alpha * (double(float(p)) - p)) / bound;
              smallest = std::min(smallest, moved);
              if (data == Data::Uniform && k == kDepths[std::size(kDepths) - 1]) {
                ++positions;
                hidden += moved <= 1;
              }
            }
            if (data == Data::OddIntegers) {
              any_fp32.min(smallest, k,
                           "C(" + std::to_string(i) + "," + std::to_string(j) + "), " + where);
              expect(smallest > 1, g, "an FP32-rounded product within the bound");
            }
          }
        }
      }
    }
  }
  std::printf(
      "Worst ratio to the FP64 bound over k in {16, ..., 16384} (passes at <= 1, fails at > 1):\n"
      "  strict FP64, uniform (max)                        %s\n"
      "  strict FP64, odd integers (max)                   %s\n"
      "  one FP32 product, uniform, largest (min)          %s\n"
      "  one FP32 product, odd integers (min)              %s\n"
      "  any one FP32 product, odd integers, exact (min)   %s\n"
      "  uniform data at k = 16384: %lld of %lld products would move C by no more than the "
      "bound if rounded to FP32\n",
      show(strict[0]).c_str(), show(strict[1]).c_str(), show(one_fp32[0]).c_str(),
      show(one_fp32[1]).c_str(), show(any_fp32).c_str(), static_cast<long long>(hidden),
      static_cast<long long>(positions));
  EXPECT_EQ(wrong, 0) << "first: " << first_wrong;
}

// A result in FP32 fails on either data; one from inputs rounded to FP32 (strict FP64
// after) fails on uniform data and passes on the odd integers, which are FP32 values:
// the reason the suite needs both.
TEST(ReferenceF64, AResultInFp32OrFromFp32InputsFails) {
  Worst fp32[2], inputs;
  for (Data data : {Data::Uniform, Data::OddIntegers}) {
    for (size_t ki = 0; ki < std::size(kDepths); ++ki) {
      const int64_t k = kDepths[ki];
      const int v = int(ki % 8);
      const DgemmCase g = make_case(k, v, alpha_of(v, ki), beta_of(v, ki), data, uint32_t(k));
      SCOPED_TRACE(std::string(data_name(data)) + ", " + tmm_test::describe(g));
      const DgemmReference ref(g);
      const double in_fp32 = ref.measure(fp32_result(g)).bound;
      fp32[int(data)].min(in_fp32, k, data_name(data));
      EXPECT_GT(in_fp32, 1) << "a result in FP32 passes";
      const double from_inputs =
          ref.measure(strict_result(with_fp32_inputs(g), Order::Forward)).bound;
      if (data == Data::Uniform) {
        inputs.min(from_inputs, k, data_name(data));
        EXPECT_GT(from_inputs, 1) << "a result from FP32 inputs passes";
      } else {
        EXPECT_LE(from_inputs, 1) << "odd integers are FP32 values";
      }
    }
  }
  std::printf(
      "Least ratio to the FP64 bound (fails at > 1):\n"
      "  FP32 result, uniform              %s\n"
      "  FP32 result, odd integers         %s\n"
      "  from FP32 inputs, uniform         %s\n",
      show(fp32[0]).c_str(), show(fp32[1]).c_str(), show(inputs).c_str());
}

// One term of k dropped from one element, or counted twice, fails at k = 16 and 16384.
TEST(ReferenceF64, ADroppedOrDoubledTermFails) {
  for (Data data : {Data::Uniform, Data::OddIntegers}) {
    for (int64_t k : {int64_t(16), int64_t(16384)}) {
      DgemmCase g = make_case(k, 5, -1.5, 0.5, data, 7);
      g.c = strict_result(g, Order::FusedForward);
      ASSERT_TRUE(tmm_test::check_case(g)) << "as computed";
      const int64_t i = 1, j = 2, q = k / 2;
      const double term = g.alpha * g.op_a(i, q) * g.op_b(q, j);
      for (double change : {-term, term}) {
        SCOPED_TRACE(std::string(data_name(data)) + " k " + std::to_string(k) +
                     (change < 0 ? " dropped" : " doubled"));
        DgemmCase changed = g;
        double& c = changed.c[size_t(g.at(i, j, g.ldc))];
        c = c + change;
        EXPECT_FALSE(tmm_test::check_case(changed));
      }
    }
  }
}

// beta = 0 never reads C: C holds NaN (fill_case) and a result that ignores it passes;
// one that multiplies it by 0 (NaN) fails.
TEST(ReferenceF64, BetaZeroWithNanInCPasses) {
  for (Data data : {Data::Uniform, Data::OddIntegers}) {
    DgemmCase g = make_case(333, 3, 0.75, 0.0, data, 11);
    ASSERT_TRUE(std::isnan(g.c0[size_t(g.at(0, 0, g.ldc))]));
    g.c = strict_result(g, Order::Pairwise);
    EXPECT_TRUE(tmm_test::check_case(g)) << data_name(data);
    DgemmCase read = g;
    double& c = read.c[size_t(g.at(2, 1, g.ldc))];
    c = c + 0.0 * g.c0[size_t(g.at(2, 1, g.ldc))];
    EXPECT_FALSE(tmm_test::check_case(read)) << data_name(data);
  }
}

// alpha = 0 gives beta C without reading A or B (NaN here): beta c0 passes, c0 itself
// or a result that multiplies A B by 0 fails; with beta = 0 too, C is 0.
TEST(ReferenceF64, AlphaZeroGivesBetaC) {
  DgemmCase g = make_case(100, 6, 0.0, -1.25, Data::Uniform, 13);
  std::fill(g.a.begin(), g.a.end(), NAN);
  std::fill(g.b.begin(), g.b.end(), NAN);
  g.c = g.c0;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) g.c[size_t(g.at(i, j, g.ldc))] *= g.beta;
  EXPECT_TRUE(tmm_test::check_case(g));
  DgemmCase unscaled = g;
  unscaled.c = g.c0;
  EXPECT_FALSE(tmm_test::check_case(unscaled));
  DgemmCase read = g;
  read.c[size_t(g.at(1, 3, g.ldc))] += 0.0 * g.op_a(1, 0) * g.op_b(0, 3);
  EXPECT_FALSE(tmm_test::check_case(read));

  g.beta = 0;
  std::fill(g.c0.begin(), g.c0.end(), NAN);  // the padding's sentinel too: compared bitwise
  g.c = g.c0;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) g.c[size_t(g.at(i, j, g.ldc))] = 0.0;
  EXPECT_TRUE(tmm_test::check_case(g));
}

// The reference is exact where FP64 sums are not: products of odd integers of 27 bits
// (53 or 54 bits each, beyond FP64's 53 at times) summed over k = 256 (sums up to
// 2^62) are exact in int64, and hi + lo equals them; FP64 sums in sequence miss at
// most elements, by less than the bound.
TEST(ReferenceF64, TheReferenceIsExactWhereFp64SumsAreNot) {
  DgemmCase g = make_case(256, 0, 1.0, 0.0, Data::Uniform, 17);
  std::mt19937 rng(17);
  std::uniform_int_distribution<int64_t> odd(0, (int64_t(1) << 25) - 1);
  std::uniform_int_distribution<int> sign(0, 1);
  for (double& x : g.a)
    x = (sign(rng) ? -1.0 : 1.0) * double((int64_t(1) << 26) + 2 * odd(rng) + 1);
  for (double& x : g.b)
    x = (sign(rng) ? -1.0 : 1.0) * double((int64_t(1) << 26) + 2 * odd(rng) + 1);
  const DgemmReference ref(g);
  const std::vector<double> forward = strict_result(g, Order::Forward);
  int inexact = 0;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      int64_t exact = 0;
      for (int64_t q = 0; q < g.k; ++q) exact += int64_t(g.op_a(i, q)) * int64_t(g.op_b(q, j));
      const tmm_test::DoubleDouble r = ref.exact(i, j);
      EXPECT_EQ(int64_t(r.hi) + int64_t(r.lo), exact) << "C(" << i << "," << j << ")";
      EXPECT_EQ(r.hi, double(exact)) << "hi is the rounded value";
      inexact += int64_t(forward[size_t(g.at(i, j, g.ldc))]) != exact;
    }
  }
  EXPECT_GE(inexact, kRows * kCols / 2) << "FP64 sums were exact: the test shows nothing";
  g.c = forward;
  EXPECT_TRUE(tmm_test::check_case(g));
}

// C's padding (leading dimensions past the matrix) must be as it was.
TEST(ReferenceF64, AWrittenPaddingElementFails) {
  DgemmCase g = make_case(50, 2, 1.0, 0.5, Data::Uniform, 9);
  ASSERT_EQ(g.pad, 2);
  g.c = strict_result(g, Order::Forward);
  ASSERT_TRUE(tmm_test::check_case(g));
  g.c[size_t(g.ldc - 1)] = 0.0;  // the last of the first row's (or column's) padding
  const ::testing::AssertionResult r = tmm_test::check_case(g);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("1 padding element(s) written"), std::string::npos)
      << r.message();
}

}  // namespace
