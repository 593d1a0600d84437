// Every tensor-core row of the CUDA kernel table (lib/cuda/kernels/kernel_table.cu)
// through its own launcher, against FP64 with its mode's bound, the split last waves
// included: the API runs only the first row of a setting that runs on the device.
// Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/gemm_problem.hpp"
#include "core/settings.hpp"
#include "gemm_reference.hpp"
#include "plan/planner.hpp"
#include "plan/tf32_shapes.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {
namespace {

// ---- Every tensor-core row through its own launcher ------------------------------

// The current device's compute capability, major * 10 + minor (0 if unknown).
int current_cc() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return 0;
  return 10 * major + minor;
}

// g (row-major) through `row`'s own launcher with `plan`, on device copies; C comes
// back into g. The workspace, if any, is poisoned first: a partial sum the kernel
// failed to write would show.
void run_row(const KernelEntry& row, tmm_test::GemmCase& g, const KernelPlan& plan) {
  auto upload = [](const std::vector<float>& v) {
    float* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, v.size() * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    return d;
  };
  float *a = upload(g.a), *b = upload(g.b), *c = upload(g.c), *workspace = nullptr;
  const GemmProblem p = make_problem(Layout::RowMajor, g.ta == TMM_TRANS, g.tb == TMM_TRANS, g.m,
                                     g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
  const size_t bytes = row.workspace != nullptr ? row.workspace(p, plan) : 0;
  if (plan.splits > 1 && row.workspace != nullptr) {  // room for the partial sums
    EXPECT_GT(bytes, row.workspace(p, KernelPlan{plan.tile, plan.coarsening, 1}));
  }
  if (bytes > 0) {
    EXPECT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(workspace, 0x7f, bytes), cudaSuccess);
  }
  row.launch(p, plan, workspace, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(g.c.data(), c, g.c.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (float* d : {a, b, c, workspace}) cudaFree(d);
}

tmm_test::Arithmetic arithmetic_of(const KernelEntry& row) {
  return row.math_mode == MathMode::Tf32           ? tmm_test::Arithmetic::Tf32
         : row.math_mode == MathMode::Fp32Accurate ? tmm_test::Arithmetic::Fp32Accurate
                                                   : tmm_test::Arithmetic::Fp32;
}

// Through the API a setting runs the first row of it that runs on the device: on an
// H100 the mma.sync 128 x 256 row stands behind the Hopper one and would go
// untested. Here each row that runs on this device multiplies every transpose pair
// on ragged shapes, checked against FP64 with its mode's bound.
TEST(TensorCoreRows, EachRowThatRunsHereMatchesFp64) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int rows = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    if (row.math_mode == MathMode::Fp32 || !runs_here(row, cc)) continue;
    ++rows;
    int variant = 0;
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        tmm_test::GemmCase g;
        g.ta = ta;
        g.tb = tb;
        g.m = 131 + variant;
        g.n = 263 - 2 * variant;
        g.k = 77 + 5 * variant;
        g.alpha = 0.75f;
        g.beta = variant % 2 ? 0.0f : 0.5f;
        g.pad = variant % 2;
        tmm_test::fill_case(g, seed + uint32_t(variant));
        ++variant;
        SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g));
        run_row(row, g, KernelPlan{row.tile, row.coarsening, 1});
        EXPECT_TRUE(tmm_test::check_case(g, arithmetic_of(row)));
      }
    }
  }
  // Compute capability 8.0 and later have the mma.sync rows at least.
  if (cc >= 80) {
    EXPECT_GE(rows, 2);
  }
}

// The rows that split their last wave along k (plan_tail), with a split forced on small
// products: 1, 5 or 8 of the last tiles (of at least 9) in up to 4 slices of k, the last
// slice short (k = 333: 11 steps of 32, slices of 3 and a last of 2, 13 in k past the
// last whole step). Every transpose, so every variant of the TF32 kernel (D = C^T among
// them), beta 0 and not, padded rows.
TEST(TensorCoreRows, SplitLastWavesMatchFp64) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int rows = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    // Float rows: the FP64 rows' splits run in test_dgemm (DgemmCuda.*Split*).
    if (row.plan_tail == nullptr || row.precision != Precision::F32 || !runs_here(row, cc))
      continue;
    ++rows;
    int variant = 0;
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (int64_t tail : {1, 5, 8}) {
          tmm_test::GemmCase g;
          g.ta = ta;
          g.tb = tb;
          g.m = 300 + variant;
          g.n = 520 - variant;
          g.k = 333;
          g.alpha = -1.5f;
          g.beta = variant % 2 ? 0.0f : 0.5f;
          g.pad = variant % 3;
          tmm_test::fill_case(g, seed + uint32_t(variant));
          ++variant;
          SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g) + " tail " +
                       std::to_string(tail));
          const KernelPlan plan{row.tile, row.coarsening, 4, tail};
          run_row(row, g, plan);
          EXPECT_TRUE(tmm_test::check_case(g, arithmetic_of(row)));
        }
      }
    }
  }
  // On cc 9.0 every row with a split runs (the Hopper rows: their sm_90a code loads).
  int with_split = 0;
  for (const KernelEntry& row : cuda_kernel_table())
    with_split += row.plan_tail != nullptr && row.precision == Precision::F32;
  if (cc == 90) {
    EXPECT_EQ(rows, with_split);
  }
}

// Every tile of the launch split (one wave of tiles over deep k: plan_tail_split
// splits them all, and no block owns a whole tile). Each row's tiles counted as its
// launcher counts them (wgmma_tiles, on the operands as the launcher packs them), on
// 200 x 100 (one to two tiles) and 300 x 520; every transpose, beta 0 and not.
TEST(TensorCoreRows, EveryTileSplitMatchesFp64) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int variant = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    // Float rows: the FP64 rows' splits run in test_dgemm (DgemmCuda.*Split*).
    if (row.plan_tail == nullptr || row.precision != Precision::F32 || !runs_here(row, cc))
      continue;
    const WgmmaShapeInfo& shape =
        row.math_mode == MathMode::Tf32 ? kTf32Wgmma128x256 : kTf32x3Wgmma128x128;
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (int64_t m : {200, 300}) {
          tmm_test::GemmCase g;
          g.ta = ta;
          g.tb = tb;
          g.m = m;
          g.n = m == 200 ? 100 : 520;
          g.k = 333;
          g.alpha = 0.75f;
          g.beta = variant % 2 ? 0.0f : -0.5f;
          g.pad = variant % 3;
          tmm_test::fill_case(g, seed + uint32_t(variant));
          ++variant;
          // The tiles as the launcher counts them: its device buffers start on 256-byte
          // boundaries, so only the leading dimensions decide which operands it packs.
          const float* aligned = reinterpret_cast<const float*>(uintptr_t(256));
          const GemmProblem shape_only = make_problem(
              Layout::RowMajor, g.ta == TMM_TRANS, g.tb == TMM_TRANS, g.m, g.n, g.k, g.alpha,
              aligned, g.lda, aligned, g.ldb, g.beta, const_cast<float*>(aligned), g.ldc);
          const int64_t tiles =
              wgmma_tiles(shape_only, shape, wgmma_operands(shape_only, shape).transposed);
          SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g) + " tiles " +
                       std::to_string(tiles));
          run_row(row, g, KernelPlan{row.tile, row.coarsening, 4, tiles});
          EXPECT_TRUE(tmm_test::check_case(g, arithmetic_of(row)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace tiledmm
