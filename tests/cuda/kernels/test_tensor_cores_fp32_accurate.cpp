// test_tensor_cores, FP32_ACCURATE's own tests (3xTF32 with error correction,
// lib/cuda/kernels/mma/tf32x3_mma_kernel.cu and sm90/tf32x3_wgmma_kernel.cu): k = 16384,
// where it must be within 1.1 times strict FP32's error (3xTF32 summed in one
// tensor-core accumulator is many times worse there); exponents spread over
// 2^-16..2^16; what the header documents at the ends of the range (inputs around
// 2^-120 keep FP32 accuracy, inputs within 2^-11 of FLT_MAX become Inf); specials; the
// Hopper kernel's workspace where it does not fit. The tests FP32_ACCURATE shares with
// TF32: test_tensor_cores.cpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tensor_cores_fixture.hpp"

namespace tensor_cores_test {
namespace {

using tmm_test::fill_exponents;

// The correction that makes the mode: at k = 16384 the error must be within 1.1
// times strict FP32's on the same inputs (BLOCKED, whatever split-K the planner
// takes). Tensor cores truncate as they add, so 3xTF32 summed over the whole of k in
// one mma accumulator is about 12 times worse there (measured with cuBLAS on the
// H100); these kernels add each tile's sum (mma.sync) or each fold's (wgmma, 96 in k)
// in FP32 and keep the rounding errors. Both tiles, forced (64: the 64 x 64 row; 128:
// the 128 x 64 row, on Hopper the wgmma kernel), on uniform [-1, 1] inputs and on
// inputs whose exponents spread over 2^-16..2^16. AUTO itself runs strict FP32 at this
// shape (small C, k deep: faster), which must then be the strict call itself; under
// the sanitizer (k = 1024) AUTO runs the 3xTF32 rows too, but strict on Hopper (a small
// product there).
TEST_F(Fp32Accurate, LongSumsAreAsAccurateAsStrictFp32) {
  if (!x3_)
    GTEST_SKIP()
        << "no 3xTF32 kernel on this device (no TF32 tensor cores, or TF32 at the FP32 rate)";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (bool spread : {false, true}) {
    GemmCase g;
    g.m = g.n = 256;
    g.k = tmm_test::under_sanitizer() ? 1024 : 16384;
    tmm_test::fill_case(g, seed + spread);
    if (spread) {
      std::mt19937 rng(seed);
      fill_exponents(g.a, -16, 16, rng);
      fill_exponents(g.b, -16, 16, rng);
    }
    SCOPED_TRACE(spread ? "exponents in [-16, 16]" : "uniform [-1, 1]");
    const Exact x = exact_of(g);
    // The direct path: tile 128 runs the Hopper kernel there (the streamed path's
    // chunks run the mma.sync one).
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_AUTO), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_tile_size(h_, 0), TMM_SUCCESS);
    const GemmCase strict = strict_run(g, [&](GemmCase& s) { return tmm_test::run_case(h_, s); });
    const double e_strict = error_against(strict, x, false);
    for (int tile : {0, 64, 128}) {
      ASSERT_EQ(tmm_set_algorithm(h_, tile == 0 ? TMM_ALGO_AUTO : TMM_ALGO_BLOCKED), TMM_SUCCESS);
      ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
      GemmCase r = g;
      ASSERT_EQ(tmm_test::run_case(h_, r), TMM_SUCCESS) << tmm_get_error_message(h_);
      const tmm_report report = last_report(h_);
      // AUTO at 256 x 256 x 16384 (C of 65536 elements, k of 16384): strict FP32, faster
      // there (planner.hpp's fp32_accurate_takes_strict), the same call as strict_run's.
      if (tile == 0 && g.k >= 16384) {
        EXPECT_EQ(report.math_mode, TMM_MATH_FP32) << report.kernel;
        EXPECT_EQ(r.c, strict.c) << "the strict FP32 call, bit for bit";
        continue;
      }
      // On Hopper at k = 16384 (deep) the four 128 x 128 tiles split along k to fill
      // the SMs: 32 slices of 16 steps (plan_tail_split); the 64 x 64 row's sixteen tiles
      // may split too, into no more slices than there are SMs.
      const bool split = hopper_ && deep_k(g);
      expect_x3_ran(report, x3_kernel(g, tile),
                    !split       ? 1
                    : tile == 64 ? multiprocessors_
                                 : multiprocessors_ / 4);
      if (split && tile == 128) {
        EXPECT_GT(report.splits, 1) << "a wave of 4 tiles over deep k splits them";
      }
      const double e = error_against(r, x, false);
      std::printf("k %lld, %s: relative Frobenius error vs FP64: strict FP32 %.3e, %s %.3e\n",
                  static_cast<long long>(g.k), spread ? "exponents -16..16" : "uniform", e_strict,
                  report.kernel, e);
      EXPECT_LE(e, 1.1 * e_strict) << report.kernel;
      EXPECT_LT(e, 1e-6) << "FP32's order, far below TF32's (2.6e-4)";
    }
  }
}

// The header: inputs around 2^-120 keep FP32 accuracy. (The small part is scaled by
// 2^11; unscaled, it would be subnormal below 2^-114 and keep a few bits, and the
// error here would be several times strict FP32's.)
TEST_F(Fp32Accurate, InputsNear2ToTheMinus120KeepFp32Accuracy) {
  if (!x3_)
    GTEST_SKIP()
        << "no 3xTF32 kernel on this device (no TF32 tensor cores, or TF32 at the FP32 rate)";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  GemmCase g;
  g.m = 96;
  g.n = 80;
  g.k = tmm_test::under_sanitizer() ? 100 : 1000;
  tmm_test::fill_case(g, seed);
  std::mt19937 rng(seed);
  fill_exponents(g.a, -120, -120, rng);  // |a| in [2^-120, 2^-119); B uniform [-1, 1]
  // The 64 x 64 row (AUTO runs a product this small strict on Hopper).
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 64), TMM_SUCCESS);
  const Exact x = exact_of(g);
  const GemmCase strict = strict_run(g, [&](GemmCase& s) { return tmm_test::run_case(h_, s); });
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  expect_x3_ran(last_report(h_), kX3SmallKernel);
  const double e = error_against(g, x, false), e_strict = error_against(strict, x, false);
  std::printf("A around 2^-120: relative error vs FP64: strict FP32 %.3e, FP32_ACCURATE %.3e\n",
              e_strict, e);
  EXPECT_LE(e, 2 * e_strict);
  EXPECT_TRUE(tmm_test::check_case(g, Arithmetic::Fp32Accurate));
}

// The header: a finite input within 2^-11 of FLT_MAX (|x| >= (2 - 2^-11) 2^127)
// becomes Inf, as under TF32. Just below that, an input whose low part is exact in
// TF32 is carried exactly (big = the largest TF32 value, small = the rest).
TEST_F(Fp32Accurate, InputsWithin2ToTheMinus11OfFltMaxBecomeInfinite) {
  if (!x3_)
    GTEST_SKIP()
        << "no 3xTF32 kernel on this device (no TF32 tensor cores, or TF32 at the FP32 rate)";
  const float largest_tf32 = std::ldexp(2.0f - std::ldexp(1.0f, -10), 127);
  const float near = largest_tf32 + std::ldexp(0.75f, 116);  // 2^116 under the threshold
  ASSERT_LT(near, std::ldexp(2.0f - std::ldexp(1.0f, -11), 127));
  // C (3 x 1) = A (3 x 1) * B (1 x 1), B = 0.25: the exact products are floats.
  std::vector<float> a = {largest_tf32, near, FLT_MAX}, b = {0.25f}, c(3, 0.0f), s(3, 0.0f);
  auto run = [&](std::vector<float>& out) {
    return tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 3, 1, 1, 1.0f, a.data(), 1,
                     b.data(), 1, 0.0f, out.data(), 1);
  };
  // The 64 x 64 row (AUTO runs a product this small strict on Hopper).
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 64), TMM_SUCCESS);
  ASSERT_EQ(run(c), TMM_SUCCESS) << tmm_get_error_message(h_);
  expect_x3_ran(last_report(h_), kX3SmallKernel);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_FP32), TMM_SUCCESS);
  ASSERT_EQ(run(s), TMM_SUCCESS) << tmm_get_error_message(h_);
  EXPECT_EQ(c[0], largest_tf32 * 0.25f);
  EXPECT_EQ(c[1], near * 0.25f) << "big + 2^-11 small is the input, exactly";
  EXPECT_EQ(s[2], FLT_MAX * 0.25f) << "strict FP32: finite";
  EXPECT_EQ(c[2], INFINITY) << "FLT_MAX rounds to Inf in TF32";
}

// The header: inputs below about 2^-125 in magnitude (subnormals and just above) are
// carried with an absolute error up to 2^-148 each. A with |a| in [2^-135, 2^-125)
// (subnormal from 2^-126 down), B uniform [-1, 1]: every element within 2^-148 sum_l
// |b(l, j)|, plus strict FP32's own rounding there (k units of 2^-149, and 2^-22 of the
// sum of |a b|). A kernel that flushed such inputs to zero would be off by the whole
// element (about 2^-128 here), a thousand times that. Both kernels: tile 64 (mma.sync,
// 64 x 64, AUTO's for such a product off Hopper) and tile 128 (on Hopper the wgmma one).
TEST_F(Fp32Accurate, InputsBelow2ToTheMinus125AreCarriedWithin2ToTheMinus148) {
  if (!x3_)
    GTEST_SKIP()
        << "no 3xTF32 kernel on this device (no TF32 tensor cores, or TF32 at the FP32 rate)";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  for (int tile : {64, 128}) {
    GemmCase g;
    g.m = 130;
    g.n = 70;
    g.k = 96;
    tmm_test::fill_case(g, seed + uint32_t(tile));
    std::mt19937 rng(seed + uint32_t(tile));
    fill_exponents(g.a, -135, -126, rng);
    ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
    expect_x3_ran(last_report(h_), x3_kernel(g, tile));
    double worst = 0;  // the largest error over its bound
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double exact = 0, sum_ab = 0, sum_b = 0;
        for (int64_t q = 0; q < g.k; ++q) {
          exact += g.op_a(i, q) * g.op_b(q, j);
          sum_ab += std::fabs(g.op_a(i, q) * g.op_b(q, j));
          sum_b += std::fabs(g.op_b(q, j));
        }
        exact = g.alpha * exact + (g.beta == 0.0f ? 0.0 : g.beta * g.c0[g.at(i, j, g.ldc)]);
        const double bound =
            std::fabs(g.alpha) * (std::ldexp(sum_b, -148) + std::ldexp(sum_ab, -22)) +
            std::ldexp(double(g.k + 4), -149);
        worst = std::max(worst, std::fabs(double(g.c[g.at(i, j, g.ldc)]) - exact) / bound);
      }
    }
    std::printf("tile %d: A in [2^-135, 2^-125): largest error / documented bound %.3f\n", tile,
                worst);
    EXPECT_LE(worst, 1.0) << "tile " << tile;
  }
}

// The header: where the sum over l of |a(i, l) b(l, j)| passes about 2^127 the
// correction terms may overflow, and that element gets TF32's accuracy instead, not Inf
// or NaN. a = (1 + 2^-11) 2^63 and b = (1 + 2^-11) 2^64 round to big = (1 + 2^-10) x
// with small parts of -2^63 and -2^64 (times 2^11: a tie, rounded away): the correction
// a_small b_big + a_big b_small is -(1 + 2^-10) 2^128, over FLT_MAX, while a b itself is
// finite. That element is then a_big b_big (relative error about 2^-11); the element
// of the row scaled by 2^-64 is FP32-accurate. Both kernels, as above.
TEST_F(Fp32Accurate, CorrectionOverflowNearFltMaxGivesTf32Accuracy) {
  if (!x3_)
    GTEST_SKIP()
        << "no 3xTF32 kernel on this device (no TF32 tensor cores, or TF32 at the FP32 rate)";
  const float x = std::ldexp(1.0f + std::ldexp(1.0f, -11), 63);
  const float y = std::ldexp(1.0f + std::ldexp(1.0f, -11), 64);
  const double exact = double(x) * double(y);  // (1 + 2^-11)^2 2^127 < FLT_MAX
  ASSERT_LT(exact, double(FLT_MAX));
  const double tf32 = std::ldexp((1.0 + std::ldexp(1.0, -10)) * (1.0 + std::ldexp(1.0, -10)), 127);
  for (int tile : {64, 128}) {
    ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
    // C (2 x 1) = A (2 x 1) B (1 x 1): rows x and x 2^-64.
    std::vector<float> a = {x, std::ldexp(x, -64)}, b = {y}, c(2, NAN);
    ASSERT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 2, 1, 1, 1.0f, a.data(), 1,
                        b.data(), 1, 0.0f, c.data(), 1),
              TMM_SUCCESS)
        << tmm_get_error_message(h_);
    expect_x3_ran(last_report(h_), tile == 64 ? kX3SmallKernel
                                   : hopper_  ? kX3HopperKernel
                                              : kX3Kernel);
    std::printf("tile %d: a b = %.9e, FP32_ACCURATE %.9e (a_big b_big %.9e)\n", tile, exact,
                double(c[0]), tf32);
    EXPECT_TRUE(std::isfinite(c[0])) << "never Inf or NaN for a finite product";
    EXPECT_LE(std::fabs(double(c[0]) - exact), std::ldexp(exact, -9)) << "TF32's accuracy";
    EXPECT_EQ(double(c[0]), double(float(tf32)))
        << "the big parts' product: the correction dropped";
    const double small_exact = std::ldexp(exact, -64);
    EXPECT_LE(std::fabs(double(c[1]) - small_exact), std::ldexp(small_exact, -22))
        << "FP32 accuracy where the correction is finite";
  }
}

// Inf and NaN in A or B: the same Inf (sign included) and NaN as strict FP32, and
// the other elements as accurate (the correction is dropped only where it is not
// finite).
TEST_F(Fp32Accurate, InfinityAndNanPropagateAsInFp32) {
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  GemmCase g;
  g.m = 40;
  g.n = 36;
  g.k = 50;
  tmm_test::fill_case(g, seed);
  g.a[size_t(3 * g.lda + 7)] = INFINITY;
  g.a[size_t(5 * g.lda + 2)] = NAN;
  g.b[size_t(11 * g.ldb + 20)] = -INFINITY;
  // The 64 x 64 row (AUTO runs a product this small strict on Hopper).
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 64), TMM_SUCCESS);
  const GemmCase strict = strict_run(g, [&](GemmCase& s) { return tmm_test::run_case(h_, s); });
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  expect_x3_ran(last_report(h_), kX3SmallKernel);
  int specials = 0;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      const float got = g.c[size_t(i * g.ldc + j)], want = strict.c[size_t(i * g.ldc + j)];
      SCOPED_TRACE("C(" + std::to_string(i) + "," + std::to_string(j) + ")");
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << got;
      } else if (std::isinf(want)) {
        EXPECT_EQ(got, want);
      } else {
        EXPECT_NEAR(got, want, 1e-5 * (1.0 + std::fabs(want)));
        continue;
      }
      ++specials;
    }
  }
  EXPECT_EQ(specials, 36 + 36 + 40 - 2) << "rows 3 and 5, column 20";
}

// Tile 128 on Hopper splits A and B into a workspace of 2 (m + n) k floats first.
// Where the call's device memory budget holds the operands but not that workspace,
// the call runs the mma.sync row of the tile (no workspace) instead of failing, and
// the report names it. (Elsewhere that row is the planner's choice anyway.)
TEST_F(Fp32Accurate, WorkspaceOverTheBudgetGivesWayToAKernelWithout) {
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  GemmCase g;
  g.m = g.n = 256;
  g.k = tmm_test::under_sanitizer() ? 512 : 4096;
  tmm_test::fill_case(g, seed);
  const int64_t operands = int64_t(sizeof(float)) * (g.m * g.k + g.k * g.n + g.m * g.n);
  const int64_t workspace = int64_t(sizeof(float)) * 2 * (g.m + g.n) * g.k;
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, operands + workspace / 2),
            TMM_SUCCESS);
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 128), TMM_SUCCESS);
  const GemmCase strict = strict_run(g, [&](GemmCase& s) { return tmm_test::run_case(h_, s); });
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  const tmm_report r = last_report(h_);
  EXPECT_EQ(r.host_path, TMM_HOST_PATH_DIRECT);
  expect_x3_ran(r, kX3Kernel);
  const Exact x = exact_of(g);
  EXPECT_LE(error_against(g, x, true), x3_bound(error_against(strict, x, true), g.k));
}

// The same when the device itself cannot hold the workspace (tmm_sgemm_device, the
// device filled by the test): the call succeeds on the mma.sync row.
TEST_F(Fp32Accurate, WorkspaceTheDeviceCannotHoldGivesWayToAKernelWithout) {
  if (tmm_test::under_sanitizer())
    GTEST_SKIP() << "fills the device's memory, which the sanitizer needs for itself";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  GemmCase g;
  g.m = g.n = 256;
  g.k = 8192;
  tmm_test::fill_case(g, seed);
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 128), TMM_SUCCESS);
  const GemmCase strict = strict_run(g, [&](GemmCase& s) { return run_device_case(h_, s, 0); });

  DeviceFloats a(g.a.size()), b(g.b.size()), c(g.c.size());
  ASSERT_EQ(cudaMemcpy(a.ptr, g.a.data(), g.a.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b.ptr, g.b.data(), g.b.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(c.ptr, g.c.data(), g.c.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  // Take the device's memory until less than half the workspace is free.
  const size_t workspace = sizeof(float) * 2 * size_t(g.m + g.n) * size_t(g.k);
  std::vector<void*> taken;
  size_t free_bytes = 0, total = 0;
  for (size_t chunk = size_t(1) << 34; chunk >= (size_t(1) << 20);) {
    ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
    if (free_bytes < workspace / 2) break;
    void* p = nullptr;
    if (chunk <= free_bytes && cudaMalloc(&p, chunk) == cudaSuccess) {
      taken.push_back(p);
    } else {
      (void)cudaGetLastError();
      chunk /= 2;
    }
  }
  const tmm_status status = tmm_sgemm_device(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha,
                                             a.ptr, g.lda, b.ptr, g.ldb, g.beta, c.ptr, g.ldc);
  const std::string message = tmm_get_error_message(h_);
  const tmm_status synced = tmm_synchronize(h_);
  for (void* p : taken) cudaFree(p);
  EXPECT_LT(free_bytes, workspace / 2) << "the test could not fill the device";
  ASSERT_EQ(status, TMM_SUCCESS) << message;
  ASSERT_EQ(synced, TMM_SUCCESS);
  expect_x3_ran(last_report(h_), kX3Kernel);
  ASSERT_EQ(cudaMemcpy(g.c.data(), c.ptr, g.c.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  const Exact x = exact_of(g);
  EXPECT_LE(error_against(g, x, true), x3_bound(error_against(strict, x, true), g.k));
}

}  // namespace
}  // namespace tensor_cores_test
