// The math modes on CUDA (TMM_OPTION_MATH_MODE) and the TF32 tensor-core kernel:
// both layouts, all four transposes, beta zero (C poisoned with NaN) and not, odd
// shapes, padded leading dimensions and device pointers whose offsets break 16-byte
// alignment, against an FP64 reference with the TF32 bound of
// tmm_test::check_case (gemm_reference.hpp derives it). Then the proof that tensor
// cores ran (TF32's error well above strict FP32's on the same data, and the result
// equal to the product of the TF32-rounded inputs), the report, the alpha = Inf rule,
// and every place where the mode has no kernel and the strict one runs instead.
//
// On a device older than compute capability 8.0, TF32 has no kernel: the same tests
// then expect the strict kernel, reported as FP32.
//
// FP32_ACCURATE (3xTF32 with error correction, tf32x3_mma_kernel.cu), at the end: the
// same layouts, transposes, edges and alignments against FP64, with an error bound of
// twice that of a strict FP32 run on the same inputs (plus a few units in the last
// place); k = 16384, where it must be within 1.1 times strict FP32's error (3xTF32
// summed in one tensor-core accumulator is many times worse there); exponents spread
// over 2^-16..2^16; what the header documents at the ends of the range (inputs
// around 2^-120 keep FP32 accuracy, inputs within 2^-11 of FLT_MAX become Inf);
// specials; the report and the kernel list.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gemm_reference.hpp"

namespace {

using tmm_test::Arithmetic;
using tmm_test::fill_exponents;
using tmm_test::GemmCase;

// The TF32 kernels: 128 x 128 tiles (80 KiB of shared memory: every device of compute
// capability 8.0 or later), and 128 x 256 (162 KiB: where the device lets a block opt
// into that much; the planner takes it for products with a tile of it per SM).
constexpr const char* kTf32Kernel = "tf32_mma_128x128";
constexpr const char* kTf32WideKernel = "tf32_mma_128x256";
constexpr int kTf32WideSharedBytes = 165888;
constexpr const char* kTf32HopperKernel = "tf32_wgmma_128x256";  // sm_90a builds, cc 9.0

// The library lists a kernel of this name.
bool has_kernel(const char* name) {
  for (int i = 0;; ++i) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) return false;
    if (std::string(info.name) == name) return true;
  }
}

// Device memory that frees itself.
struct DeviceFloats {
  float* ptr = nullptr;
  explicit DeviceFloats(size_t count) {
    EXPECT_EQ(cudaMalloc(&ptr, count * sizeof(float)), cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(ptr); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
};

// g through tmm_sgemm_device, each matrix `offset` floats into its own device buffer
// (offset 1 breaks the 16-byte alignment of every row). C comes back whole, padding
// included, so that check_case sees what the call wrote.
tmm_status run_device_case(tmm_handle h, GemmCase& g, int64_t offset) {
  DeviceFloats a(size_t(offset) + g.a.size()), b(size_t(offset) + g.b.size()),
      c(size_t(offset) + g.c.size());
  auto up = [&](float* dst, const std::vector<float>& src) {
    EXPECT_EQ(
        cudaMemcpy(dst + offset, src.data(), src.size() * sizeof(float), cudaMemcpyHostToDevice),
        cudaSuccess);
  };
  up(a.ptr, g.a);
  up(b.ptr, g.b);
  up(c.ptr, g.c);
  const tmm_status s =
      tmm_sgemm_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a.ptr + offset, g.lda,
                       b.ptr + offset, g.ldb, g.beta, c.ptr + offset, g.ldc);
  if (s != TMM_SUCCESS) return s;
  EXPECT_EQ(tmm_synchronize(h), TMM_SUCCESS);
  EXPECT_EQ(
      cudaMemcpy(g.c.data(), c.ptr + offset, g.c.size() * sizeof(float), cudaMemcpyDeviceToHost),
      cudaSuccess);
  return s;
}

tmm_report last_report(tmm_handle h) {
  tmm_report r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
  return r;
}

// ||C - C_exact||_F / ||C_exact||_F over the m x n part, in FP64.
double relative_error(const GemmCase& g) {
  double d2 = 0, r2 = 0;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double dot = 0;
      for (int64_t q = 0; q < g.k; ++q) dot += g.op_a(i, q) * g.op_b(q, j);
      const double c0 = g.c0[g.at(i, j, g.ldc)];
      const double ref = g.alpha * dot + (g.beta == 0.0f ? 0.0 : g.beta * c0);
      const double d = double(g.c[g.at(i, j, g.ldc)]) - ref;
      d2 += d * d;
      r2 += ref * ref;
    }
  }
  return std::sqrt(d2 / r2);
}

class TensorCores : public ::testing::Test {
 protected:
  void SetUp() override {
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_TF32), TMM_SUCCESS);
    tmm_device_info d{};
    ASSERT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
    tensor_cores_ = d.compute_capability_major >= 8;
    int optin = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, d.device),
              cudaSuccess);
    wide_fits_ = optin >= kTf32WideSharedBytes;
    // Hopper runs its own kernel for the wide tile where the library has its code.
    hopper_ = d.compute_capability_major == 9 && d.compute_capability_minor == 0 &&
              has_kernel(kTf32HopperKernel);
  }
  void TearDown() override { tmm_destroy(h_); }

  // The tile AUTO and BLOCKED with tile 0 take under TF32 on this device: the wide
  // one on Hopper, elsewhere only for products with a wide tile per SM (full_wave).
  int auto_tile(bool full_wave = false) const {
    return hopper_ || (full_wave && wide_fits_) ? 256 : 128;
  }

  // What AUTO and BLOCKED must have run under TF32 on this device with the tile
  // `tile` (128 or 256) chosen: its TF32 kernel, or the strict kernel where the
  // device cannot.
  void expect_tf32_ran(const tmm_report& r, int tile) const {
    const bool wide = tile == 256;
    EXPECT_EQ(r.algorithm, TMM_ALGO_BLOCKED);
    if (tensor_cores_ && (!wide || wide_fits_)) {
      EXPECT_STREQ(r.kernel, !wide ? kTf32Kernel : hopper_ ? kTf32HopperKernel : kTf32WideKernel);
      EXPECT_EQ(r.math_mode, TMM_MATH_TF32);
      EXPECT_EQ(r.tile_size, wide ? 256 : 128);
      EXPECT_EQ(r.splits, 1);
      EXPECT_EQ(r.coarsening, 128) << "64 x 64 per warp: 128 outputs per thread";
    } else {
      EXPECT_EQ(std::string(r.kernel).rfind("blocked_", 0), 0u) << r.kernel;
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
      if (wide) {
        EXPECT_EQ(r.tile_size, 256) << "the strict kernel of the tile asked for";
      }
    }
  }

  Arithmetic arithmetic(bool wide = false) const {
    return tensor_cores_ && (!wide || wide_fits_) ? Arithmetic::Tf32 : Arithmetic::Fp32;
  }

  tmm_handle h_ = nullptr;
  bool tensor_cores_ = false;
  bool wide_fits_ = false;  // the device holds the 128 x 256 kernel's shared memory
  bool hopper_ = false;     // the wide tile runs tf32_wgmma_128x256
};

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

// ---- Proof that tensor cores ran ---------------------------------------------------

// The same data in strict FP32 and in TF32: TF32's error must be far above FP32's
// (inputs lose 13 bits), or the "TF32" result came from FP32 arithmetic and the TF32
// bound above proved nothing. check_case's TF32 checks (the result within FP32's sums
// of the product of the rounded inputs, and 4 times nearer it than the exact product)
// show the rounding is to nearest and nothing else. Each check fails the other
// arithmetic's result on this data: TF32 is outside the FP32 and FP32_ACCURATE
// bounds, strict FP32 fails the TF32 checks.
TEST_F(TensorCores, Tf32ErrorIsFarAboveStrictFp32OnTheSameData) {
  if (!tensor_cores_) GTEST_SKIP() << "no tensor cores with TF32 below compute capability 8.0";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  GemmCase g;
  g.m = 192;
  g.n = 160;
  g.k = tmm_test::under_sanitizer() ? 96 : 700;
  tmm_test::fill_case(g, seed);
  GemmCase strict = g;

  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_FP32), TMM_SUCCESS);
  ASSERT_EQ(tmm_test::run_case(h_, strict), TMM_SUCCESS) << tmm_get_error_message(h_);
  const tmm_report fp32 = last_report(h_);
  EXPECT_EQ(fp32.math_mode, TMM_MATH_FP32);
  EXPECT_EQ(std::string(fp32.kernel).rfind("blocked_", 0), 0u) << fp32.kernel;
  EXPECT_TRUE(tmm_test::check_case(strict));

  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_TF32), TMM_SUCCESS);
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  expect_tf32_ran(last_report(h_), auto_tile());
  EXPECT_TRUE(tmm_test::check_case(g, Arithmetic::Tf32));
  EXPECT_FALSE(tmm_test::check_case(g, Arithmetic::Fp32)) << "TF32 within the FP32 bound";
  EXPECT_FALSE(tmm_test::check_case(g, Arithmetic::Fp32Accurate))
      << "TF32 within FP32_ACCURATE's bound";
  EXPECT_FALSE(tmm_test::check_case(strict, Arithmetic::Tf32))
      << "strict FP32 passes as the product of TF32-rounded inputs";

  const double e_fp32 = relative_error(strict), e_tf32 = relative_error(g);
  std::printf("relative Frobenius error vs FP64: FP32 %.3e, TF32 %.3e\n", e_fp32, e_tf32);
  EXPECT_GT(e_tf32, 16 * e_fp32) << "TF32 inputs keep 11 of 24 bits: errors 2^13 times larger";
  EXPECT_GT(e_tf32, 1e-5) << "about 2^-11 / sqrt(3) per product, averaged over k";
  EXPECT_LT(e_tf32, 1e-3);
}

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

// The planner takes the wide kernel where the product has a tile of it per SM (on
// the direct path: the streamed one multiplies smaller tiles of C), on Hopper always.
TEST_F(TensorCores, LargeProductsTakeTheWideKernel) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  const int64_t m = 2048, n = 2304, k = 64;  // 16 x 9 = 144 wide tiles, over 132 SMs
  std::vector<float> a(size_t(m * k), 0.5f), b(size_t(k * n), -0.25f), c(size_t(m * n), 0.0f);
  ASSERT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, 1.0f, a.data(), k,
                      b.data(), n, 0.0f, c.data(), n),
            TMM_SUCCESS)
      << tmm_get_error_message(h_);
  tmm_device_info d{};
  ASSERT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
  const bool enough = (m / 128) * (n / 256) >= d.multiprocessors;
  expect_tf32_ran(last_report(h_), auto_tile(enough));
  for (float x : c) ASSERT_EQ(x, -0.125f * float(k)) << "exact in TF32";
}

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

// ---- IEEE specials, the streamed path, the environment ----------------------------

// alpha multiplies the FP32 sums, never the inputs: with small integers (exact in
// TF32) the alpha = +-Inf rule holds under TF32 as under FP32.
TEST_F(TensorCores, AlphaInfinityFollowsTheRule) {
  for (int64_t k : {int64_t(5), int64_t(700)}) {
    tmm_test::expect_alpha_inf_rule(h_, TMM_ALGO_AUTO, k);
    expect_tf32_ran(last_report(h_), auto_tile());
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

// The streamed path gives its chunk products no workspace: where the Hopper kernel
// would first have to pack an operand (both MN-major: A transposed, B not), the chunk
// runs the mma.sync row of the tile instead; elsewhere the Hopper kernel. Products
// large enough for the wide tile, every transpose pair.
TEST_F(TensorCores, StreamedChunksNeedingAWorkspaceRunAKernelWithout) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  tmm_device_info d{};
  ASSERT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
  for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
    for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
      GemmCase g;
      g.ta = ta;
      g.tb = tb;
      g.m = 2048;
      g.n = 2304;  // 16 x 9 = 144 wide tiles, over 132 SMs
      g.k = 40;
      g.beta = 0.5f;
      tmm_test::fill_case(g, seed + uint32_t(2 * ta + tb));
      SCOPED_TRACE(tmm_test::describe(g));
      ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
      const tmm_report r = last_report(h_);
      EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
      const bool wide = wide_fits_ && (g.m / 128) * (g.n / 256) >= d.multiprocessors;
      if (hopper_ && wide && r.tile_size == 256) {
        const bool packs = ta == TMM_TRANS && tb == TMM_NO_TRANS;
        EXPECT_STREQ(r.kernel, packs ? kTf32WideKernel : kTf32HopperKernel);
      }
      EXPECT_TRUE(tmm_test::check_case(g, arithmetic(wide)));
    }
  }
}

// TMM_MATH_MODE sets the default of handles created while it is set, so that the
// bindings and the drop-in BLAS can allow TF32 with no change to the program.
TEST(MathModeEnvironment, SetsTheDefaultOfNewCudaHandles) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const char* before = std::getenv("TMM_MATH_MODE");
  const std::string saved = before ? before : "";
  ASSERT_EQ(setenv("TMM_MATH_MODE", "TF32", 1), 0);
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  before ? setenv("TMM_MATH_MODE", saved.c_str(), 1) : unsetenv("TMM_MATH_MODE");
  int64_t mode = -1;
  ASSERT_EQ(tmm_get_option(h, TMM_OPTION_MATH_MODE, &mode), TMM_SUCCESS);
  EXPECT_EQ(mode, TMM_MATH_TF32);
  tmm_device_info d{};
  ASSERT_EQ(tmm_get_device_info(h, &d), TMM_SUCCESS);
  std::vector<float> a(64 * 64, 1.0f), c(64 * 64);
  ASSERT_EQ(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 64, 64, 64, 1.0f, a.data(), 64,
                      a.data(), 64, 0.0f, c.data(), 64),
            TMM_SUCCESS);
  const tmm_report r = last_report(h);
  EXPECT_EQ(r.math_mode, d.compute_capability_major >= 8 ? TMM_MATH_TF32 : TMM_MATH_FP32);
  for (float x : c) ASSERT_EQ(x, 64.0f);
  tmm_destroy(h);
}

// ---- FP32_ACCURATE: 3xTF32 with error correction ------------------------------------

// The 3xTF32 kernels: 128 x 64 tiles (tile 128), which the planner takes where the
// product has a tile of it per SM, and 64 x 64 (tile 64); 32 x 32 per warp.
constexpr const char* kX3Kernel = "tf32x3_mma_128x64";
constexpr const char* kX3SmallKernel = "tf32x3_mma_64x64";
// Tile 128 on Hopper where the library has its sm_90a code: 128 x 128, 64 per thread.
constexpr const char* kX3HopperKernel = "tf32x3_wgmma_128x128";

// The exact result of a case over its m x n part (FP64), and the scale of each
// element's rounding errors in FP32: |alpha| sum over l of |a b| + |beta c0|.
struct Exact {
  std::vector<double> ref, scale;
};

Exact exact_of(const GemmCase& g) {
  Exact x;
  x.ref.reserve(size_t(g.m * g.n));
  x.scale.reserve(size_t(g.m * g.n));
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double dot = 0, mag = 0;
      for (int64_t q = 0; q < g.k; ++q) {
        const double p = g.op_a(i, q) * g.op_b(q, j);
        dot += p;
        mag += std::fabs(p);
      }
      const double beta_c0 = g.beta == 0.0f ? 0.0 : double(g.beta) * g.c0[g.at(i, j, g.ldc)];
      x.ref.push_back(double(g.alpha) * dot + beta_c0);
      x.scale.push_back(std::fabs(double(g.alpha)) * mag + std::fabs(beta_c0));
    }
  }
  return x;
}

// ||C - exact||_F over ||exact||_F, or (scaled) over ||scale||_F, which cancellation
// between alpha AB and beta C cannot make small.
double error_against(const GemmCase& g, const Exact& x, bool scaled) {
  double d2 = 0, r2 = 0;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      const size_t e = size_t(i * g.n + j);
      const double d = double(g.c[g.at(i, j, g.ldc)]) - x.ref[e];
      const double r = scaled ? x.scale[e] : x.ref[e];
      d2 += d * d;
      r2 += r * r;
    }
  }
  return std::sqrt(d2 / r2);
}

class Fp32Accurate : public TensorCores {
 protected:
  void SetUp() override {
    TensorCores::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_FP32_ACCURATE), TMM_SUCCESS);
    tmm_device_info d{};
    ASSERT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
    multiprocessors_ = d.multiprocessors;
    // 3xTF32 runs where it beats strict FP32: sm_80 and sm_90 and later (not sm_86/89).
    const int cc = 10 * d.compute_capability_major + d.compute_capability_minor;
    x3_ = cc == 80 || cc >= 90;
  }

  // The kernel AUTO and BLOCKED run for g under FP32_ACCURATE with `tile` (0: the
  // planner's) on a device with tensor cores: 128 x 64 where the canonical (row-major)
  // product has a tile of it per SM, else 64 x 64.
  const char* x3_kernel(const GemmCase& g, int tile) const {
    const int64_t m = g.row() ? g.m : g.n, n = g.row() ? g.n : g.m;
    if (tile == 0) tile = ((m + 127) / 128) * ((n + 63) / 64) >= multiprocessors_ ? 128 : 64;
    return tile == 128 ? (hopper_ ? kX3HopperKernel : kX3Kernel) : kX3SmallKernel;
  }

  void expect_x3_ran(const tmm_report& r, const char* kernel) const {
    EXPECT_EQ(r.algorithm, TMM_ALGO_BLOCKED);
    // The streamed path gives its chunks no workspace, which the Hopper kernel needs
    // (it splits A and B there): they run the mma.sync row of the tile.
    if (r.host_path == TMM_HOST_PATH_STREAMED && std::string(kernel) == kX3HopperKernel)
      kernel = kX3Kernel;
    if (x3_) {
      EXPECT_STREQ(r.kernel, kernel);
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32_ACCURATE);
      const bool hopper = std::string(kernel) == kX3HopperKernel;
      EXPECT_EQ(r.tile_size, hopper || std::string(kernel) == kX3Kernel ? 128 : 64);
      EXPECT_EQ(r.splits, 1);
      EXPECT_EQ(r.coarsening, hopper ? 64 : 32) << "outputs per thread";
    } else {
      EXPECT_EQ(std::string(r.kernel).rfind("blocked_", 0), 0u) << r.kernel;
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
    }
  }

  // g (as yet unrun) in strict FP32 through the same call and settings (the math mode
  // aside), for the error of FP32 on the same inputs. The yardstick is itself checked
  // against FP64 with the FP32 bound, where the inputs are finite.
  template <class Run>
  GemmCase strict_run(const GemmCase& g, Run run) {
    GemmCase strict = g;
    EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_FP32), TMM_SUCCESS);
    EXPECT_EQ(run(strict), TMM_SUCCESS) << tmm_get_error_message(h_);
    EXPECT_EQ(last_report(h_).math_mode, TMM_MATH_FP32);
    EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_FP32_ACCURATE), TMM_SUCCESS);
    auto finite = [](const std::vector<float>& v) {
      return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
    };
    if (finite(g.a) && finite(g.b)) {
      EXPECT_TRUE(tmm_test::check_case(strict)) << "the strict FP32 run";
    }
    return strict;
  }

  int multiprocessors_ = 0;
  bool x3_ = false;  // the device runs 3xTF32 for FP32_ACCURATE
};

// The bound of the correctness tests: the scaled error of FP32_ACCURATE within twice
// strict FP32's on the same inputs, plus 2^-21 / sqrt(k) (a few units in the last
// place of a typical element, for the cases where FP32 had little to lose). A
// kernel that dropped a correction term would be at TF32's 2^-11 (1e-5 and more on
// this scale), hundreds of times over.
double x3_bound(double strict, int64_t k) {
  return 2 * strict + std::ldexp(1.0, -21) / std::sqrt(double(k));
}

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

// The correction that makes the mode: at k = 16384 the error must be within 1.1
// times strict FP32's on the same inputs (BLOCKED, whatever split-K the planner
// takes). Tensor cores truncate as they add, so 3xTF32 summed over the whole of k in
// one mma accumulator is about 12 times worse there (measured with cuBLAS on the
// H100); these kernels add each tile's sum (mma.sync) or each fold's (wgmma, 96 in k)
// in FP32 and keep the rounding errors. Both
// kernels (the planner's 64 x 64 here, and 128 x 64), uniform [-1, 1] inputs and
// inputs whose exponents spread over 2^-16..2^16 (on Hopper, tile 128 is the wgmma
// kernel).
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
    for (int tile : {0, 128}) {
      ASSERT_EQ(tmm_set_algorithm(h_, tile == 0 ? TMM_ALGO_AUTO : TMM_ALGO_BLOCKED), TMM_SUCCESS);
      ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
      GemmCase r = g;
      ASSERT_EQ(tmm_test::run_case(h_, r), TMM_SUCCESS) << tmm_get_error_message(h_);
      const tmm_report report = last_report(h_);
      expect_x3_ran(report, x3_kernel(g, tile));
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
  const Exact x = exact_of(g);
  const GemmCase strict = strict_run(g, [&](GemmCase& s) { return tmm_test::run_case(h_, s); });
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  expect_x3_ran(last_report(h_), x3_kernel(g, 0));
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
// element (about 2^-128 here), a thousand times that. Both kernels: AUTO's (mma.sync,
// 64 x 64) and tile 128 (on Hopper the wgmma one).
TEST_F(Fp32Accurate, InputsBelow2ToTheMinus125AreCarriedWithin2ToTheMinus148) {
  if (!x3_)
    GTEST_SKIP()
        << "no 3xTF32 kernel on this device (no TF32 tensor cores, or TF32 at the FP32 rate)";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  for (int tile : {0, 128}) {
    GemmCase g;
    g.m = 130;
    g.n = 70;
    g.k = 96;
    tmm_test::fill_case(g, seed + uint32_t(tile));
    std::mt19937 rng(seed + uint32_t(tile));
    fill_exponents(g.a, -135, -126, rng);
    ASSERT_EQ(tmm_set_algorithm(h_, tile == 0 ? TMM_ALGO_AUTO : TMM_ALGO_BLOCKED), TMM_SUCCESS);
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
  for (int tile : {0, 128}) {
    ASSERT_EQ(tmm_set_algorithm(h_, tile == 0 ? TMM_ALGO_AUTO : TMM_ALGO_BLOCKED), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
    // C (2 x 1) = A (2 x 1) B (1 x 1): rows x and x 2^-64.
    std::vector<float> a = {x, std::ldexp(x, -64)}, b = {y}, c(2, NAN);
    ASSERT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 2, 1, 1, 1.0f, a.data(), 1,
                        b.data(), 1, 0.0f, c.data(), 1),
              TMM_SUCCESS)
        << tmm_get_error_message(h_);
    expect_x3_ran(last_report(h_), tile == 0 ? kX3SmallKernel
                                   : hopper_ ? kX3HopperKernel
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
  const GemmCase strict = strict_run(g, [&](GemmCase& s) { return tmm_test::run_case(h_, s); });
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  expect_x3_ran(last_report(h_), x3_kernel(g, 0));
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
