// blas/route/cost_model: the crossover it documents, ScaLAPACK's panels, settings
// over the documented figures.
#include <gtest/gtest.h>

#include "route/cost_model.hpp"
#include "support/config.hpp"

namespace {

using tiledmm::blas::Config;
using tiledmm::blas::CostModel;

// The documented defaults: 16 CPUs (40 GFLOP/s each), an H100 (132 SMs x 0.35
// TFLOP/s), 20 GB/s, 50 us.
CostModel h100_host() {
  Config c;
  return tiledmm::blas::make_cost_model(c, 16, 132);
}

TEST(BlasCostModel, SquareCrossoverNear330) {
  const CostModel m = h100_host();
  EXPECT_NEAR(m.cpu_flops_per_s(), 640e9, 1);
  EXPECT_NEAR(m.gpu_flops_per_s(), 46.2e12, 1e9);
  EXPECT_FALSE(m.prefers_tiledmm(256, 256, 256, false));
  EXPECT_FALSE(m.prefers_tiledmm(320, 320, 320, false));
  EXPECT_TRUE(m.prefers_tiledmm(352, 352, 352, false));
  EXPECT_TRUE(m.prefers_tiledmm(8192, 8192, 8192, false));
  // Reading C (beta != 0) moves the crossover up.
  EXPECT_FALSE(m.prefers_tiledmm(352, 352, 352, true));
  // Thin products are link-bound: never worth the trip.
  EXPECT_FALSE(m.prefers_tiledmm(8192, 8192, 8, false));
  EXPECT_FALSE(m.prefers_tiledmm(100000, 16, 16, false));
}

// ScaLAPACK's local update m x n x 32 with beta = 1 stays on the CPU; widened to the
// default panel it goes to the GPU. That is why pilaenv_ widens the panel.
TEST(BlasCostModel, PblasPanelWidth) {
  const CostModel m = h100_host();
  EXPECT_FALSE(m.prefers_tiledmm(4096, 4096, 32, true));
  EXPECT_FALSE(m.prefers_tiledmm(2048, 2048, 32, true));
  EXPECT_TRUE(m.prefers_tiledmm(4096, 4096, 4096, true));
  EXPECT_TRUE(m.prefers_tiledmm(2048, 2048, 4096, true));
}

TEST(BlasCostModel, SettingsOverrideTheFigures) {
  Config c;
  c.link_gbps = 50;
  c.gpu_tflops = 10;
  c.cpu_gflops = 100;
  c.overhead_us = 0;
  const CostModel m = tiledmm::blas::make_cost_model(c, 64, 132);
  EXPECT_DOUBLE_EQ(m.link_bytes_per_s(), 50e9);
  EXPECT_DOUBLE_EQ(m.gpu_flops_per_s(), 10e12);
  EXPECT_DOUBLE_EQ(m.cpu_flops_per_s(), 100e9);
  EXPECT_DOUBLE_EQ(m.overhead_s(), 0);
  // Before a device is read: the documented 40 TFLOP/s.
  const CostModel unread = tiledmm::blas::make_cost_model(Config{}, 4, 0);
  EXPECT_DOUBLE_EQ(unread.gpu_flops_per_s(), 40e12);
  EXPECT_DOUBLE_EQ(unread.cpu_flops_per_s(), 160e9);
  EXPECT_GE(tiledmm::blas::usable_cpus(), 1);
}

// Double precision on the same host and GPU: the CPU at half its FP32 rate, the GPU
// at 0.30 TFLOP/s per SM (compute capability 9.0), 8 bytes an element. Squares go to
// tiledmm from n ~ 290 (the header's figure).
TEST(BlasCostModel, DoublePrecisionOnAnH100) {
  using tiledmm::blas::Precision;
  const CostModel m = tiledmm::blas::make_cost_model(Config{}, 16, 132, Precision::kDouble, 90);
  EXPECT_NEAR(m.cpu_flops_per_s(), 320e9, 1);
  EXPECT_NEAR(m.gpu_flops_per_s(), 39.6e12, 1e9);
  EXPECT_EQ(m.element_bytes(), 8.0);
  EXPECT_FALSE(m.prefers_tiledmm(256, 256, 256, false));
  EXPECT_FALSE(m.prefers_tiledmm(280, 280, 280, false));
  EXPECT_TRUE(m.prefers_tiledmm(300, 300, 300, false));
  EXPECT_TRUE(m.prefers_tiledmm(8192, 8192, 8192, true));
  EXPECT_FALSE(m.prefers_tiledmm(8192, 8192, 8, false));
  // The same product moves twice the bytes of a single-precision one.
  const CostModel single = h100_host();
  const CostModel unit_rates(1, 1e30, 1e30, 0, 8.0);
  EXPECT_DOUBLE_EQ(unit_rates.tiledmm_seconds(10, 20, 30, true), 8.0 * (300 + 600 + 400));
  EXPECT_GT(m.tiledmm_seconds(1000, 1000, 8, false), single.tiledmm_seconds(1000, 1000, 8, false));
}

// A GPU without full-rate FP64 (compute capability 8.6, 8.9, 7.5 ...): 1/32 of the
// single-precision rate per SM, so the crossover moves up (300^3 goes to the H100
// above, not here; larger products still do: 1.4 TFLOP/s against the CPUs' 0.32); the
// figures before a device is read; the FP64 settings, and the single-precision ones
// leaving them alone.
TEST(BlasCostModel, DoublePrecisionFiguresAndSettings) {
  using tiledmm::blas::Precision;
  const CostModel consumer =
      tiledmm::blas::make_cost_model(Config{}, 16, 128, Precision::kDouble, 89);
  EXPECT_NEAR(consumer.gpu_flops_per_s(), 128 * 0.35e12 / 32, 1e6);
  EXPECT_FALSE(consumer.prefers_tiledmm(300, 300, 300, false));
  EXPECT_TRUE(consumer.prefers_tiledmm(2048, 2048, 2048, false));
  const CostModel unread = tiledmm::blas::make_cost_model(Config{}, 4, 0, Precision::kDouble);
  EXPECT_DOUBLE_EQ(unread.gpu_flops_per_s(), 30e12);
  EXPECT_DOUBLE_EQ(unread.cpu_flops_per_s(), 80e9);
  Config c;
  c.gpu_tflops = 10;
  c.cpu_gflops = 100;
  const CostModel half = tiledmm::blas::make_cost_model(c, 64, 132, Precision::kDouble, 90);
  EXPECT_DOUBLE_EQ(half.cpu_flops_per_s(), 50e9) << "half the single-precision figure";
  EXPECT_NEAR(half.gpu_flops_per_s(), 39.6e12, 1e9) << "GPU_TFLOPS is single precision's";
  c.gpu_tflops_fp64 = 5;
  c.cpu_gflops_fp64 = 70;
  const CostModel set = tiledmm::blas::make_cost_model(c, 64, 132, Precision::kDouble, 90);
  EXPECT_DOUBLE_EQ(set.gpu_flops_per_s(), 5e12);
  EXPECT_DOUBLE_EQ(set.cpu_flops_per_s(), 70e9);
  const CostModel single = tiledmm::blas::make_cost_model(c, 64, 132);
  EXPECT_DOUBLE_EQ(single.gpu_flops_per_s(), 10e12);
  EXPECT_DOUBLE_EQ(single.cpu_flops_per_s(), 100e9);
}

}  // namespace
