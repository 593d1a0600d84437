// test_tensor_cores, the tests of both math modes on tensor cores (TF32, and
// FP32_ACCURATE: 3xTF32 with error correction), each a TEST_P over kModes
// (tensor_cores_fixture.hpp) named by the mode (/Tf32, /Fp32Accurate), through the
// public API: both layouts, all four transposes, beta zero (C poisoned with NaN) and
// not, odd shapes, padded leading dimensions and device pointers whose offsets break
// 16-byte alignment, against an FP64 reference with the mode's bound (TF32: that of
// tmm_test::check_case, which gemm_reference.hpp derives; FP32_ACCURATE: twice the error
// of a strict FP32 run on the same inputs, plus a few units in the last place, which a
// TF32 result fails). Then the report, the kernel list, the last wave split along k on
// Hopper, the alpha = Inf rule, the streamed path, and every place where a mode has no
// kernel and the strict one runs instead.
//
// The tests of one mode: test_tensor_cores_tf32.cpp, test_tensor_cores_fp32_accurate.cpp;
// what all three share: tensor_cores_fixture.hpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
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
  bool fp32_accurate_only = false;  // a case only FP32_ACCURATE's tests ever had
};

// Odd shapes: a single element; edges in every dimension with one k tile and a
// partial one; several tiles of C, interior ones included, and 63 tiles of k (the
// last partial) through every pipeline stage. Leading dimensions: dense (rows
// 4-byte aligned only, as most of these sizes are odd), padded to a multiple of 4
// for some operands and not others (16-byte copies for one, 4-byte for the other),
// and odd with offset pointers (4-byte copies and 4-byte stores of C). FP32_ACCURATE
// also 7 x 7 x 7, and 129 by 1000 either way (k 7 and 129).
std::vector<Case> cases() {
  const int64_t big_k = tmm_test::under_sanitizer() ? 77 : 1001;
  const int64_t wide = tmm_test::under_sanitizer() ? 200 : 1000;
  const Variant host{false, 0, 0}, dense{true, 0, 0}, pad3{true, 0, 3}, shifted{true, 1, 1},
      shifted_pad3{true, 1, 3}, host_pad{false, 0, 2};
  return {
      {1, 1, 1, {host, dense, shifted}},
      {7, 7, 7, {host, shifted_pad3}, true},
      {17, 33, 65, {host, dense, pad3, shifted}},
      {127, 129, 255, {host_pad, pad3, shifted, shifted_pad3}},
      {129, wide, 7, {host, shifted}, true},
      {wide, 129, 129, {host, pad3}, true},
      {300, 257, big_k, {host, pad3, shifted}},
  };
}

// The mode, the layout, the transposes of A and B, and the tile: 0 lets AUTO choose
// (for these small products: on Hopper TF32's 64 x 64 tile, or strict TILED 16 where
// tiny, and strict FP32 under FP32_ACCURATE; elsewhere TF32's 64 x 64 and
// FP32_ACCURATE's 64 x 64); TF32's 64, 128 and 256 ask for its small, narrow and wide
// kernels, FP32_ACCURATE's 64 and 128 for its 64 x 64 and 128 x 64 kernels (BLOCKED;
// on Hopper 128 is the wgmma one).
using Param = std::tuple<MathMode, tmm_layout, tmm_transpose, tmm_transpose, int>;

class TensorCoreCorrectness : public TensorCoreTest, public ::testing::WithParamInterface<Param> {
 protected:
  void SetUp() override { open(std::get<0>(GetParam()).mode); }
};

TEST_P(TensorCoreCorrectness, MatchesFp64WithinTheModesBound) {
  const auto& [mode, layout, ta, tb, tile] = GetParam();
  ASSERT_EQ(tmm_set_algorithm(h_, tile != 0 ? TMM_ALGO_BLOCKED : TMM_ALGO_AUTO), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Case& c : cases()) {
    if (c.fp32_accurate_only && mode.mode != TMM_MATH_FP32_ACCURATE) continue;
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
        const std::optional<GemmCase> strict = yardstick(g, run);
        ASSERT_EQ(run(g), TMM_SUCCESS) << tmm_get_error_message(h_);
        const tmm_report r = last_report(h_);
        expect_planner_ran(r, g, tile);
        expect_within_bound(g, r, strict, tile == 256);
      }
    }
  }
}

// Each mode's tiles (Param) over every layout and transpose pair.
std::vector<Param> correctness_params() {
  std::vector<Param> params;
  for (const MathMode& mode : kModes) {
    const std::vector<int> tiles = mode.mode == TMM_MATH_TF32 ? std::vector<int>{0, 64, 128, 256}
                                                              : std::vector<int>{0, 64, 128};
    for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
      for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
        for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
          for (int tile : tiles) params.emplace_back(mode, layout, ta, tb, tile);
        }
      }
    }
  }
  return params;
}

// Tf32_row_NN, Fp32Accurate_col_TN_tile128, ...: the mode, the layout and transposes,
// and the tile asked for.
std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [mode, layout, ta, tb, tile] = info.param;
  return std::string(mode.name) + (layout == TMM_ROW_MAJOR ? "_row_" : "_col_") +
         (ta == TMM_TRANS ? "T" : "N") + (tb == TMM_TRANS ? "T" : "N") +
         (tile != 0 ? "_tile" + std::to_string(tile) : "");
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, TensorCoreCorrectness,
                         ::testing::ValuesIn(correctness_params()), param_name);

// ---- The report and the kernel list ------------------------------------------------

// The report names what ran: AUTO's kernel, and under FP32_ACCURATE BLOCKED's with the
// planner's tile, 128 and 64 (each of its kernels), the backend and the host path; the
// values are exact in either mode. alpha = 0 runs only C = beta * C: no product, strict
// FP32. A handle starts in strict FP32 (unless TMM_MATH_MODE says otherwise), whatever
// kernels the library has.
TEST_P(TensorCoreModes, ReportSaysWhichKernelRan) {
  const int64_t n = 130;
  std::vector<float> a(size_t(n * n), 0.5f), b(size_t(n * n), 0.25f), c(size_t(n * n), 1.0f);
  auto run = [&](float alpha) {
    return tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, alpha, a.data(), n,
                     b.data(), n, 0.0f, c.data(), n);
  };
  GemmCase shape;
  shape.m = shape.n = shape.k = n;
  struct Setting {
    tmm_algorithm algorithm;
    int tile;
  };
  std::vector<Setting> settings = {{TMM_ALGO_AUTO, 0}};
  if (GetParam().mode == TMM_MATH_FP32_ACCURATE) {
    settings.insert(settings.end(),
                    {{TMM_ALGO_BLOCKED, 0}, {TMM_ALGO_BLOCKED, 128}, {TMM_ALGO_BLOCKED, 64}});
  }
  for (const Setting& s : settings) {
    SCOPED_TRACE("algorithm " + std::to_string(s.algorithm) + " tile " + std::to_string(s.tile));
    ASSERT_EQ(tmm_set_algorithm(h_, s.algorithm), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_tile_size(h_, s.tile), TMM_SUCCESS);
    std::fill(c.begin(), c.end(), 1.0f);
    ASSERT_EQ(run(1.0f), TMM_SUCCESS) << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    expect_planner_ran(r, shape, s.tile);
    EXPECT_EQ(r.backend, TMM_BACKEND_CUDA);
    EXPECT_EQ(r.host_path, TMM_HOST_PATH_DIRECT);
    for (float x : c) ASSERT_EQ(x, 0.5f * 0.25f * float(n)) << "exact";
  }

  ASSERT_EQ(run(0.0f), TMM_SUCCESS);
  const tmm_report r = last_report(h_);
  EXPECT_STREQ(r.kernel, "scale");
  EXPECT_EQ(r.math_mode, TMM_MATH_FP32);

  if (std::getenv("TMM_MATH_MODE") == nullptr) {
    tmm_handle fresh = nullptr;
    ASSERT_EQ(tmm_create_with_backend(&fresh, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
    int64_t mode = -1;
    EXPECT_EQ(tmm_get_option(fresh, TMM_OPTION_MATH_MODE, &mode), TMM_SUCCESS);
    EXPECT_EQ(mode, TMM_MATH_FP32);
    EXPECT_EQ(tmm_sgemm(fresh, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1.0f, a.data(),
                        n, b.data(), n, 0.0f, c.data(), n),
              TMM_SUCCESS);
    const tmm_report f = last_report(fresh);
    EXPECT_EQ(f.math_mode, TMM_MATH_FP32);
    EXPECT_TRUE(strict_fp32_row(f.kernel, n, n, n));
    tmm_destroy(fresh);
  }
}

// The kernel list (no GPU needed) says which kernel needs which mode: the mode's
// kernels (MathMode::mma_sync, and MathMode::hopper where the library has its code) with that mode,
// BLOCKED, their tile, compute capability and outputs per thread, none a default; no other kernel
// with that mode, and a kernel of neither mode strict FP32.
class TensorCoreKernels : public ::testing::TestWithParam<MathMode> {};

TEST_P(TensorCoreKernels, ListedWithTheirModeAndTiles) {
  const MathMode& mode = GetParam();
  auto find = [](const MathMode& m, const std::string& name) -> const MathMode::Kernel* {
    for (const MathMode::Kernel& k : m.mma_sync) {
      if (name == k.name) return &k;
    }
    return name == m.hopper.name ? &m.hopper : nullptr;
  };
  int listed = 0;
  for (int i = 0;; ++i) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) break;
    const std::string name = info.name;
    const MathMode::Kernel* k = find(mode, name);
    EXPECT_EQ(k != nullptr, info.math_mode == mode.mode) << name;
    if (k == nullptr) {
      const bool any_mode = std::any_of(std::begin(kModes), std::end(kModes),
                                        [&](const MathMode& m) { return find(m, name); });
      if (!any_mode) {
        EXPECT_EQ(info.math_mode, TMM_MATH_FP32) << name;
      }
      continue;
    }
    ++listed;
    EXPECT_EQ(info.backend, TMM_BACKEND_CUDA) << name;
    EXPECT_EQ(info.algorithm, TMM_ALGO_BLOCKED) << name;
    EXPECT_EQ(info.tile_size, k->tile_size) << name;
    EXPECT_EQ(info.is_default, 0) << name;
    EXPECT_EQ(info.min_compute_capability, k->min_compute_capability) << name;
    EXPECT_EQ(info.outputs_per_thread, k->outputs_per_thread) << name;
  }
  EXPECT_EQ(listed, int(mode.mma_sync.size()) + (has_kernel(mode.hopper.name) ? 1 : 0));
}

INSTANTIATE_TEST_SUITE_P(Modes, TensorCoreKernels, ::testing::ValuesIn(kModes), mode_name);

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
      {TMM_ALGO_BLOCKED, 32, TMM_MATH_TF32, "small"},                      // no TF32 row of 32
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
  // Tiles 128 and 256 are TF32 rows' too (and 64, TensorCoreCorrectness's): BLOCKED with
  // them runs tensor cores (256 where the device holds its shared memory, else the strict
  // 128 x 256 kernel).
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

// A last wave at most a quarter full, on Hopper: AUTO splits its tiles along k and says
// so in the report; the partial sums (under FP32_ACCURATE each a sum and its correction)
// add up within the mode's bound. Row-major NN through the host API (D = C^T in the
// kernel, B through registers, beta != 0, padded rows) and TN from misaligned device
// pointers (both operands packed K-major, beta = 0). TF32: 128 x 256 tiles, k = 512 (16
// steps of 32: two slices each). FP32_ACCURATE: 128 x 128 tiles, k = 1024 (32 steps of
// 32: up to four slices); and under a device-memory budget that holds the unsplit
// kernel's workspace but not the partial sums, the same kernel runs unsplit.
TEST_P(TensorCoreModes, PartialLastWaveSplitAlongKStaysWithinTheModesBound) {
  struct Wave {
    const char* kernel;
    int64_t tile_cols, k;
    float alpha, host_beta;
    int min_splits, max_splits;
    int runs;  // host, device, and (3) host under the budget
  };
  const Wave w = GetParam().mode == TMM_MATH_TF32
                     ? Wave{kTf32HopperKernel, 256, 512, 0.75f, 1.25f, 2, 2, 2}
                     : Wave{kX3HopperKernel, 128, 1024, -1.5f, 0.75f, 2, 4, 3};
  if (!hopper_ || !has_kernel(w.kernel))
    GTEST_SKIP() << "only the Hopper kernels split the last wave along k";
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t edge = tmm_test::partial_wave_edge(128, w.tile_cols, multiprocessors_);
  for (int run = 0; run < w.runs; ++run) {
    const bool device = run == 1, budget = run == 2;
    GemmCase g;
    g.ta = device ? TMM_TRANS : TMM_NO_TRANS;
    g.m = g.n = edge;
    g.k = w.k;
    g.alpha = w.alpha;
    g.beta = device ? 0.0f : w.host_beta;
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
    const std::optional<GemmCase> strict = yardstick(g, call);
    ASSERT_EQ(call(g), TMM_SUCCESS) << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    EXPECT_STREQ(r.kernel, w.kernel);
    if (budget) {
      EXPECT_EQ(r.splits, 1) << "no room for the partial sums: unsplit";
    } else {
      EXPECT_GE(r.splits, w.min_splits) << "the last wave's tiles in slices of k";
      EXPECT_LE(r.splits, w.max_splits) << "slices of at least 8 steps";
    }
    expect_within_bound(g, r, strict);
  }
}

// alpha multiplies the FP32 sums, never the inputs: with small integers (exact in TF32;
// under FP32_ACCURATE their small parts are 0) the alpha = +-Inf rule holds as under
// FP32.
TEST_P(TensorCoreModes, AlphaInfinityFollowsTheRule) {
  GemmCase shape;  // expect_alpha_inf_rule's: 37 x 29, row-major
  shape.m = 37;
  shape.n = 29;
  for (int64_t k : {int64_t(5), int64_t(700)}) {
    shape.k = k;
    tmm_test::expect_alpha_inf_rule(h_, TMM_ALGO_AUTO, k);
    expect_planner_ran(last_report(h_), shape, 0);
  }
}

// The streamed host path chooses a kernel per chunk with the handle's settings: it
// inherits the mode, and the report says so.
TEST_P(TensorCoreModes, StreamedPathRunsTheModeAndSaysSo) {
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
    const std::optional<GemmCase> strict =
        yardstick(g, [&](GemmCase& s) { return tmm_test::run_case(h_, s); });
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
    const tmm_report r = last_report(h_);
    EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
    if (GetParam().mode == TMM_MATH_TF32) {
      expect_tf32_ran(r, auto_tile(g));
    } else if (x3_ && hopper_ && small_product(g)) {  // strict FP32, the faster there
      EXPECT_TRUE(strict_fp32_row(r.kernel)) << r.kernel;
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
    } else if (x3_) {  // a 3xTF32 kernel of the chunks' choosing
      EXPECT_EQ(std::string(r.kernel).rfind("tf32x3_", 0), 0u) << r.kernel;
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32_ACCURATE);
    }
    expect_within_bound(g, r, strict);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, TensorCoreModes, ::testing::ValuesIn(kModes), mode_name);

}  // namespace
}  // namespace tensor_cores_test
