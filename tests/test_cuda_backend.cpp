// What only the CUDA backend has: device pointers, streams, device info, timing
// breakdowns, grow-only buffers and recovery from running out of device memory.
// Skips without a GPU; fails instead when TMM_REQUIRE_GPU=1.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

namespace {

using tmm_test::GemmCase;

class CudaBackend : public ::testing::Test {
 protected:
  // These tests are about the kernels and the direct copies, so the host API takes the
  // direct path here; test_streamed.cpp tests the streamed one.
  void SetUp() override {
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }
  tmm_handle h_ = nullptr;
};

// Device copies of a case's operands, freed at scope exit.
struct DeviceCase {
  float *a = nullptr, *b = nullptr, *c = nullptr;
  explicit DeviceCase(const GemmCase& g, bool managed = false) {
    alloc(&a, g.a, managed);
    alloc(&b, g.b, managed);
    alloc(&c, g.c, managed);
  }
  ~DeviceCase() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  static void alloc(float** p, const std::vector<float>& host, bool managed) {
    const size_t bytes = host.size() * sizeof(float);
    ASSERT_EQ(managed ? cudaMallocManaged(p, bytes) : cudaMalloc(p, bytes), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(*p, host.data(), bytes, cudaMemcpyDefault), cudaSuccess);
  }
};

GemmCase random_case(int64_t m, int64_t n, int64_t k, tmm_layout layout, tmm_transpose ta,
                     tmm_transpose tb, float beta) {
  GemmCase g;
  g.layout = layout;
  g.ta = ta;
  g.tb = tb;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = 0.5f;
  g.beta = beta;
  g.pad = 3;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  return g;
}

tmm_status run_device(tmm_handle h, GemmCase& g, DeviceCase& d) {
  return tmm_sgemm_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, d.a, g.lda, d.b, g.ldb,
                          g.beta, d.c, g.ldc);
}

TEST_F(CudaBackend, DevicePointersMatchReference) {
  for (tmm_algorithm algo : {TMM_ALGO_AUTO, TMM_ALGO_NAIVE, TMM_ALGO_TILED, TMM_ALGO_COARSENED}) {
    for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
      for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
        for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
          ASSERT_EQ(tmm_set_algorithm(h_, algo), TMM_SUCCESS);
          GemmCase g = random_case(77, 45, 103, layout, ta, tb, ta == tb ? 0.0f : 1.5f);
          SCOPED_TRACE(tmm_test::describe(g));
          DeviceCase d(g);
          ASSERT_EQ(run_device(h_, g, d), TMM_SUCCESS) << tmm_get_error_message(h_);
          ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
          ASSERT_EQ(cudaMemcpy(g.c.data(), d.c, g.c.size() * sizeof(float), cudaMemcpyDefault),
                    cudaSuccess);
          EXPECT_TRUE(tmm_test::check_case(g));
        }
      }
    }
  }
}

// Pointers 4 bytes past a 16-byte boundary and odd leading dimensions force
// BLOCKED's scalar-load path; aligned ones with interior tiles its vector path.
TEST_F(CudaBackend, BlockedHandlesAlignedAndUnalignedOperands) {
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  for (int tile : {64, 128, 256}) {
    ASSERT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
    for (int64_t offset : {0, 1}) {
      for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
        for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
          GemmCase g = random_case(300, 260, 100, TMM_ROW_MAJOR, ta, tb, 0.75f);
          SCOPED_TRACE(tmm_test::describe(g) + " tile " + std::to_string(tile) + " offset " +
                       std::to_string(offset));
          g.pad = offset ? 1 : 4;  // odd leading dimensions for the unaligned case
          tmm_test::fill_case(g, tmm_test::fresh_seed());
          std::vector<float> ha(g.a.size() + 1), hb(g.b.size() + 1), hc(g.c.size() + 1);
          float *da = nullptr, *db = nullptr, *dc = nullptr;
          ASSERT_EQ(cudaMalloc(&da, ha.size() * sizeof(float)), cudaSuccess);
          ASSERT_EQ(cudaMalloc(&db, hb.size() * sizeof(float)), cudaSuccess);
          ASSERT_EQ(cudaMalloc(&dc, hc.size() * sizeof(float)), cudaSuccess);
          cudaMemcpy(da + offset, g.a.data(), g.a.size() * sizeof(float), cudaMemcpyDefault);
          cudaMemcpy(db + offset, g.b.data(), g.b.size() * sizeof(float), cudaMemcpyDefault);
          cudaMemcpy(dc + offset, g.c.data(), g.c.size() * sizeof(float), cudaMemcpyDefault);
          EXPECT_EQ(tmm_sgemm_device(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, da + offset,
                                     g.lda, db + offset, g.ldb, g.beta, dc + offset, g.ldc),
                    TMM_SUCCESS)
              << tmm_get_error_message(h_);
          ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
          ASSERT_EQ(
              cudaMemcpy(g.c.data(), dc + offset, g.c.size() * sizeof(float), cudaMemcpyDefault),
              cudaSuccess);
          EXPECT_TRUE(tmm_test::check_case(g));
          tmm_timing t{};
          ASSERT_EQ(tmm_get_last_timing(h_, &t), TMM_SUCCESS);
          EXPECT_EQ(t.algorithm, TMM_ALGO_BLOCKED);
          EXPECT_EQ(t.tile_size, tile);
          cudaFree(da);
          cudaFree(db);
          cudaFree(dc);
        }
      }
    }
  }
}

// Few tiles and a long k: the planner splits k over several blocks and reduces
// the partial sums; the result must match like any other.
TEST_F(CudaBackend, SplitKShapesMatchReference) {
  struct Split {
    int64_t m, n, k;
    int tile;  // 0: the planner's choice
  };
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  const int64_t k_scale = tmm_test::under_sanitizer() ? 4 : 1;  // still split under it
  for (const Split sp : {Split{150, 333, 6000 / k_scale, 0}, Split{250, 500, 8192 / k_scale, 256},
                         Split{130, 257, 5000 / k_scale, 128}}) {
    ASSERT_EQ(tmm_set_tile_size(h_, sp.tile), TMM_SUCCESS);
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      const float beta = ta == TMM_TRANS ? -0.5f : 0.0f;
      GemmCase g = random_case(sp.m, sp.n, sp.k, TMM_ROW_MAJOR, ta, TMM_NO_TRANS, beta);
      SCOPED_TRACE(tmm_test::describe(g) + " tile " + std::to_string(sp.tile));
      ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
      EXPECT_TRUE(tmm_test::check_case(g));
      tmm_timing t{};
      ASSERT_EQ(tmm_get_last_timing(h_, &t), TMM_SUCCESS);
      EXPECT_EQ(t.algorithm, TMM_ALGO_BLOCKED);
    }
  }
}

// A budget that holds the operands but not split-K's partial sums: the call runs the
// same kernel unsplit (it used to fail with TMM_ERROR_OUT_OF_MEMORY), and the report
// says so. Without the budget the planner splits this shape.
TEST_F(CudaBackend, SplitKPartialsOverTheBudgetRunUnsplit) {
  GemmCase g = random_case(192, 256, tmm_test::under_sanitizer() ? 4096 : 16384, TMM_ROW_MAJOR,
                           TMM_NO_TRANS, TMM_NO_TRANS, 0.75f);
  g.pad = 0;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  SCOPED_TRACE(tmm_test::describe(g));
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  GemmCase free_run = g;
  ASSERT_EQ(tmm_test::run_case(h_, free_run), TMM_SUCCESS) << tmm_get_error_message(h_);
  tmm_report r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  ASSERT_GT(r.splits, 1) << "the shape must split for this test to mean anything";
  // A, B and C as the direct path holds them (dense: every edge a multiple of 4), and
  // 64 KiB: not the partial sums (splits x m x n floats).
  const int64_t operands = 4 * (g.m * g.k + g.k * g.n + g.m * g.n);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, operands + (64 << 10)),
            TMM_SUCCESS);
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.splits, 1);
  EXPECT_EQ(r.algorithm, TMM_ALGO_BLOCKED);
  EXPECT_TRUE(tmm_test::check_case(g));
}

// C = A B + beta C (row-major, op(A) m x k, op(B) k x n, ld as dense) on small integers
// (fill_exact, seeds seed to seed + 2) through tmm_sgemm: every sum is exact, so the
// result must equal the FP64 reference bit for bit. Returns the elements that differ
// (-1 if the call failed, with a failure recorded) and the call's report.
struct ExactRun {
  int64_t wrong = -1;
  tmm_report report{};
};
ExactRun run_exact(tmm_handle h, int64_t m, int64_t n, int64_t k, tmm_transpose ta,
                   tmm_transpose tb, float beta, uint32_t seed) {
  std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
  tmm_test::fill_exact(a, seed);
  tmm_test::fill_exact(b, seed + 1);
  tmm_test::fill_exact(c, seed + 2);
  const std::vector<float> c0 = c;
  const int64_t lda = ta == TMM_TRANS ? m : k, ldb = tb == TMM_TRANS ? k : n;
  ExactRun run;
  run.report.struct_size = sizeof run.report;
  if (tmm_sgemm(h, TMM_ROW_MAJOR, ta, tb, m, n, k, 1.0f, a.data(), lda, b.data(), ldb, beta,
                c.data(), n) != TMM_SUCCESS ||
      tmm_get_last_report(h, &run.report) != TMM_SUCCESS) {
    ADD_FAILURE() << tmm_get_error_message(h);
    return run;
  }
  run.wrong = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double x = ta == TMM_TRANS ? a[size_t(q * m + i)] : a[size_t(i * k + q)];
        const double y = tb == TMM_TRANS ? b[size_t(j * k + q)] : b[size_t(q * n + j)];
        dot += x * y;
      }
      run.wrong += c[size_t(i * n + j)] != float(dot + double(beta) * c0[size_t(i * n + j)]);
    }
  }
  return run;
}

// Split-K with exact arithmetic: small integers make every partial sum exact, so the
// result must equal the FP64 reference bit for bit; a k-term dropped or counted
// twice at a slice boundary shows as a wrong integer. The report must say that k
// was split, so the test cannot pass on an unsplit kernel.
TEST_F(CudaBackend, SplitKIsExactAcrossSliceBoundaries) {
  struct Split {
    int64_t m, n, k;
    int tile;
  };
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int split_runs = 0;
  for (const Split sp : {Split{150, 333, 6000, 0}, Split{64, 96, 8193, 0},
                         Split{130, 257, 5001, 128}, Split{250, 500, 8192, 256}}) {
    ASSERT_EQ(tmm_set_tile_size(h_, sp.tile), TMM_SUCCESS);
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        const ExactRun run = run_exact(h_, sp.m, sp.n, sp.k, ta, tb, -2.0f, seed);
        ASSERT_GE(run.wrong, 0);
        split_runs += run.report.splits > 1;
        EXPECT_EQ(run.wrong, 0) << sp.m << "x" << sp.n << "x" << sp.k << " splits "
                                << run.report.splits << " kernel " << run.report.kernel;
      }
    }
  }
  EXPECT_GE(split_runs, 12) << "split-K must have run on most of these shapes";
}

// One small tile of C over deep k: past BLOCKED's old cap of 32 slices, so that every
// SM works and each slice sums fewer terms (the planner's cap grows to 1024 where the
// partial sums stay small). Small integers keep every sum exact (|a b| <= 4, k terms:
// under 2^24), so a term lost or doubled at any of the slice boundaries shows as a wrong
// integer, and the report must show more than 32 slices.
TEST_F(CudaBackend, OneTileOverDeepKSplitsPastThirtyTwoSlicesExactly) {
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_AUTO), TMM_SUCCESS);
  // The direct path plans the whole product (the streamed path never splits k).
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t m = 40, n = 24, k = tmm_test::under_sanitizer() ? 32768 + 7 : 131072 + 7;
  for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
    const ExactRun run = run_exact(h_, m, n, k, ta, ta, 0.5f, seed);
    ASSERT_GE(run.wrong, 0);
    EXPECT_GT(run.report.splits, 32) << run.report.kernel;
    EXPECT_EQ(run.wrong, 0) << "splits " << run.report.splits << " kernel " << run.report.kernel;
  }
}

// The thin kernel end to end: AUTO on device pointers takes the thin row where
// thin_pays, with plan_thin's split of k through the backend's workspace (the report
// says so), in every math mode (strict FP32 is an allowed answer of each, and the
// report says it ran); the result is within strict FP32's bound (FP64's in double) and
// a second call gives the same bits. Float 1 x 8192 x 8192 (W along the long side) and
// 8192 x 2 x 8192 col-major TN; double 3 x 2048 x 4099 row-major NT (W along k).
TEST_F(CudaBackend, AutoThinCallsSplitKThroughTheWorkspace) {
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_AUTO), TMM_SUCCESS);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int64_t big = tmm_test::under_sanitizer() ? 2048 : 8192;
  struct Thin {
    int64_t m, n;
    tmm_layout layout;
    tmm_transpose ta, tb;
  };
  for (const Thin t : {Thin{1, big, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS},
                       Thin{big, 2, TMM_COL_MAJOR, TMM_TRANS, TMM_NO_TRANS}}) {
    for (tmm_math_mode mode : {TMM_MATH_FP32, TMM_MATH_TF32, TMM_MATH_FP32_ACCURATE}) {
      ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, mode), TMM_SUCCESS);
      GemmCase g = random_case(t.m, t.n, big, t.layout, t.ta, t.tb, -1.5f);
      g.pad = 0;
      tmm_test::fill_case(g, seed + uint32_t(mode));
      SCOPED_TRACE(tmm_test::describe(g) + " math mode " + std::to_string(mode));
      DeviceCase d(g);
      std::vector<float> first(g.c.size());
      for (int run = 0; run < 2; ++run) {
        ASSERT_EQ(cudaMemcpy(d.c, g.c0.data(), g.c0.size() * sizeof(float), cudaMemcpyDefault),
                  cudaSuccess);
        ASSERT_EQ(run_device(h_, g, d), TMM_SUCCESS) << tmm_get_error_message(h_);
        ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
        ASSERT_EQ(cudaMemcpy(g.c.data(), d.c, g.c.size() * sizeof(float), cudaMemcpyDefault),
                  cudaSuccess);
        tmm_report r{};
        r.struct_size = sizeof r;
        ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
        EXPECT_STREQ(r.kernel, "thin");
        EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
        EXPECT_GT(r.splits, 1) << "a thin product this deep splits k over every SM";
        if (run == 0) {
          EXPECT_TRUE(tmm_test::check_case(g, tmm_test::Arithmetic::Fp32));
          first = g.c;
        } else {
          EXPECT_EQ(g.c, first) << "the same bits from a second call";
        }
      }
    }
  }
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_FP32), TMM_SUCCESS);
  tmm_test::DgemmCase g;
  g.layout = TMM_ROW_MAJOR, g.ta = TMM_NO_TRANS, g.tb = TMM_TRANS;
  g.m = 3, g.n = tmm_test::under_sanitizer() ? 1024 : 2048, g.k = 4099;
  g.alpha = -0.75, g.beta = 0.5;
  tmm_test::fill_case(g, seed);
  SCOPED_TRACE(tmm_test::describe(g));
  double *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(cudaMalloc(&a, g.a.size() * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, g.b.size() * sizeof(double)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, g.c.size() * sizeof(double)), cudaSuccess);
  std::unique_ptr<double, decltype(&cudaFree)> free_a(a, cudaFree), free_b(b, cudaFree),
      free_c(c, cudaFree);
  ASSERT_EQ(cudaMemcpy(a, g.a.data(), g.a.size() * sizeof(double), cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b, g.b.data(), g.b.size() * sizeof(double), cudaMemcpyDefault), cudaSuccess);
  std::vector<double> first;
  for (int run = 0; run < 2; ++run) {
    ASSERT_EQ(cudaMemcpy(c, g.c0.data(), g.c0.size() * sizeof(double), cudaMemcpyDefault),
              cudaSuccess);
    ASSERT_EQ(tmm_dgemm_device(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb,
                               g.beta, c, g.ldc),
              TMM_SUCCESS)
        << tmm_get_error_message(h_);
    ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
    ASSERT_EQ(cudaMemcpy(g.c.data(), c, g.c.size() * sizeof(double), cudaMemcpyDefault),
              cudaSuccess);
    tmm_report r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
    EXPECT_STREQ(r.kernel, "f64_thin");
    EXPECT_EQ(r.precision, TMM_PRECISION_DOUBLE);
    EXPECT_GT(r.splits, 1) << "a thin product this deep splits k over every SM";
    if (run == 0) {
      EXPECT_TRUE(tmm_test::check_case(g));
      first = g.c;
    } else {
      EXPECT_EQ(g.c, first) << "the same bits from a second call";
    }
  }
}

TEST_F(CudaBackend, ReportDescribesTheGpuCall) {
  GemmCase g = random_case(300, 200, 100, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0.5f);
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_TILED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 16), TMM_SUCCESS);
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
  tmm_report r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.backend, TMM_BACKEND_CUDA);
  EXPECT_EQ(r.device, 0);
  EXPECT_EQ(r.algorithm, TMM_ALGO_TILED);
  EXPECT_EQ(r.tile_size, 16);
  EXPECT_EQ(r.splits, 1);
  EXPECT_STREQ(r.kernel, "tiled_16");
  EXPECT_GT(r.upload_ms, 0.0);
  EXPECT_GT(r.download_ms, 0.0);
  EXPECT_GE(r.total_ms, r.upload_ms + r.compute_ms + r.download_ms - 1e-3);
  g.k = 0;
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_STREQ(r.kernel, "scale");
}

// The direct path copies A and B into dense, 256-byte aligned rows before the kernel
// reads them, so the plan must be the one for those copies: a host call whose rows are
// odd in length (not 16-byte aligned) reports the kernel, tile and splits of a device
// call on aligned operands of the same shape. On the tensor cores a misaligned A used
// to turn the planned orientation of the wgmma tiles (packing A), and with it the
// tail split, while the kernel ran on the aligned copy.
TEST_F(CudaBackend, DirectPathPlansForItsAlignedCopies) {
  struct Shape {
    int64_t m, n, k;
  };
  const int64_t k_scale = tmm_test::under_sanitizer() ? 4 : 1;
  for (tmm_math_mode mode : {TMM_MATH_FP32, TMM_MATH_TF32, TMM_MATH_FP32_ACCURATE}) {
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, mode), TMM_SUCCESS);
    for (const Shape sh : {Shape{384, 512, 8192 / k_scale}, Shape{200, 600, 20000 / k_scale},
                           Shape{1000, 296, 4096 / k_scale}}) {
      for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
        for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
          GemmCase g = random_case(sh.m, sh.n, sh.k, TMM_ROW_MAJOR, ta, tb, 0.5f);
          g.pad = 0;  // every edge a multiple of 4: dense rows are 16-byte aligned
          tmm_test::fill_case(g, tmm_test::fresh_seed());
          SCOPED_TRACE(tmm_test::describe(g) + " mode " + std::to_string(int(mode)));
          DeviceCase d(g);
          ASSERT_EQ(run_device(h_, g, d), TMM_SUCCESS) << tmm_get_error_message(h_);
          ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
          tmm_report dev{};
          dev.struct_size = sizeof dev;
          ASSERT_EQ(tmm_get_last_report(h_, &dev), TMM_SUCCESS);

          GemmCase host = g;
          host.pad = 1;  // odd leading dimensions: host rows not 16-byte aligned
          tmm_test::fill_case(host, tmm_test::fresh_seed());
          ASSERT_EQ(tmm_test::run_case(h_, host), TMM_SUCCESS) << tmm_get_error_message(h_);
          tmm_report r{};
          r.struct_size = sizeof r;
          ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
          EXPECT_EQ(r.host_path, TMM_HOST_PATH_DIRECT);
          EXPECT_STREQ(r.kernel, dev.kernel);
          EXPECT_EQ(r.tile_size, dev.tile_size);
          EXPECT_EQ(r.splits, dev.splits);
          EXPECT_TRUE(tmm_test::check_case(host, tmm_test::arithmetic_of(r.math_mode)));
        }
      }
    }
  }
}

TEST_F(CudaBackend, AlphaInfinityFollowsOneRuleOnEveryGpuAlgorithm) {
  for (tmm_algorithm a :
       {TMM_ALGO_NAIVE, TMM_ALGO_TILED, TMM_ALGO_COARSENED, TMM_ALGO_BLOCKED, TMM_ALGO_AUTO}) {
    for (int64_t k : {int64_t(5), int64_t(700), int64_t(6000)}) {  // 6000: split-K
      tmm_test::expect_alpha_inf_rule(h_, a, k);
    }
  }
}

TEST_F(CudaBackend, DeviceCSharingAnElementWithAIsRejected) {
  GemmCase g = random_case(32, 32, 32, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0.0f);
  DeviceCase d(g);
  EXPECT_EQ(tmm_sgemm_device(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, 1.0f, d.a, g.lda, d.b, g.ldb,
                             0.0f, d.a, g.lda),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("C shares elements with A"),
            std::string::npos);
}

TEST_F(CudaBackend, TileSizeTheAlgorithmLacksIsNotSupported) {
  GemmCase g = random_case(16, 16, 16, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0.0f);
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_TILED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 128), TMM_SUCCESS);
  EXPECT_EQ(tmm_test::run_case(h_, g), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("TILED"), std::string::npos);
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  EXPECT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_tile_size(h_, 8), TMM_SUCCESS);
  EXPECT_EQ(tmm_test::run_case(h_, g), TMM_ERROR_NOT_SUPPORTED);
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_AUTO), TMM_SUCCESS);  // AUTO ignores the tile
  EXPECT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
  EXPECT_TRUE(tmm_test::check_case(g));
}

TEST_F(CudaBackend, ManagedMemoryWorks) {
  GemmCase g = random_case(130, 70, 90, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0.0f);
  DeviceCase d(g, /*managed=*/true);
  ASSERT_EQ(run_device(h_, g, d), TMM_SUCCESS) << tmm_get_error_message(h_);
  ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
  std::memcpy(g.c.data(), d.c, g.c.size() * sizeof(float));
  EXPECT_TRUE(tmm_test::check_case(g));
}

TEST_F(CudaBackend, HostPointerToDeviceApiIsRejected) {
  GemmCase g = random_case(8, 8, 8, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0.0f);
  const std::vector<float> before = g.c;
  EXPECT_EQ(tmm_sgemm_device(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, 1, g.a.data(), g.lda,
                             g.b.data(), g.ldb, 0, g.c.data(), g.ldc),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("not a device"), std::string::npos);
  EXPECT_EQ(std::memcmp(before.data(), g.c.data(), before.size() * sizeof(float)), 0);
  // The handle still works.
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
  EXPECT_TRUE(tmm_test::check_case(g));
}

TEST_F(CudaBackend, UserStreamIsUsedAndTimingWaits) {
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(tmm_set_stream(h_, s), TMM_SUCCESS);
  void* got = nullptr;
  ASSERT_EQ(tmm_get_stream(h_, &got), TMM_SUCCESS);
  EXPECT_EQ(got, static_cast<void*>(s));

  GemmCase g = random_case(300, 200, 500, TMM_COL_MAJOR, TMM_TRANS, TMM_NO_TRANS, 0.0f);
  DeviceCase d(g);
  ASSERT_EQ(run_device(h_, g, d), TMM_SUCCESS);
  double ms = -1;
  ASSERT_EQ(tmm_get_last_time(h_, &ms), TMM_SUCCESS);  // waits for the kernel
  EXPECT_GT(ms, 0.0);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(g.c.data(), d.c, g.c.size() * sizeof(float), cudaMemcpyDefault),
            cudaSuccess);
  EXPECT_TRUE(tmm_test::check_case(g));

  ASSERT_EQ(tmm_set_stream(h_, nullptr), TMM_SUCCESS);  // back to the handle's own
  ASSERT_EQ(tmm_get_stream(h_, &got), TMM_SUCCESS);
  EXPECT_NE(got, static_cast<void*>(s));
  EXPECT_NE(got, nullptr);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST_F(CudaBackend, DeviceInfoDescribesTheGpu) {
  tmm_device_info info{};
  ASSERT_EQ(tmm_get_device_info(h_, &info), TMM_SUCCESS);
  EXPECT_GT(std::strlen(info.name), 0u);
  EXPECT_GE(info.compute_capability_major, 7);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(info.global_memory_bytes, uint64_t(1) << 30);
  EXPECT_GE(info.shared_memory_per_block_bytes, 48u * 1024u);
}

TEST_F(CudaBackend, HostTimingHasEveryPart) {
  GemmCase g = random_case(512, 512, 512, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1.0f);
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
  EXPECT_TRUE(tmm_test::check_case(g));
  tmm_timing t{};
  ASSERT_EQ(tmm_get_last_timing(h_, &t), TMM_SUCCESS);
  EXPECT_GT(t.upload_ms, 0.0);
  EXPECT_GT(t.compute_ms, 0.0);
  EXPECT_GT(t.download_ms, 0.0);
  EXPECT_NEAR(t.total_ms, t.upload_ms + t.compute_ms + t.download_ms, 0.05 * t.total_ms + 0.01);
  EXPECT_NE(t.algorithm, TMM_ALGO_AUTO);
  double ms = 0;
  ASSERT_EQ(tmm_get_last_time(h_, &ms), TMM_SUCCESS);
  EXPECT_EQ(ms, t.compute_ms);
}

TEST_F(CudaBackend, BuffersGrowOnlyAndAreReused) {
  GemmCase big = random_case(700, 600, 500, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1.0f);
  ASSERT_EQ(tmm_test::run_case(h_, big), TMM_SUCCESS);
  size_t free_after_first = 0, free_after = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after_first, &total), cudaSuccess);
  for (int i = 0; i < 3; ++i) {
    GemmCase g = random_case(700 - 100 * i, 600, 500 - 50 * i, TMM_ROW_MAJOR, TMM_NO_TRANS,
                             TMM_NO_TRANS, 1.0f);
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
    EXPECT_TRUE(tmm_test::check_case(g));
  }
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_after, free_after_first) << "a call no larger than the first allocated memory";
}

TEST_F(CudaBackend, OutOfMemoryIsRecoverable) {
  // 300000^2 floats is 360 GB: more than any GPU here. The library allocates
  // before it reads or writes anything, so address space reserved without access
  // (PROT_NONE: any touch would crash the test) is enough to provoke it.
  const int64_t huge = 300000;
  const size_t bytes = size_t(huge) * size_t(huge) * sizeof(float);
  void* space[3];
  for (void*& p : space) {
    p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
  }
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, huge, huge, huge, 1,
                      static_cast<float*>(space[0]), huge, static_cast<float*>(space[1]), huge, 0,
                      static_cast<float*>(space[2]), huge),
            TMM_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("MiB"), std::string::npos);
  for (void* p : space) munmap(p, bytes);
  GemmCase g = random_case(65, 33, 17, TMM_COL_MAJOR, TMM_TRANS, TMM_TRANS, 0.5f);
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  EXPECT_TRUE(tmm_test::check_case(g));
}

TEST_F(CudaBackend, DeviceApiTimingSurvivesLaterFailure) {
  GemmCase g = random_case(64, 64, 64, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0.0f);
  DeviceCase d(g);
  ASSERT_EQ(run_device(h_, g, d), TMM_SUCCESS);
  EXPECT_EQ(tmm_sgemm_device(h_, g.layout, g.ta, g.tb, -1, g.n, g.k, 1, d.a, g.lda, d.b, g.ldb, 0,
                             d.c, g.ldc),
            TMM_ERROR_INVALID_VALUE);
  double ms = -1;
  ASSERT_EQ(tmm_get_last_time(h_, &ms), TMM_SUCCESS);
  EXPECT_GT(ms, 0.0);
}

// ---- One handle, several streams ------------------------------------------------

// Holds a stream back until the test opens it: a host function that waits (at most
// 20 s, so that a wrong wait in the library cannot hang the suite).
// If the library waited on the host for a gated stream, the gate times out: the test
// then fails, since the calls it meant to overlap did not.
struct Gate {
  std::atomic<bool> open{false}, timed_out{false};
  static void CUDART_CB wait(void* self) {
    Gate& gate = *static_cast<Gate*>(self);
    const auto t0 = std::chrono::steady_clock::now();
    const auto limit = std::chrono::seconds(tmm_test::under_sanitizer() ? 2 : 20);
    while (!gate.open.load()) {
      if (std::chrono::steady_clock::now() - t0 > limit) {
        gate.timed_out = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
};

// Integer operands in [-2, 2], integer C: every product here is exact in FP32 and in
// TF32, whatever the order of the sums, so results compare with ==.
GemmCase integer_case(int64_t m, int64_t n, int64_t k, float beta, uint32_t seed) {
  GemmCase g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.beta = beta;
  tmm_test::fill_case(g, seed);
  tmm_test::fill_exact(g.a, seed + 1);
  tmm_test::fill_exact(g.b, seed + 2);
  if (beta != 0.0f) tmm_test::fill_exact(g.c, seed + 3);
  g.c0 = g.c;
  return g;
}

// Elements of C against FP64 (exact here): all of them, or every `stride`-th one with
// an offset that moves along each row, so that every tile of C is sampled.
::testing::AssertionResult exact_against_fp64(const GemmCase& g, const std::vector<float>& c,
                                              int64_t stride) {
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = i % stride; j < g.n; j += stride) {
      double dot = 0;
      for (int64_t q = 0; q < g.k; ++q) dot += g.op_a(i, q) * g.op_b(q, j);
      const double want = g.alpha * dot + (g.beta == 0.0f ? 0.0 : g.beta * g.c0[g.at(i, j, g.ldc)]);
      const float got = c[size_t(g.at(i, j, g.ldc))];
      if (double(got) != want)
        return ::testing::AssertionFailure()
               << "C(" << i << "," << j << ") = " << got << ", exactly " << want;
    }
  }
  return ::testing::AssertionSuccess();
}

// One handle, two non-blocking streams, tmm_set_stream between calls: products with
// their own operands on split-K shapes (the partial sums live in the handle's
// workspace), on a tensor-core shape (the Hopper kernels pack operands and split the
// last wave there too) and a streamed host call between them. Both streams are held
// back by a gate until every call is enqueued, so the products would run at once if
// the library let them: a call must never use workspace memory that a product queued
// on the other stream still uses. Each result must equal, bit for bit, the same call
// made alone, which matches FP64 exactly. With `regive`, the calls use a workspace the
// caller gives (tmm_set_workspace), taken back and given again before each call, at one
// of two overlapping addresses of one allocation: its order must survive that.
void two_streams_share_no_workspace(tmm_handle h_, bool regive) {
  struct Shape {
    int64_t m, n, k;
    tmm_math_mode math;
    float beta;
  };
  tmm_device_info info{};
  ASSERT_EQ(tmm_get_device_info(h_, &info), TMM_SUCCESS);
  // The TF32 Hopper tile is 128 x 256: an edge whose last wave the Hopper kernels split.
  const int64_t edge = tmm_test::partial_wave_edge(128, 256, info.multiprocessors);
  const Shape shapes[] = {{200, 100, 16384, TMM_MATH_FP32, 0.0f},
                          {96, 96, 32768, TMM_MATH_FP32, 1.0f},
                          {300, 5000, 5000, TMM_MATH_FP32, 0.0f},
                          {edge, edge, 512, TMM_MATH_TF32, 1.0f},
                          {edge, edge, 1024, TMM_MATH_FP32_ACCURATE, 0.0f}};
  const int rounds = tmm_test::under_sanitizer() ? 1 : 2;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));

  struct Call {
    GemmCase g;
    tmm_math_mode math;
    std::vector<float> alone;  // C from the same call made alone
    DeviceCase* d = nullptr;
  };
  std::vector<Call> calls;
  for (int r = 0; r < rounds; ++r) {
    for (const Shape& s : shapes) {
      Call c;
      c.g = integer_case(s.m, s.n, s.k, s.beta, seed + 10 * uint32_t(calls.size()));
      c.math = s.math;
      calls.push_back(std::move(c));
    }
  }
  std::vector<std::unique_ptr<DeviceCase>> devices;
  for (Call& c : calls) {
    devices.push_back(std::make_unique<DeviceCase>(c.g));
    c.d = devices.back().get();
  }
  auto set_math = [&](tmm_math_mode math) {
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, math), TMM_SUCCESS);
  };
  const size_t bytes_of = sizeof(float);

  // Alone, on the handle's own stream: the reference results (this also grows the
  // workspace to its largest, so the gated calls below allocate nothing).
  for (Call& c : calls) {
    set_math(c.math);
    SCOPED_TRACE(tmm_test::describe(c.g));
    ASSERT_EQ(run_device(h_, c.g, *c.d), TMM_SUCCESS) << tmm_get_error_message(h_);
    tmm_report r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
    if (c.math == TMM_MATH_FP32) {
      EXPECT_GT(r.splits, 1) << "a split-K shape: " << r.kernel;
    }
    ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
    c.alone.resize(c.g.c.size());
    ASSERT_EQ(cudaMemcpy(c.alone.data(), c.d->c, c.alone.size() * bytes_of, cudaMemcpyDefault),
              cudaSuccess);
    const int64_t work = c.g.m * c.g.n * c.g.k;  // about 3e8 multiply-adds checked at most
    EXPECT_TRUE(exact_against_fp64(c.g, c.alone, std::max<int64_t>(1, work / 300000000)));
    // C as it was before the call, for the gated run.
    ASSERT_EQ(cudaMemcpy(c.d->c, c.g.c0.data(), c.g.c0.size() * bytes_of, cudaMemcpyDefault),
              cudaSuccess);
  }
  void* given = nullptr;  // room for the largest workspace at either of two addresses
  size_t most = 0;
  if (regive) {
    for (Call& c : calls) {
      set_math(c.math);
      ASSERT_EQ(run_device(h_, c.g, *c.d), TMM_SUCCESS) << tmm_get_error_message(h_);
      tmm_report r{};
      r.struct_size = sizeof r;
      ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
      most = std::max(most, size_t(r.workspace_bytes));
      ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
      ASSERT_EQ(cudaMemcpy(c.d->c, c.g.c0.data(), c.g.c0.size() * bytes_of, cudaMemcpyDefault),
                cudaSuccess);
    }
    ASSERT_GT(most, size_t(0));
    ASSERT_EQ(cudaMalloc(&given, most + 256), cudaSuccess);
    ASSERT_EQ(tmm_set_workspace(h_, given, most), TMM_SUCCESS) << tmm_get_error_message(h_);
  }
  // Taken back, then the largest size again at the allocation's start or 256 bytes on
  // (overlapping the other).
  const auto regive_before = [&](size_t i) {
    if (!regive) return;
    ASSERT_EQ(tmm_set_workspace(h_, nullptr, 0), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_workspace(h_, static_cast<char*>(given) + (i % 2) * 256, most), TMM_SUCCESS)
        << tmm_get_error_message(h_);
  };
  // The streamed host call, warmed up too (its engine's buffers grown).
  GemmCase host = integer_case(300, 280, 700, 1.0f, seed + 7);
  auto run_host = [&](GemmCase& g) {
    set_math(TMM_MATH_FP32);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, 1 << 20), TMM_SUCCESS);
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, 0), TMM_SUCCESS);
    EXPECT_TRUE(exact_against_fp64(g, g.c, 1)) << "the streamed host call";
    g.c = g.c0;
  };
  run_host(host);

  cudaStream_t streams[2] = {nullptr, nullptr};
  for (cudaStream_t& s : streams)
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  Gate gate;
  for (cudaStream_t s : streams) ASSERT_EQ(cudaLaunchHostFunc(s, &Gate::wait, &gate), cudaSuccess);
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& c = calls[i];
    set_math(c.math);
    ASSERT_EQ(tmm_set_stream(h_, streams[i % 2]), TMM_SUCCESS);
    regive_before(i);
    ASSERT_EQ(run_device(h_, c.g, *c.d), TMM_SUCCESS) << tmm_get_error_message(h_);
    if (i == calls.size() / 2) run_host(host);  // the engine's own streams, meanwhile
  }
  gate.open = true;
  for (cudaStream_t s : streams) ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  // Under compute-sanitizer launches may wait for the gate themselves: there the test
  // checks memory, not the overlap.
  if (!tmm_test::under_sanitizer()) {
    EXPECT_FALSE(gate.timed_out.load()) << "a call waited on the host for a gated stream";
  }
  ASSERT_EQ(tmm_set_stream(h_, nullptr), TMM_SUCCESS);
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& c = calls[i];
    SCOPED_TRACE("call " + std::to_string(i) + " on stream " + std::to_string(i % 2) + ": " +
                 tmm_test::describe(c.g));
    std::vector<float> got(c.g.c.size());
    ASSERT_EQ(cudaMemcpy(got.data(), c.d->c, got.size() * bytes_of, cudaMemcpyDefault),
              cudaSuccess);
    int64_t differ = 0;
    for (size_t e = 0; e < got.size(); ++e)
      differ += std::memcmp(&got[e], &c.alone[e], sizeof(float)) != 0;
    EXPECT_EQ(differ, 0) << "elements differ from the same call made alone";
  }
  for (cudaStream_t s : streams) ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  if (given != nullptr) {
    ASSERT_EQ(tmm_set_workspace(h_, nullptr, 0), TMM_SUCCESS);
    ASSERT_EQ(cudaFree(given), cudaSuccess);
  }
}

TEST_F(CudaBackend, OneHandleOnTwoStreamsNeverSharesItsWorkspace) {
  two_streams_share_no_workspace(h_, false);
}

TEST_F(CudaBackend, AWorkspaceGivenAgainStaysOrderedAcrossStreams) {
  two_streams_share_no_workspace(h_, true);
}

// A caller that left a CUDA error pending (cudaGetLastError would return it) gets it
// back after tiledmm's calls: they neither fail for it nor clear it. Every path that
// launches or allocates: a fresh handle (first calls: workspace and buffers grow,
// the kernel table is probed), the split-K reduction, the tensor-core rows, the
// direct and streamed host paths, a stream change and the waits.
TEST_F(CudaBackend, ACallersPendingCudaErrorIsNeitherReportedNorCleared) {
  void* huge = nullptr;
  ASSERT_NE(cudaMalloc(&huge, size_t(1) << 60), cudaSuccess);
  ASSERT_EQ(cudaPeekAtLastError(), cudaErrorMemoryAllocation) << "the caller's pending error";
  auto still_pending = [](const char* after) {
    EXPECT_EQ(cudaPeekAtLastError(), cudaErrorMemoryAllocation) << "cleared by " << after;
  };
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  still_pending("tmm_create");
  for (int pass = 0; pass < 2; ++pass) {  // cold (allocating), then warm
    SCOPED_TRACE(pass == 0 ? "first calls" : "warm calls");
    for (tmm_math_mode math : {TMM_MATH_FP32, TMM_MATH_TF32, TMM_MATH_FP32_ACCURATE}) {
      ASSERT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, math), TMM_SUCCESS);
      GemmCase g = random_case(96, 96, 8192, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1.0f);
      DeviceCase d(g);
      ASSERT_EQ(run_device(h, g, d), TMM_SUCCESS) << tmm_get_error_message(h);
      still_pending("tmm_sgemm_device");
      ASSERT_EQ(tmm_synchronize(h), TMM_SUCCESS);
      double ms = 0;
      ASSERT_EQ(tmm_get_last_time(h, &ms), TMM_SUCCESS);
      still_pending("tmm_synchronize, tmm_get_last_time");
      GemmCase big = random_case(700, 600, 500, TMM_COL_MAJOR, TMM_TRANS, TMM_NO_TRANS, 0.5f);
      DeviceCase db(big);
      ASSERT_EQ(run_device(h, big, db), TMM_SUCCESS) << tmm_get_error_message(h);
      still_pending("tmm_sgemm_device");
    }
    ASSERT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, TMM_MATH_FP32), TMM_SUCCESS);
    for (tmm_host_path path : {TMM_HOST_PATH_DIRECT, TMM_HOST_PATH_STREAMED}) {
      ASSERT_EQ(tmm_set_option(h, TMM_OPTION_HOST_PATH, path), TMM_SUCCESS);
      ASSERT_EQ(tmm_set_option(h, TMM_OPTION_DEVICE_MEMORY_BUDGET,
                               path == TMM_HOST_PATH_STREAMED ? 1 << 20 : 0),
                TMM_SUCCESS);
      GemmCase g = random_case(300, 280, 700, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_TRANS, 1.0f);
      ASSERT_EQ(tmm_test::run_case(h, g), TMM_SUCCESS) << tmm_get_error_message(h);
      EXPECT_TRUE(tmm_test::check_case(g));
      still_pending(path == TMM_HOST_PATH_DIRECT ? "the direct host path" : "the streamed path");
    }
    cudaStream_t s = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(tmm_set_stream(h, s), TMM_SUCCESS);
    still_pending("tmm_set_stream");
    ASSERT_EQ(tmm_set_stream(h, nullptr), TMM_SUCCESS);
    ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  }
  tmm_destroy(h);
  still_pending("tmm_destroy");
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(CudaBackend, SeveralHandlesOnOneDevice) {
  tmm_handle other = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&other, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  GemmCase g1 = random_case(90, 91, 92, TMM_ROW_MAJOR, TMM_TRANS, TMM_NO_TRANS, 0.0f);
  GemmCase g2 = random_case(50, 51, 52, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_TRANS, 2.0f);
  ASSERT_EQ(tmm_test::run_case(h_, g1), TMM_SUCCESS);
  ASSERT_EQ(tmm_test::run_case(other, g2), TMM_SUCCESS);
  EXPECT_TRUE(tmm_test::check_case(g1));
  EXPECT_TRUE(tmm_test::check_case(g2));
  tmm_destroy(other);
}

}  // namespace
