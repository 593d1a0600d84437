// Units of libtiledmm_blas, linked from the library's own objects: the settings
// (environment over file, every key, rejected values keep their defaults and leave a
// note) and the cost model (the crossover it documents, and ScaLAPACK's panels).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "config.hpp"
#include "cost_model.hpp"

namespace {

using tiledmm::blas::BackendChoice;
using tiledmm::blas::Config;
using tiledmm::blas::CostModel;
using tiledmm::blas::Lookup;
using tiledmm::blas::ThresholdMode;

Lookup from(const std::map<std::string, std::string>& values) {
  return [values](const char* key) -> const char* {
    auto it = values.find(key);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

Config parse(const std::map<std::string, std::string>& env,
             const std::map<std::string, std::string>& file, std::vector<std::string>& notes) {
  return tiledmm::blas::parse_config(from(env), from(file), notes);
}

TEST(BlasConfig, Defaults) {
  std::vector<std::string> notes;
  const Config c = parse({}, {}, notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(c.threshold, ThresholdMode::kAuto);
  EXPECT_EQ(c.backend, BackendChoice::kAuto);
  EXPECT_EQ(c.devices, std::vector<int>{0});
  EXPECT_EQ(c.math, "fp32");
  EXPECT_TRUE(c.fallback.empty());
  EXPECT_EQ(c.fallback64, "libblas64.so.3");
  EXPECT_TRUE(c.log.empty());
  EXPECT_EQ(c.panel, 4096);
  EXPECT_TRUE(c.keep_c);
}

TEST(BlasConfig, EveryKey) {
  std::vector<std::string> notes;
  const Config c = parse({{"TILEDMM_BLAS_THRESHOLD", "2.5e9"},
                          {"TILEDMM_BLAS_BACKEND", "CPU"},
                          {"TILEDMM_BLAS_DEVICE", "1, 3,2"},
                          {"TILEDMM_BLAS_MATH", "FP32"},
                          {"TILEDMM_BLAS_FALLBACK", "/opt/blas/libblas.so.3"},
                          {"TILEDMM_BLAS_FALLBACK64", ""},
                          {"TILEDMM_BLAS_LOG", "stderr"},
                          {"TILEDMM_BLAS_PANEL", "0"},
                          {"TILEDMM_BLAS_HANDLES", "3"},
                          {"TILEDMM_BLAS_HOST_THREADS", "4"},
                          {"TILEDMM_BLAS_KEEP_C", "off"},
                          {"TILEDMM_BLAS_LINK_GBPS", "50"},
                          {"TILEDMM_BLAS_GPU_TFLOPS", "60"},
                          {"TILEDMM_BLAS_CPU_GFLOPS", "1500"},
                          {"TILEDMM_BLAS_OVERHEAD_US", "0"}},
                         {}, notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  EXPECT_EQ(c.threshold, ThresholdMode::kFlops);
  EXPECT_EQ(c.threshold_flops, 2.5e9);
  EXPECT_EQ(c.backend, BackendChoice::kCpu);
  EXPECT_EQ(c.devices, (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(c.fallback, "/opt/blas/libblas.so.3");
  EXPECT_TRUE(c.fallback64.empty());
  EXPECT_EQ(c.log, "stderr");
  EXPECT_EQ(c.panel, 0);
  EXPECT_EQ(c.max_handles, 3);
  EXPECT_EQ(c.host_threads, 4);
  EXPECT_FALSE(c.keep_c);
  EXPECT_EQ(c.link_gbps, 50);
  EXPECT_EQ(c.gpu_tflops, 60);
  EXPECT_EQ(c.cpu_gflops, 1500);
  EXPECT_EQ(c.overhead_us, 0);
}

TEST(BlasConfig, ThresholdWords) {
  std::vector<std::string> notes;
  EXPECT_EQ(parse({{"TILEDMM_BLAS_THRESHOLD", "all"}}, {}, notes).threshold, ThresholdMode::kAll);
  EXPECT_EQ(parse({{"TILEDMM_BLAS_THRESHOLD", "0"}}, {}, notes).threshold, ThresholdMode::kAll);
  EXPECT_EQ(parse({{"TILEDMM_BLAS_THRESHOLD", "never"}}, {}, notes).threshold,
            ThresholdMode::kNever);
  EXPECT_EQ(parse({{"TILEDMM_BLAS_THRESHOLD", " Auto "}}, {}, notes).threshold,
            ThresholdMode::kAuto);
  EXPECT_TRUE(notes.empty());
}

TEST(BlasConfig, RejectedValuesKeepDefaultsAndLeaveNotes) {
  std::vector<std::string> notes;
  const Config c = parse({{"TILEDMM_BLAS_THRESHOLD", "lots"},
                          {"TILEDMM_BLAS_BACKEND", "tpu"},
                          {"TILEDMM_BLAS_DEVICE", "0,x"},
                          {"TILEDMM_BLAS_MATH", "tf32"},
                          {"TILEDMM_BLAS_PANEL", "-5"},
                          {"TILEDMM_BLAS_KEEP_C", "maybe"},
                          {"TILEDMM_BLAS_LINK_GBPS", "0"}},
                         {}, notes);
  EXPECT_EQ(notes.size(), 7u);
  EXPECT_EQ(c.threshold, ThresholdMode::kAuto);
  EXPECT_EQ(c.backend, BackendChoice::kAuto);
  EXPECT_EQ(c.devices, std::vector<int>{0});
  EXPECT_EQ(c.math, "fp32");
  EXPECT_EQ(c.panel, 4096);
  EXPECT_TRUE(c.keep_c);
  EXPECT_EQ(c.link_gbps, 0);
  bool math_note = false;
  for (const auto& n : notes)
    math_note |= n.find("TILEDMM_BLAS_MATH=tf32") != std::string::npos &&
                 n.find("using fp32") != std::string::npos;
  EXPECT_TRUE(math_note);
}

TEST(BlasConfig, EnvironmentWinsOverTheFile) {
  const std::string path = ::testing::TempDir() + "tiledmm_blas_test.conf";
  {
    std::ofstream f(path);
    f << "# tiledmm_blas settings\n"
      << "threshold = never\n"
      << "TILEDMM_BLAS_PANEL = 2048   # a comment\n"
      << "backend = cpu\n"
      << "no equals sign here\n"
      << "colour = blue\n";
  }
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, std::string>> pairs;
  ASSERT_TRUE(tiledmm::blas::read_config_file(path, pairs, notes));
  EXPECT_EQ(pairs.size(), 3u);
  EXPECT_EQ(notes.size(), 2u);  // the line without '=' and the unknown key
  std::map<std::string, std::string> file(pairs.begin(), pairs.end());
  const Config c = parse({{"TILEDMM_BLAS_BACKEND", "cuda"}}, file, notes);
  EXPECT_EQ(c.threshold, ThresholdMode::kNever);
  EXPECT_EQ(c.panel, 2048);
  EXPECT_EQ(c.backend, BackendChoice::kCuda);
  std::remove(path.c_str());
  EXPECT_FALSE(tiledmm::blas::read_config_file(path, pairs, notes));
}

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
