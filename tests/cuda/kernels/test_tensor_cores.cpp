// test_tensor_cores, the tests of both math modes on tensor cores (TF32, and
// FP32_ACCURATE: 3xTF32 with error correction), through the public API: both layouts,
// all four transposes, beta zero (C poisoned with NaN) and not, odd shapes, padded
// leading dimensions and device pointers whose offsets break 16-byte alignment,
// against an FP64 reference with the mode's bound (TF32: that of tmm_test::check_case,
// which gemm_reference.hpp derives; FP32_ACCURATE: twice the error of a strict FP32 run
// on the same inputs, plus a few units in the last place). Then the report, the kernel
// list, the streamed path, the alpha = Inf rule, the last wave split along k on Hopper,
// and every place where a mode has no kernel and the strict one runs instead.
//
// The tests of one mode: test_tensor_cores_tf32.cpp, test_tensor_cores_fp32_accurate.cpp;
// what all three share: tensor_cores_fixture.hpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "tensor_cores_fixture.hpp"

namespace tensor_cores_test {
namespace {

// ---- Every layout, transpose, edge and alignment ---------------------------------

// How a case reaches the library: the host API (dense device copies, always aligned)
// or device pointers at an offset, with the case's padding in every leading dimension.
struct Variant {
  bool device;
  int64_t offset;  // floats: 1 misaligns every pointer
  int64_t pad;     // added to every leading dimension
};

struct Case {
  int64_t m, n, k;
  std::vector<Variant> variants;
};

// Odd shapes: a single element; edges in every dimension with one k tile and a
// partial one; several tiles of C, interior ones included, and 63 tiles of k (the
// last partial) through every pipeline stage. Leading dimensions: dense (rows
// 4-byte aligned only, as most of these sizes are odd), padded to a multiple of 4
// for some operands and not others (16-byte copies for one, 4-byte for the other),
// and odd with offset pointers (4-byte copies and 4-byte stores of C).
std::vector<Case> cases() {
  const int64_t big_k = tmm_test::under_sanitizer() ? 77 : 1001;
  const Variant host{false, 0, 0}, dense{true, 0, 0}, pad3{true, 0, 3}, shifted{true, 1, 1},
      shifted_pad3{true, 1, 3}, host_pad{false, 0, 2};
  return {
      {1, 1, 1, {host, dense, shifted}},
      {17, 33, 65, {host, dense, pad3, shifted}},
      {127, 129, 255, {host_pad, pad3, shifted, shifted_pad3}},
      {300, 257, big_k, {host, pad3, shifted}},
  };
}

// The tile: 0 lets the planner choose (for these small products 128 x 128, on Hopper
// the wide tile); 128 and 256 ask for the narrow and the wide kernel (BLOCKED).
using Param = std::tuple<tmm_layout, tmm_transpose, tmm_transpose, int>;

class Tf32Correctness : public TensorCores, public ::testing::WithParamInterface<Param> {};

TEST_P(Tf32Correctness, MatchesFp64WithinTheTf32Bound) {
  const auto& [layout, ta, tb, tile] = GetParam();
  const bool wide = tile == 256;
  ASSERT_EQ(tmm_set_algorithm(h_, tile != 0 ? TMM_ALGO_BLOCKED : TMM_ALGO_AUTO), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Case& c : cases()) {
    for (const Variant& v : c.variants) {
      for (float beta : {0.0f, 1.25f}) {
        GemmCase g;
        g.layout = layout;
        g.ta = ta;
        g.tb = tb;
        g.m = c.m;
        g.n = c.n;
        g.k = c.k;
        g.alpha = beta == 0.0f ? 0.75f : -1.5f;
        g.beta = beta;
        g.pad = v.pad;
        tmm_test::fill_case(g, seed + uint32_t(c.m * 31 + c.n * 7 + c.k + v.pad));
        SCOPED_TRACE(tmm_test::describe(g) + (v.device ? " device offset " : " host") +
                     (v.device ? std::to_string(v.offset) : ""));
        const tmm_status s =
            v.device ? run_device_case(h_, g, v.offset) : tmm_test::run_case(h_, g);
        ASSERT_EQ(s, TMM_SUCCESS) << tmm_get_error_message(h_);
        expect_tf32_ran(last_report(h_), tile != 0 ? tile : auto_tile());
        EXPECT_TRUE(tmm_test::check_case(g, arithmetic(wide)));
      }
    }
  }
}

// row_NN, col_TN, ...: a parameterised case's layout and transposes.
std::string layout_name(tmm_layout layout, tmm_transpose ta, tmm_transpose tb) {
  return std::string(layout == TMM_ROW_MAJOR ? "row_" : "col_") + (ta == TMM_TRANS ? "T" : "N") +
         (tb == TMM_TRANS ? "T" : "N");
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [layout, ta, tb, tile] = info.param;
  return layout_name(layout, ta, tb) + (tile == 256 ? "_wide" : tile == 128 ? "_narrow" : "");
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, Tf32Correctness,
                         ::testing::Combine(::testing::Values(TMM_ROW_MAJOR, TMM_COL_MAJOR),
                                            ::testing::Values(TMM_NO_TRANS, TMM_TRANS),
                                            ::testing::Values(TMM_NO_TRANS, TMM_TRANS),
                                            ::testing::Values(0, 128, 256)),
                         param_name);

// Odd shapes (1, 7, 129, 1000 and the TF32 tests' edges), dense, padded and
// misaligned operands.
std::vector<Case> x3_cases() {
  const int64_t big_k = tmm_test::under_sanitizer() ? 77 : 1001;
  const int64_t wide = tmm_test::under_sanitizer() ? 200 : 1000;
  const Variant host{false, 0, 0}, dense{true, 0, 0}, pad3{true, 0, 3}, shifted{true, 1, 1},
      shifted_pad3{true, 1, 3}, host_pad{false, 0, 2};
  return {
      {1, 1, 1, {host, dense, shifted}},
      {7, 7, 7, {host, shifted_pad3}},
      {17, 33, 65, {host, dense, pad3, shifted}},
      {127, 129, 255, {host_pad, pad3, shifted, shifted_pad3}},
      {129, wide, 7, {host, shifted}},
      {wide, 129, 129, {host, pad3}},
      {300, 257, big_k, {host, pad3, shifted}},
  };
}

// The tile: 0 lets the planner choose (64 x 64 for these products on most devices),
// 128 asks for the 128 x 64 kernel (BLOCKED, tile 128).
using X3Param = std::tuple<tmm_layout, tmm_transpose, tmm_transpose, int>;

class Fp32AccurateCorrectness : public Fp32Accurate,
                                public ::testing::WithParamInterface<X3Param> {};

TEST_P(Fp32AccurateCorrectness, MatchesFp64AsStrictFp32Does) {
  const auto& [layout, ta, tb, tile] = GetParam();
  ASSERT_EQ(tmm_set_algorithm(h_, tile == 0 ? TMM_ALGO_AUTO : TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Case& c : x3_cases()) {
    for (const Variant& v : c.variants) {
      for (float beta : {0.0f, 1.25f}) {
        GemmCase g;
        g.layout = layout;
        g.ta = ta;
        g.tb = tb;
        g.m = c.m;
        g.n = c.n;
        g.k = c.k;
        g.alpha = beta == 0.0f ? 0.75f : -1.5f;
        g.beta = beta;
        g.pad = v.pad;
        tmm_test::fill_case(g, seed + uint32_t(c.m * 31 + c.n * 7 + c.k + v.pad));
        SCOPED_TRACE(tmm_test::describe(g) + (v.device ? " device offset " : " host") +
                     (v.device ? std::to_string(v.offset) : ""));
        auto run = [&](GemmCase& x) {
          return v.device ? run_device_case(h_, x, v.offset) : tmm_test::run_case(h_, x);
        };
        const GemmCase strict = strict_run(g, run);
        ASSERT_EQ(run(g), TMM_SUCCESS) << tmm_get_error_message(h_);
        const tmm_report r = last_report(h_);
        expect_x3_ran(r, x3_kernel(g, tile));
        EXPECT_TRUE(tmm_test::check_case(g, tmm_test::arithmetic_of(r.math_mode)))
            << "the bound of the mode that ran, element by element";
        const Exact x = exact_of(g);
        const double e = error_against(g, x, true), e_strict = error_against(strict, x, true);
        EXPECT_LE(e, x3_bound(e_strict, g.k))
            << "scaled error: FP32_ACCURATE " << e << ", strict FP32 " << e_strict;
      }
    }
  }
}

std::string x3_param_name(const ::testing::TestParamInfo<X3Param>& info) {
  const auto& [layout, ta, tb, tile] = info.param;
  return layout_name(layout, ta, tb) + (tile == 128 ? "_tile128" : "");
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, Fp32AccurateCorrectness,
                         ::testing::Combine(::testing::Values(TMM_ROW_MAJOR, TMM_COL_MAJOR),
                                            ::testing::Values(TMM_NO_TRANS, TMM_TRANS),
                                            ::testing::Values(TMM_NO_TRANS, TMM_TRANS),
                                            ::testing::Values(0, 128)),
                         x3_param_name);

// ---- The report ---------------------------------------------------------------

TEST_F(TensorCores, ReportSaysWhichModeRan) {
  const int64_t n = 130;
  std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f), c(size_t(n * n), 1.0f);
  auto run = [&](float alpha) {
    return tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, alpha, a.data(), n,
                     b.data(), n, 0.0f, c.data(), n);
  };
  ASSERT_EQ(run(1.0f), TMM_SUCCESS) << tmm_get_error_message(h_);
  tmm_report r = last_report(h_);
  expect_tf32_ran(r, auto_tile());
  EXPECT_EQ(r.backend, TMM_BACKEND_CUDA);
  EXPECT_EQ(r.host_path, TMM_HOST_PATH_DIRECT);
  for (float x : c) ASSERT_EQ(x, 0.5f * 0.25f * float(n)) << "exact in TF32";

  // alpha = 0 runs only C = beta * C: no product, so no TF32.
  ASSERT_EQ(run(0.0f), TMM_SUCCESS);
  r = last_report(h_);
  EXPECT_STREQ(r.kernel, "scale");
  EXPECT_EQ(r.math_mode, TMM_MATH_FP32);

  // The kernel list says which kernel needs which mode.
  int listed = 0;
  for (int i = 0;; ++i) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) break;
    const std::string name = info.name;
    if (info.math_mode == TMM_MATH_FP32_ACCURATE) continue;  // that mode's own tests
    if (name != kTf32Kernel && name != kTf32WideKernel && name != kTf32HopperKernel) {
      EXPECT_EQ(info.math_mode, TMM_MATH_FP32) << info.name;
      continue;
    }
    ++listed;
    EXPECT_EQ(info.math_mode, TMM_MATH_TF32);
    EXPECT_EQ(info.algorithm, TMM_ALGO_BLOCKED);
    EXPECT_EQ(info.tile_size, name == kTf32Kernel ? 128 : 256);
    EXPECT_EQ(info.min_compute_capability, name == kTf32HopperKernel ? 90 : 80);
  }
  EXPECT_EQ(listed, has_kernel(kTf32HopperKernel) ? 3 : 2);
}

TEST_F(Fp32Accurate, ReportSaysWhichKernelRan) {
  const int64_t n = 130;
  std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f), c(size_t(n * n), 1.0f);
  auto run = [&](float alpha) {
    return tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, alpha, a.data(), n,
                     b.data(), n, 0.0f, c.data(), n);
  };
  GemmCase shape;
  shape.m = shape.n = n;
  struct Setting {
    tmm_algorithm algorithm;
    int tile;
    const char* kernel;
  };
  for (const Setting& s : {Setting{TMM_ALGO_AUTO, 0, x3_kernel(shape, 0)},
                           Setting{TMM_ALGO_BLOCKED, 0, x3_kernel(shape, 0)},
                           Setting{TMM_ALGO_BLOCKED, 128, x3_kernel(shape, 128)},
                           Setting{TMM_ALGO_BLOCKED, 64, kX3SmallKernel}}) {
    ASSERT_EQ(tmm_set_algorithm(h_, s.algorithm), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_tile_size(h_, s.tile), TMM_SUCCESS);
    std::fill(c.begin(), c.end(), 1.0f);
    ASSERT_EQ(run(1.0f), TMM_SUCCESS) << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    expect_x3_ran(r, s.kernel);
    EXPECT_EQ(r.backend, TMM_BACKEND_CUDA);
    EXPECT_EQ(r.host_path, TMM_HOST_PATH_DIRECT);
    for (float x : c) ASSERT_EQ(x, 0.5f * 0.25f * float(n)) << "exact";
  }
  // alpha = 0 runs only C = beta * C: no product, strict FP32.
  ASSERT_EQ(run(0.0f), TMM_SUCCESS);
  EXPECT_STREQ(last_report(h_).kernel, "scale");
  EXPECT_EQ(last_report(h_).math_mode, TMM_MATH_FP32);

  // A handle starts in strict FP32 (unless TMM_MATH_MODE says otherwise), whatever
  // kernels the library has.
  if (std::getenv("TMM_MATH_MODE") == nullptr) {
    tmm_handle fresh = nullptr;
    ASSERT_EQ(tmm_create_with_backend(&fresh, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
    int64_t mode = -1;
    EXPECT_EQ(tmm_get_option(fresh, TMM_OPTION_MATH_MODE, &mode), TMM_SUCCESS);
    EXPECT_EQ(mode, TMM_MATH_FP32);
    EXPECT_EQ(tmm_sgemm(fresh, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1.0f, a.data(),
                        n, b.data(), n, 0.0f, c.data(), n),
              TMM_SUCCESS);
    const tmm_report r = last_report(fresh);
    EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
    EXPECT_EQ(std::string(r.kernel).rfind("blocked_", 0), 0u) << r.kernel;
    tmm_destroy(fresh);
  }
}

// ---- Where TF32 has no kernel, the strict one runs ------------------------------

TEST_F(TensorCores, StrictKernelsRunWhereTheModeHasNone) {
  struct Setting {
    tmm_algorithm algorithm;
    int tile;
    tmm_math_mode mode;
    const char* kernel;  // what must run (nullptr: a blocked_ kernel of the planner's)
  };
  const Setting settings[] = {
      {TMM_ALGO_TILED, 32, TMM_MATH_TF32, "tiled_32"},
      {TMM_ALGO_NAIVE, 16, TMM_MATH_TF32, "naive_16"},
      {TMM_ALGO_COARSENED, 16, TMM_MATH_TF32, "coarsened_16_x2"},
      {TMM_ALGO_BLOCKED, 64, TMM_MATH_TF32, "blocked_64x64"},              // no TF32 row of 64
      {TMM_ALGO_BLOCKED, 256, TMM_MATH_FP32_ACCURATE, "blocked_128x256"},  // no 3xTF32 256
      {TMM_ALGO_TILED, 16, TMM_MATH_FP32_ACCURATE, "tiled_16"},
      {TMM_ALGO_BLOCKED, 0, TMM_MATH_FP32, nullptr},
  };
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Setting& s : settings) {
    ASSERT_EQ(tmm_set_algorithm(h_, s.algorithm), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_tile_size(h_, s.tile), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, s.mode), TMM_SUCCESS);
    GemmCase g;
    g.layout = TMM_COL_MAJOR;
    g.ta = TMM_TRANS;
    g.m = 70;
    g.n = 45;
    g.k = 133;
    g.beta = 0.5f;
    g.pad = 1;
    tmm_test::fill_case(g, seed);
    SCOPED_TRACE(std::string("algorithm ") + std::to_string(s.algorithm) + " tile " +
                 std::to_string(s.tile) + " mode " + std::to_string(s.mode));
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    if (s.kernel) {
      EXPECT_STREQ(r.kernel, s.kernel);
    } else {
      EXPECT_EQ(std::string(r.kernel).rfind("blocked_", 0), 0u) << r.kernel;
    }
    EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
    EXPECT_TRUE(tmm_test::check_case(g)) << "the strict bound holds";
  }
  // Tiles 128 and 256 are TF32 rows' too: BLOCKED with them runs tensor cores (256
  // where the device holds its shared memory, else the strict 128 x 256 kernel).
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_TF32), TMM_SUCCESS);
  for (int tile : {128, 256}) {
    ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
    GemmCase g;
    g.m = g.n = g.k = 99;
    tmm_test::fill_case(g, seed + uint32_t(tile));
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
    expect_tf32_ran(last_report(h_), tile);
    EXPECT_TRUE(tmm_test::check_case(g, arithmetic(tile == 256)));
  }
}

// ---- The last wave split along k, IEEE specials, the streamed path ----------------

// A last wave at most a quarter full, on Hopper: AUTO splits its tiles along k (k = 512,
// 16 steps of 32: two slices each) and says so in the report; the partial sums add up
// to the TF32 result. Row-major NN through the host API (D = C^T in the kernel, B
// through registers, beta != 0, padded rows) and TN from misaligned device pointers
// (both operands packed K-major, beta = 0).
TEST_F(TensorCores, PartialLastWaveSplitAlongKStaysWithinTheTf32Bound) {
  if (!hopper_) GTEST_SKIP() << "only the Hopper kernels split the last wave along k";
  tmm_device_info d{};
  ASSERT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (bool device : {false, true}) {
    GemmCase g;
    g.ta = device ? TMM_TRANS : TMM_NO_TRANS;
    g.m = g.n = tmm_test::partial_wave_edge(128, 256, d.multiprocessors);
    g.k = 512;
    g.alpha = 0.75f;
    g.beta = device ? 0.0f : 1.25f;
    g.pad = device ? 0 : 3;
    tmm_test::fill_case(g, seed + device);
    SCOPED_TRACE(tmm_test::describe(g) + (device ? " device offset 1" : " host"));
    ASSERT_EQ(device ? run_device_case(h_, g, 1) : tmm_test::run_case(h_, g), TMM_SUCCESS)
        << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    EXPECT_STREQ(r.kernel, kTf32HopperKernel);
    EXPECT_EQ(r.splits, 2) << "the last wave's tiles in two slices of k";
    EXPECT_TRUE(tmm_test::check_case(g, Arithmetic::Tf32));
  }
}

// A last wave at most a quarter full, on Hopper (k = 1024, 32 steps of 32: up to four
// slices): AUTO splits its tiles along k, and the partial sums (each a sum and its
// correction) add up as accurately as strict FP32. Row-major NN on the host with
// beta != 0 and padded rows, and TN from misaligned device pointers with beta = 0.
// Under a device-memory budget that holds the unsplit kernel's workspace but not the
// partial sums, the same kernel runs unsplit.
TEST_F(Fp32Accurate, PartialLastWaveSplitAlongKIsAsAccurateAsStrictFp32) {
  if (!hopper_ || !has_kernel(kX3HopperKernel))
    GTEST_SKIP() << "only the Hopper kernels split the last wave along k";
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t edge = tmm_test::partial_wave_edge(128, 128, multiprocessors_), k = 1024;
  for (int run = 0; run < 3; ++run) {
    const bool device = run == 1, budget = run == 2;
    GemmCase g;
    g.ta = device ? TMM_TRANS : TMM_NO_TRANS;
    g.m = g.n = edge;
    g.k = k;
    g.alpha = -1.5f;
    g.beta = device ? 0.0f : 0.75f;
    g.pad = device || budget ? 0 : 3;
    tmm_test::fill_case(g, seed + uint32_t(run));
    SCOPED_TRACE(tmm_test::describe(g) + (device ? " device offset 1" : " host") +
                 (budget ? ", budget without room for the partial sums" : ""));
    if (budget) {  // operands and the split operands, 1 MiB more: not the partial sums
      const int64_t operands = 4 * (g.m * g.k + g.k * g.n + g.m * g.n);
      const int64_t split_operands = 4 * 2 * (g.m + g.n) * g.k;
      ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET,
                               operands + split_operands + (int64_t(1) << 20)),
                TMM_SUCCESS);
    }
    auto call = [&](GemmCase& x) {
      return device ? run_device_case(h_, x, 1) : tmm_test::run_case(h_, x);
    };
    const GemmCase strict = strict_run(g, call);
    ASSERT_EQ(call(g), TMM_SUCCESS) << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    EXPECT_STREQ(r.kernel, kX3HopperKernel);
    if (budget) {
      EXPECT_EQ(r.splits, 1) << "no room for the partial sums: unsplit";
    } else {
      EXPECT_GE(r.splits, 2) << "the last wave's tiles in slices of k";
      EXPECT_LE(r.splits, 4) << "slices of at least 8 steps";
    }
    const Exact x = exact_of(g);
    EXPECT_LE(error_against(g, x, true), x3_bound(error_against(strict, x, true), g.k));
  }
}

// alpha multiplies the FP32 sums, never the inputs: with small integers (exact in
// TF32) the alpha = +-Inf rule holds under TF32 as under FP32.
TEST_F(TensorCores, AlphaInfinityFollowsTheRule) {
  for (int64_t k : {int64_t(5), int64_t(700)}) {
    tmm_test::expect_alpha_inf_rule(h_, TMM_ALGO_AUTO, k);
    expect_tf32_ran(last_report(h_), auto_tile());
  }
}

// alpha multiplies the sums, never the inputs; small integers are exact in TF32 (their
// small parts are 0), so the alpha = +-Inf rule holds as under FP32.
TEST_F(Fp32Accurate, AlphaInfinityFollowsTheRule) {
  GemmCase shape;  // expect_alpha_inf_rule's: 37 x 29, row-major
  shape.m = 37;
  shape.n = 29;
  for (int64_t k : {int64_t(5), int64_t(700)}) {
    tmm_test::expect_alpha_inf_rule(h_, TMM_ALGO_AUTO, k);
    expect_x3_ran(last_report(h_), x3_kernel(shape, 0));
  }
}

// The streamed host path chooses a kernel per chunk with the handle's settings: it
// inherits TF32, and the report says so.
TEST_F(TensorCores, StreamedPathRunsTf32AndSaysSo) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (tmm_transpose t : {TMM_NO_TRANS, TMM_TRANS}) {
    GemmCase g;
    g.ta = t;
    g.tb = t;
    g.m = 333;
    g.n = 200;
    g.k = tmm_test::under_sanitizer() ? 90 : 700;
    g.beta = t == TMM_TRANS ? 0.0f : 2.0f;
    g.pad = 3;
    tmm_test::fill_case(g, seed + uint32_t(t));
    SCOPED_TRACE(tmm_test::describe(g));
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
    expect_tf32_ran(r, auto_tile());
    EXPECT_TRUE(tmm_test::check_case(g, arithmetic()));
  }
}

// The streamed host path chooses a kernel per chunk with the handle's settings: it
// inherits FP32_ACCURATE, and the report says so.
TEST_F(Fp32Accurate, StreamedPathRunsItAndSaysSo) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (tmm_transpose t : {TMM_NO_TRANS, TMM_TRANS}) {
    GemmCase g;
    g.ta = t;
    g.tb = t;
    g.m = 333;
    g.n = 200;
    g.k = tmm_test::under_sanitizer() ? 90 : 700;
    g.beta = t == TMM_TRANS ? 0.0f : 2.0f;
    g.pad = 3;
    tmm_test::fill_case(g, seed + uint32_t(t));
    SCOPED_TRACE(tmm_test::describe(g));
    const GemmCase strict = strict_run(g, [&](GemmCase& s) { return tmm_test::run_case(h_, s); });
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
    if (x3_) {
      EXPECT_EQ(std::string(r.kernel).rfind("tf32x3_", 0), 0u) << r.kernel;
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32_ACCURATE);
    }
    EXPECT_TRUE(tmm_test::check_case(g, tmm_test::arithmetic_of(r.math_mode)));
    const Exact x = exact_of(g);
    EXPECT_LE(error_against(g, x, true), x3_bound(error_against(strict, x, true), g.k));
  }
}

// The kernel list (no GPU needed): two FP32_ACCURATE rows, BLOCKED, tiles 128 and 64,
// compute capability 8.0 and later, 32 outputs per thread.
TEST(Fp32AccurateKernels, ListedWithTheirModeAndTiles) {
  int listed = 0;
  for (int i = 0;; ++i) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) break;
    const std::string name = info.name;
    const bool hopper = name == kX3HopperKernel;
    const bool x3 = name == kX3Kernel || name == kX3SmallKernel || hopper;
    EXPECT_EQ(x3, info.math_mode == TMM_MATH_FP32_ACCURATE) << name;
    if (!x3) continue;
    ++listed;
    EXPECT_EQ(info.backend, TMM_BACKEND_CUDA);
    EXPECT_EQ(info.algorithm, TMM_ALGO_BLOCKED);
    EXPECT_EQ(info.tile_size, name == kX3SmallKernel ? 64 : 128);
    EXPECT_EQ(info.is_default, 0);
    EXPECT_EQ(info.min_compute_capability, hopper ? 90 : 80);
    EXPECT_EQ(info.outputs_per_thread, hopper ? 64 : 32);
  }
  EXPECT_EQ(listed, has_kernel(kX3HopperKernel) ? 3 : 2);
}

}  // namespace
}  // namespace tensor_cores_test
