// test_tensor_cores, TF32's own tests: the proof that tensor cores ran (TF32's error
// well above strict FP32's on the same data, and the result equal to the product of
// the TF32-rounded inputs), the wide kernel for large products, the streamed path's
// chunks that would need a workspace, and TMM_MATH_MODE. The tests TF32 shares with
// FP32_ACCURATE: test_tensor_cores.cpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tensor_cores_fixture.hpp"

namespace tensor_cores_test {
namespace {

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
  EXPECT_TRUE(strict_fp32_row(fp32.kernel, g.m, g.n, g.k));
  EXPECT_TRUE(tmm_test::check_case(strict));

  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_TF32), TMM_SUCCESS);
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  expect_tf32_ran(last_report(h_), auto_tile(g));
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

// ---- Large products, the streamed path, the environment ---------------------------

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
  GemmCase shape;  // row-major, as called
  shape.m = m;
  shape.n = n;
  shape.k = k;
  expect_tf32_ran(last_report(h_), auto_tile(shape));
  for (float x : c) ASSERT_EQ(x, -0.125f * float(k)) << "exact in TF32";
}

// The streamed path gives its chunk products no workspace: where the Hopper kernel
// would first have to pack an operand (both MN-major: A transposed, B not), the chunk
// runs the mma.sync row of the tile instead; elsewhere the Hopper kernel. The wide tile
// asked for (BLOCKED 256: AUTO would run these small chunks in the 64 x 64 tile on
// Hopper), every transpose pair.
TEST_F(TensorCores, StreamedChunksNeedingAWorkspaceRunAKernelWithout) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 256), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
    for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
      GemmCase g;
      g.ta = ta;
      g.tb = tb;
      g.m = 2048;
      g.n = 2304;
      g.k = 40;
      g.beta = 0.5f;
      tmm_test::fill_case(g, seed + uint32_t(2 * ta + tb));
      SCOPED_TRACE(tmm_test::describe(g));
      ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
      const tmm_report r = last_report(h_);
      EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
      const bool wide = wide_fits_ && tensor_cores_;
      if (wide) {
        EXPECT_EQ(r.tile_size, 256);
        EXPECT_EQ(r.math_mode, TMM_MATH_TF32);
      }
      if (hopper_) {
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
  // 64 x 64 x 600: A (64 x 600) and B (600 x 64) are the same ones. Not tiny (k over
  // 512), so AUTO runs TF32 on Hopper too.
  std::vector<float> a(64 * 600, 1.0f), c(64 * 64);
  ASSERT_EQ(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 64, 64, 600, 1.0f, a.data(),
                      600, a.data(), 64, 0.0f, c.data(), 64),
            TMM_SUCCESS);
  const tmm_report r = last_report(h);
  EXPECT_EQ(r.math_mode, d.compute_capability_major >= 8 ? TMM_MATH_TF32 : TMM_MATH_FP32);
  for (float x : c) ASSERT_EQ(x, 600.0f);
  tmm_destroy(h);
}

}  // namespace
}  // namespace tensor_cores_test
