// blas/support/config: the settings, environment over file, every key; rejected values
// keep their defaults and leave a note.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "route/engine.hpp"
#include "support/config.hpp"

namespace {

using tiledmm::blas::BackendChoice;
using tiledmm::blas::Config;
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
  EXPECT_TRUE(c.math.empty()) << "the library's default: TMM_MATH_MODE, else fp32";
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
                          {"TILEDMM_BLAS_GPU_TFLOPS_FP64", "30"},
                          {"TILEDMM_BLAS_CPU_GFLOPS_FP64", "700"},
                          {"TILEDMM_BLAS_OVERHEAD_US", "0"}},
                         {}, notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  EXPECT_EQ(c.threshold, ThresholdMode::kFlops);
  EXPECT_EQ(c.threshold_flops, 2.5e9);
  EXPECT_EQ(c.backend, BackendChoice::kCpu);
  EXPECT_EQ(c.devices, (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(c.math, "fp32");
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
  EXPECT_EQ(c.gpu_tflops_fp64, 30);
  EXPECT_EQ(c.cpu_gflops_fp64, 700);
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
                          {"TILEDMM_BLAS_MATH", "bf16"},
                          {"TILEDMM_BLAS_PANEL", "-5"},
                          {"TILEDMM_BLAS_KEEP_C", "maybe"},
                          {"TILEDMM_BLAS_LINK_GBPS", "0"},
                          {"TILEDMM_BLAS_GPU_TFLOPS_FP64", "-1"}},
                         {}, notes);
  EXPECT_EQ(notes.size(), 8u);
  EXPECT_EQ(c.gpu_tflops_fp64, 0);
  EXPECT_EQ(c.threshold, ThresholdMode::kAuto);
  EXPECT_EQ(c.backend, BackendChoice::kAuto);
  EXPECT_EQ(c.devices, std::vector<int>{0});
  EXPECT_TRUE(c.math.empty());
  EXPECT_EQ(c.panel, 4096);
  EXPECT_TRUE(c.keep_c);
  EXPECT_EQ(c.link_gbps, 0);
  bool math_note = false;
  for (const auto& n : notes)
    math_note |= n.find("TILEDMM_BLAS_MATH=bf16") != std::string::npos &&
                 n.find("keeping the default") != std::string::npos;
  EXPECT_TRUE(math_note);
}

// TILEDMM_BLAS_MATH takes tiledmm's three modes, any case; unset, the mode is the
// library's default: TMM_MATH_MODE if valid, else fp32 (effective_math, which asks a
// handle).
TEST(BlasConfig, MathModes) {
  std::vector<std::string> notes;
  EXPECT_EQ(parse({{"TILEDMM_BLAS_MATH", "TF32"}}, {}, notes).math, "tf32");
  EXPECT_EQ(parse({{"TILEDMM_BLAS_MATH", " fp32_accurate "}}, {}, notes).math, "fp32_accurate");
  EXPECT_EQ(parse({{"TILEDMM_BLAS_MATH", "Fp32"}}, {}, notes).math, "fp32");
  EXPECT_TRUE(notes.empty());
  Config c;
  c.math = "tf32";
  EXPECT_EQ(tiledmm::blas::effective_math(c), "tf32");
  c.math.clear();
  const char* saved = std::getenv("TMM_MATH_MODE");
  const std::string keep = saved ? saved : "";
  ASSERT_EQ(setenv("TMM_MATH_MODE", "FP32_Accurate", 1), 0);
  EXPECT_EQ(tiledmm::blas::effective_math(c), "fp32_accurate");
  ASSERT_EQ(setenv("TMM_MATH_MODE", "fast", 1), 0);
  EXPECT_EQ(tiledmm::blas::effective_math(c), "fp32") << "not a mode: the strict default";
  ASSERT_EQ(unsetenv("TMM_MATH_MODE"), 0);
  EXPECT_EQ(tiledmm::blas::effective_math(c), "fp32");
  if (saved) setenv("TMM_MATH_MODE", keep.c_str(), 1);
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
  unlink(path.c_str());
  EXPECT_FALSE(tiledmm::blas::read_config_file(path, pairs, notes));
}

}  // namespace
