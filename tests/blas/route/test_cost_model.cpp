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

}  // namespace
