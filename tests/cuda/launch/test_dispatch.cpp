// Dispatch's choice of row (lib/cuda/launch/dispatch.hpp) for each math mode, on
// device profiles this machine need not have: host logic, no GPU needed (CUDA builds
// only, where dispatch is built).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

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
using tmm_test::ada58;
using tmm_test::consumer80;
using tmm_test::h100;
using tmm_test::Profile;
using tmm_test::profiles;
using tmm_test::shape;
using tmm_test::shapes;
using tmm_test::t4;
using tmm_test::v100;

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
        EXPECT_EQ(k.plan.splits, 1) << "no split of k at these sizes";
        const int cc = prof.device.compute_capability();
        const bool hopper = cc == 90 && hopper_here;
        // AUTO on Hopper, a tiny product (1^3, 100^3): strict TILED 16, faster there.
        if (c.algorithm == Algorithm::Auto && hopper && n != 4096) {
          EXPECT_STREQ(k.kernel->name, "tiled_16") << prof.name << " n " << n;
          EXPECT_EQ(k.kernel->math_mode, MathMode::Fp32);
          continue;
        }
        EXPECT_EQ(k.kernel->math_mode, MathMode::Tf32) << prof.name << " " << k.kernel->name;
        // 128 asks for 128. The wide tile where it fits (162 KiB: the A100 and H100, not
        // the 80-SM Ampere part) and the product has one per SM, and on Hopper where it
        // runs the Hopper kernel but for small products; else the narrowest, 64 x 64
        // (small products on Hopper, and products short of a tile of 128 x 128 per SM
        // elsewhere).
        const bool wide = c.tile == 0 && cc != 86 && n == 4096;
        EXPECT_EQ(k.plan.tile, c.tile == 128 ? 128
                               : wide        ? 256
                               : n == 4096   ? 128
                                             : 64)
            << prof.name << " n " << n;
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
        // Strict FP32 is faster on cc 8.6, and on Hopper for a small product with tile 0
        // (where the Hopper row runs).
        const bool small_on_hopper =
            c.tile == 0 && n != 4096 && prof.device.compute_capability() == 90 && x3_hopper_here;
        if (prof.device.compute_capability() == 86 || small_on_hopper) {
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
               "tf32_mma_64x64");
  EXPECT_STREQ(choose({Algorithm::Blocked, 256, MathMode::Fp32Accurate}, h100()).kernel->name,
               "blocked_128x256");
  EXPECT_STREQ(choose({Algorithm::Tiled, 32, MathMode::Fp32Accurate}, h100()).kernel->name,
               "tiled_32");
}

TEST(MathMode, ModesWithoutAKernelRunTheStrictOne) {
  const ChoiceCase cases[] = {
      {Algorithm::Auto, 0, MathMode::Fp32},               // the default
      {Algorithm::Blocked, 256, MathMode::Fp32Accurate},  // no 3xTF32 row of 256
      {Algorithm::Blocked, 32, MathMode::Tf32},           // no TF32 row of that tile
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
  EXPECT_THROW(choose({Algorithm::Blocked, 8, MathMode::Tf32}, h100()), Error);
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
// strict and is named f64_ after it; the others are BLOCKED's FP64 tensor-core rows (from
// cc 8.0) and CUDA-core rows (from 5.0, no upper bound: they run, and are tested, on
// every device), which share tiles 128 and 64.
TEST(Double, EveryLadderRowHasADoubleTwin) {
  int ladder = 0, tensor_cores = 0, cuda_cores = 0, thin = 0, small = 0;
  for (const KernelEntry& k : cuda_kernel_table()) {
    if (k.precision != Precision::F64) continue;
    EXPECT_EQ(k.math_mode, MathMode::Fp32) << k.name;
    EXPECT_EQ(std::string(k.name).rfind("f64_", 0), 0u) << k.name;
    if (k.algorithm == Algorithm::Blocked) {
      if (k.tile == 16) {
        ++thin;
        EXPECT_STREQ(k.name, "f64_thin");
      } else if (k.tile == 32) {
        ++small;
        EXPECT_STREQ(k.name, "f64_small");
        EXPECT_TRUE(k.batched);
      } else if (std::string(k.name).rfind("f64_mma_", 0) == 0) {
        ++tensor_cores;
        EXPECT_EQ(k.min_cc, 80) << k.name;
      } else {
        ++cuda_cores;
        EXPECT_EQ(std::string(k.name).rfind("f64_blocked_", 0), 0u) << k.name;
        EXPECT_EQ(k.min_cc, 50) << k.name;
        EXPECT_GE(k.max_cc, 90) << k.name;
        EXPECT_FALSE(k.is_default) << k.name << ": find_kernel's default stays the DMMA row";
      }
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
  EXPECT_EQ(tensor_cores, 3);
  EXPECT_EQ(cuda_cores, 2);
  EXPECT_EQ(thin, 1);
  EXPECT_EQ(small, 1);
}

// FP32_ACCURATE with tile 0 runs strict FP32 where fp32_accurate_takes_strict (small C,
// deep k) and k may be split: BLOCKED's plan, reported as strict; a tile asked for keeps
// its 3xTF32 row, as do larger products and calls that cannot split k.
TEST(MathMode, Fp32AccurateTakesStrictFp32WhereItIsFaster) {
  Settings s;
  s.math_mode = MathMode::Fp32Accurate;
  for (const Profile& prof : profiles()) {
    const GemmProblem deep = shape(64, 64, int64_t(1) << 20);
    const KernelChoice c = choose_kernel(deep, s, prof.device);
    const BlockedPlan plan = plan_blocked(deep, prof.device, 0);
    EXPECT_EQ(c.kernel->tile, plan.tile) << prof.name;
    EXPECT_EQ(c.plan.splits, plan.splits) << prof.name;
    EXPECT_EQ(math_mode_of(c, deep), MathMode::Fp32) << prof.name;
    if (plan_tf32x3(shape(4096, 4096, 4096), prof.device, 0) == 0) continue;  // no 3xTF32
    EXPECT_EQ(choose_kernel(shape(1000, 1000, 32768), s, prof.device).kernel->math_mode,
              MathMode::Fp32Accurate)
        << prof.name;
    Settings forced = s;
    forced.algorithm = Algorithm::Blocked;
    forced.tile_size = 64;
    EXPECT_EQ(choose_kernel(deep, forced, prof.device).kernel->math_mode, MathMode::Fp32Accurate)
        << prof.name;
    forced.tile_size = 0;  // BLOCKED with tile 0 is AUTO's choice
    EXPECT_EQ(choose_kernel(deep, forced, prof.device).kernel->math_mode, MathMode::Fp32)
        << prof.name;
    // Where k cannot be split (no workspace; max_splits 1, the streamed path's chunks) the
    // rule's reason is gone: the 3xTF32 rows.
    EXPECT_EQ(choose_kernel(deep, s, prof.device, false).kernel->math_mode, MathMode::Fp32Accurate)
        << prof.name;
    Settings one = s;
    one.max_splits = 1;
    EXPECT_EQ(choose_kernel(deep, one, prof.device).kernel->math_mode, MathMode::Fp32Accurate)
        << prof.name;
  }
}

// ---- Thin products (thin_kernel.cu) -----------------------------------------------

// AUTO and BLOCKED (tile 0) run the thin row of the call's precision exactly where
// thin_pays (the short side 1 to 16, the large operand large), in every math mode (it
// is strict: the report says so) and on every device; with a workspace its split is
// plan_thin's and the workspace holds that many slices of (short side x long side)
// partial sums, without one nothing splits. BLOCKED with tile 16 runs it at any shape
// (passes of 16 past a short side of 16); tile 64 keeps its row.
TEST(Thin, AutoTakesTheThinRowWherePlanned) {
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes_here[] = {{1, 4096, 4096},   {4096, 1, 4096},   {16, 8192, 4096},
                               {8192, 8, 8192},   {17, 8192, 4096},  {1, 1, 1},
                               {16, 16, 1 << 20}, {1, 255, 1 << 20}, {1, 256, 4096}};
  std::vector<Profile> all = profiles();
  all.push_back({"T4", t4()});
  int thin_shapes = 0;
  for (const Profile& prof : all) {
    for (const Shape& sh : shapes_here) {
      for (Precision precision : {Precision::F32, Precision::F64}) {
        GemmProblem p = shape(sh.m, sh.n, sh.k);
        p.precision = precision;
        const bool thin = thin_pays(p);
        thin_shapes += thin && prof.name == std::string("H100") && precision == Precision::F32;
        const char* row = precision == Precision::F64 ? "f64_thin" : "thin";
        for (MathMode mode : {MathMode::Fp32, MathMode::Tf32, MathMode::Fp32Accurate}) {
          for (Algorithm a : {Algorithm::Auto, Algorithm::Blocked}) {
            Settings s;
            s.algorithm = a;
            s.math_mode = mode;
            SCOPED_TRACE(prof.name + std::string(" ") + std::to_string(sh.m) + "x" +
                         std::to_string(sh.n) + "x" + std::to_string(sh.k));
            const KernelChoice c = choose_kernel(p, s, prof.device);
            EXPECT_EQ(std::string(c.kernel->name) == row, thin) << c.kernel->name;
            if (!thin) continue;
            EXPECT_EQ(math_mode_of(c, p), MathMode::Fp32);
            EXPECT_EQ(c.plan.splits, plan_thin(p, prof.device));
            const int64_t small = std::min(sh.m, sh.n), long_side = std::max(sh.m, sh.n);
            EXPECT_EQ(workspace_bytes(c, p),
                      c.plan.splits > 1 ? size_t(c.plan.splits) * size_t(small) *
                                              size_t(long_side) * size_t(element_bytes(precision))
                                        : 0u);
            const KernelChoice none = choose_kernel(p, s, prof.device, false);
            EXPECT_STREQ(none.kernel->name, row);
            EXPECT_EQ(none.plan.splits, 1);
            EXPECT_EQ(workspace_bytes(none, p), 0u);
          }
        }
        Settings forced;
        forced.algorithm = Algorithm::Blocked;
        forced.tile_size = 16;
        EXPECT_STREQ(choose_kernel(p, forced, prof.device).kernel->name, row);
        forced.tile_size = 64;
        if (precision == Precision::F32) {
          EXPECT_STREQ(choose_kernel(p, forced, prof.device).kernel->name, "blocked_64x64");
        }
      }
    }
  }
  // 1 x 4096, 4096 x 1, 16 x 8192, 8192 x 8 and 1 x 256 x 4096 are thin; 17 wide, 1 x 1,
  // 16 x 16 (a short long side) and 1 x 255 are not.
  EXPECT_EQ(thin_shapes, 5);
}

// The row AUTO runs in double for p on `device`, and its split of k with a workspace: the
// thin row where thin_pays, else the FP64 tensor cores where DMMA pays (plan_f64's tile),
// else the CUDA cores (plan_f64_blocked's tile and split).
std::string expected_f64_row(const GemmProblem& p, const DeviceProfile& device) {
  if (thin_pays(p)) return "f64_thin";
  if (device.dmma_pays()) {
    const int tile = plan_f64(p, device, 0);
    return tile == 256 ? "f64_mma_128x128" : tile == 128 ? "f64_mma_128x64" : "f64_mma_64x64";
  }
  return plan_f64_blocked(p, device, 0).tile == 128 ? "f64_blocked_128x128" : "f64_blocked_64x64";
}

// AUTO and BLOCKED (tile 0) in double run the FP64 tensor cores where DMMA pays (cc 8.0,
// 9.0: plan_f64's tile, 128 x 128 over many waves of its tiles or deep k, 128 x 64 with a
// wave of its tiles, else 64 x 64) and the CUDA
// cores elsewhere (plan_f64_blocked's tile), whatever the shape and the math mode: TF32
// and FP32_ACCURATE never change a double choice. With a workspace the tensor-core rows
// split k as plan_f64_tail says (its partial tiles of doubles are the workspace) and the
// CUDA-core rows as plan_f64_blocked says (a partial C of doubles per slice); without
// one, nothing splits.
TEST(Double, AutoRunsTheFp64TensorCoresWhereTheyPayWhateverTheMathMode) {
  for (const Profile& prof : profiles()) {
    for (const GemmProblem& f : shapes()) {
      GemmProblem p = f;
      p.precision = Precision::F64;
      const bool dmma = prof.device.dmma_pays();
      const std::string expected = expected_f64_row(p, prof.device);
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
            if (!with_workspace) {
              EXPECT_EQ(c.plan.splits, 1);
              EXPECT_EQ(workspace_bytes(c, p), 0u);
              continue;
            }
            if (thin_pays(p)) {  // Thin.*
              EXPECT_EQ(c.plan.splits, plan_thin(p, prof.device));
              continue;
            }
            if (!dmma) {
              const BlockedPlan plan = plan_f64_blocked(p, prof.device, 0);
              EXPECT_EQ(c.plan.splits, plan.splits) << prof.name;
              EXPECT_EQ(c.plan.tail_tiles, 0);
              const size_t partials = plan.splits > 1
                                          ? size_t(plan.splits) * size_t(p.m) *
                                                size_t((p.n + 1) / 2 * 2) * sizeof(double)
                                          : 0;
              if (!is_empty(p) && !is_scale_only(p)) {
                EXPECT_EQ(workspace_bytes(c, p), partials) << prof.name;
              }
              continue;
            }
            const int tile = plan_f64(p, prof.device, 0);
            const MmaShapeInfo& shape = tile == 256   ? kF64Mma128x128
                                        : tile == 128 ? kF64Mma128x64
                                                      : kF64Mma64x64;
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
               "f64_blocked_128x128");
}

// Compute capability by compute capability (Volta, Turing, the A100, consumer Ampere, Ada,
// Hopper): AUTO in double takes the FP64 tensor cores exactly where dmma_pays says, the
// CUDA cores elsewhere, never the ladder; BLOCKED with tile 128 or 64 takes that tile's
// row of the same kind (the rows share their tiles: the first row of a tile that runs
// would be the DMMA row on 8.6 and 8.9); BLOCKED 256 (the FP64 tensor cores' 128 x 128)
// runs where DMMA pays and is refused elsewhere.
TEST(Double, EachComputeCapabilityRunsItsKindOfRow) {
  struct Case {
    const char* name;
    DeviceProfile device;
    bool dmma;
  };
  const Case cases[] = {{"7.0", v100(), false},  {"7.5", t4(), false},
                        {"8.0", a100(), true},   {"8.6", consumer80(), false},
                        {"8.9", ada58(), false}, {"9.0", h100(), true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.device.dmma_pays(), c.dmma);
    Settings s;
    const std::string prefix = c.dmma ? "f64_mma_" : "f64_blocked_";
    for (int64_t n : {64, 1000, 4096}) {
      const KernelChoice autochoice = choose_kernel(double_shape(n, n, n), s, c.device);
      EXPECT_EQ(std::string(autochoice.kernel->name).rfind(prefix, 0), 0u)
          << autochoice.kernel->name;
    }
    // Big squares: the wide tiles (the widest over many waves); a few tiles: the narrow
    // ones.
    EXPECT_STREQ(choose_kernel(double_shape(16384, 16384, 1024), s, c.device).kernel->name,
                 c.dmma ? "f64_mma_128x128" : "f64_blocked_128x128");
    EXPECT_STREQ(choose_kernel(double_shape(4096, 4096, 4096), s, c.device).kernel->name,
                 c.dmma ? "f64_mma_128x64" : "f64_blocked_128x128");
    EXPECT_STREQ(choose_kernel(double_shape(128, 128, 300), s, c.device).kernel->name,
                 c.dmma ? "f64_mma_64x64" : "f64_blocked_64x64");
    s.algorithm = Algorithm::Blocked;
    for (int tile : {128, 64}) {
      s.tile_size = tile;
      const KernelChoice forced = choose_kernel(double_shape(1000, 1000, 100), s, c.device);
      EXPECT_EQ(forced.kernel->tile, tile);
      EXPECT_EQ(forced.kernel->precision, Precision::F64);
      EXPECT_EQ(std::string(forced.kernel->name).rfind(prefix, 0), 0u) << forced.kernel->name;
      EXPECT_TRUE(runs_on(*forced.kernel, c.device.compute_capability()));
    }
    s.tile_size = 256;
    if (c.dmma) {
      EXPECT_STREQ(choose_kernel(double_shape(1000, 1000, 100), s, c.device).kernel->name,
                   "f64_mma_128x128");
    } else {
      EXPECT_THROW(choose_kernel(double_shape(1000, 1000, 100), s, c.device), Error);
    }
  }
}

// Deep k over few tiles on the CUDA cores: split-K (plan_f64_blocked), with a workspace of
// one partial C of doubles per slice; none without a workspace (the streamed path's
// chunks).
TEST(Double, CudaCoreRowsSplitDeepK) {
  Settings s;
  const GemmProblem p = double_shape(128, 128, 65536);
  for (const DeviceProfile& device : {v100(), t4(), consumer80(), ada58()}) {
    const KernelChoice c = choose_kernel(p, s, device);
    EXPECT_STREQ(c.kernel->name, "f64_blocked_64x64");
    EXPECT_GT(c.plan.splits, 1);
    EXPECT_EQ(workspace_bytes(c, p), size_t(c.plan.splits) * 128 * 128 * sizeof(double));
    const KernelChoice none = choose_kernel(p, s, device, false);
    EXPECT_STREQ(none.kernel->name, "f64_blocked_64x64");
    EXPECT_EQ(none.plan.splits, 1);
    EXPECT_EQ(workspace_bytes(none, p), 0u);
  }
}

// Deep k in one tile of C (64 x 64 x 2^20): split into slices that fill the H100's blocks
// (3 of 64 x 64 per SM); 1000 x 1000 x 32768 (64 tiles of 128 x 128) in slices of at
// most 256 steps; a product that fills whole waves (4096^3: 2048 tiles of 128 x 64 on 264
// blocks' slots) splits only its last.
TEST(Double, DeepKSplitsTheTileOverEveryBlock) {
  Settings s;
  const KernelChoice deep = choose_kernel(double_shape(64, 64, int64_t(1) << 20), s, h100());
  EXPECT_STREQ(deep.kernel->name, "f64_mma_64x64");
  EXPECT_EQ(deep.plan.tail_tiles, 1);
  EXPECT_GT(deep.plan.splits, 132 * 2);
  EXPECT_LE(deep.plan.splits, 132 * 3);
  const KernelChoice wide = choose_kernel(double_shape(1000, 1000, 32768), s, h100());
  EXPECT_STREQ(wide.kernel->name, "f64_mma_128x128");
  EXPECT_EQ(wide.plan.tail_tiles, 8 * 8);
  EXPECT_GE(wide.plan.splits, 32768 / 16 / 256);
  EXPECT_EQ(choose_kernel(double_shape(64, 64, int64_t(1) << 20), s, h100(), false).plan.splits, 1);
  const KernelChoice square = choose_kernel(double_shape(4096, 4096, 4096), s, h100());
  EXPECT_STREQ(square.kernel->name, "f64_mma_128x64");
  EXPECT_LT(square.plan.tail_tiles, 264);
}

// BLOCKED with a tile of double's rows runs the tensor-core row of that tile where DMMA
// pays, the CUDA-core row elsewhere (a device before cc 8.0 included).
TEST(Double, BlockedTilesChooseTheirRow) {
  Settings s;
  s.algorithm = Algorithm::Blocked;
  for (int tile : {128, 64}) {
    s.tile_size = tile;
    const KernelChoice c = choose_kernel(double_shape(1000, 1000, 100), s, h100());
    EXPECT_EQ(c.kernel->tile, tile);
    EXPECT_EQ(c.kernel->precision, Precision::F64);
    EXPECT_EQ(std::string(c.kernel->name).rfind("f64_mma_", 0), 0u) << c.kernel->name;
    const KernelChoice old = choose_kernel(double_shape(1000, 1000, 100), s, t4());
    EXPECT_EQ(old.kernel->name, "f64_blocked_" + std::to_string(tile) + "x" + std::to_string(tile));
  }
}

// A strided batch: small products (m, n <= 32, k <= 128) run TILED 16 or the small
// kernel, in every mode; larger ones a batched BLOCKED or FP64 row, unsplit, unless the
// batch leaves SMs idle and a product alone splits: then product by product, split;
// BLOCKED with tile 32 asks for the small kernel, a batch or not.
// A tiny single product in strict FP32 (tiny_pays) runs TILED 16 under AUTO, on every
// device; BLOCKED asked for (tile 0 or a tile), the tensor-core rows (TF32 and
// FP32_ACCURATE on the H100), double, a larger C or a deeper k run what they ran before.
TEST(Tiny, StrictTinyProductsRunTiled16) {
  for (const Profile& prof : profiles()) {
    Settings s;
    EXPECT_STREQ(choose_kernel(shape(64, 64, 64), s, prof.device).kernel->name, "tiled_16")
        << prof.name;
    EXPECT_STREQ(choose_kernel(shape(1024, 64, 512), s, prof.device).kernel->name, "tiled_16")
        << prof.name;
    EXPECT_STREQ(choose_kernel(shape(200, 100, 300), s, prof.device).kernel->name, "tiled_16")
        << prof.name;
    EXPECT_EQ(std::string(choose_kernel(shape(384, 384, 384), s, prof.device).kernel->name)
                  .rfind("blocked_", 0),
              0u)
        << prof.name;
    EXPECT_EQ(std::string(choose_kernel(shape(64, 64, 513), s, prof.device).kernel->name)
                  .rfind("blocked_", 0),
              0u)
        << prof.name;
    s.algorithm = Algorithm::Blocked;
    EXPECT_STREQ(choose_kernel(shape(64, 64, 64), s, prof.device).kernel->name, "blocked_64x64")
        << prof.name << ": BLOCKED asked for";
    s.tile_size = 64;
    EXPECT_STREQ(choose_kernel(shape(64, 64, 64), s, prof.device).kernel->name, "blocked_64x64")
        << prof.name;
    GemmProblem f64 = shape(64, 64, 64);
    f64.precision = Precision::F64;
    EXPECT_NE(std::string(choose_kernel(f64, Settings(), prof.device).kernel->name), "f64_tiled_16")
        << prof.name;
  }
  // Under TF32 and FP32_ACCURATE: the tensor cores on the A100; on Hopper, where its
  // rows run, a tiny product strict in TILED 16 (the faster there).
  const KernelEntry* hopper = nullptr;
  for (const KernelEntry& k : cuda_kernel_table())
    if (std::string(k.name) == "tf32_wgmma_128x256") hopper = &k;
  const bool hopper_here = hopper != nullptr && runs_here(*hopper, 90);
  for (MathMode mode : {MathMode::Tf32, MathMode::Fp32Accurate}) {
    Settings s;
    s.math_mode = mode;
    EXPECT_EQ(choose_kernel(shape(64, 64, 64), s, a100()).kernel->math_mode, mode);
    const KernelChoice h = choose_kernel(shape(64, 64, 64), s, h100());
    if (hopper_here) {
      EXPECT_STREQ(h.kernel->name, "tiled_16");
    } else {
      EXPECT_EQ(h.kernel->math_mode, mode);
    }
  }
}

TEST(Batched, SmallProductsRunTheirKernelsAndFewDeepOnesRunOneByOne) {
  for (MathMode mode : {MathMode::Fp32, MathMode::Tf32, MathMode::Fp32Accurate}) {
    for (Precision precision : {Precision::F32, Precision::F64}) {
      const std::string f64 = precision == Precision::F64 ? "f64_" : "";
      Settings s;
      s.math_mode = mode;
      GemmProblem p = shape(16, 16, 16);
      p.precision = precision;
      p.batch = 100000;
      EXPECT_EQ(choose_kernel(p, s, h100()).kernel->name, f64 + "tiled_16");
      p.m = p.n = p.k = 32;
      p.batch = 50000;
      EXPECT_EQ(choose_kernel(p, s, h100()).kernel->name, f64 + "small");
      p.batch = 1;
      EXPECT_NE(choose_kernel(p, s, h100()).kernel->name, f64 + "small") << "one product";
      s.algorithm = Algorithm::Blocked;
      s.tile_size = 32;
      EXPECT_EQ(choose_kernel(p, s, h100()).kernel->name, f64 + "small");
      s = Settings{};
      s.math_mode = mode;
      p = shape(64, 64, 1 << 20);  // deep k: 4 products, 4 tiles for 132 SMs
      p.precision = precision;
      p.batch = 4;
      const KernelChoice few = choose_kernel(p, s, h100());
      // Product by product where a product alone splits k (each as its single call), else
      // in one launch (a batched row) or one launch each (a row that is not).
      GemmProblem one = p;
      one.batch = 1;
      const bool single_splits = choose_kernel(one, s, h100()).plan.splits > 1;
      EXPECT_TRUE(few.by_product || !single_splits) << few.kernel->name;
      if (few.by_product) {
        EXPECT_GT(few.plan.splits, 1) << few.kernel->name << ": each product splits k";
      }
      p.batch = 1000;  // 1000 tiles: side by side, unsplit
      const KernelChoice many = choose_kernel(p, s, h100());
      EXPECT_FALSE(many.by_product) << many.kernel->name;
      if (many.kernel->batched) {
        EXPECT_EQ(many.plan.splits, 1) << many.kernel->name;
        EXPECT_EQ(many.plan.tail_tiles, 0) << many.kernel->name;
      }
    }
  }
}

// A batch of tensor-core products runs in one launch on a batched row (the TF32 Hopper
// row where it reads the products as they lie, mma.sync, or strict where a tensor-core
// tile would idle), never one launch per product on a Hopper row (10,000 x 64^3 in TF32
// took 83 ms so, against cuBLAS's 0.25: docs/benchmarks/batched.md); BLOCKED's tile 256
// in TF32 too.
TEST(Batched, TensorCoreBatchesRunInOneLaunch) {
  const KernelEntry* hopper = nullptr;
  for (const KernelEntry& k : cuda_kernel_table())
    if (std::string(k.name) == "tf32_wgmma_128x256") hopper = &k;
  const bool hopper_here = hopper != nullptr && runs_here(*hopper, 90);
  const char* const wide = hopper_here ? "tf32_wgmma_128x256" : "tf32_mma_128x256";
  const KernelEntry* x3_hopper = nullptr;
  for (const KernelEntry& k : cuda_kernel_table())
    if (std::string(k.name) == "tf32x3_wgmma_128x128") x3_hopper = &k;
  const bool x3_hopper_here = x3_hopper != nullptr && runs_here(*x3_hopper, 90);
  struct Batch {
    int64_t size, batch;
  };
  for (MathMode mode : {MathMode::Tf32, MathMode::Fp32Accurate}) {
    for (const Batch& b :
         {Batch{64, 10000}, Batch{128, 4000}, Batch{256, 1000}, Batch{1024, 100}}) {
      Settings s;
      s.math_mode = mode;
      GemmProblem p = shape(b.size, b.size, b.size);
      p.batch = b.batch;
      p.stride_a = p.stride_b = p.stride_c = b.size * b.size;
      const KernelChoice c = choose_kernel(p, s, h100());
      EXPECT_TRUE(runs_batch_in_one_launch(*c.kernel, p)) << c.kernel->name << " at " << b.size;
      EXPECT_FALSE(c.by_product) << c.kernel->name << " at " << b.size;
      EXPECT_EQ(c.plan.splits, 1) << c.kernel->name;
      // TF32: the tensor-core tile that leaves the least of its area idle, the wider on
      // a tie; FP32_ACCURATE: strict FP32 where the Hopper rows run (the faster there),
      // but the 3xTF32 Hopper row for products large enough (tf32x3_batch_pays: 1024^3).
      if (mode == MathMode::Fp32Accurate && x3_hopper_here) {
        EXPECT_STREQ(c.kernel->name, b.size == 1024  ? "tf32x3_wgmma_128x128"
                                     : b.size == 64  ? "blocked_64x64"
                                     : b.size == 128 ? "blocked_128x128"
                                                     : "blocked_128x256");
      }
      if (mode == MathMode::Tf32) {
        EXPECT_STREQ(c.kernel->name, b.size == 64    ? "tf32_mma_64x64"
                                     : b.size == 128 ? "tf32_mma_128x128"
                                                     : wide);
      }
    }
  }
  Settings s;
  s.math_mode = MathMode::Tf32;
  s.algorithm = Algorithm::Blocked;
  s.tile_size = 256;
  GemmProblem p = shape(512, 512, 512);
  p.batch = 8;
  p.stride_a = p.stride_b = p.stride_c = 512 * 512;
  EXPECT_STREQ(choose_kernel(p, s, h100()).kernel->name, wide);
  // Batches the copy engine cannot read as they lie run on the batched mma.sync row, in
  // one launch: strides off 16 bytes, interleaved products, an operand it would pack
  // (both MN-major: row-major TN), a broadcast operand.
  for (int variant = 0; variant < 4; ++variant) {
    GemmProblem q = p;
    if (variant == 0) q.stride_a = q.stride_b = q.stride_c = 512 * 512 + 1;
    if (variant == 1) {
      q.lda = q.ldb = q.ldc = 8 * 512;  // product b: columns 512 b .. of each row
      q.stride_a = q.stride_b = q.stride_c = 512;
    }
    if (variant == 2) q.trans_a = true;
    if (variant == 3) q.stride_b = 0;
    const KernelChoice c = choose_kernel(q, s, h100());
    EXPECT_STREQ(c.kernel->name, "tf32_mma_128x256") << "variant " << variant;
    EXPECT_TRUE(runs_batch_in_one_launch(*c.kernel, q)) << "variant " << variant;
  }
}

// A batch's workspace holds what any of its products needs, whatever their alignments:
// each product of a row that is not batched runs with its own, and a less aligned one
// may pack another operand (the TF32 Hopper row packs A where A is unaligned, else B).
TEST(Batched, WorkspaceHoldsWhatEveryProductNeeds) {
  struct Dims {
    int64_t m, n, k;
  };
  // 512 x 512 x 8192: the 3xTF32 Hopper row's group is one product (64 MiB of split
  // operands), and a batch that runs product by product still splits each one's k.
  const Dims dims[] = {
      {100, 1000, 100}, {64, 4096, 256}, {1000, 100, 300}, {129, 257, 1000}, {512, 512, 8192}};
  int rows = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    if (row.workspace == nullptr) continue;
    ++rows;
    for (const Dims& d : dims) {
      for (int variant = 0; variant < 16; ++variant) {
        const bool ta = variant & 1, tb = variant & 2;
        const int64_t odd = variant & 4 ? 1 : 0, odd_b = variant & 8 ? 1 : 0;
        const int64_t lda = ta ? d.m : d.k, ldb = tb ? d.k : d.n;
        const int64_t sa = d.m * d.k + odd, sb = d.k * d.n + odd_b, sc = d.m * d.n + 3;
        const auto at = [](uintptr_t x) { return reinterpret_cast<void*>(x); };
        const GemmProblem p = make_batched_problem(
            row.precision, Layout::RowMajor, ta, tb, d.m, d.n, d.k, 1.0, at(0x7f0000000000), lda,
            sa, at(0x7f4000000000), ldb, sb, 0.0, at(0x7f8000000000), d.n, sc, 3);
        for (int splits : {1, 3}) {
          const KernelChoice c{&row, KernelPlan{row.tile, 0, splits, splits > 1 ? 1 : 0}};
          const size_t all = workspace_bytes(c, p);
          for (int64_t b = 0; b < p.batch; ++b) {
            EXPECT_GE(all, row.workspace(product_of(p, b), c.plan))
                << row.name << " " << d.m << "x" << d.n << "x" << d.k << " variant " << variant
                << " splits " << splits << " product " << b;
          }
        }
      }
    }
  }
  EXPECT_GT(rows, 0);
}

// NAIVE, TILED and COARSENED in double take their settings, as in float, whatever the
// math mode; BLOCKED with a tile double has no row of is refused, the message listing
// double's; tile 256 off the tensor cores is refused, the message saying where it runs.
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
    s.tile_size = 8;
    try {
      choose_kernel(double_shape(100, 100, 100), s, h100());
      ADD_FAILURE() << "BLOCKED 8 in double has no row";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::NotSupported);
      const std::string what = e.what();
      EXPECT_NE(what.find("double precision"), std::string::npos) << what;
      EXPECT_NE(what.find("256, 128, 64"), std::string::npos) << what;
    }
    // 256 has a row, the tensor cores': off them, a message that says so.
    s.tile_size = 256;
    try {
      choose_kernel(double_shape(100, 100, 100), s, t4());
      ADD_FAILURE() << "BLOCKED 256 in double runs only on the FP64 tensor cores";
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::NotSupported);
      const std::string what = e.what();
      EXPECT_NE(what.find("only on the FP64 tensor cores"), std::string::npos) << what;
      EXPECT_NE(what.find("7.5"), std::string::npos) << what;
    }
  }
}

// ---- The per-handle cache of choices -------------------------------------------------

// Calls drawn at random, each half the time a recent one with one input changed (the
// shape, a transpose, the precision, a leading dimension, a pointer's alignment, the
// algorithm, tile, coarsening, math mode, max_splits, the workspace flag, the profile):
// the cache's answer equals choose_kernel's, field by field, or both throw the same
// status; and it does hit.
// A choice asked for without a workspace (a captured device call, the streamed path's
// chunks) needs none, on every device, shape, precision, mode and algorithm that has
// one: the strict BLOCKED row once split k regardless (found by test_graph_capture).
TEST(Workspace, AChoiceWithoutAWorkspaceNeedsNone) {
  int64_t checked = 0, split_with = 0;
  for (const Profile& prof : profiles()) {
    for (GemmProblem p : shapes()) {
      for (Precision precision : {Precision::F32, Precision::F64}) {
        p.precision = precision;
        for (MathMode mode : {MathMode::Fp32, MathMode::Tf32, MathMode::Fp32Accurate}) {
          for (const ChoiceCase c :
               {ChoiceCase{Algorithm::Auto, 0, mode}, ChoiceCase{Algorithm::Blocked, 0, mode}}) {
            Settings s;
            s.algorithm = c.algorithm;
            s.tile_size = c.tile;
            s.math_mode = c.mode;
            SCOPED_TRACE(std::string(prof.name) + " " + describe(c) + " " + std::to_string(p.m) +
                         " x " + std::to_string(p.n) + " x " + std::to_string(p.k));
            const KernelChoice with = choose_kernel(p, s, prof.device, true);
            split_with += with.plan.splits > 1;
            const KernelChoice without = choose_kernel(p, s, prof.device, false);
            EXPECT_EQ(workspace_bytes(without, p), 0u) << without.kernel->name;
            EXPECT_EQ(without.plan.splits, 1) << without.kernel->name;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(split_with, 0) << "some of these choices split k with a workspace";
  EXPECT_GT(checked, 1000);
}

TEST(ChoiceCache, HitsEqualFreshChoices) {
  std::vector<Profile> all = profiles();
  all.push_back({"T4", t4()});
  std::mt19937 rng(20261126);
  auto pick = [&](auto const& options) { return options[rng() % options.size()]; };
  const std::vector<int64_t> sizes = {1, 2, 16, 64, 100, 300, 1000, 4096, 8192, 65536, 1 << 20};
  const std::vector<Algorithm> algorithms = {Algorithm::Auto, Algorithm::Blocked, Algorithm::Naive,
                                             Algorithm::Tiled, Algorithm::Coarsened};
  const std::vector<int> tiles = {0, 16, 32, 64, 128, 256};
  const std::vector<MathMode> modes = {MathMode::Fp32, MathMode::Tf32, MathMode::Fp32Accurate};
  const std::vector<uintptr_t> lows = {0, 4, 8, 16, 0x80};
  struct Call {
    GemmProblem p;
    Settings s;
    size_t profile;
    bool with_workspace;
  };
  auto fresh_call = [&] {
    Call c{shape(pick(sizes), pick(sizes), pick(sizes)), Settings{}, rng() % all.size(), true};
    c.p.precision = rng() % 2 ? Precision::F64 : Precision::F32;
    c.p.a = reinterpret_cast<const void*>(uintptr_t(0x7f0000000000) + pick(lows));
    c.p.b = reinterpret_cast<const void*>(uintptr_t(0x7f1000000000) + pick(lows));
    c.p.c = reinterpret_cast<void*>(uintptr_t(0x7f2000000000) + pick(lows));
    c.s.algorithm = pick(algorithms);
    c.s.tile_size = pick(tiles);
    c.s.math_mode = pick(modes);
    return c;
  };
  auto change_one = [&](Call c) {
    switch (rng() % 15) {
      case 0:
        c.p.m = pick(sizes);
        break;
      case 1:
        c.p.k = pick(sizes);
        break;
      case 2:
        c.p.trans_a = !c.p.trans_a;
        break;
      case 3:
        c.p.precision = c.p.precision == Precision::F64 ? Precision::F32 : Precision::F64;
        break;
      case 4:
        c.p.lda += 1 + rng() % 4;
        break;
      case 5:
        c.p.a = static_cast<const char*>(c.p.a) + pick(lows) + 4;
        break;
      case 6:
        c.p.b = static_cast<const char*>(c.p.b) + pick(lows) + 4;
        break;
      case 7:
        c.s.algorithm = pick(algorithms);
        break;
      case 8:
        c.s.tile_size = pick(tiles);
        break;
      case 9:
        c.s.math_mode = pick(modes);
        break;
      case 10:
        c.s.max_splits = int(rng() % 3);
        break;
      case 11:
        c.with_workspace = !c.with_workspace;
        break;
      case 12:
        c.profile = rng() % all.size();
        break;
      case 13:
        c.s.coarsening = int(rng() % 3) * 2;
        break;
      default:  // a batch (choose_kernel does not read it yet; the key holds it anyway)
        c.p.batch = 1 + int64_t(rng() % 3);
        c.p.stride_c = c.p.batch > 1 ? c.p.m * c.p.ldc : 0;
        break;
    }
    return c;
  };
  KernelChoiceCache cache;
  std::vector<Call> recent;
  int compared = 0;
  for (int i = 0; i < 20000; ++i) {
    Call c = recent.empty() || rng() % 2 ? fresh_call() : recent[rng() % recent.size()];
    if (!recent.empty() && rng() % 2) c = change_one(c);
    recent.push_back(c);
    if (recent.size() > 6) recent.erase(recent.begin());
    const DeviceProfile& device = all[c.profile].device;
    KernelChoice want{}, got{};
    int want_status = -1, got_status = -1;
    try {
      want = choose_kernel(c.p, c.s, device, c.with_workspace);
    } catch (const Error& e) {
      want_status = int(e.status());
    }
    try {
      got = cache.get(c.p, c.s, device, c.with_workspace);
    } catch (const Error& e) {
      got_status = int(e.status());
    }
    SCOPED_TRACE("call " + std::to_string(i));
    ASSERT_EQ(got_status, want_status);
    if (want_status >= 0) continue;
    ++compared;
    ASSERT_EQ(got.kernel, want.kernel) << got.kernel->name << " for " << want.kernel->name;
    ASSERT_EQ(got.plan.tile, want.plan.tile);
    ASSERT_EQ(got.plan.coarsening, want.plan.coarsening);
    ASSERT_EQ(got.plan.splits, want.plan.splits);
    ASSERT_EQ(got.plan.tail_tiles, want.plan.tail_tiles);
  }
  EXPECT_GT(compared, 5000);
  EXPECT_GT(cache.hits(), 2000) << "the cache must be used for the test to mean anything";
  // Alignment: on a machine whose GPU runs the Hopper rows (an H100), their operand rule
  // reads A's and B's alignment (a misaligned A is packed, in a workspace): the same shape
  // with A one float off, or lda one more, alternately, on the tensor cores.
  for (MathMode mode : {MathMode::Tf32, MathMode::Fp32Accurate}) {
    for (int64_t n : {1000, 2048, 4096, 8192}) {
      for (bool with_workspace : {true, false}) {
        for (int turn = 0; turn < 8; ++turn) {
          GemmProblem p = shape(n, n, n);
          p.a = reinterpret_cast<const void*>(uintptr_t(0x7f0000000000) + (turn % 2 ? 4 : 0));
          p.b = reinterpret_cast<const void*>(uintptr_t(0x7f1000000000));
          p.lda = n + (turn / 2 % 2);
          Settings s;
          s.math_mode = mode;
          const KernelChoice want = choose_kernel(p, s, h100(), with_workspace);
          const KernelChoice got = cache.get(p, s, h100(), with_workspace);
          ASSERT_EQ(got.kernel, want.kernel) << n << " turn " << turn;
          ASSERT_EQ(got.plan.splits, want.plan.splits) << n << " turn " << turn;
          ASSERT_EQ(got.plan.tail_tiles, want.plan.tail_tiles) << n << " turn " << turn;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tiledmm
