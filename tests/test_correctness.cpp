// Correctness of every backend x algorithm x tile x coarsening, over both layouts,
// all four transpose pairs, awkward shapes, padded leading dimensions and several
// alpha/beta, against a double-precision reference. C is poisoned (NaN where beta
// is 0, a sentinel in the padding) before each call.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

namespace {

using tmm_test::GemmCase;

struct Config {
  tmm_backend backend;
  tmm_algorithm algorithm;
  int tile;
  int coarsening;
};

std::string config_name(const Config& c) {
  static const char* algos[] = {"auto", "naive", "tiled", "coarsened", "blocked"};
  return std::string(c.backend == TMM_BACKEND_CUDA ? "cuda_" : "cpu_") + algos[c.algorithm] +
         (c.tile ? "_t" + std::to_string(c.tile) : "") +
         (c.coarsening ? "_c" + std::to_string(c.coarsening) : "");
}

struct Shape {
  int64_t m, n, k;
};

// 1x1x1, primes, non-multiples of every tile, empty and k = 0 cases, thin shapes,
// and one large enough to cross every CPU cache block and to hold interior tiles of
// every GPU kernel (128 x 256 for BLOCKED). Under compute-sanitizer
// (TMM_TEST_SANITIZER=1) that one shrinks in k, keeping its interior tiles.
std::vector<Shape> shapes() {
  const char* sanitizer = std::getenv("TMM_TEST_SANITIZER");
  const bool small = sanitizer != nullptr && std::string(sanitizer) == "1";
  return {
      {1, 1, 1},      {2, 3, 5},
      {7, 13, 11},    {31, 33, 17},
      {17, 65, 40},   {64, 64, 64},
      {100, 37, 129}, {129, 67, 33},
      {3, 1, 70},     {1, 50, 9},
      {0, 5, 3},      {5, 0, 3},
      {4, 6, 0},      small ? Shape{300, 530, 37} : Shape{300, 530, 270},
  };
}
const std::vector<Shape> kShapes = shapes();

struct Scalars {
  float alpha, beta;
  int64_t pad;
};

const std::vector<Scalars> kScalars = {
    {1.0f, 0.0f, 0},     // plain product; C is NaN and must not be read
    {-0.75f, 1.25f, 5},  // full update with padded leading dimensions
    {2.0f, 0.0f, 3},     // beta = 0 with padding
    {0.0f, 2.0f, 0},     // alpha = 0: C = beta * C, A and B not used
};

using Param = std::tuple<Config, tmm_layout, tmm_transpose, tmm_transpose>;

class Correctness : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const Config& cfg = std::get<0>(GetParam());
    if (cfg.backend == TMM_BACKEND_CUDA) TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    ASSERT_EQ(tmm_create_with_backend(&h_, cfg.backend, 0), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_algorithm(h_, cfg.algorithm), TMM_SUCCESS) << tmm_get_error_message(h_);
    ASSERT_EQ(tmm_set_tile_size(h_, cfg.tile), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_coarsening(h_, cfg.coarsening), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }
  tmm_handle h_ = nullptr;
};

TEST_P(Correctness, MatchesDoubleReference) {
  const auto& [cfg, layout, ta, tb] = GetParam();
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const Shape& s : kShapes) {
    for (const Scalars& sc : kScalars) {
      GemmCase g;
      g.layout = layout;
      g.ta = ta;
      g.tb = tb;
      g.m = s.m;
      g.n = s.n;
      g.k = s.k;
      g.alpha = sc.alpha;
      g.beta = sc.beta;
      g.pad = sc.pad;
      tmm_test::fill_case(g, seed + uint32_t(s.m * 31 + s.n * 7 + s.k));
      SCOPED_TRACE(tmm_test::describe(g));
      ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
      EXPECT_TRUE(tmm_test::check_case(g));

      tmm_timing t{};
      ASSERT_EQ(tmm_get_last_timing(h_, &t), TMM_SUCCESS);
      EXPECT_NE(t.algorithm, TMM_ALGO_AUTO);
      if (cfg.algorithm != TMM_ALGO_AUTO) {
        EXPECT_EQ(t.algorithm, cfg.algorithm);
      }
      if (cfg.tile != 0 && cfg.backend == TMM_BACKEND_CUDA) {
        EXPECT_EQ(t.tile_size, cfg.tile);
      }
      EXPECT_GE(t.compute_ms, 0.0);
      if (cfg.backend == TMM_BACKEND_CPU) {
        EXPECT_EQ(t.total_ms, t.compute_ms) << "the CPU has no copies";
        EXPECT_EQ(t.upload_ms + t.download_ms, 0.0);
      } else {
        EXPECT_GE(t.total_ms, t.compute_ms + t.upload_ms + t.download_ms - 1e-3)
            << "the parts happen one after the other in the call";
      }
    }
  }
}

std::vector<Config> configs() {
  std::vector<Config> out = {
      {TMM_BACKEND_CPU, TMM_ALGO_AUTO, 0, 0},
      {TMM_BACKEND_CPU, TMM_ALGO_NAIVE, 0, 0},
      {TMM_BACKEND_CPU, TMM_ALGO_BLOCKED, 0, 0},
      {TMM_BACKEND_CUDA, TMM_ALGO_AUTO, 0, 0},
  };
  out.push_back({TMM_BACKEND_CUDA, TMM_ALGO_BLOCKED, 0, 0});
  out.push_back({TMM_BACKEND_CUDA, TMM_ALGO_BLOCKED, 64, 0});
  out.push_back({TMM_BACKEND_CUDA, TMM_ALGO_BLOCKED, 128, 0});
  out.push_back({TMM_BACKEND_CUDA, TMM_ALGO_BLOCKED, 256, 0});
  out.push_back({TMM_BACKEND_CUDA, TMM_ALGO_BLOCKED, 16, 0});  // thin, in passes of 16
  for (int tile : {8, 16, 32}) {
    out.push_back({TMM_BACKEND_CUDA, TMM_ALGO_NAIVE, tile, 0});
    out.push_back({TMM_BACKEND_CUDA, TMM_ALGO_TILED, tile, 0});
    for (int c : {1, 2, 4}) out.push_back({TMM_BACKEND_CUDA, TMM_ALGO_COARSENED, tile, c});
  }
  return out;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [cfg, layout, ta, tb] = info.param;
  return config_name(cfg) + (layout == TMM_ROW_MAJOR ? "_row_" : "_col_") +
         (ta == TMM_TRANS ? "T" : "N") + (tb == TMM_TRANS ? "T" : "N");
}

INSTANTIATE_TEST_SUITE_P(AllConfigs, Correctness,
                         ::testing::Combine(::testing::ValuesIn(configs()),
                                            ::testing::Values(TMM_ROW_MAJOR, TMM_COL_MAJOR),
                                            ::testing::Values(TMM_NO_TRANS, TMM_TRANS),
                                            ::testing::Values(TMM_NO_TRANS, TMM_TRANS)),
                         param_name);

// The registry's rows (tmm_get_kernel_info), by index.
int kernel_count() {
  for (int i = 0;; ++i) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) return i;
  }
}

tmm_kernel_info kernel_info(int i) {
  tmm_kernel_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(tmm_get_kernel_info(i, &info), TMM_SUCCESS) << "kernel " << i;
  return info;
}

// Every kernel in the registry, one test each (named after it), selected by its own
// settings (its math mode included), on shapes with ragged edges, both layouts and
// all transposes: a kernel added to the registry is tested here without a line
// changed. The report must name the kernel, unless the device is older than the kernel
// needs: then a kernel of another math mode gives way to the strict one, which must say
// so. A CUDA row (.../cuda_tiled_16) skips without a GPU (fails with TMM_REQUIRE_GPU=1).
class Registry : public ::testing::TestWithParam<int> {};

TEST_P(Registry, MatchesTheReferenceAndIsTheOneThatRan) {
  const int i = GetParam();
  const tmm_kernel_info info = kernel_info(i);
  ASSERT_NE(info.name, nullptr);
  if (info.backend == TMM_BACKEND_CUDA) TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, info.backend, 0), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_ALGORITHM, info.algorithm), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_TILE_SIZE, info.tile_size), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_COARSENING, info.coarsening), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, info.math_mode), TMM_SUCCESS);
  bool runs_here = true;  // the device's compute capability is in the kernel's range
  std::string expected = info.name;
  if (info.backend == TMM_BACKEND_CUDA) {
    tmm_device_info d{};
    ASSERT_EQ(tmm_get_device_info(h, &d), TMM_SUCCESS);
    const int cc = 10 * d.compute_capability_major + d.compute_capability_minor;
    runs_here = cc >= info.min_compute_capability && cc <= info.max_compute_capability;
    // Rows with the same settings for different devices: the first that runs here is
    // the one that runs (tf32_wgmma_128x256 on Hopper for tf32_mma_128x256's). In double,
    // BLOCKED's tiles have an FP64 tensor-core row (from cc 8.0) and a CUDA-core row
    // (from 5.0): the first of the kind dispatch takes here, the tensor cores only where
    // DMMA pays (cc 8.0, 9.0 and later; DeviceProfile::dmma_pays). Each row runs through
    // its own launcher in test_kernel_table (Fp64Rows.*).
    const bool double_blocked =
        info.precision == TMM_PRECISION_DOUBLE && info.algorithm == TMM_ALGO_BLOCKED;
    const bool dmma_pays = cc == 80 || cc >= 90;
    for (int j = 0; j < (double_blocked ? kernel_count() : i); ++j) {
      const tmm_kernel_info other = kernel_info(j);
      if (other.backend == info.backend && other.precision == info.precision &&
          other.algorithm == info.algorithm && other.tile_size == info.tile_size &&
          other.coarsening == info.coarsening && other.math_mode == info.math_mode &&
          cc >= other.min_compute_capability && cc <= other.max_compute_capability &&
          (!double_blocked || (other.min_compute_capability >= 80) == dmma_pays)) {
        expected = other.name;
        break;
      }
    }
  }
  int variant = 0;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        const int64_t m = 67 + variant, n = 45 + 3 * variant, k = 129 + 7 * variant;
        const bool beta0 = variant % 2, pad = variant % 3;
        const uint32_t case_seed = seed + uint32_t(i * 16 + variant);
        ++variant;
        tmm_report r{};
        r.struct_size = sizeof r;
        // A DOUBLE row through tmm_dgemm against the FP64 bound, the others through
        // tmm_sgemm against their mode's.
        const auto run = [&](auto g) {
          using T = decltype(g.alpha);
          g.layout = layout, g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k;
          g.alpha = T(0.75), g.beta = beta0 ? T(0) : T(-1.5), g.pad = pad;
          tmm_test::fill_case(g, case_seed);
          SCOPED_TRACE(std::string(info.name) + " " + tmm_test::describe(g));
          ASSERT_EQ(tmm_test::run_case(h, g), TMM_SUCCESS) << tmm_get_error_message(h);
          ASSERT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
          if constexpr (std::is_same_v<T, double>) {
            EXPECT_TRUE(tmm_test::check_case(g));
          } else {
            EXPECT_TRUE(tmm_test::check_case(g, tmm_test::arithmetic_of(r.math_mode)));
          }
        };
        if (info.precision == TMM_PRECISION_DOUBLE) {
          run(tmm_test::DgemmCase{});
        } else {
          run(tmm_test::GemmCase{});
        }
        if (HasFatalFailure()) return;
        EXPECT_EQ(r.precision, info.precision);
        if (runs_here) {
          EXPECT_EQ(std::string(r.kernel), expected);
          EXPECT_EQ(r.math_mode, info.math_mode);
        } else {
          EXPECT_EQ(r.math_mode, TMM_MATH_FP32) << "the strict kernel stands in";
        }
      }
    }
  }
  tmm_destroy(h);
}

// cpu_naive, cuda_blocked_64x64, ...: the kernel's name (letters, digits and '_'), a
// CUDA row's after cuda_ (tests/CMakeLists.txt runs the *cuda_* tests apart).
std::string kernel_param_name(const ::testing::TestParamInfo<int>& p) {
  const tmm_kernel_info info = kernel_info(p.param);
  std::string name = info.name != nullptr ? info.name : "kernel_" + std::to_string(p.param);
  if (info.backend == TMM_BACKEND_CUDA) name = "cuda_" + name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, Registry, ::testing::Range(0, kernel_count()),
                         kernel_param_name);

// The list holds the CPU kernels at least, which run everywhere.
TEST(KernelList, HasTheCpuKernels) {
  int cpu = 0;
  for (int i = 0; i < kernel_count(); ++i) cpu += kernel_info(i).backend == TMM_BACKEND_CPU;
  EXPECT_GE(cpu, 2);
}

}  // namespace
