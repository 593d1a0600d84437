// The shared part of test_tensor_cores (test_tensor_cores.cpp, the tests of both math
// modes; test_tensor_cores_tf32.cpp and test_tensor_cores_fp32_accurate.cpp, those of
// one): the kernels' names, device buffers, the FP64 error measures, the fixture that
// opens a CUDA handle in a math mode and knows what that mode runs on this device, and
// the description of each mode (MathMode, kModes) that the tests of both are
// parameterised over.
//
// On a device older than compute capability 8.0, TF32 has no kernel: the tests then
// expect the strict kernel, reported as FP32. FP32_ACCURATE (3xTF32) runs where it
// beats strict FP32 (compute capability 8.0 and 9.0 or later), strict FP32 elsewhere.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gemm_reference.hpp"

namespace tensor_cores_test {

using tmm_test::Arithmetic;
using tmm_test::GemmCase;

// The TF32 kernels: 128 x 128 tiles (80 KiB of shared memory: every device of compute
// capability 8.0 or later), and 128 x 256 (162 KiB: where the device lets a block opt
// into that much; the planner takes it for products with a tile of it per SM).
inline constexpr const char* kTf32Kernel = "tf32_mma_128x128";
inline constexpr const char* kTf32WideKernel = "tf32_mma_128x256";
inline constexpr int kTf32WideSharedBytes = 165888;
inline constexpr const char* kTf32HopperKernel = "tf32_wgmma_128x256";  // sm_90a, cc 9.0
// The small tile (tile 64): 64 x 64, 32 x 32 per warp.
inline constexpr const char* kTf32SmallKernel = "tf32_mma_64x64";

// The 3xTF32 kernels of FP32_ACCURATE: 128 x 64 tiles (tile 128), which the planner
// takes where the product has a tile of it per SM, and 64 x 64 (tile 64); 32 x 32 per
// warp.
inline constexpr const char* kX3Kernel = "tf32x3_mma_128x64";
inline constexpr const char* kX3SmallKernel = "tf32x3_mma_64x64";
// Tile 128 on Hopper where the library has its sm_90a code: 128 x 128, 64 per thread.
inline constexpr const char* kX3HopperKernel = "tf32x3_wgmma_128x128";

// A strict FP32 row as AUTO runs it where no tensor-core row does: TILED 16 for a single
// tiny product (C of at most 65536 elements, k at most 512: the planner's tiny_pays),
// else a BLOCKED row. Without the shape (m < 0): either.
inline ::testing::AssertionResult strict_fp32_row(const char* kernel, int64_t m = -1,
                                                  int64_t n = -1, int64_t k = -1) {
  const std::string name = kernel;
  const bool tiled = name == "tiled_16", blocked = name.rfind("blocked_", 0) == 0;
  const bool tiny = m >= 0 && double(m) * double(n) <= 65536 && k <= 512;
  if (m < 0 ? tiled || blocked : tiny ? tiled : blocked) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << " is not AUTO's strict row"
                                       << (m < 0  ? ""
                                           : tiny ? " for a tiny product (tiled_16)"
                                                  : " (a blocked_ row)");
}

// The library lists a kernel of this name.
inline bool has_kernel(const char* name) {
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
inline tmm_status run_device_case(tmm_handle h, GemmCase& g, int64_t offset) {
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

inline tmm_report last_report(tmm_handle h) {
  tmm_report r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
  return r;
}

// The exact result of a case over its m x n part (FP64), and the scale of each
// element's rounding errors in FP32: |alpha| sum over l of |a b| + |beta c0|.
struct Exact {
  std::vector<double> ref, scale;
};

inline Exact exact_of(const GemmCase& g) {
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
inline double error_against(const GemmCase& g, const Exact& x, bool scaled) {
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

// FP32_ACCURATE's bound: the scaled error within twice strict FP32's on the same
// inputs, plus 2^-21 / sqrt(k) (a few units in the last place of a typical element,
// for the cases where FP32 had little to lose). A kernel that dropped a correction
// term would be at TF32's 2^-11 (1e-5 and more on this scale), hundreds of times over.
inline double x3_bound(double strict, int64_t k) {
  return 2 * strict + std::ldexp(1.0, -21) / std::sqrt(double(k));
}

// A math mode with tensor-core kernels, as the tests of both modes see it: each such
// test is a TEST_P over kModes, its name ending in the mode's (/Tf32, /Fp32Accurate).
// What else differs between the modes (the kernel that runs, the error bound) the
// fixture says for the mode it opened: expect_planner_ran, yardstick and
// expect_within_bound below.
struct MathMode {
  tmm_math_mode mode;
  const char* name;  // the test name's suffix
  // The mode's kernels as tmm_get_kernel_info lists them (all BLOCKED, none a
  // default): the mma.sync ones, listed everywhere, and the Hopper one, listed only
  // where the library has its sm_90a code.
  struct Kernel {
    const char* name;
    int tile_size;
    int min_compute_capability;
    int outputs_per_thread;
  };
  std::vector<Kernel> mma_sync;
  Kernel hopper;
};

inline const MathMode kModes[] = {
    {TMM_MATH_TF32,
     "Tf32",
     {{kTf32Kernel, 128, 80, 128}, {kTf32WideKernel, 256, 80, 128}, {kTf32SmallKernel, 64, 80, 32}},
     {kTf32HopperKernel, 256, 90, 128}},
    {TMM_MATH_FP32_ACCURATE,
     "Fp32Accurate",
     {{kX3Kernel, 128, 80, 32}, {kX3SmallKernel, 64, 80, 32}},
     {kX3HopperKernel, 128, 90, 64}},
};

// A parameter's name in a failure message: the mode's.
inline void PrintTo(const MathMode& m, std::ostream* os) { *os << m.name; }

// A test name's suffix: the mode's.
inline std::string mode_name(const ::testing::TestParamInfo<MathMode>& info) {
  return info.param.name;
}

// A CUDA handle in one math mode (open()), and what that mode runs on this device.
class TensorCoreTest : public ::testing::Test {
 protected:
  // The handle, in `mode`; skips without a GPU (fails with TMM_REQUIRE_GPU=1).
  void open(tmm_math_mode mode) {
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    mode_ = mode;
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, mode), TMM_SUCCESS);
    tmm_device_info d{};
    ASSERT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
    multiprocessors_ = d.multiprocessors;
    tensor_cores_ = d.compute_capability_major >= 8;
    int optin = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, d.device),
              cudaSuccess);
    wide_fits_ = optin >= kTf32WideSharedBytes;
    // Hopper runs its own kernel for the wide tile where the library has its code.
    hopper_ = d.compute_capability_major == 9 && d.compute_capability_minor == 0 &&
              has_kernel(kTf32HopperKernel);
    // 3xTF32 runs where it beats strict FP32: sm_80 and sm_90 and later (not sm_86/89).
    const int cc = 10 * d.compute_capability_major + d.compute_capability_minor;
    x3_ = cc == 80 || cc >= 90;
  }
  void TearDown() override { tmm_destroy(h_); }

  // ---- TF32 ----

  // planner.hpp's small_product for g: at most 2^28 multiply-adds, k at most 1024.
  // On Hopper, with tile 0, FP32_ACCURATE runs such a product strict, and TF32 in the
  // 64 x 64 tile where the wide tiles leave SMs idle (small_for_tf32), AUTO in strict
  // TILED 16 where it is also tiny (tf32_tiny_pays: C of at most 16384, k at most 512).
  static bool small_product(const GemmCase& g) {
    return double(g.m) * double(g.n) * double(g.k) <= double(1 << 28) && g.k <= 1024;
  }
  bool small_for_tf32(const GemmCase& g) const {
    const auto tiles = [](int64_t rows, int64_t cols) {
      return ((rows + 127) / 128) * ((cols + 255) / 256);
    };
    // The wgmma kernel may multiply C or its transpose: fewer than the SMs either way.
    // (Dispatch counts the orientation the kernel multiplies, wgmma_operands; the two
    // agree on every shape these tests give, whose tiles are far fewer than the SMs
    // or far more either way.)
    return small_product(g) && std::max(tiles(g.m, g.n), tiles(g.n, g.m)) < multiprocessors_;
  }
  static bool tf32_tiny(const GemmCase& g) {
    return double(g.m) * double(g.n) <= 16384 && g.k <= 512;
  }

  // The tile AUTO (or BLOCKED, auto_algorithm false) with tile 0 takes for g under TF32
  // on this device on the direct path; 0: strict TILED 16. On Hopper the wide one but
  // for small products (above); elsewhere the wide one for products with a wide tile
  // per SM, else 128 x 128 with one of those per SM, else 64 x 64.
  int auto_tile(const GemmCase& g, bool auto_algorithm = true) const {
    if (hopper_ && small_for_tf32(g)) return auto_algorithm && tf32_tiny(g) ? 0 : 64;
    if (hopper_) return 256;
    const int64_t m = g.row() ? g.m : g.n, n = g.row() ? g.n : g.m;
    if (wide_fits_ && ((m + 127) / 128) * ((n + 255) / 256) >= multiprocessors_) return 256;
    return ((m + 127) / 128) * ((n + 127) / 128) >= multiprocessors_ ? 128 : 64;
  }

  // What AUTO and BLOCKED must have run under TF32 on this device with the tile
  // `tile` (64, 128 or 256) chosen: its TF32 kernel, or the strict kernel where the
  // device cannot. Tile 0: AUTO's strict TILED 16 (auto_tile's 0).
  void expect_tf32_ran(const tmm_report& r, int tile) const {
    const bool wide = tile == 256;
    if (tile == 0) {
      EXPECT_STREQ(r.kernel, "tiled_16");
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
      return;
    }
    EXPECT_EQ(r.algorithm, TMM_ALGO_BLOCKED);
    if (tensor_cores_ && (!wide || wide_fits_)) {
      EXPECT_STREQ(r.kernel, tile == 64 ? kTf32SmallKernel
                             : !wide    ? kTf32Kernel
                             : hopper_  ? kTf32HopperKernel
                                        : kTf32WideKernel);
      EXPECT_EQ(r.math_mode, TMM_MATH_TF32);
      EXPECT_EQ(r.tile_size, tile);
      EXPECT_EQ(r.splits, 1);
      EXPECT_EQ(r.coarsening, tile == 64 ? 32 : 128)
          << "32 x 32 per warp in the small tile (32 outputs per thread), else 64 x 64 (128)";
    } else {
      EXPECT_TRUE(strict_fp32_row(r.kernel));
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
      if (wide) {
        EXPECT_EQ(r.tile_size, 256) << "the strict kernel of the tile asked for";
      }
    }
  }

  // The arithmetic of TF32's result on this device (wide: the tile-256 kernel's).
  // (A test that may run strict TILED 16 under AUTO asks arithmetic_of(r.math_mode).)
  Arithmetic arithmetic(bool wide = false) const {
    return tensor_cores_ && (!wide || wide_fits_) ? Arithmetic::Tf32 : Arithmetic::Fp32;
  }

  // ---- FP32_ACCURATE ----

  // Whether k is deep for the planner (plan/planner.hpp's is_deep_k: 256 steps of 32):
  // on Hopper, where the direct path gives the kernel a workspace, a product whose
  // tiles fill at most one wave then splits every tile along k.
  static bool deep_k(const GemmCase& g) { return (g.k + 31) / 32 >= 256; }

  // The kernel AUTO and BLOCKED run for g under FP32_ACCURATE with `tile` (0: the
  // planner's) on a device with tensor cores, on the direct path: on Hopper, 128 (the
  // wgmma kernel) where k is deep; otherwise 128 x 64 where the canonical (row-major)
  // product has a tile of it per SM, else 64 x 64.
  // nullptr: strict FP32 (on Hopper, a small product with tile 0).
  const char* x3_kernel(const GemmCase& g, int tile) const {
    const int64_t m = g.row() ? g.m : g.n, n = g.row() ? g.n : g.m;
    if (tile == 0 && hopper_ && small_product(g)) return nullptr;
    if (tile == 0 && hopper_ && deep_k(g)) tile = 128;
    if (tile == 0) tile = ((m + 127) / 128) * ((n + 63) / 64) >= multiprocessors_ ? 128 : 64;
    return tile == 128 ? (hopper_ ? kX3HopperKernel : kX3Kernel) : kX3SmallKernel;
  }

  // max_splits: the most slices of k the call may run (1 but for the deep-k split).
  // kernel nullptr: a strict FP32 row (x3_kernel's small products on Hopper).
  void expect_x3_ran(const tmm_report& r, const char* kernel, int max_splits = 1) const {
    if (kernel == nullptr) {
      EXPECT_TRUE(strict_fp32_row(r.kernel)) << r.kernel;
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
      return;
    }
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
      EXPECT_GE(r.splits, 1);
      EXPECT_LE(r.splits, max_splits);
      EXPECT_EQ(r.coarsening, hopper ? 64 : 32) << "outputs per thread";
    } else {
      EXPECT_TRUE(strict_fp32_row(r.kernel));
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
    EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, mode_), TMM_SUCCESS);
    auto finite = [](const std::vector<float>& v) {
      return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
    };
    if (finite(g.a) && finite(g.b)) {
      EXPECT_TRUE(tmm_test::check_case(strict)) << "the strict FP32 run";
    }
    return strict;
  }

  // ---- Either mode: the one open() set ----

  // What AUTO (tile 0) or BLOCKED with `tile` (0: the planner's) must have run for g
  // on the direct path: under TF32, expect_tf32_ran with the tile asked for or, for 0,
  // the one TF32's planner takes for a product short of a wide tile per SM (those of
  // the tests that call this); under FP32_ACCURATE, expect_x3_ran with x3_kernel's
  // kernel for g.
  void expect_planner_ran(const tmm_report& r, const GemmCase& g, int tile) const {
    if (mode_ == TMM_MATH_TF32) {
      expect_tf32_ran(r, tile != 0 ? tile : auto_tile(g));
    } else {
      expect_x3_ran(r, x3_kernel(g, tile));
    }
  }

  // What expect_within_bound measures g against, taken before g runs: under
  // FP32_ACCURATE, g in strict FP32 through the same call (strict_run); TF32's bound
  // needs nothing.
  template <class Run>
  std::optional<GemmCase> yardstick(const GemmCase& g, Run run) {
    if (mode_ != TMM_MATH_FP32_ACCURATE) return std::nullopt;
    return strict_run(g, run);
  }

  // g's result (the call reported r) within the mode's bound. TF32: tmm_test::check_case
  // with TF32's bound element by element, or strict FP32's where the device has no
  // TF32 kernel (wide: for the tile-256 one). FP32_ACCURATE: check_case with the bound
  // of the mode that ran, element by element, and the scaled error within x3_bound of
  // the yardstick's: a TF32 result fails the second hundreds of times over.
  void expect_within_bound(const GemmCase& g, const tmm_report& r,
                           const std::optional<GemmCase>& strict, bool wide = false) const {
    if (mode_ == TMM_MATH_TF32) {
      // AUTO's strict TILED 16 for a tiny product on Hopper: strict FP32's bound.
      EXPECT_TRUE(tmm_test::check_case(
          g, r.math_mode == TMM_MATH_FP32 ? Arithmetic::Fp32 : arithmetic(wide)));
      return;
    }
    EXPECT_TRUE(tmm_test::check_case(g, tmm_test::arithmetic_of(r.math_mode)))
        << "the bound of the mode that ran, element by element";
    ASSERT_TRUE(strict.has_value()) << "no yardstick: yardstick() was not called for g";
    const Exact x = exact_of(g);
    const double e = error_against(g, x, true), e_strict = error_against(*strict, x, true);
    EXPECT_LE(e, x3_bound(e_strict, g.k))
        << "scaled error: FP32_ACCURATE " << e << ", strict FP32 " << e_strict;
  }

  tmm_handle h_ = nullptr;
  tmm_math_mode mode_ = TMM_MATH_FP32;  // open()'s
  int multiprocessors_ = 0;
  bool tensor_cores_ = false;
  bool wide_fits_ = false;  // the device holds the 128 x 256 kernel's shared memory
  bool hopper_ = false;     // the wide tile runs tf32_wgmma_128x256
  bool x3_ = false;         // the device runs 3xTF32 for FP32_ACCURATE
};

// The tests of one mode: a handle in TF32, or in FP32_ACCURATE.
class TensorCores : public TensorCoreTest {
 protected:
  void SetUp() override { open(TMM_MATH_TF32); }
};

class Fp32Accurate : public TensorCoreTest {
 protected:
  void SetUp() override { open(TMM_MATH_FP32_ACCURATE); }
};

// The tests of both modes: a handle in the parameter's.
class TensorCoreModes : public TensorCoreTest, public ::testing::WithParamInterface<MathMode> {
 protected:
  void SetUp() override { open(GetParam().mode); }
};

}  // namespace tensor_cores_test
