// Dispatch's choice of row (lib/cuda/launch/dispatch.hpp) for each math mode, on
// device profiles this machine need not have: host logic, no GPU needed (CUDA builds
// only, where dispatch is built).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/device_profile.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/settings.hpp"
#include "cuda/launch/dispatch.hpp"
#include "plan/f64_shapes.hpp"
#include "plan/planner.hpp"
#include "plan_fixtures.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {
namespace {

using tmm_test::a100;
using tmm_test::consumer80;
using tmm_test::h100;
using tmm_test::Profile;
using tmm_test::profiles;
using tmm_test::shape;
using tmm_test::shapes;
using tmm_test::t4;

// ---- The math mode in kernel choice (host logic: no GPU needed) ---------------------

struct ChoiceCase {
  Algorithm algorithm;
  int tile;
  MathMode mode;
};

std::string describe(const ChoiceCase& c) {
  return "algorithm " + std::to_string(int(c.algorithm)) + " tile " + std::to_string(c.tile) +
         " mode " + std::to_string(int(c.mode));
}

KernelChoice choose(const ChoiceCase& c, const DeviceProfile& device, int64_t n = 4096) {
  Settings s;
  s.algorithm = c.algorithm;
  s.tile_size = c.tile;
  s.math_mode = c.mode;
  return choose_kernel(shape(n, n, n), s, device);
}

TEST(MathMode, Tf32ChoosesTensorCoresOnlyWhereTheDeviceHasThem) {
  // On cc 9.0 the Hopper row runs where its sm_90a code loaded for this machine's GPU.
  const KernelEntry* hopper = nullptr;
  for (const KernelEntry& k : cuda_kernel_table())
    if (std::string(k.name) == "tf32_wgmma_128x256") hopper = &k;
  const bool hopper_here = hopper != nullptr && runs_here(*hopper, 90);
  for (const ChoiceCase& c : {ChoiceCase{Algorithm::Auto, 0, MathMode::Tf32},
                              ChoiceCase{Algorithm::Blocked, 0, MathMode::Tf32},
                              ChoiceCase{Algorithm::Blocked, 128, MathMode::Tf32}}) {
    SCOPED_TRACE(describe(c));
    for (const Profile& prof : profiles()) {
      for (int64_t n : {1, 100, 4096}) {
        const KernelChoice k = choose(c, prof.device, n);
        EXPECT_EQ(k.kernel->math_mode, MathMode::Tf32) << prof.name << " " << k.kernel->name;
        EXPECT_EQ(k.plan.splits, 1) << "no split of k at these sizes";
        // The wide tile where it fits (162 KiB: the A100 and H100, not the 80-SM
        // Ampere part) and the product has one per SM, at every size where it runs
        // the Hopper kernel; 128 asks for 128.
        const int cc = prof.device.compute_capability();
        const bool wide = c.tile == 0 && cc != 86 && (n == 4096 || (cc == 90 && hopper_here));
        EXPECT_EQ(k.plan.tile, wide ? 256 : 128) << prof.name << " n " << n;
      }
    }
    // A T4 (compute capability 7.5) has no TF32: the strict kernel, always allowed.
    const KernelChoice strict = choose(c, t4());
    EXPECT_EQ(strict.kernel->math_mode, MathMode::Fp32) << strict.kernel->name;
    EXPECT_EQ(std::string(strict.kernel->name).rfind("blocked_", 0), 0u) << strict.kernel->name;
  }
  // The wide tile asked for: TF32 where the device holds it, else the strict one.
  const ChoiceCase wide{Algorithm::Blocked, 256, MathMode::Tf32};
  EXPECT_STREQ(choose(wide, h100()).kernel->name,
               hopper_here ? "tf32_wgmma_128x256" : "tf32_mma_128x256");
  EXPECT_STREQ(choose(wide, a100()).kernel->name, "tf32_mma_128x256");
  EXPECT_STREQ(choose(wide, consumer80()).kernel->name, "blocked_128x256");
  EXPECT_STREQ(choose(wide, t4()).kernel->name, "blocked_128x256");
}

// FP32_ACCURATE: the 3xTF32 rows (tf32x3_mma_kernel.cu) for AUTO and BLOCKED with
// tile 0, 128 or 64 where the device has TF32 tensor cores; the strict rows elsewhere.
TEST(MathMode, Fp32AccurateChoosesThe3xTf32KernelsWhereTheDeviceHasThem) {
  const KernelEntry* x3_hopper = nullptr;
  for (const KernelEntry& k : cuda_kernel_table())
    if (std::string(k.name) == "tf32x3_wgmma_128x128") x3_hopper = &k;
  const bool x3_hopper_here = x3_hopper != nullptr && runs_here(*x3_hopper, 90);
  for (const Profile& prof : profiles()) {
    for (const GemmProblem& p : shapes()) {
      const int tile = plan_tf32x3(p, prof.device, 0);
      if (prof.device.compute_capability() == 86) {  // TF32 at the FP32 rate: strict
        EXPECT_EQ(tile, 0) << prof.name;
        continue;
      }
      ASSERT_TRUE(tile == 128 || tile == 64) << prof.name;
      const int64_t wide_tiles = ((p.m + 127) / 128) * ((p.n + 63) / 64);
      EXPECT_EQ(tile, wide_tiles >= prof.device.multiprocessors ? 128 : 64) << prof.name;
    }
  }
  EXPECT_EQ(plan_tf32x3(shape(64, 64, 64), h100(), 256), 0) << "no 3xTF32 tile of 256";
  EXPECT_EQ(plan_tf32x3(shape(64, 64, 64), a100(), 128), 128);
  EXPECT_EQ(plan_tf32x3(shape(64, 64, 64), consumer80(), 128), 0) << "slower than FP32 there";
  EXPECT_EQ(plan_tf32x3(shape(64, 64, 64), h100(), 64), 64);
  for (const ChoiceCase& c : {ChoiceCase{Algorithm::Auto, 0, MathMode::Fp32Accurate},
                              ChoiceCase{Algorithm::Blocked, 0, MathMode::Fp32Accurate},
                              ChoiceCase{Algorithm::Blocked, 128, MathMode::Fp32Accurate},
                              ChoiceCase{Algorithm::Blocked, 64, MathMode::Fp32Accurate}}) {
    SCOPED_TRACE(describe(c));
    for (const Profile& prof : profiles()) {
      for (int64_t n : {1, 100, 4096}) {
        const KernelChoice k = choose(c, prof.device, n);
        if (prof.device.compute_capability() == 86) {  // strict FP32 is faster there
          EXPECT_EQ(k.kernel->math_mode, MathMode::Fp32) << prof.name << " " << k.kernel->name;
          continue;
        }
        EXPECT_EQ(k.kernel->math_mode, MathMode::Fp32Accurate)
            << prof.name << " " << k.kernel->name;
        EXPECT_EQ(k.plan.splits, 1) << "no split of k at these sizes";
        const bool wide = c.tile == 128 || (c.tile == 0 && n == 4096);
        // Tile 128 on cc 9.0 is the Hopper row where its code loaded on this machine.
        const bool hopper = wide && prof.device.compute_capability() == 90 && x3_hopper_here;
        EXPECT_STREQ(k.kernel->name, hopper ? "tf32x3_wgmma_128x128"
                                     : wide ? "tf32x3_mma_128x64"
                                            : "tf32x3_mma_64x64")
            << prof.name << " n " << n;
        EXPECT_EQ(k.plan.tile, wide ? 128 : 64);
        EXPECT_EQ(k.kernel->outputs_per_thread, hopper ? 64 : 32);
      }
    }
    const KernelChoice strict = choose(c, t4());
    EXPECT_EQ(strict.kernel->math_mode, MathMode::Fp32) << strict.kernel->name;
    EXPECT_EQ(std::string(strict.kernel->name).rfind("blocked_", 0), 0u) << strict.kernel->name;
  }
  // TF32 is not FP32_ACCURATE, nor the other way round.
  EXPECT_EQ(choose({Algorithm::Auto, 0, MathMode::Tf32}, h100()).kernel->math_mode, MathMode::Tf32);
  EXPECT_STREQ(choose({Algorithm::Blocked, 64, MathMode::Tf32}, h100()).kernel->name,
               "blocked_64x64");
  EXPECT_STREQ(choose({Algorithm::Blocked, 256, MathMode::Fp32Accurate}, h100()).kernel->name,
               "blocked_128x256");
  EXPECT_STREQ(choose({Algorithm::Tiled, 32, MathMode::Fp32Accurate}, h100()).kernel->name,
               "tiled_32");
}

TEST(MathMode, ModesWithoutAKernelRunTheStrictOne) {
  const ChoiceCase cases[] = {
      {Algorithm::Auto, 0, MathMode::Fp32},               // the default
      {Algorithm::Blocked, 256, MathMode::Fp32Accurate},  // no 3xTF32 row of 256
      {Algorithm::Blocked, 64, MathMode::Tf32},           // no TF32 row of that tile
      {Algorithm::Tiled, 32, MathMode::Tf32},             // the ladder is strict FP32
      {Algorithm::Naive, 0, MathMode::Tf32},
      {Algorithm::Coarsened, 16, MathMode::Fp32Accurate},
  };
  for (const ChoiceCase& c : cases) {
    for (const DeviceProfile& device : {h100(), t4()}) {
      const KernelChoice k = choose(c, device);
      EXPECT_EQ(k.kernel->math_mode, MathMode::Fp32) << describe(c) << ": " << k.kernel->name;
      if (c.algorithm != Algorithm::Auto) {
        EXPECT_EQ(k.kernel->algorithm, c.algorithm) << describe(c);
      }
      if (c.tile != 0) {
        EXPECT_EQ(k.kernel->tile, c.tile) << describe(c);
      }
    }
  }
  // A tile no row has is still an error, whatever the mode.
  EXPECT_THROW(choose({Algorithm::Blocked, 32, MathMode::Tf32}, h100()), Error);
}

TEST(MathMode, ReportedModeFollowsTheKernelThatRan) {
  Settings s;
  s.math_mode = MathMode::Tf32;
  GemmProblem p = shape(300, 200, 100);
  KernelChoice k = choose_kernel(p, s, h100());
  EXPECT_EQ(math_mode_of(k, p), MathMode::Tf32);
  p.alpha = 0.0f;  // C = beta * C: no product ran
  EXPECT_STREQ(kernel_name(k, p), "scale");
  EXPECT_EQ(math_mode_of(k, p), MathMode::Fp32);
  k = choose_kernel(shape(300, 200, 100), s, t4());
  EXPECT_EQ(math_mode_of(k, shape(300, 200, 100)), MathMode::Fp32);
}

// ---- Double precision (host logic) --------------------------------------------------

GemmProblem double_shape(int64_t m, int64_t n, int64_t k) {
  GemmProblem p = shape(m, n, k);
  p.precision = Precision::F64;
  return p;
}

// Every double row of the ladder mirrors its float twin (same settings and default), is
// strict and is named f64_ after it; the others are BLOCKED's FP64 tensor-core rows.
TEST(Double, EveryLadderRowHasADoubleTwin) {
  int ladder = 0, blocked = 0;
  for (const KernelEntry& k : cuda_kernel_table()) {
    if (k.precision != Precision::F64) continue;
    EXPECT_EQ(k.math_mode, MathMode::Fp32) << k.name;
    EXPECT_EQ(std::string(k.name).rfind("f64_", 0), 0u) << k.name;
    if (k.algorithm == Algorithm::Blocked) {
      ++blocked;
      EXPECT_EQ(std::string(k.name).rfind("f64_mma_", 0), 0u) << k.name;
      EXPECT_EQ(k.min_cc, 80) << k.name;
      continue;
    }
    ++ladder;
    const KernelEntry* twin =
        find_kernel(BackendKind::Cuda, Precision::F32, k.algorithm, k.tile, k.coarsening);
    ASSERT_NE(twin, nullptr) << k.name;
    EXPECT_EQ(std::string("f64_") + twin->name, k.name);
    EXPECT_EQ(twin->is_default, k.is_default) << k.name;
    EXPECT_EQ(twin->outputs_per_thread, k.outputs_per_thread) << k.name;
  }
  EXPECT_EQ(ladder, 3 + 3 + 9);
  EXPECT_EQ(blocked, 2);
}

// AUTO and BLOCKED (tile 0) in double run the FP64 tensor cores from compute capability
// 8.0 (plan_f64's tile: 128 x 64 with a wave of its tiles, else 64 x 64) and
// f64_coarsened_32_x4 before it, whatever the shape and the math mode: TF32 and
// FP32_ACCURATE never change a double choice. With a workspace the tensor-core rows split
// k as plan_f64_tail says (its partial tiles of doubles are the workspace); without
// one, and on the ladder, nothing splits.
TEST(Double, AutoRunsTheFp64TensorCoresWhateverTheMathMode) {
  for (const Profile& prof : profiles()) {
    for (const GemmProblem& f : shapes()) {
      GemmProblem p = f;
      p.precision = Precision::F64;
      const bool dmma = prof.device.compute_capability() >= 80;
      const int tile = plan_f64(p, prof.device, 0);
      const std::string expected = !dmma         ? "f64_coarsened_32_x4"
                                   : tile == 128 ? "f64_mma_128x64"
                                                 : "f64_mma_64x64";
      for (MathMode mode : {MathMode::Fp32, MathMode::Tf32, MathMode::Fp32Accurate}) {
        for (Algorithm a : {Algorithm::Auto, Algorithm::Blocked}) {
          Settings s;
          s.algorithm = a;
          s.math_mode = mode;
          for (bool with_workspace : {true, false}) {
            const KernelChoice c = choose_kernel(p, s, prof.device, with_workspace);
            EXPECT_EQ(c.kernel->name, expected) << prof.name;
            EXPECT_EQ(c.kernel->precision, Precision::F64);
            EXPECT_EQ(math_mode_of(c, p), MathMode::Fp32);
            if (!dmma || !with_workspace) {
              EXPECT_EQ(c.plan.splits, 1);
              EXPECT_EQ(workspace_bytes(c, p), 0u);
              continue;
            }
            const MmaShapeInfo& shape = tile == 128 ? kF64Mma128x64 : kF64Mma64x64;
            const TailSplitPlan split = plan_f64_tail(p, shape, prof.device);
            EXPECT_EQ(c.plan.splits, split.splits) << prof.name;
            EXPECT_EQ(c.plan.tail_tiles, split.tail_tiles) << prof.name;
            const size_t partials = split.splits > 1 && split.tail_tiles > 0
                                        ? size_t(split.tail_tiles) * size_t(split.splits) *
                                              size_t(shape.rows * shape.cols) * sizeof(double)
                                        : 0;
            EXPECT_EQ(workspace_bytes(c, p), partials);
          }
        }
      }
    }
  }
  for (const DeviceProfile& device : {h100(), a100()}) {
    Settings s;
    s.math_mode = MathMode::Tf32;
    EXPECT_STREQ(choose_kernel(double_shape(4096, 4096, 4096), s, device).kernel->name,
                 "f64_mma_128x64");
    EXPECT_STREQ(choose_kernel(double_shape(256, 256, 2048), s, device).kernel->name,
                 "f64_mma_64x64");
    EXPECT_EQ(choose_kernel(shape(4096, 4096, 4096), s, device).kernel->precision, Precision::F32);
  }
  Settings s;
  EXPECT_STREQ(choose_kernel(double_shape(4096, 4096, 4096), s, t4()).kernel->name,
               "f64_coarsened_32_x4");
}

// Deep k in one tile of C (64 x 64 x 2^20): split into slices that fill the H100's blocks
// (3 of 64 x 64 per SM); 1000 x 1000 x 32768 (128 wide tiles) in slices of at most 256
// steps; a product that fills whole waves (4096^3: 2048 tiles of 128 x 64 on 264 blocks'
// slots) splits only its last.
TEST(Double, DeepKSplitsTheTileOverEveryBlock) {
  Settings s;
  const KernelChoice deep = choose_kernel(double_shape(64, 64, int64_t(1) << 20), s, h100());
  EXPECT_STREQ(deep.kernel->name, "f64_mma_64x64");
  EXPECT_EQ(deep.plan.tail_tiles, 1);
  EXPECT_GT(deep.plan.splits, 132 * 2);
  EXPECT_LE(deep.plan.splits, 132 * 3);
  const KernelChoice wide = choose_kernel(double_shape(1000, 1000, 32768), s, h100());
  EXPECT_STREQ(wide.kernel->name, "f64_mma_128x64");
  EXPECT_EQ(wide.plan.tail_tiles, 8 * 16);
  EXPECT_GE(wide.plan.splits, 32768 / 16 / 256);
  EXPECT_EQ(choose_kernel(double_shape(64, 64, int64_t(1) << 20), s, h100(), false).plan.splits, 1);
  const KernelChoice square = choose_kernel(double_shape(4096, 4096, 4096), s, h100());
  EXPECT_STREQ(square.kernel->name, "f64_mma_128x64");
  EXPECT_LT(square.plan.tail_tiles, 264);
}

// BLOCKED with a tile of double's tensor-core rows runs that row where the device does,
// and is refused (NotSupported, naming the compute capability) where it does not.
TEST(Double, BlockedTilesChooseTheirRow) {
  Settings s;
  s.algorithm = Algorithm::Blocked;
  for (int tile : {128, 64}) {
    s.tile_size = tile;
    const KernelChoice c = choose_kernel(double_shape(1000, 1000, 100), s, h100());
    EXPECT_EQ(c.kernel->tile, tile);
    EXPECT_EQ(c.kernel->precision, Precision::F64);
    try {
      choose_kernel(double_shape(1000, 1000, 100), s, t4());
      ADD_FAILURE() << "tile " << tile << " in double on compute capability 7.5";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::NotSupported);
      EXPECT_NE(std::string(e.what()).find("compute capability 7.5"), std::string::npos)
          << e.what();
    }
  }
}

// NAIVE, TILED and COARSENED in double take their settings, as in float, whatever the
// math mode; BLOCKED with a tile double has no row of is refused, the message listing double's.
TEST(Double, LadderSettingsChooseDoubleRows) {
  for (MathMode mode : {MathMode::Fp32, MathMode::Tf32, MathMode::Fp32Accurate}) {
    Settings s;
    s.math_mode = mode;
    s.algorithm = Algorithm::Naive;
    EXPECT_STREQ(choose_kernel(double_shape(100, 100, 100), s, h100()).kernel->name,
                 "f64_naive_16");
    s.algorithm = Algorithm::Tiled;
    s.tile_size = 8;
    EXPECT_STREQ(choose_kernel(double_shape(100, 100, 100), s, a100()).kernel->name, "f64_tiled_8");
    s.algorithm = Algorithm::Coarsened;
    s.tile_size = 16;
    s.coarsening = 4;
    EXPECT_STREQ(choose_kernel(double_shape(100, 100, 100), s, h100()).kernel->name,
                 "f64_coarsened_16_x4");
    s.tile_size = 0;
    s.coarsening = 0;
    EXPECT_STREQ(choose_kernel(double_shape(100, 100, 100), s, h100()).kernel->name,
                 "f64_coarsened_32_x2");
    s.algorithm = Algorithm::Blocked;
    s.tile_size = 256;
    try {
      choose_kernel(double_shape(100, 100, 100), s, h100());
      ADD_FAILURE() << "BLOCKED 256 in double has no row";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::NotSupported);
      const std::string what = e.what();
      EXPECT_NE(what.find("double precision"), std::string::npos) << what;
      EXPECT_NE(what.find("128, 64"), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace tiledmm
