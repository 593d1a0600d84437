// The error bounds of tests/gemm_reference.hpp (tmm_test::Reference, check_case), tested
// on arithmetic simulated here, so that a check can fail for the reason in its name:
// for every k from 16 to 16384, on 4 x 4 products of the suite's data (fill_case:
// uniform [-1, 1) inputs; for one k in 8 exponents spread over [-16, 16], as
// fill_exponents gives them; alpha and beta vary with k),
//  - strict FP32 in five orders (products rounded then added in sequence; fused
//    multiply-adds in sequence; in 8 interleaved lanes; split-K in 4 slices; pairwise)
//    passes the FP32 and FP32_ACCURATE bounds and fails the TF32 check (its proof that
//    the inputs were rounded);
//  - TF32 (inputs rounded to TF32, ties away or to even, products summed in FP32)
//    fails the FP32 and FP32_ACCURATE bounds and passes the TF32 check;
//  - 3xTF32 (the split of tf32x3_mma_kernel.cu, sums in FP32) passes FP32_ACCURATE;
// and for one k in 32, the tensor cores' truncating sums (the model of
// Fasi et al. 2021, "Numerical behavior of NVIDIA tensor cores": the addends aligned to
// the largest and cut, the sum cut to FP32; here in steps of 4 products): TF32 summed
// so over the whole of k passes the TF32 check, and 3xTF32 summed so in tiles of 32
// or 96 of k (the mma.sync and wgmma kernels) passes FP32_ACCURATE. The test prints
// the worst ratio of each to its bound. Then a dropped term, exact data and the
// padding, at one k each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "gemm_reference.hpp"

namespace {

using tmm_test::Arithmetic;
using tmm_test::GemmCase;
using tmm_test::Reference;
using tmm_test::round_to_tf32;
using tmm_test::show;
using tmm_test::Worst;

constexpr int64_t kRows = 4, kCols = 4;

// A row-major NN case of kRows x kCols x k with the suite's data: uniform [-1, 1)
// (fill_case), or A and B with exponents spread over [-16, 16] (fill_exponents, as
// test_tensor_cores's long sums).
GemmCase make_case(int64_t k, float alpha, float beta, uint32_t seed, bool spread = false) {
  GemmCase g;
  g.m = kRows;
  g.n = kCols;
  g.k = k;
  g.alpha = alpha;
  g.beta = beta;
  tmm_test::fill_case(g, seed);
  if (spread) {
    std::mt19937 rng(seed);
    tmm_test::fill_exponents(g.a, -16, 16, rng);
    tmm_test::fill_exponents(g.b, -16, 16, rng);
  }
  return g;
}

// op(A) (kRows x k) and op(B) (k x kCols), row-major: the sums below run along k with
// the kCols columns side by side (independent sums, which the compiler vectorizes).
struct Operands {
  int64_t k = 0;
  std::vector<float> a, b;
  explicit Operands(const GemmCase& g) : k(g.k), a(size_t(g.m * g.k)), b(size_t(g.k * g.n)) {
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t q = 0; q < k; ++q) a[size_t(i * k + q)] = float(g.op_a(i, q));
    for (int64_t q = 0; q < k; ++q)
      for (int64_t j = 0; j < g.n; ++j) b[size_t(q * g.n + j)] = float(g.op_b(q, j));
  }
  // The same, each input passed through f.
  template <class F>
  Operands map(F f) const {
    Operands o = *this;
    for (float& x : o.a) x = f(x);
    for (float& x : o.b) x = f(x);
    return o;
  }
  const float* row(int64_t i) const { return a.data() + i * k; }
  float at_b(int64_t q, int64_t j) const { return b[size_t(q * kCols + j)]; }
};

// The product a b rounded to FP32 (exact in FP64, then one rounding), and acc + a b
// with one rounding (a fused multiply-add; through FP64, whose own rounding of the
// sum changes the result only on rare double-rounding ties).
inline float product(float a, float b) { return float(double(a) * double(b)); }
inline float fused(float acc, float a, float b) {
  return float(double(acc) + double(a) * double(b));
}

// acc[j] (+)= sum over q in [lo, hi) of a[q] b(q, j), each add by `add`.
template <class Add>
void sum_range(const Operands& o, int64_t i, int64_t lo, int64_t hi, float* acc, Add add) {
  const float* a = o.row(i);
  const float* b = o.b.data();
  for (int64_t q = lo; q < hi; ++q)
    for (int64_t j = 0; j < kCols; ++j) acc[j] = add(acc[j], a[q], b[q * kCols + j]);
}

// The FP32 orders: the sums of row i by each column, into sum[kCols].
enum class Order { Sequential, Fused, Lanes, Slices, Pairwise };
const char* order_name(Order o) {
  switch (o) {
    case Order::Sequential:
      return "sequential";
    case Order::Fused:
      return "fused";
    case Order::Lanes:
      return "8 lanes";
    case Order::Slices:
      return "4 slices";
    case Order::Pairwise:
      return "pairwise";
  }
  return "?";
}

// Pairwise: the halves summed apart, then added; runs of up to 8 in sequence.
void pairwise(const Operands& o, int64_t i, int64_t lo, int64_t hi, float* sum) {
  if (hi - lo <= 8) {
    std::fill(sum, sum + kCols, 0.0f);
    sum_range(o, i, lo, hi, sum, [](float c, float a, float b) { return c + product(a, b); });
    return;
  }
  float left[kCols], right[kCols];
  const int64_t mid = lo + (hi - lo) / 2;
  pairwise(o, i, lo, mid, left);
  pairwise(o, i, mid, hi, right);
  for (int64_t j = 0; j < kCols; ++j) sum[j] = left[j] + right[j];
}

void fp32_sums(const Operands& o, int64_t i, Order order, float* sum) {
  const int64_t k = o.k;
  float acc[kCols] = {};
  switch (order) {
    case Order::Sequential:
      sum_range(o, i, 0, k, acc, [](float c, float a, float b) { return c + product(a, b); });
      break;
    case Order::Fused:
      sum_range(o, i, 0, k, acc, fused);
      break;
    case Order::Lanes: {
      float lane[8][kCols] = {};
      const float* a = o.row(i);
      for (int64_t q = 0; q < k; ++q)
        for (int64_t j = 0; j < kCols; ++j)
          lane[q % 8][j] = fused(lane[q % 8][j], a[q], o.at_b(q, j));
      for (int l = 0; l < 8; ++l)
        for (int64_t j = 0; j < kCols; ++j) acc[j] += lane[l][j];
      break;
    }
    case Order::Slices: {
      const int64_t len = (k + 3) / 4;
      for (int64_t lo = 0; lo < k; lo += len) {
        float part[kCols] = {};
        sum_range(o, i, lo, std::min(k, lo + len), part, fused);
        for (int64_t j = 0; j < kCols; ++j) acc[j] += part[j];
      }
      break;
    }
    case Order::Pairwise:
      pairwise(o, i, 0, k, acc);
      break;
  }
  std::copy(acc, acc + kCols, sum);
}

// C = alpha sum + beta c0 in FP32, into a copy of g.c.
struct Result {
  const GemmCase& g;
  std::vector<float> c;
  explicit Result(const GemmCase& g) : g(g), c(g.c) {}
  void set(int64_t i, const float* sum) {
    for (int64_t j = 0; j < kCols; ++j) {
      float r = g.alpha * sum[j];
      if (g.beta != 0.0f) r = r + g.beta * g.c0[size_t(g.at(i, j, g.ldc))];
      c[size_t(g.at(i, j, g.ldc))] = r;
    }
  }
};

// 3xTF32's split of x: big = x rounded to TF32 (ties away), small = the rest times
// 2^11, rounded the same way (tf32x3_mma_kernel.cu).
float big_of(float x) { return round_to_tf32(x); }
float small_of(float x) { return round_to_tf32((x - round_to_tf32(x)) * 2048.0f); }

// 3xTF32 with FP32 sums: each product a_big b_big + 2^-11 (a_big b_small + a_small
// b_big) (exact on tensor cores), added in sequence.
void x3_sums(const Operands& big, const Operands& small, int64_t i, float* sum) {
  float acc[kCols] = {};
  const float *ab = big.row(i), *as = small.row(i);
  for (int64_t q = 0; q < big.k; ++q) {
    for (int64_t j = 0; j < kCols; ++j) {
      const double bb = big.at_b(q, j), bs = small.at_b(q, j);
      acc[j] = float(double(acc[j]) + double(ab[q]) * bb +
                     (double(ab[q]) * bs + double(as[q]) * bb) / 2048.0);
    }
  }
  std::copy(acc, acc + kCols, sum);
}

// x cut to FP32 (toward zero).
double cut_to_fp32(double x) {
  if (x == 0) return 0;
  const double unit = std::ldexp(1.0, std::ilogb(x) - 23);
  return std::trunc(x / unit) * unit;
}

// One step of a tensor core's sum: c + p[0] + ... + p[n - 1] (exact products), the
// addends aligned to the largest and cut to its 24 bits, the sum cut to FP32.
double tensor_core_add(double c, const double* p, int n) {
  double largest = std::fabs(c);
  for (int l = 0; l < n; ++l) largest = std::max(largest, std::fabs(p[l]));
  if (largest == 0) return 0;
  const double unit = std::ldexp(1.0, std::ilogb(largest) - 23);
  double s = std::trunc(c / unit) * unit;
  for (int l = 0; l < n; ++l) s += std::trunc(p[l] / unit) * unit;
  return cut_to_fp32(s);
}

constexpr int kStep = 4;  // products per tensor-core step

// TF32 on tensor cores: the rounded products summed over the whole of k in one
// truncating accumulator.
float truncating_tf32_sum(const Operands& t, int64_t i, int64_t j) {
  double acc = 0, p[kStep];
  for (int64_t q = 0; q < t.k; q += kStep) {
    const int n = int(std::min<int64_t>(kStep, t.k - q));
    for (int l = 0; l < n; ++l) p[l] = double(t.row(i)[q + l]) * t.at_b(q + l, j);
    acc = tensor_core_add(acc, p, n);
  }
  return float(acc);
}

// 3xTF32 as the kernels sum it: the big products of each tile of `tile` in k in a
// fresh truncating accumulator, added to acc by Fast2Sum; the corrections and 2^11
// times each Fast2Sum's error in corr (truncating, over the whole of k); the result
// acc + 2^-11 corr.
float truncating_x3_sum(const Operands& big, const Operands& small, int64_t i, int64_t j,
                        int64_t tile) {
  float acc = 0;
  double corr = 0, p[kStep];
  for (int64_t lo = 0; lo < big.k; lo += tile) {
    const int64_t hi = std::min(big.k, lo + tile);
    double sum = 0;
    for (int64_t q = lo; q < hi; q += kStep) {
      const int n = int(std::min<int64_t>(kStep, hi - q));
      for (int l = 0; l < n; ++l) p[l] = double(big.row(i)[q + l]) * big.at_b(q + l, j);
      sum = tensor_core_add(sum, p, n);
      for (int l = 0; l < n; ++l) p[l] = double(big.row(i)[q + l]) * small.at_b(q + l, j);
      corr = tensor_core_add(corr, p, n);
      for (int l = 0; l < n; ++l) p[l] = double(small.row(i)[q + l]) * big.at_b(q + l, j);
      corr = tensor_core_add(corr, p, n);
    }
    const float t = float(sum), s = acc + t, e = t - (s - acc);
    acc = s;
    corr = double(float(corr + double(e * 2048.0f)));
  }
  return std::fma(float(corr), 1.0f / 2048.0f, acc);
}

TEST(Reference, BoundsSeparateFp32FromTf32AtEveryKFrom16To16384) {
#if defined(__GLIBC__)
  // Each k allocates and frees operands of up to 256 KiB: without this glibc gives
  // the memory back to the system and faults it in again every time, which took
  // more time than the sums.
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
#endif
  const int64_t first = 16, last = 16384;
  Worst fp32_pass, fp32_x3_pass, fp32_proof_fail;  // strict FP32: pass, pass, fail
  Worst tf32_fp32_fail, tf32_x3_fail, tf32_pass, tf32_near, tf32_proof;
  Worst x3_pass, tc_tf32_pass, tc_x3_pass;
  int64_t wrong = 0;  // cases a check decided wrongly
  std::string first_wrong;
  auto expect = [&](bool ok, int64_t k, const std::string& what) {
    if (!ok && wrong++ == 0) first_wrong = "k = " + std::to_string(k) + ": " + what;
  };
  for (int64_t k = first; k <= last; ++k) {
    const float alpha = k % 3 == 0 ? 1.0f : k % 3 == 1 ? -1.5f : 0.75f;
    const float beta = k % 3 == 0 ? 0.0f : k % 3 == 1 ? 0.5f : 1.25f;
    const bool spread = k % 8 == 4;
    const std::string data = spread ? ", exponents -16..16" : "";
    const GemmCase g = make_case(k, alpha, beta, uint32_t(k), spread);
    const Reference ref(g);
    const Operands o(g);

    // Sequential (the largest errors) at every k, and one other order in turn.
    const Order others[] = {Order::Fused, Order::Lanes, Order::Slices, Order::Pairwise};
    for (Order order : {Order::Sequential, others[k % 4]}) {
      Result r(g);
      for (int64_t i = 0; i < kRows; ++i) {
        float sum[kCols];
        fp32_sums(o, i, order, sum);
        r.set(i, sum);
      }
      const std::string name = order_name(order) + data;
      const double fp32 = ref.measure(r.c, Arithmetic::Fp32).bound;
      const double x3 = ref.measure(r.c, Arithmetic::Fp32Accurate).bound;
      const Reference::Ratios as_tf32 = ref.measure(r.c, Arithmetic::Tf32);
      fp32_pass.max(fp32, k, name);
      fp32_x3_pass.max(x3, k, name);
      fp32_proof_fail.min(as_tf32.proof, k, name);
      expect(fp32 <= 1, k, std::string("strict FP32 (") + name + ") outside the FP32 bound");
      expect(x3 <= 1, k, std::string("strict FP32 (") + name + ") outside FP32_ACCURATE's");
      expect(as_tf32.proof > 1 && !as_tf32.pass(), k,
             std::string("strict FP32 (") + name + ") passes as TF32");
    }

    const bool even = k % 2 == 1;  // tie rule: away from zero, or to even
    const std::string rule = (even ? "ties to even" : "ties away") + data;
    const Operands t = o.map([even](float x) { return round_to_tf32(x, even); });
    {
      Result r(g);
      for (int64_t i = 0; i < kRows; ++i) {
        float sum[kCols];
        fp32_sums(t, i, Order::Fused, sum);
        r.set(i, sum);
      }
      const double fp32 = ref.measure(r.c, Arithmetic::Fp32).bound;
      const double x3 = ref.measure(r.c, Arithmetic::Fp32Accurate).bound;
      const Reference::Ratios tf32 = ref.measure(r.c, Arithmetic::Tf32);
      tf32_fp32_fail.min(fp32, k, rule);
      tf32_x3_fail.min(x3, k, rule);
      tf32_pass.max(tf32.bound, k, rule);
      tf32_near.max(tf32.near, k, rule);
      tf32_proof.max(tf32.proof, k, rule);
      expect(fp32 > 1, k, "TF32 within the FP32 bound");
      expect(x3 > 1, k, "TF32 within FP32_ACCURATE's bound");
      expect(tf32.pass(), k, "TF32 fails the TF32 check");
    }

    const Operands big = o.map(big_of), small = o.map(small_of);
    {
      Result r(g);
      for (int64_t i = 0; i < kRows; ++i) {
        float sum[kCols];
        x3_sums(big, small, i, sum);
        r.set(i, sum);
      }
      const double x3 = ref.measure(r.c, Arithmetic::Fp32Accurate).bound;
      x3_pass.max(x3, k, "FP32 sums" + data);
      expect(x3 <= 1, k, "3xTF32 outside FP32_ACCURATE's bound");
    }

    if (k % 64 == 4 || k % 64 == 16) {  // the tensor cores' truncating sums (slow to simulate)
      const int64_t tile = k / 64 % 2 ? 32 : 96;
      Result tc(g), x3(g);
      for (int64_t i = 0; i < kRows; ++i) {
        float tc_sum[kCols], x3_sum[kCols];
        for (int64_t j = 0; j < kCols; ++j) {
          tc_sum[j] = truncating_tf32_sum(t, i, j);
          x3_sum[j] = truncating_x3_sum(big, small, i, j, tile);
        }
        tc.set(i, tc_sum);
        x3.set(i, x3_sum);
      }
      const Reference::Ratios tf32 = ref.measure(tc.c, Arithmetic::Tf32);
      tc_tf32_pass.max(std::max({tf32.bound, tf32.near, tf32.proof}), k, rule);
      expect(tf32.pass(), k, "TF32 with truncating sums fails the TF32 check");
      const double x3_ratio = ref.measure(x3.c, Arithmetic::Fp32Accurate).bound;
      tc_x3_pass.max(x3_ratio, k, (tile == 32 ? "tiles of 32" : "tiles of 96") + data);
      expect(x3_ratio <= 1, k, "3xTF32 with truncating sums outside FP32_ACCURATE's bound");
    }
  }
  std::printf(
      "Worst ratio to the bound over k = %lld..%lld (passes at <= 1, fails at > 1):\n"
      "  strict FP32 against FP32 (max)                 %s\n"
      "  strict FP32 against FP32_ACCURATE (max)        %s\n"
      "  strict FP32, TF32 rounding proof (min, fails)  %s\n"
      "  TF32 against FP32 (min, fails)                 %s\n"
      "  TF32 against FP32_ACCURATE (min, fails)        %s\n"
      "  TF32 against the TF32 bound (max)              %s\n"
      "  TF32 near the rounded product (max)            %s\n"
      "  TF32 rounding proof (max)                      %s\n"
      "  3xTF32 against FP32_ACCURATE (max)             %s\n"
      "  tensor-core TF32, all three checks (max)       %s\n"
      "  tensor-core 3xTF32 against FP32_ACCURATE (max) %s\n",
      static_cast<long long>(first), static_cast<long long>(last), show(fp32_pass).c_str(),
      show(fp32_x3_pass).c_str(), show(fp32_proof_fail).c_str(), show(tf32_fp32_fail).c_str(),
      show(tf32_x3_fail).c_str(), show(tf32_pass).c_str(), show(tf32_near).c_str(),
      show(tf32_proof).c_str(), show(x3_pass).c_str(), show(tc_tf32_pass).c_str(),
      show(tc_x3_pass).c_str());
  EXPECT_EQ(wrong, 0) << "first: " << first_wrong;
}

// The C of a case computed here: strict FP32 in sequence, or TF32 (ties away).
std::vector<float> computed(const GemmCase& g, bool tf32) {
  const Operands o = tf32 ? Operands(g).map([](float x) { return round_to_tf32(x); }) : Operands(g);
  Result r(g);
  for (int64_t i = 0; i < g.m; ++i) {
    float sum[kCols];
    fp32_sums(o, i, Order::Sequential, sum);
    r.set(i, sum);
  }
  return r.c;
}

// One term of k dropped from one element, or counted twice: every check fails it, at
// k = 16384 too (a term is about 1/3 there, the bounds about 2^-12 of the element).
TEST(Reference, ADroppedOrDoubledTermFailsEveryArithmetic) {
  for (int64_t k : {int64_t(100), int64_t(16384)}) {
    GemmCase g = make_case(k, 1.0f, 0.0f, 7);
    const int64_t q = k / 2, i = 1, j = 2;
    const double term = g.op_a(i, q) * g.op_b(q, j);
    for (double change : {-term, term}) {
      for (bool tf32 : {false, true}) {
        g.c = computed(g, tf32);
        const Arithmetic arithmetic = tf32 ? Arithmetic::Tf32 : Arithmetic::Fp32;
        SCOPED_TRACE("k " + std::to_string(k) + (tf32 ? " TF32" : " FP32") +
                     (change < 0 ? " dropped" : " doubled"));
        ASSERT_TRUE(tmm_test::check_case(g, arithmetic)) << "as computed";
        float& c = g.c[size_t(g.at(i, j, g.ldc))];
        c = float(double(c) + change);
        EXPECT_FALSE(tmm_test::check_case(g, arithmetic));
        if (!tf32) {
          EXPECT_FALSE(tmm_test::check_case(g, Arithmetic::Fp32Accurate));
        }
      }
    }
  }
}

// Small integers are exact in every arithmetic: C = C_tf32 = C_exact passes all three
// checks (the proof that inputs were rounded has nothing to show there).
TEST(Reference, ExactDataPassesEveryArithmetic) {
  GemmCase g = make_case(1000, 1.0f, 1.0f, 3);
  tmm_test::fill_exact(g.a, 4);
  tmm_test::fill_exact(g.b, 5);
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double dot = g.c0[size_t(g.at(i, j, g.ldc))];
      for (int64_t q = 0; q < g.k; ++q) dot += g.op_a(i, q) * g.op_b(q, j);
      g.c[size_t(g.at(i, j, g.ldc))] = float(dot);
    }
  }
  for (Arithmetic a : {Arithmetic::Fp32, Arithmetic::Fp32Accurate, Arithmetic::Tf32})
    EXPECT_TRUE(tmm_test::check_case(g, a)) << int(a);
}

// C's padding (leading dimensions past the matrix) must be as it was.
TEST(Reference, AWrittenPaddingElementFails) {
  GemmCase g;
  g.m = kRows;
  g.n = kCols;
  g.k = 50;
  g.pad = 2;
  tmm_test::fill_case(g, 9);
  g.c = computed(g, false);
  ASSERT_TRUE(tmm_test::check_case(g));
  g.c[size_t(g.ldc - 1)] = 0.0f;  // the last of row 0's padding
  const ::testing::AssertionResult r = tmm_test::check_case(g);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("1 padding element(s) written"), std::string::npos)
      << r.message();
}

}  // namespace
