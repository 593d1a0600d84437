// Units of libtiledmm_blas, linked from the library's own objects: the settings
// (environment over file, every key, rejected values keep their defaults and leave a
// note), the cost model (the crossover it documents, and ScaLAPACK's panels), the
// fast path's argument checks against the reference's, the per-thread counters
// (nothing lost when threads exit, reset, readers meanwhile, fork), and the log's
// refusals (a symbolic link, a file of another user).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "entry/args.hpp"
#include "reference_checks.hpp"
#include "route/cost_model.hpp"
#include "route/engine.hpp"
#include "route/router.hpp"
#include "support/config.hpp"
#include "support/counters.hpp"
#include "support/log.hpp"

namespace {

using tiledmm::blas::BackendChoice;
using tiledmm::blas::Config;
using tiledmm::blas::CostModel;
using tiledmm::blas::Counter;
using tiledmm::blas::Counters;
using tiledmm::blas::Log;
using tiledmm::blas::Lookup;
using tiledmm::blas::Routine;
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
                          {"TILEDMM_BLAS_LINK_GBPS", "0"}},
                         {}, notes);
  EXPECT_EQ(notes.size(), 7u);
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

// ---- The fast path's checks ----------------------------------------------------

TEST(BlasFastPath, SizesItTakes) {
  using tiledmm::blas::fast_sizes;
  EXPECT_TRUE(fast_sizes(1, 1, 1));
  EXPECT_TRUE(fast_sizes(65536, 65536, 65536));
  EXPECT_EQ(tiledmm::blas::fast_flops(65536, 65536, 65536), uint64_t(1) << 49);
  for (int bad : {0, -1, 65537, INT_MAX, INT_MIN}) {
    EXPECT_FALSE(fast_sizes(bad, 1, 1)) << bad;
    EXPECT_FALSE(fast_sizes(1, bad, 1)) << bad;
    EXPECT_FALSE(fast_sizes(1, 1, bad)) << bad;
  }
  EXPECT_TRUE(fast_sizes(32768, 32767, 1));  // no bit of one hides another's
}

// The front end copies C (TILEDMM_BLAS_KEEP_C) or fills it with NaN only where its
// span fits in INT64_MAX bytes: j * ldc never overflows there.
TEST(BlasArgs, SpanFitsExactlyBelowTwoToThe63Bytes) {
  using tiledmm::blas::span_fits;
  const int64_t most = INT64_MAX / 4;  // floats in INT64_MAX bytes
  EXPECT_TRUE(span_fits(0, INT64_MAX, INT64_MAX)) << "no element";
  EXPECT_TRUE(span_fits(INT64_MAX, 0, INT64_MAX));
  EXPECT_TRUE(span_fits(1, 1, INT64_MAX)) << "one column: ld takes no part";
  EXPECT_TRUE(span_fits(most, 1, most));
  EXPECT_FALSE(span_fits(most + 1, 1, most + 1));
  EXPECT_TRUE(span_fits(1, 2, most - 1));
  EXPECT_FALSE(span_fits(1, 2, most));
  EXPECT_FALSE(span_fits(2, 2, INT64_MAX)) << "(n - 1) ldc + m overflows int64";
  EXPECT_FALSE(span_fits(1, INT64_MAX, INT64_MAX)) << "(n - 1) ldc overflows int64";
  EXPECT_FALSE(span_fits(INT_MAX, INT_MAX, INT_MAX)) << "2^62 floats";
  EXPECT_TRUE(span_fits(INT_MAX, 2, INT_MAX));
}

// The ILP64 versions of the fast path's checks agree with the reference's on values
// beyond 32 bits, negative ones and the edges of the sizes it takes.
TEST(BlasFastPath, Ilp64ChecksAgreeWithTheReference) {
  using tiledmm::blas::fast_sizes;
  const int64_t values[] = {INT64_MIN,
                            -(int64_t(1) << 32),
                            INT_MIN,
                            -1,
                            0,
                            1,
                            2,
                            3,
                            65535,
                            65536,
                            65537,
                            INT_MAX,
                            int64_t(1) << 31,
                            int64_t(1) << 32,
                            (int64_t(1) << 32) + 1,
                            int64_t(1) << 48,
                            INT64_MAX};
  int taken = 0;
  for (int64_t m : values)
    for (int64_t n : values)
      for (int64_t k : values) {
        const bool fast = fast_sizes<int64_t>(m, n, k);
        ASSERT_EQ(fast, m >= 1 && m <= 65536 && n >= 1 && n <= 65536 && k >= 1 && k <= 65536)
            << m << " " << n << " " << k;
        taken += fast;
        if (!fast) continue;
        for (int64_t ld : values) {
          const char t = 'T', nn = 'n';
          EXPECT_EQ(tiledmm::blas::fortran_valid<int64_t>(&t, &nn, m, n, k, ld, ld, ld),
                    tiledmm::blas::fortran_info<int64_t>('T', 'N', m, n, k, ld, ld, ld) == 0);
          for (int layout : {101, 102})
            EXPECT_EQ(
                tiledmm::blas::cblas_valid<int64_t>(layout, 112, 111, m, n, k, ld, ld, ld),
                tiledmm::blas::cblas_info<int64_t>(layout, 112, 111, m, n, k, ld, ld, ld) == 0);
        }
      }
  EXPECT_EQ(taken, 5 * 5 * 5);  // 1, 2, 3, 65535, 65536 each
}

// The fast path's integer test of alpha agrees with alpha != 0.0f on every kind of
// float, and on every bit pattern of the exponent and top of the mantissa.
TEST(BlasFastPath, NonzeroAgreesWithTheComparison) {
  using tiledmm::blas::nonzero;
  const float special[] = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::min(),
                           1.0f,
                           -2.5f,
                           std::numeric_limits<float>::max(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           -std::numeric_limits<float>::quiet_NaN()};
  for (float x : special) EXPECT_EQ(nonzero(x), x != 0.0f) << x;
  int zeros = 0;
  for (uint32_t high = 0; high < (1u << 16); ++high) {
    for (uint32_t low : {0u, 1u, 0x8000u}) {
      const uint32_t bits = (high << 16) | low;
      float x;
      std::memcpy(&x, &bits, sizeof x);
      ASSERT_EQ(nonzero(x), x != 0.0f) << std::hex << bits;
      zeros += x == 0.0f;
    }
  }
  EXPECT_EQ(zeros, 2);  // +0 and -0
}

// For every size the fast path takes, its one test agrees with the rule's number
// (args.hpp; BlasArgs.InfoIsTheReferencesNumber checks that against the reference):
// same calls valid, same calls invalid. The x86-64 assembly's fast path makes a
// conservative subset of these tests (trampolines_x86_64.S); test_blas_conformance
// checks through the counters that it takes only calls the reference calls valid.
TEST(BlasFastPath, ChecksAgreeWithTheReference) {
  const int sizes[] = {1, 2, 3};
  const int lds[] = {INT_MIN, -1, 0, 1, 2, 3, 4};
  int64_t cases = 0, valid = 0;
  for (int layout = 100; layout <= 103; ++layout)
    for (int ta = 110; ta <= 114; ++ta)
      for (int tb = 110; tb <= 114; ++tb)
        for (int m : sizes)
          for (int n : sizes)
            for (int k : sizes)
              for (int lda : lds)
                for (int ldb : lds)
                  for (int ldc : lds) {
                    const bool ref =
                        tiledmm::blas::cblas_info<int>(layout, ta, tb, m, n, k, lda, ldb, ldc) == 0;
                    ASSERT_EQ(tiledmm::blas::cblas_valid(layout, ta, tb, m, n, k, lda, ldb, ldc),
                              ref)
                        << layout << " " << ta << " " << tb << " m=" << m << " n=" << n
                        << " k=" << k << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc;
                    ++cases;
                    valid += ref;
                  }
  EXPECT_GT(valid, 0);
  EXPECT_LT(valid, cases);
  // Fortran: every byte for each character, then the sizes with the valid letters.
  for (int x = 0; x < 256; ++x) {
    const char c = char(x), n = 'N';
    const bool ta_ref =
        tiledmm::blas::fortran_info<int>(tiledmm::blas::upper(&c), 'N', 2, 2, 2, 2, 2, 2) == 0;
    const bool tb_ref =
        tiledmm::blas::fortran_info<int>('N', tiledmm::blas::upper(&c), 2, 2, 2, 2, 2, 2) == 0;
    EXPECT_EQ(tiledmm::blas::fortran_valid(&c, &n, 2, 2, 2, 2, 2, 2), ta_ref) << x;
    EXPECT_EQ(tiledmm::blas::fortran_valid(&n, &c, 2, 2, 2, 2, 2, 2), tb_ref) << x;
  }
  const char letters[] = {'N', 'n', 'T', 't', 'C', 'c', 'X'};
  for (char ta : letters)
    for (char tb : letters)
      for (int m : sizes)
        for (int n : sizes)
          for (int k : sizes)
            for (int lda : lds)
              for (int ldb : lds)
                for (int ldc : lds) {
                  const bool ref = tiledmm::blas::fortran_info<int>(tiledmm::blas::upper(&ta),
                                                                    tiledmm::blas::upper(&tb), m, n,
                                                                    k, lda, ldb, ldc) == 0;
                  ASSERT_EQ(tiledmm::blas::fortran_valid(&ta, &tb, m, n, k, lda, ldb, ldc), ref)
                      << ta << tb << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda
                      << " ldb=" << ldb << " ldc=" << ldc;
                }
}

// args.hpp's rule gives the reference's parameter number for every call
// (reference_checks.hpp: the tests' own statement of the reference's checks), for
// sgemm_ and both CBLAS layouts, with every byte as a transpose character, negative
// sizes and leading dimensions, and for the ILP64 entry points values past 32 bits.
TEST(BlasArgs, InfoIsTheReferencesNumber) {
  namespace ref = tmm_blas_reference;
  using tiledmm::blas::cblas_info;
  using tiledmm::blas::fortran_info;
  for (int x = 0; x < 256; ++x) {
    const char c = char(x);
    ASSERT_EQ(fortran_info<int>(c, 'n', 2, 2, 2, 2, 2, 2),
              ref::sgemm_info<int>(c, 'n', 2, 2, 2, 2, 2, 2))
        << x;
    ASSERT_EQ(fortran_info<int>('t', c, 2, 2, 2, 2, 2, 2),
              ref::sgemm_info<int>('t', c, 2, 2, 2, 2, 2, 2))
        << x;
  }
  const int sizes[] = {-1, 0, 1, 2, 3};
  const int lds[] = {INT_MIN, -1, 0, 1, 2, 3, 4};
  int64_t cases = 0, valid = 0;
  for (char ta : {'N', 'n', 'T', 't', 'C', 'c', 'X'})
    for (char tb : {'N', 'n', 'T', 't', 'C', 'c', '?'})
      for (int m : sizes)
        for (int n : sizes)
          for (int k : sizes)
            for (int lda : lds)
              for (int ldb : lds)
                for (int ldc : lds) {
                  const int want = ref::sgemm_info(ta, tb, m, n, k, lda, ldb, ldc);
                  ASSERT_EQ(fortran_info(ta, tb, m, n, k, lda, ldb, ldc), want)
                      << ta << tb << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda
                      << " ldb=" << ldb << " ldc=" << ldc;
                  ++cases;
                  valid += want == 0;
                }
  for (int layout = 100; layout <= 103; ++layout)
    for (int ta = 110; ta <= 114; ++ta)
      for (int tb = 110; tb <= 114; ++tb)
        for (int m : sizes)
          for (int n : sizes)
            for (int k : sizes)
              for (int lda : lds)
                for (int ldb : lds)
                  for (int ldc : lds) {
                    const int want = ref::cblas_sgemm_info(layout, ta, tb, m, n, k, lda, ldb, ldc);
                    ASSERT_EQ(cblas_info(layout, ta, tb, m, n, k, lda, ldb, ldc), want)
                        << layout << " " << ta << " " << tb << " m=" << m << " n=" << n
                        << " k=" << k << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc;
                    ++cases;
                    valid += want == 0;
                  }
  EXPECT_GT(valid, 0);
  EXPECT_LT(valid, cases);
  const int64_t wide[] = {INT64_MIN, -(int64_t(1) << 32), INT_MIN,          -1,       0, 1,
                          2,         int64_t(1) << 31,    int64_t(1) << 32, INT64_MAX};
  for (int64_t m : wide)
    for (int64_t n : wide)
      for (int64_t k : wide)
        for (int64_t lda : wide)
          for (int64_t ldb : wide)
            for (int64_t ldc : wide) {
              for (char ta : {'N', 't'})
                ASSERT_EQ(fortran_info<int64_t>(ta, 'C', m, n, k, lda, ldb, ldc),
                          ref::sgemm_info<int64_t>(ta, 'C', m, n, k, lda, ldb, ldc))
                    << ta << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda
                    << " ldb=" << ldb << " ldc=" << ldc;
              for (int layout : {ref::kRowMajor, ref::kColMajor})
                for (int ta : {ref::kNoTrans, ref::kConjTrans})
                  ASSERT_EQ(cblas_info<int64_t>(layout, ta, ref::kTrans, m, n, k, lda, ldb, ldc),
                            ref::cblas_sgemm_info<int64_t>(layout, ta, ref::kTrans, m, n, k, lda,
                                                           ldb, ldc))
                      << layout << " " << ta << " m=" << m << " n=" << n << " k=" << k
                      << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc;
            }
}

// ---- Counters ---------------------------------------------------------------------

tmm_blas_counters read_counters(int routine = TMM_BLAS_ALL) {
  tmm_blas_counters c{};
  EXPECT_TRUE(Counters::read(routine, c));
  return c;
}

// What one thread counts in count_some: `calls` fallback calls of 3 flops through
// sgemm_, one quick return through cblas_sgemm, and tiledmm's largest k.
void count_some(int calls, int64_t k) {
  for (int i = 0; i < calls; ++i)
    Counters::add_call(Routine::kSgemm, Counter::kFallbackCalls, Counter::kFallbackFlops, 3);
  Counters::add(Routine::kCblasSgemm, Counter::kNoop);
  Counters::note_k(Routine::kSgemm, k);
}

void run_threads(int threads, int calls, int64_t k) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(count_some, calls, k + t);
  for (auto& th : pool) th.join();
}

TEST(BlasCounters, ThreadsThatExitedKeepTheirCounts) {
  Counters::reset();
  EXPECT_EQ(read_counters().fallback_calls, 0u);
  constexpr int kThreads = 8, kCalls = 1000;
  // Every thread has exited before each read; from the second round on, the new
  // threads take the blocks the old ones gave back.
  for (int round = 1; round <= 3; ++round) {
    run_threads(kThreads, kCalls, 100 * round);
    const auto all = read_counters();
    EXPECT_EQ(all.fallback_calls, uint64_t(round * kThreads * kCalls)) << round;
    EXPECT_EQ(all.fallback_flops, uint64_t(3 * round * kThreads * kCalls)) << round;
    EXPECT_EQ(all.noop_calls, uint64_t(round * kThreads)) << round;
    EXPECT_EQ(all.tiledmm_max_k, 100 * round + kThreads - 1) << round;
    EXPECT_EQ(read_counters(TMM_BLAS_SGEMM).fallback_calls, all.fallback_calls);
    EXPECT_EQ(read_counters(TMM_BLAS_SGEMM).noop_calls, 0u);
    EXPECT_EQ(read_counters(TMM_BLAS_CBLAS_SGEMM).noop_calls, all.noop_calls);
  }
  tmm_blas_counters unknown{};
  EXPECT_FALSE(Counters::read(int(Routine::kCount), unknown));
}

TEST(BlasCounters, ResetZeroesEveryThreadsCounts) {
  Counters::reset();
  count_some(5, 7);         // this thread's block
  run_threads(4, 50, 900);  // blocks given back
  // A thread alive across the reset, with counts before and after it.
  std::atomic<int> step{0};
  std::thread live([&] {
    count_some(20, 1000);
    step = 1;
    while (step.load() != 2) std::this_thread::yield();
    count_some(3, 11);
  });
  while (step.load() != 1) std::this_thread::yield();
  EXPECT_EQ(read_counters().fallback_calls, 5u + 4 * 50 + 20);
  EXPECT_EQ(read_counters().tiledmm_max_k, 1000);
  Counters::reset();
  const auto zero = read_counters();
  EXPECT_EQ(zero.fallback_calls, 0u);
  EXPECT_EQ(zero.fallback_flops, 0u);
  EXPECT_EQ(zero.noop_calls, 0u);
  EXPECT_EQ(zero.tiledmm_max_k, 0);
  step = 2;
  live.join();
  count_some(2, 5);
  run_threads(2, 10, 3);
  const auto after = read_counters();
  EXPECT_EQ(after.fallback_calls, 3u + 2 + 2 * 10);
  EXPECT_EQ(after.fallback_flops, 3u * (3 + 2 + 2 * 10));
  EXPECT_EQ(after.noop_calls, 4u);
  EXPECT_EQ(after.tiledmm_max_k, 11);
  EXPECT_TRUE(Counters::ready());
}

TEST(BlasCounters, ReadersWhileThreadsCount) {
  Counters::reset();
  constexpr int kThreads = 6, kCalls = 20000;
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      count_some(kCalls, 1);
    });
  go = true;
  uint64_t last = 0;
  bool monotonic = true;
  for (int i = 0; i < 200; ++i) {
    const uint64_t now = read_counters().fallback_calls;
    monotonic = monotonic && now >= last && now <= uint64_t(kThreads) * kCalls;
    last = now;
  }
  for (auto& th : pool) th.join();
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(read_counters().fallback_calls, uint64_t(kThreads) * kCalls);
}

// Reads while another thread counts and resets over and over: a read never shows more
// than the calls made (a reset between a read's loads of a counter's value and of its
// base once made the difference wrap to near 2^64). The counting thread resets too,
// so that its values change between those two loads on a machine of two CPUs.
TEST(BlasCounters, ReadsDuringResetsNeverExceedTheCallsMade) {
  Counters::reset();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> made{0};
  std::thread counter([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      Counters::add_call(Routine::kSgemm, Counter::kFallbackCalls, Counter::kFallbackFlops, 3);
      made.fetch_add(1, std::memory_order_relaxed);
      Counters::reset();
    }
  });
  while (made.load() == 0) std::this_thread::yield();
  uint64_t worst = 0, worst_flops = 0;
  int reads = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  for (; reads < 100000 || std::chrono::steady_clock::now() < end; ++reads) {
    const auto c = read_counters(TMM_BLAS_SGEMM);
    worst = std::max(worst, c.fallback_calls);
    worst_flops = std::max(worst_flops, c.fallback_flops);
  }
  stop = true;
  counter.join();
  EXPECT_LE(worst, made.load()) << "of " << reads << " reads";
  EXPECT_LE(worst_flops, 3 * made.load());
}

// Runs `body` in a child process (the log is process-wide); true when it exits 0.
template <class Body>
bool in_child(Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    _exit(body() ? 0 : 1);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// TILEDMM_BLAS_LOG naming a symbolic link (someone else's, in /tmp, say): refused,
// and the file it points to is never written; the log stays off, nothing fails. A
// regular file of this user is used.
TEST(BlasLog, SymbolicLinkRefused) {
  char dir_template[] = "/tmp/tmm_blas_log_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, target = dir + "/target", link = dir + "/log";
  std::ofstream(target).close();
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_TRUE(in_child([&] {
    Log::open(link);
    Log::line("through the link");
    return !Log::enabled();
  })) << "the log opened a symbolic link";
  EXPECT_EQ(slurp(target), "");
  // A link to nothing: no file is made where it points.
  const std::string dangling = dir + "/dangling", nowhere = dir + "/nowhere";
  ASSERT_EQ(symlink(nowhere.c_str(), dangling.c_str()), 0);
  EXPECT_TRUE(in_child([&] {
    Log::open(dangling);
    return !Log::enabled();
  }));
  EXPECT_NE(access(nowhere.c_str(), F_OK), 0);
  // A plain path works (the refusal is not of every file).
  const std::string plain = dir + "/plain";
  EXPECT_TRUE(in_child([&] {
    Log::open(plain);
    Log::line("hello");
    return Log::enabled();
  }));
  EXPECT_NE(slurp(plain).find("hello"), std::string::npos);
  for (const std::string& p : {target, link, dangling, plain}) unlink(p.c_str());
  rmdir(dir.c_str());
}

// A file another user owns is refused too (checked after the open). Needs root, to
// give the file away.
TEST(BlasLog, FileOfAnotherUserRefused) {
  char dir_template[] = "/tmp/tmm_blas_log_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, theirs = dir + "/theirs";
  std::ofstream(theirs).close();
  const bool given = chown(theirs.c_str(), geteuid() == 65534 ? 65533 : 65534, gid_t(-1)) == 0;
  if (given) {
    EXPECT_TRUE(in_child([&] {
      Log::open(theirs);
      Log::line("into another user's file");
      return !Log::enabled();
    })) << "the log opened a file of another user";
    EXPECT_EQ(slurp(theirs), "");
  }
  unlink(theirs.c_str());
  rmdir(dir.c_str());
  if (!given) GTEST_SKIP() << "cannot give a file to another user (not root)";
}

// TSan cannot start threads in the child of a multi-threaded fork().
#if defined(__SANITIZE_THREAD__)
#define TMM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TMM_TSAN 1
#endif
#endif
#ifdef TMM_TSAN
constexpr int kChildThreadCalls = 0;
#else
constexpr int kChildThreadCalls = 7;
#endif

// A child of fork() forked while other threads count: its one thread counts on in
// its block, a thread it starts gets one, and nothing waits for the parent's threads.
TEST(BlasCounters, ChildOfForkCounts) {
  Counters::reset();
  count_some(1, 1);
  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 3; ++t)
    pool.emplace_back([&] {
      count_some(1, 1);
      ++running;
      while (!stop.load()) count_some(100, 1);
    });
  // Forks while they count, not while they start: a sanitizer's runtime may hold its
  // own locks while a thread starts, and its child would wait for them for ever.
  while (running.load() != 3) std::this_thread::yield();
  for (int f = 0; f < 4; ++f) {
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(60);  // a deadlock fails the test instead of hanging it
      const uint64_t before = read_counters().fallback_calls;
      count_some(10, 1);
      if (kChildThreadCalls > 0) std::thread(count_some, kChildThreadCalls, 1).join();
      const uint64_t after = read_counters().fallback_calls;
      Counters::reset();
      count_some(4, 1);
      const bool ok =
          after - before == 10u + kChildThreadCalls && read_counters().fallback_calls == 4;
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "fork " << f;
  }
  stop = true;
  for (auto& th : pool) th.join();
}

}  // namespace
