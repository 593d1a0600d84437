// The planner (lib/plan/planner.hpp) on device profiles this machine need not have:
// BLOCKED's tile and split of k, the TF32 tiles and the split of the last wave, and
// every problem make_problem accepts planned without overflow.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/device_profile.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "plan/blocked_shapes.hpp"
#include "plan/f64_shapes.hpp"
#include "plan/planner.hpp"
#include "plan/tf32_shapes.hpp"
#include "plan/thin_shapes.hpp"
#include "plan_fixtures.hpp"

namespace tiledmm {
namespace {

using tmm_test::ada58;
using tmm_test::consumer80;
using tmm_test::extreme_problems;
using tmm_test::h100;
using tmm_test::Profile;
using tmm_test::profiles;
using tmm_test::shape;
using tmm_test::shapes;
using tmm_test::t4;
using tmm_test::v100;

// ---- The planner, on device profiles this machine need not have --------------

const BlockedShapeInfo& info(int tile) {
  for (const BlockedShapeInfo& s : kBlockedShapes)
    if (s.tile == tile) return s;
  throw std::runtime_error("no such tile");
}

int64_t blocks_of(const GemmProblem& p, const BlockedPlan& plan) {
  const BlockedShapeInfo& s = info(plan.tile);
  return ((p.m + s.rows - 1) / s.rows) * ((p.n + s.cols - 1) / s.cols) * plan.splits;
}

TEST(Planner, FillsTheSmsWhenTheShapeHasTheWork) {
  for (const Profile& prof : profiles()) {
    for (const GemmProblem& p : shapes()) {
      const BlockedPlan plan = plan_blocked(p, prof.device, 0);
      // Work that could occupy every SM (enough 64 x 64 tiles, or k to split) must
      // not leave more than half of them idle.
      const int64_t tiles64 = ((p.m + 63) / 64) * ((p.n + 63) / 64);
      const int64_t could =
          std::min<int64_t>(prof.device.multiprocessors, tiles64 * std::max<int64_t>(1, p.k / 512));
      EXPECT_GE(2 * blocks_of(p, plan), could)
          << prof.name << " " << p.m << "x" << p.n << "x" << p.k << ": tile " << plan.tile
          << " splits " << plan.splits;
    }
  }
}

TEST(Planner, SplitsKWhenTilesAreFewerThanSms) {
  for (const Profile& prof : profiles()) {
    const GemmProblem few_tiles = shape(256, 256, 16384);  // 2 to 16 tiles, deep k
    const BlockedPlan plan = plan_blocked(few_tiles, prof.device, 0);
    EXPECT_GT(plan.splits, 1) << prof.name;
    // Where the tiles leave SMs idle, slices of 64 terms at least (on the H100 31 x 33 x
    // 8191 ran 2.5x faster in 128 of them than in 16 of 512; 512^3 2.4x faster in four
    // than unsplit).
    EXPECT_GE((few_tiles.k + plan.splits - 1) / plan.splits, 64) << "each slice keeps work";
    const BlockedPlan big = plan_blocked(shape(8192, 8192, 8192), prof.device, 0);
    EXPECT_EQ(big.splits, 1) << prof.name << ": thousands of tiles need no split";
    const GemmProblem few_shallow = shape(256, 256, 600);
    const BlockedPlan shallow = plan_blocked(few_shallow, prof.device, 0);
    EXPECT_GT(shallow.splits, 1) << prof.name << ": 16 tiles or fewer leave SMs idle";
    EXPECT_GE((few_shallow.k + shallow.splits - 1) / shallow.splits, 64) << prof.name;
    // Where they fill the SMs, slices of 512 at least: k under two of them, unsplit.
    const BlockedPlan many_shallow = plan_blocked(shape(8192, 8192, 600), prof.device, 0);
    EXPECT_EQ(many_shallow.splits, 1) << prof.name << ": k too short to split many tiles";
    const BlockedPlan tiny_k = plan_blocked(shape(256, 256, 100), prof.device, 0);
    EXPECT_EQ(tiny_k.splits, 1) << prof.name << ": no slice under 64 terms";
  }
}

// One tile of C over deep k (64 x 64 x 2^20): slices enough to fill every SM, each at
// least 512 deep, their partial sums within 64 MiB; past 32 only where C is small: a
// large C over deep k stays within 32, and a cap the caller sets holds.
TEST(Planner, OneTileOverDeepKSplitsOverEverySm) {
  for (const Profile& prof : profiles()) {
    const GemmProblem p = shape(64, 64, int64_t(1) << 20);
    const BlockedPlan plan = plan_blocked(p, prof.device, 0);
    EXPECT_GE(plan.splits, prof.device.multiprocessors) << prof.name;
    EXPECT_LE(plan.splits, 1024) << prof.name;
    EXPECT_GE((p.k + plan.splits - 1) / plan.splits, 512) << prof.name;
    EXPECT_LE(int64_t(plan.splits) * 64 * 64 * 4, int64_t(64) << 20) << prof.name;
    EXPECT_LE(plan_blocked(p, prof.device, 0, 32).splits, 32) << prof.name;
    GemmProblem d = p;
    d.precision = Precision::F64;
    const BlockedPlan f64 = plan_f64_blocked(d, prof.device, 0);
    EXPECT_GT(f64.splits, 32) << prof.name << ": the FP64 CUDA-core rows too";
  }
}

// The cap itself: 1024 for a small C, 32 for a large one, the partial sums' bytes
// between (n rounded up to 16 bytes: a column of C costs four floats a row), and what the
// caller sets wins.
TEST(Planner, SplitCapFollowsThePartialSumsBytes) {
  EXPECT_EQ(blocked_split_cap(shape(64, 64, 1 << 20), 0), 1024);
  EXPECT_EQ(blocked_split_cap(shape(4096, 4096, 1 << 20), 0), 32);
  EXPECT_EQ(blocked_split_cap(shape(256, 256, 1 << 20), 0), 256);  // 256 KiB a slice
  EXPECT_EQ(blocked_split_cap(shape(256, 512, 1 << 20), 0), 128);
  EXPECT_EQ(blocked_split_cap(shape(int64_t(1) << 16, 1, 1 << 20), 0), 64);  // 1 MiB padded
  GemmProblem d = shape(256, 256, 1 << 20);
  d.precision = Precision::F64;
  EXPECT_EQ(blocked_split_cap(d, 0), 128);
  EXPECT_EQ(blocked_split_cap(shape(64, 64, 1 << 20), 7), 7);
  EXPECT_EQ(blocked_split_cap(shape(INT64_MAX, 0, INT64_MAX), 0), 32) << "no overflow";
}

TEST(Planner, ChosenShapeFitsTheDevicesSharedMemory) {
  for (const Profile& prof : profiles()) {
    for (const GemmProblem& p : shapes()) {
      for (int forced : {0, 64, 128, 256}) {
        const BlockedPlan plan = plan_blocked(p, prof.device, forced);
        if (forced) {
          EXPECT_EQ(plan.tile, forced);
        }
        const BlockedShapeInfo& s = info(plan.tile);
        EXPECT_LE(s.shared_bytes, prof.device.shared_memory_per_block_optin);
        EXPECT_GE(resident_blocks(plan.tile, prof.device), 1);
        EXPECT_LE(int64_t(resident_blocks(plan.tile, prof.device)) * (s.shared_bytes + 1024),
                  prof.device.shared_memory_per_sm);
      }
    }
  }
}

TEST(Planner, NeverPicksAShapeTheDeviceCannotHold) {
  DeviceProfile tiny = consumer80();
  tiny.shared_memory_per_sm = 20 * 1024;  // room for the 64 x 64 (17 KiB) tile only
  tiny.shared_memory_per_block_optin = 20 * 1024;
  for (const GemmProblem& p : shapes()) EXPECT_EQ(plan_blocked(p, tiny, 0).tile, 64);
  EXPECT_THROW(plan_blocked(shape(4096, 4096, 4096), tiny, 256), Error);
  tiny.shared_memory_per_sm = tiny.shared_memory_per_block_optin = 8 * 1024;
  EXPECT_THROW(plan_blocked(shape(4096, 4096, 4096), tiny, 0), Error);
}

TEST(Planner, SlowerDevicesMoveTheLatencyBoundLimitDown) {
  // 2048^3 (17 GFLOP) is far above the latency-bound limit everywhere: the wide tile.
  for (const Profile& prof : profiles())
    EXPECT_EQ(plan_blocked(shape(4096, 4096, 4096), prof.device, 0).tile, 256) << prof.name;
  // 512^3 (0.27 GFLOP) is latency-bound everywhere: the small tile, no split.
  for (const Profile& prof : profiles()) {
    const BlockedPlan plan = plan_blocked(shape(512, 512, 512), prof.device, 0);
    EXPECT_EQ(plan.tile, 64) << prof.name;
  }
}

TEST(ExtremeSizes, PlannersTakeEveryValidProblem) {
  for (const GemmProblem& p : extreme_problems()) {
    for (const Profile& prof : profiles()) {
      for (int forced : {0, 64, 128, 256}) {
        const BlockedPlan plan = plan_blocked(p, prof.device, forced);
        EXPECT_GE(plan.splits, 1);
        EXPECT_GE(plan_tf32(p, prof.device, forced), 0);
        EXPECT_GE(plan_tf32(p, prof.device, forced, true), 0);
        EXPECT_GE(plan_tf32x3(p, prof.device, forced == 256 ? 0 : forced), 0);
      }
    }
  }
  for (const GemmProblem& p : extreme_problems()) {
    for (const Profile& prof : profiles()) {
      thin_pays(p);
      EXPECT_GE(plan_thin(p, prof.device), 1);
      EXPECT_GE(plan_thin(p, prof.device, 7), 1);
    }
  }
  for (GemmProblem p : extreme_problems()) {
    p.precision = Precision::F64;
    for (const Profile& prof : profiles()) {
      for (int forced : {0, 64, 128, 256}) EXPECT_GE(plan_f64(p, prof.device, forced), 0);
      for (const MmaShapeInfo& s : kF64MmaShapes)
        EXPECT_GE(plan_f64_tail(p, s, prof.device).splits, 1);
    }
  }
  for (int64_t tiles : {int64_t(133), INT64_MAX / 2, INT64_MAX})
    for (int64_t steps : {int64_t(16), INT64_MAX / 2, INT64_MAX})
      EXPECT_GE(plan_tail_split(tiles, steps, h100(), 2 * 128 * 128 * 4).splits, 1);
}

// ---- The thin kernel's plan (host logic) -------------------------------------------

// One row of C over 16384^2 on the H100: read along L (B not transposed), 32 tiles of
// 512 columns in 66 slices (2112 blocks of 128 threads: every thread slot of 132 SMs);
// read along K (B transposed), 512 tiles of 32 rows in 3 slices (1056 blocks of 256).
// Sixteen columns of X over deep k: the partial sums' 64 MiB cap (1 MiB a slice). Every
// plan keeps slices of at least thin_min_slice_depth, and a caller's cap wins.
TEST(PlanThin, SplitsFillEverySmWithinTheLimits) {
  const GemmProblem along_l = shape(1, 16384, 16384);
  EXPECT_FALSE(thin_form(along_l).along_k);
  EXPECT_EQ(thin_tiles(along_l), 32);
  EXPECT_EQ(plan_thin(along_l, h100()), 66);
  GemmProblem along_k = along_l;
  along_k.trans_b = true;
  EXPECT_TRUE(thin_form(along_k).along_k);
  EXPECT_EQ(thin_tiles(along_k), 512);
  EXPECT_EQ(plan_thin(along_k, h100()), 3);
  EXPECT_EQ(plan_thin(along_l, h100(), 4), 4);
  const GemmProblem deep = shape(16, 16384, int64_t(1) << 20);
  EXPECT_EQ(plan_thin(deep, h100()), 64);
  const GemmProblem many = shape(16, 1 << 21, 4096);  // tiles enough for every SM
  EXPECT_EQ(plan_thin(many, h100()), 1);
  for (const Profile& prof : profiles())
    for (const GemmProblem& p : shapes()) {
      const int splits = plan_thin(p, prof.device);
      ASSERT_GE(splits, 1);
      if (splits == 1) continue;
      EXPECT_GE(thin_slice_depth(p, splits), thin_min_slice_depth(p)) << prof.name;
      EXPECT_LE(thin_launched_slices(p, splits), splits);
      EXPECT_LE(double(splits) * double(std::min<int64_t>(thin_form(p).small_side, 16)) *
                    double(thin_form(p).long_side) * 4,
                double(64 << 20));
    }
}

// What AUTO sends to the thin kernel: the short side 1 to 16 (double: 8 where W is read
// along L, 4 along K), the long side at least 256 and the large operand at least 2^20
// elements.
TEST(PlanThin, ThinPaysOnlyForAShortSideAndALargeOperand) {
  EXPECT_TRUE(thin_pays(shape(1, 4096, 4096)));
  EXPECT_TRUE(thin_pays(shape(4096, 16, 4096)));
  EXPECT_TRUE(thin_pays(shape(1, 256, 4096)));
  EXPECT_FALSE(thin_pays(shape(17, 4096, 4096)));
  EXPECT_FALSE(thin_pays(shape(1, 255, 1 << 20)));
  EXPECT_FALSE(thin_pays(shape(1, 256, 4095)));
  EXPECT_FALSE(thin_pays(shape(0, 4096, 4096)));
  GemmProblem dp = shape(8, 9000, 300);  // double: W = B, read along L: 8 columns
  dp.precision = Precision::F64;
  EXPECT_TRUE(thin_pays(dp));
  dp = shape(9, 9000, 300);
  dp.precision = Precision::F64;
  EXPECT_FALSE(thin_pays(dp));
  dp = shape(9000, 8, 300);  // W = A, read along K: 4 columns at most
  dp.precision = Precision::F64;
  EXPECT_FALSE(thin_pays(dp));
  dp = shape(9000, 4, 300);
  dp.precision = Precision::F64;
  EXPECT_TRUE(thin_pays(dp));
  // Tiles of L in double: along K 8 columns take 2 rows a warp (16 a block), along L a
  // block owns 128 vectors of 2 doubles.
  dp = shape(9000, 8, 300);
  dp.precision = Precision::F64;
  EXPECT_EQ(thin_tiles(dp), 563);
  dp = shape(8, 9000, 300);
  dp.precision = Precision::F64;
  EXPECT_EQ(thin_tiles(dp), 36);
}

// FP32_ACCURATE takes strict FP32 where C is at most 65536 elements and k at least
// 16384: the five such shapes of the suite, not 1000 x 1000 x 32768 (C of 10^6) nor
// 31 x 33 x 8191 (k under 16384), where the 3xTF32 rows were the faster.
TEST(PlanFp32Accurate, StrictWhereCIsSmallAndKDeep) {
  EXPECT_TRUE(fp32_accurate_takes_strict(shape(200, 100, 16384)));
  EXPECT_TRUE(fp32_accurate_takes_strict(shape(96, 96, 32768)));
  EXPECT_TRUE(fp32_accurate_takes_strict(shape(256, 256, 65536)));
  EXPECT_TRUE(fp32_accurate_takes_strict(shape(64, 64, int64_t(1) << 23)));
  EXPECT_FALSE(fp32_accurate_takes_strict(shape(1000, 1000, 32768)));
  EXPECT_FALSE(fp32_accurate_takes_strict(shape(31, 33, 8191)));
  EXPECT_FALSE(fp32_accurate_takes_strict(shape(257, 256, 65536)));
  EXPECT_TRUE(fp32_accurate_takes_strict(shape(64, 64, 16384)));
  EXPECT_FALSE(fp32_accurate_takes_strict(shape(64, 64, 16383)));
  for (const GemmProblem& p : extreme_problems()) fp32_accurate_takes_strict(p);
  // Both tensor-core modes: a C of one 64 x 64 tile over k of 4096 or more.
  EXPECT_TRUE(tiny_c_deep_k(shape(31, 33, 8191)));
  EXPECT_TRUE(tiny_c_deep_k(shape(64, 64, 4096)));
  EXPECT_TRUE(tiny_c_deep_k(shape(1, 4096, 1 << 20)));
  EXPECT_FALSE(tiny_c_deep_k(shape(64, 64, 4095)));
  EXPECT_FALSE(tiny_c_deep_k(shape(65, 64, 8192)));
  EXPECT_FALSE(tiny_c_deep_k(shape(96, 96, 32768)));
  GemmProblem batch = shape(31, 33, 8191);
  batch.batch = 2;
  EXPECT_FALSE(tiny_c_deep_k(batch)) << "a batch";
  for (const GemmProblem& p : extreme_problems()) tiny_c_deep_k(p);
}

// ---- The TF32 planner (host logic) ------------------------------------------------

TEST(MathMode, Tf32PlanFitsTheDeviceAndNamesOnlyItsTiles) {
  for (const Profile& prof : profiles()) {
    for (const GemmProblem& p : shapes()) {
      const int tile = plan_tf32(p, prof.device, 0);
      ASSERT_TRUE(tile == 64 || tile == 128 || tile == 256) << prof.name;
      for (const MmaShapeInfo& s : kTf32Shapes) {
        if (s.tile == tile) {
          EXPECT_LE(s.shared_bytes, prof.device.shared_memory_per_block_optin) << prof.name;
        }
      }
    }
  }
  EXPECT_EQ(plan_tf32(shape(64, 64, 64), h100(), 32), 0) << "no TF32 tile of 32";
  EXPECT_EQ(plan_tf32(shape(64, 64, 64), h100(), 64), 64);
  EXPECT_EQ(plan_tf32(shape(64, 64, 64), consumer80(), 256), 0) << "162 KiB do not fit";
  EXPECT_EQ(plan_tf32(shape(64, 64, 64), h100(), 256), 256);
  EXPECT_EQ(plan_tf32(shape(4096, 4096, 4096), t4(), 0), 0) << "64 KiB per block: no shape fits";
  // 16 x 2 wide tiles and 16 x 4 of 128 x 128, under a wave: the first tile with a
  // wave, 64 x 64, except where the wide tile runs the wgmma kernel (dispatch's
  // wide_everywhere: Hopper), the faster there but for small products (small_product:
  // at most 2^28 multiply-adds, k at most 1024, fewer wide tiles than SMs).
  EXPECT_EQ(plan_tf32(shape(2048, 512, 512), h100(), 0), 64);
  EXPECT_EQ(plan_tf32(shape(2048, 512, 512), h100(), 0, true), 256);
  EXPECT_EQ(plan_tf32(shape(1024, 512, 512), h100(), 0, true), 64) << "2^28: small";
  EXPECT_EQ(plan_tf32(shape(512, 512, 1025), h100(), 0, true), 256) << "k over 1024";
  EXPECT_EQ(plan_tf32(shape(12345, 678, 9), h100(), 0, true), 256) << "a wave of wide tiles";
  EXPECT_EQ(plan_tf32(shape(1, 1, 1), h100(), 0, true), 64);
  EXPECT_EQ(plan_tf32(shape(1, 1, 1), h100(), 128, true), 128) << "a tile asked for stays";
  EXPECT_EQ(plan_tf32(shape(4096, 4096, 4096), consumer80(), 0, true), 128) << "162 KiB do not fit";
}

// ---- The FP64 tensor-core planner (plan_f64) -----------------------------------------

// The widest tile (128 x 128, tile 256, one block per SM) over kF64WideWaves waves of its
// tiles or deep k where C fills one; 128 x 64 over a wave of its tiles; else 64 x 64.
// Only where 160 KiB of shared memory fit a block; a tile asked for stays.
// A single tiny product in float runs TILED 16: C of at most 65536 elements (256 x 256,
// 1024 x 64) and k at most 512, measured; not one element more of C or one more step of
// k, not a batch, not double.
TEST(PlanTiny, TinyProductsRunTiled16) {
  for (const GemmProblem& p : {shape(1, 1, 1), shape(64, 64, 64), shape(256, 256, 256),
                               shape(1024, 64, 512), shape(64, 1024, 1), shape(65536, 1, 512)}) {
    EXPECT_TRUE(tiny_pays(p)) << p.m << "x" << p.n << "x" << p.k;
  }
  for (const GemmProblem& p :
       {shape(257, 256, 64), shape(256, 257, 64), shape(64, 64, 513), shape(384, 384, 384),
        shape(2048, 2048, 64), shape(128, 128, 2048)}) {
    EXPECT_FALSE(tiny_pays(p)) << p.m << "x" << p.n << "x" << p.k;
  }
  GemmProblem batch = shape(64, 64, 64);
  batch.batch = 2;
  EXPECT_FALSE(tiny_pays(batch)) << "a batch";
  GemmProblem f64 = shape(64, 64, 64);
  f64.precision = Precision::F64;
  EXPECT_FALSE(tiny_pays(f64)) << "double";
}

// small_product's bounds (2^28 multiply-adds, k at most 1024, one product) and
// tf32_tiny_pays's (tiny_pays with C of at most 16384).
TEST(PlanSmall, SmallProductsAndTinyOnesUnderTf32) {
  for (const GemmProblem& p : {shape(1, 1, 1), shape(512, 512, 1024), shape(1024, 256, 1024),
                               shape(1 << 20, 256, 1), shape(0, 0, 0)}) {
    EXPECT_TRUE(small_product(p)) << p.m << "x" << p.n << "x" << p.k;
  }
  for (const GemmProblem& p :
       {shape(512, 512, 1025), shape(1024, 257, 1024), shape(1, 1, 2048), shape(1 << 20, 257, 1)}) {
    EXPECT_FALSE(small_product(p)) << p.m << "x" << p.n << "x" << p.k;
  }
  GemmProblem batch = shape(64, 64, 64);
  batch.batch = 2;
  EXPECT_FALSE(small_product(batch)) << "a batch";
  EXPECT_TRUE(tf32_tiny_pays(shape(128, 128, 512)));
  EXPECT_TRUE(tf32_tiny_pays(shape(16384, 1, 1)));
  EXPECT_FALSE(tf32_tiny_pays(shape(128, 129, 64)));
  EXPECT_FALSE(tf32_tiny_pays(shape(64, 64, 513)));
  EXPECT_FALSE(tf32_tiny_pays(batch)) << "a batch";
  for (const GemmProblem& p : extreme_problems()) {
    small_product(p);
    tf32_tiny_pays(p);
  }
}

// Small products in a batch run TILED (tile 16 up to 16 x 16, else 32); not a single
// product, nor wider or deeper ones.
TEST(PlanBatched, SmallProductsRunTiled) {
  GemmProblem p = shape(16, 16, 16);
  EXPECT_FALSE(small_batch_pays(p)) << "one product";
  p.batch = 100000;
  EXPECT_TRUE(small_batch_pays(p));
  EXPECT_EQ(small_batch_tile(p), 16);
  p.m = p.n = p.k = 32;
  EXPECT_TRUE(small_batch_pays(p));
  EXPECT_EQ(small_batch_tile(p), 32);
  p.m = 17;
  p.n = 3;
  EXPECT_EQ(small_batch_tile(p), 32);
  p.m = p.n = 64;
  EXPECT_FALSE(small_batch_pays(p));
  p.m = p.n = 32;
  p.k = 4096;
  EXPECT_FALSE(small_batch_pays(p)) << "deep k";
}

// A strided batch on the batched rows: every product's tiles count, nothing is split,
// and the tile is the one measured best for the batches on the H100 (strict FP32:
// 64 up to 64^3, 128 x 128 at 128^3, 128 x 256 from 256^3; docs/benchmarks/batched.md).
// The FP64 tensor cores' tile is never wider than a product.
TEST(PlanBatched, CountsEveryProductAndNeverSplits) {
  const int64_t batches[][3] = {{100000, 16, 64}, {50000, 32, 64},  {10000, 64, 64},
                                {4000, 128, 128}, {1000, 256, 256}, {100, 1024, 256}};
  for (const auto& b : batches) {
    GemmProblem p = shape(b[1], b[1], b[1]);
    p.batch = b[0];
    SCOPED_TRACE(std::to_string(b[0]) + " x " + std::to_string(b[1]) + "^3");
    const BlockedPlan plan = plan_blocked(p, h100(), 0);
    EXPECT_EQ(plan.tile, b[2]);
    EXPECT_EQ(plan.splits, 1);
    p.precision = Precision::F64;
    const int f64_tile = plan_f64(p, h100(), 0);
    for (const MmaShapeInfo& s : kF64MmaShapes)
      if (s.tile == f64_tile && s.tile != kF64Mma64x64.tile) {
        EXPECT_LE(s.rows, b[1]);
        EXPECT_LE(s.cols, b[1]);
      }
    EXPECT_EQ(plan_f64_blocked(p, h100(), 0).splits, 1);
  }
  // Deep k over a small C: a single product splits k over every SM, a batch of them
  // never (its products share no workspace).
  GemmProblem deep = shape(64, 64, 1 << 20);
  EXPECT_GT(plan_blocked(deep, h100(), 0).splits, 1);
  deep.batch = 4;
  EXPECT_EQ(plan_blocked(deep, h100(), 0).splits, 1);
  deep.precision = Precision::F64;
  EXPECT_EQ(plan_f64_blocked(deep, h100(), 0).splits, 1);
  // 4000 tiles of 128 x 128 fill 16 waves on 132 SMs: the widest FP64 tile; 10000
  // products of 64^3 only 64 x 64 (the wider tiles would be mostly empty).
  GemmProblem p = shape(128, 128, 128);
  p.precision = Precision::F64;
  p.batch = 4000;
  EXPECT_EQ(plan_f64(p, h100(), 0), kF64Mma128x128.tile);
  p = shape(64, 64, 64);
  p.precision = Precision::F64;
  p.batch = 10000;
  EXPECT_EQ(plan_f64(p, h100(), 0), kF64Mma64x64.tile);
  // One product in a batch plans as the single call.
  p = shape(4096, 4096, 4096);
  p.batch = 1;
  EXPECT_EQ(plan_blocked(p, h100(), 0).tile, plan_blocked(shape(4096, 4096, 4096), h100(), 0).tile);
}

TEST(PlanF64, WidestTileOverManyWavesOrDeepK) {
  for (const Profile& prof : profiles()) {
    for (const GemmProblem& f : shapes()) {
      GemmProblem p = f;
      p.precision = Precision::F64;
      const int tile = plan_f64(p, prof.device, 0);
      bool named = false;
      for (const MmaShapeInfo& s : kF64MmaShapes) {
        if (s.tile != tile) continue;
        named = true;
        EXPECT_LE(s.shared_bytes, prof.device.shared_memory_per_block_optin) << prof.name;
      }
      EXPECT_TRUE(named || tile == 0) << prof.name << " tile " << tile;
    }
  }
  EXPECT_EQ(plan_f64(shape(16384, 16384, 16384), h100(), 0), 256);
  EXPECT_EQ(plan_f64(shape(8192, 8192, 64), h100(), 0), 256) << "4096 tiles: 31 waves";
  EXPECT_EQ(plan_f64(shape(4096, 4096, 4096), h100(), 0), 128) << "1024 tiles: 8 waves";
  EXPECT_EQ(plan_f64(shape(1000, 1000, 32768), h100(), 0), 256) << "deep k, 64 tiles";
  EXPECT_EQ(plan_f64(shape(100, 200, 32768), h100(), 0), 64) << "deep k, m under 128";
  EXPECT_EQ(plan_f64(shape(200, 100, 32768), h100(), 0), 128) << "deep k, n under 128";
  EXPECT_EQ(plan_f64(shape(1024, 1024, 1024), h100(), 0), 64) << "under a wave of 128 x 64";
  // Waves of a tile's slots (its blocks per SM on every SM), not of SMs: 136 tiles of
  // 128 x 64 fill 132 SMs but half their 264 slots. Over deep k a wider tile only where
  // it covers little more of C than 64 x 64: 300 x 5000 in 128 x 128 tiles covers 384 x
  // 5120, in 128 x 64 384 x 5056, in 64 x 64 320 x 5056; 5000 x 300 in 128 x 64 5120 x
  // 320, 1.01x 64 x 64's.
  EXPECT_EQ(plan_f64(shape(1023, 1025, 1027), h100(), 0), 64) << "136 of 264 slots";
  EXPECT_EQ(plan_f64(shape(1536, 1536, 1536), h100(), 0), 128) << "288 of 264 slots";
  EXPECT_EQ(plan_f64(shape(300, 5000, 5000), h100(), 0), 64) << "1.2x the area of 64 x 64";
  EXPECT_EQ(plan_f64(shape(5000, 300, 5000), h100(), 0), 128) << "1.01x the area of 64 x 64";
  EXPECT_EQ(plan_f64(shape(1000, 3000, 7000), h100(), 0), 128) << "deep k, 376 tiles";
  EXPECT_EQ(plan_f64(shape(1100, 1100, 32768), h100(), 0), 256) << "deep k, 81 tiles";
  // The A100's 163 KiB per block hold it; 99 KiB (8.6, 8.9) do not.
  EXPECT_EQ(plan_f64(shape(16384, 16384, 16384), tmm_test::a100(), 0), 256);
  EXPECT_EQ(plan_f64(shape(16384, 16384, 16384), consumer80(), 0), 128);
  EXPECT_EQ(plan_f64(shape(64, 64, 64), consumer80(), 256), 0) << "160 KiB do not fit";
  EXPECT_EQ(plan_f64(shape(64, 64, 64), h100(), 256), 256) << "a tile asked for stays";
  EXPECT_EQ(plan_f64(shape(16384, 16384, 16384), h100(), 128), 128);
}

// ---- Splitting the partial last wave along k (plan_tail_split) -----------------------

// The FP64 peaks the streamed model's double rate rests on: the H100's 66.9 TFLOP/s and
// the A100's 19.5 (their tensor cores), a T4's FP64 lanes (1/32 of its FP32 rate), and
// FP32 unchanged.
TEST(DeviceProfile, Fp64PeakIsTheTensorCoresOrTheLanes) {
  EXPECT_NEAR(h100().fp64_peak(), 66.9e12, 0.1e12);
  EXPECT_NEAR(tmm_test::a100().fp64_peak(), 19.5e12, 0.1e12);
  EXPECT_NEAR(t4().fp64_peak(), t4().fp32_peak() / 32, 1e9);
  EXPECT_NEAR(consumer80().fp64_peak(), consumer80().fp32_peak() / 64, 1e9);
  EXPECT_NEAR(h100().fp32_peak(), 66.9e12, 0.1e12);
}

// DMMA pays where the FP64 tensor cores run at twice the FP64 lanes: the A100 (8.0) and
// Hopper (9.0); not on Volta and Turing (none), nor on consumer Ampere and Ada (8.6, 8.9:
// 1/64 of the FP32 rate). The lanes' peaks: the H100's 33.5 TFLOP/s, the A100's 9.7, the
// V100's 7.8, and 1/64 of the FP32 rate on the others.
TEST(DeviceProfile, DmmaPaysOnTheA100AndFromHopperOn) {
  struct Case {
    DeviceProfile device;
    bool pays;
  };
  const Case cases[] = {{v100(), false},       {t4(), false},    {tmm_test::a100(), true},
                        {consumer80(), false}, {ada58(), false}, {h100(), true}};
  for (const Case& c : cases) {
    EXPECT_EQ(c.device.dmma_pays(), c.pays) << c.device.compute_capability();
    if (c.pays) {
      EXPECT_NEAR(c.device.fp64_peak(), 2 * c.device.fp64_lanes_peak(), 1e9);
    }
  }
  EXPECT_NEAR(h100().fp64_lanes_peak(), 33.5e12, 0.1e12);
  EXPECT_NEAR(tmm_test::a100().fp64_lanes_peak(), 9.7e12, 0.1e12);
  EXPECT_NEAR(v100().fp64_lanes_peak(), 7.8e12, 0.1e12);
  for (const DeviceProfile& d : {t4(), consumer80(), ada58()})
    EXPECT_NEAR(d.fp64_lanes_peak(), d.fp32_peak() / (d.fp32_lanes_per_sm() / 2), 1e9);
}

// ---- The FP64 CUDA-core kernel's plan (plan_f64_blocked) ------------------------------

const BlockedShapeInfo& f64_info(int tile) {
  for (const BlockedShapeInfo& s : kF64BlockedShapes)
    if (s.tile == tile) return s;
  throw std::runtime_error("no such FP64 tile");
}

std::vector<Profile> every_cc() {
  return {{"V100", v100()},        {"T4", t4()},     {"A100", tmm_test::a100()},
          {"80-SM", consumer80()}, {"Ada", ada58()}, {"H100", h100()}};
}

GemmProblem f64_shape(int64_t m, int64_t n, int64_t k) {
  GemmProblem p = shape(m, n, k);
  p.precision = Precision::F64;
  return p;
}

// Its rows are doubles, fit 48 KiB of static shared memory, and own 8 x 8 outputs a
// thread; on every profile the shape it picks fits, a forced tile is kept, and a big
// square takes the wide tile unsplit while a few tiles over deep k split.
TEST(F64Blocked, PlansFitEveryDeviceAndKeepAForcedTile) {
  for (const BlockedShapeInfo& s : kF64BlockedShapes) {
    EXPECT_EQ(s.element_bytes, 8);
    EXPECT_LE(s.shared_bytes, 48 * 1024);
    EXPECT_EQ(s.outputs_per_thread, 64);
  }
  for (const BlockedShapeInfo& s : kBlockedShapes) EXPECT_EQ(s.element_bytes, 4);
  for (const Profile& prof : every_cc()) {
    for (const GemmProblem& f : shapes()) {
      GemmProblem p = f;
      p.precision = Precision::F64;
      for (int forced : {0, 64, 128}) {
        const BlockedPlan plan = plan_f64_blocked(p, prof.device, forced);
        if (forced) {
          EXPECT_EQ(plan.tile, forced) << prof.name;
        }
        EXPECT_GE(plan.splits, 1);
        EXPECT_LE(f64_info(plan.tile).shared_bytes, prof.device.shared_memory_per_block_optin);
        EXPECT_LE(plan_f64_blocked(p, prof.device, forced, 1).splits, 1) << "max_splits 1";
      }
    }
    EXPECT_EQ(plan_f64_blocked(f64_shape(8192, 8192, 8192), prof.device, 0).tile, 128) << prof.name;
    EXPECT_EQ(plan_f64_blocked(f64_shape(8192, 8192, 8192), prof.device, 0).splits, 1) << prof.name;
    const BlockedPlan deep = plan_f64_blocked(f64_shape(128, 128, 65536), prof.device, 0);
    EXPECT_GT(deep.splits, 1) << prof.name << ": 1 to 4 tiles over deep k";
  }
  for (const GemmProblem& p : extreme_problems())
    for (const Profile& prof : every_cc())
      for (int forced : {0, 64, 128}) EXPECT_GE(plan_f64_blocked(p, prof.device, forced).splits, 1);
}

// The wide tile where its blocks fill the SMs, the narrow one where the wide tile's
// blocks would leave most of them idle (a wave of 64 x 64 blocks is four times as many).
TEST(F64Blocked, FewTilesTakeTheNarrowShape) {
  for (const Profile& prof : every_cc()) {
    const int64_t sms = prof.device.multiprocessors;
    // One 128 x 128 tile per 4 SMs, k too short to split: the 64 x 64 tile fills them.
    const int64_t side = 128 * std::max<int64_t>(1, int64_t(std::sqrt(double(sms) / 4)));
    EXPECT_EQ(plan_f64_blocked(f64_shape(side, side, 256), prof.device, 0).tile, 64)
        << prof.name << " " << side;
    // Latency-bound products: the narrow tile.
    EXPECT_EQ(plan_f64_blocked(f64_shape(64, 64, 64), prof.device, 0).tile, 64) << prof.name;
  }
}

TEST(TailSplit, SplitsOnlyAPartialLastWaveWorthSplitting) {
  const DeviceProfile d = h100();                                    // 132 SMs
  constexpr int64_t kX3 = 2 * 128 * 128 * 4, kTf32 = 128 * 256 * 4;  // partial bytes per block
  // 8192^3 in 128 x 128 tiles: 4096 tiles, 31 waves and 4 tiles; 256 steps of 32 in k.
  // 4 tiles x 13 slices of 20 steps (the last 16) run in one round: 0.08 of a tile.
  TailSplitPlan t = plan_tail_split(4096, 256, d, kX3);
  EXPECT_EQ(t.tail_tiles, 4);
  EXPECT_EQ(t.splits, 13);
  // 8192^3 in 128 x 256 tiles: 2048 tiles, 68 in the last wave: 5 slices, 340 blocks in
  // three rounds of 52 steps, 0.61 of a tile against 1 (with 7 or more, 0.57 at best).
  t = plan_tail_split(2048, 256, d, kTf32);
  EXPECT_EQ(t.tail_tiles, 68);
  EXPECT_EQ(t.splits, 5);
  // 16384^3: 16384 tiles, 16 left over, 6 slices; in 128 x 256, 8 left over, 9 slices.
  t = plan_tail_split(16384, 512, d, kX3);
  EXPECT_EQ(t.tail_tiles, 16);
  EXPECT_EQ(t.splits, 6);
  t = plan_tail_split(8192, 512, d, kTf32);
  EXPECT_EQ(t.tail_tiles, 8);
  EXPECT_EQ(t.splits, 9);

  const auto none = [](int64_t tiles, int64_t steps, int64_t bytes,
                       const DeviceProfile& device = h100()) {
    const TailSplitPlan n = plan_tail_split(tiles, steps, device, bytes);
    return n.splits == 1 && n.tail_tiles == 0;
  };
  EXPECT_TRUE(none(132 * 31, 256, kX3)) << "full waves only";
  EXPECT_TRUE(none(100, 256, kX3)) << "a single wave of 100 tiles: one slice each fills it";
  EXPECT_TRUE(none(100, 255, kX3)) << "a single wave over k not deep";
  EXPECT_TRUE(none(132, 256, kX3)) << "one full wave";
  EXPECT_TRUE(none(4096, 15, kX3)) << "under 8 steps of k a slice";
  EXPECT_TRUE(none(512, 128, kTf32)) << "4096^3 wide: 116 left over, no split gains a quarter";
  // 4096^3 in 128 x 128: 100 left over; 5 slices would need 64 MiB of partials (the cap)
  // and save less than a quarter of a tile.
  EXPECT_TRUE(none(1024, 128, kX3));
  DeviceProfile unknown = d;
  unknown.multiprocessors = 0;
  EXPECT_TRUE(none(4096, 256, kX3, unknown)) << "no SM count: no split";
  EXPECT_TRUE(none(4096, 256, 0));
  // Every plan keeps whole slices of at least 8 steps and its partials under 64 MiB.
  for (int64_t tiles : {133, 150, 264 + 7, 1000, 4096, 9999})
    for (int64_t steps : {16, 31, 64, 257, 4096})
      for (int64_t bytes : {kX3, kTf32}) {
        const TailSplitPlan p = plan_tail_split(tiles, steps, d, bytes);
        if (p.splits == 1) continue;
        EXPECT_EQ(p.tail_tiles, tiles % 132);
        EXPECT_LE(p.splits, 32);
        EXPECT_GE((steps + p.splits - 1) / p.splits, 8) << tiles << " " << steps;
        EXPECT_LE(p.tail_tiles * p.splits * bytes, int64_t(64) << 20);
      }
}

// One partial wave over deep k: every tile splits, into as many slices as fill the SMs.
TEST(TailSplit, OneWaveOverDeepKSplitsEveryTile) {
  const DeviceProfile d = h100();                                    // 132 SMs
  constexpr int64_t kX3 = 2 * 128 * 128 * 4, kTf32 = 128 * 256 * 4;  // partial bytes per block
  // 64 x 64 x 2^23 in TF32: one tile, 2^18 steps of 32: 132 slices of 1986 steps.
  TailSplitPlan t = plan_tail_split(1, int64_t(1) << 18, d, kTf32);
  EXPECT_EQ(t.tail_tiles, 1);
  EXPECT_EQ(t.splits, 132);
  // 4 tiles of 256 steps: 33 slices would fill the SMs, 32 keep 8 steps each.
  t = plan_tail_split(4, 256, d, kTf32);
  EXPECT_EQ(t.tail_tiles, 4);
  EXPECT_EQ(t.splits, 32);
  // 1000 x 1000 x 32768 in FP32_ACCURATE's 128 x 128: 64 tiles, two slices each.
  t = plan_tail_split(64, 1024, d, kX3);
  EXPECT_EQ(t.tail_tiles, 64);
  EXPECT_EQ(t.splits, 2);
  // The limits: k not deep, a full wave, the partials' 64 MiB.
  const auto none = [&](int64_t tiles, int64_t steps, int64_t bytes) {
    const TailSplitPlan n = plan_tail_split(tiles, steps, d, bytes);
    return n.splits == 1 && n.tail_tiles == 0;
  };
  EXPECT_TRUE(none(1, kDeepKSteps - 1, kTf32));
  EXPECT_TRUE(none(132, 1 << 20, kTf32));
  EXPECT_TRUE(none(40, 1 << 20, int64_t(1) << 20))
      << "1 MiB partials: 64 MiB hold one slice of 40 tiles";
  for (int64_t tiles : {1, 2, 3, 7, 33, 66, 67, 131})
    for (int64_t steps : {kDeepKSteps, int64_t(1000), int64_t(1) << 20}) {
      const TailSplitPlan p = plan_tail_split(tiles, steps, d, kX3);
      if (p.splits == 1) continue;
      EXPECT_EQ(p.tail_tiles, tiles);
      EXPECT_LE(p.tail_tiles * p.splits, 132) << "one wave";
      EXPECT_GE((steps + p.splits - 1) / p.splits, 8) << tiles << " " << steps;
      EXPECT_LE(p.tail_tiles * p.splits * kX3, int64_t(64) << 20);
    }
}

// One partial wave of FP64 tiles over k that is not deep, C's edges crossing tiles: every
// tile in as many slices as the idle slots of one round hold (64 x 64: three per SM, 396
// on the H100), each at least 2 steps of 16; a full wave, a batch, slices of 1 step or
// C in whole tiles: none.
TEST(TailSplit, Fp64OneWaveOverShallowKFillsTheSlots) {
  const DeviceProfile d = h100();
  const auto f64 = [](int64_t m, int64_t n, int64_t k) {
    GemmProblem p = shape(m, n, k);
    p.precision = Precision::F64;
    return p;
  };
  // 333 x 777 x 555: 6 x 13 = 78 tiles of 35 steps, 5 slices of 7.
  TailSplitPlan t = plan_f64_tail(f64(333, 777, 555), kF64Mma64x64, d);
  EXPECT_EQ(t.tail_tiles, 78);
  EXPECT_EQ(t.splits, 5);
  // 100^3: 4 tiles of 7 steps, slices of at least 2 steps: 3 slices (3, 3 and 1 steps).
  t = plan_f64_tail(f64(100, 100, 100), kF64Mma64x64, d);
  EXPECT_EQ(t.tail_tiles, 4);
  EXPECT_EQ(t.splits, 3);
  // 640 x 480 x 320: 80 tiles of 20 steps, 4 slices of 5.
  t = plan_f64_tail(f64(640, 480, 320), kF64Mma64x64, d);
  EXPECT_EQ(t.tail_tiles, 80);
  EXPECT_EQ(t.splits, 4);
  const auto none = [&](const GemmProblem& p, const MmaShapeInfo& s) {
    const TailSplitPlan n = plan_f64_tail(p, s, d);
    return n.splits == 1 && n.tail_tiles == 0;
  };
  EXPECT_TRUE(none(f64(1000, 1000, 1000), kF64Mma64x64)) << "256 tiles: one slice fits";
  const TailSplitPlan full = plan_f64_tail(f64(1300, 1300, 500), kF64Mma64x64, d);
  EXPECT_NE(full.tail_tiles, 21 * 21) << "441 tiles, more than a round: not every tile";
  EXPECT_TRUE(none(f64(512, 512, 512), kF64Mma64x64)) << "no edge blocks";
  EXPECT_TRUE(none(f64(384, 576, 320), kF64Mma128x64)) << "no edge blocks (576 = 4.5 x 128)";
  EXPECT_FALSE(none(f64(512, 511, 512), kF64Mma64x64)) << "edge blocks";
  EXPECT_TRUE(none(f64(100, 100, 31), kF64Mma64x64)) << "2 steps: one slice of 2";
  GemmProblem batch = f64(333, 777, 555);
  batch.batch = 2;
  EXPECT_TRUE(none(batch, kF64Mma64x64)) << "a batch runs unsplit";
  for (int64_t k : {1, 17, 100, 555, 2000, 4000}) {  // k not deep: under 256 steps
    for (const MmaShapeInfo* s : {&kF64Mma64x64, &kF64Mma128x64, &kF64Mma128x128}) {
      const GemmProblem p = f64(300, 400, k);
      const TailSplitPlan n = plan_f64_tail(p, *s, d);
      if (n.splits == 1) continue;
      const int64_t tiles = ((300 + s->rows - 1) / s->rows) * ((400 + s->cols - 1) / s->cols);
      EXPECT_EQ(n.tail_tiles, tiles);
      EXPECT_LE(tiles * n.splits, 132 * s->blocks_per_sm) << "one round";
      EXPECT_GE((k + 15) / 16 / n.splits, 2) << k;
    }
  }
}

// plan_f64_tail's count of slices, found round by round, is the count the search over
// every count finds: the fewest within 1/20 of the best time. A wrong round boundary or
// a count taken from the wrong end of a round gives another count for some of these.
TEST(TailSplit, OneWaveSlicesAsTheSearchOverEveryCount) {
  const auto search = [](int64_t tiles, int64_t blocks, int64_t fewest, int64_t most) {
    const auto time = [&](int64_t s) {
      return double((tiles * s + blocks - 1) / blocks) / double(s);
    };
    double best = time(fewest);
    for (int64_t s = fewest; s <= most; ++s) best = std::min(best, time(s));
    for (int64_t s = fewest; s <= most; ++s)
      if (time(s) <= best * 1.05) return s;
    return fewest;
  };
  int64_t checked = 0;
  for (int64_t blocks : {8, 108 * 2, 132 * 2, 132 * 3, 114 * 3})
    for (int64_t tiles = 1; tiles <= blocks; ++tiles) {
      const int64_t cap = 4 * ((blocks + tiles - 1) / tiles);
      for (int64_t most : {cap, cap / 2 + 1, int64_t(37), int64_t(2)})
        for (int64_t fewest : {int64_t(2), int64_t(3), int64_t(16), most}) {
          if (fewest > most) continue;
          ASSERT_EQ(one_wave_slices(tiles, blocks, fewest, most),
                    search(tiles, blocks, fewest, most))
              << tiles << " tiles, " << blocks << " blocks, slices " << fewest << ".." << most;
          ++checked;
        }
    }
  EXPECT_GT(checked, 10000);
}

// The wgmma kernel runs a strided batch in one launch only where the copy engine reads
// every product as it lies: no operand packed, A's and B's strides positive multiples
// of 16 bytes, products one after another. Each condition alone turns it off.
TEST(WgmmaBatch, OneLaunchOnlyWhereTheCopyEngineReadsTheProducts) {
  const WgmmaShapeInfo& w = kTf32Wgmma128x256;
  GemmProblem p = shape(300, 200, 100);  // row-major NN: A 300 x 100, B 100 x 200
  EXPECT_TRUE(wgmma_batches_in_one_launch(p, w)) << "a single product";
  p.batch = 7;
  p.stride_a = 300 * 100;
  p.stride_b = 100 * 200;
  p.stride_c = 300 * 200;
  EXPECT_TRUE(wgmma_batches_in_one_launch(p, w));
  GemmProblem q = p;
  q.stride_a += 4;  // a gap of 16 bytes between products
  EXPECT_TRUE(wgmma_batches_in_one_launch(q, w));
  q.stride_a = p.stride_a + 1;  // 4 bytes: product 1 off 16 bytes
  EXPECT_FALSE(wgmma_batches_in_one_launch(q, w));
  q = p;
  q.stride_b = 0;  // a broadcast B
  EXPECT_FALSE(wgmma_batches_in_one_launch(q, w));
  q = p;
  q.stride_a = 100 * 299;  // overlapping rows: the products are not one after another
  EXPECT_FALSE(wgmma_batches_in_one_launch(q, w));
  q = p;
  q.lda = 700;  // interleaved products: A_b is columns 100 b .. of rows 700 apart
  q.stride_a = 100;
  EXPECT_FALSE(wgmma_batches_in_one_launch(q, w));
  q = p;
  q.stride_b = (int64_t(1) << 38);  // 2^40 bytes: past the map's stride
  EXPECT_FALSE(wgmma_batches_in_one_launch(q, w));
  q.stride_b = (int64_t(1) << 38) - 4;
  EXPECT_TRUE(wgmma_batches_in_one_launch(q, w));
  q = p;
  q.trans_a = true;  // A and B both MN-major: B is packed
  q.lda = 300;
  EXPECT_FALSE(wgmma_batches_in_one_launch(q, w));
  q.trans_b = true;  // B K-major, A MN-major: read as they lie
  q.ldb = 100;
  EXPECT_TRUE(wgmma_batches_in_one_launch(q, w));
  q.lda = 301;  // rows of A off 16 bytes: packed
  q.stride_a = 301 * 100;
  EXPECT_FALSE(wgmma_batches_in_one_launch(q, w));
}

// The 3xTF32 Hopper row's groups: as many products as 64 MiB of split operands hold
// (2 (m + n) k-padded-to-32 floats each), at least one, at most the batch and 65535.
TEST(Tf32x3BatchGroup, AsManyProductsAsTheWorkspaceHolds) {
  GemmProblem p = shape(1024, 1024, 1024);
  p.batch = 100;
  EXPECT_EQ(tf32x3_batch_group(p), 4) << "16 MiB a product";
  p.batch = 3;
  EXPECT_EQ(tf32x3_batch_group(p), 3);
  p = shape(256, 256, 250);  // k padded to 256: 1 MiB a product
  p.batch = 1000;
  EXPECT_EQ(tf32x3_batch_group(p), 64);
  p = shape(4, 4, 4);  // 2 KiB a product
  p.batch = 70000;
  EXPECT_EQ(tf32x3_batch_group(p), 32768);
  p = shape(8, 8, 0);  // k = 0: nothing to pack; the launch's limit
  p.batch = 70000;
  EXPECT_EQ(tf32x3_batch_group(p), 65535) << "no operand bytes";
  p = shape(16384, 16384, 16384);
  p.batch = 2;
  EXPECT_EQ(tf32x3_batch_group(p), 1) << "one product past the 64 MiB";
}

// An FP32_ACCURATE batch takes the 3xTF32 Hopper row (tile 128, where it runs with a
// workspace) for products whose 128 x 128 tiles times k reach 2^28, over k of 256 or
// more, where a group of them (64 MiB of split operands) has a tile for every SM.
TEST(Tf32x3Tile, LargeBatchedProductsTakeTheHopperRow) {
  GemmProblem p = shape(1024, 1024, 256);  // 64 tiles
  p.batch = 3;
  EXPECT_TRUE(tf32x3_batch_pays(p, h100()));
  EXPECT_EQ(plan_tf32x3(p, h100(), 0, true), 128);
  p = shape(2048, 2048, 255);  // 256 tiles, 2^30: only k fails
  p.batch = 3;
  EXPECT_FALSE(tf32x3_batch_pays(p, h100())) << "k under 256";
  p.k = 256;
  EXPECT_TRUE(tf32x3_batch_pays(p, h100()));
  p = shape(512, 512, 1024);  // 16 tiles, 2^28, 8 MiB a product
  p.batch = 100;
  EXPECT_FALSE(tf32x3_batch_pays(p, h100())) << "groups of 8: 128 tiles, under 132 SMs";
  p = shape(768, 768, 512);  // 36 tiles, 2^28.2
  p.batch = 100;
  EXPECT_TRUE(tf32x3_batch_pays(p, h100()));
  p.k = 384;
  EXPECT_FALSE(tf32x3_batch_pays(p, h100())) << "2^27.8";
  p = shape(1000, 500, 700);  // 32 tiles
  p.batch = 30;
  EXPECT_TRUE(tf32x3_batch_pays(p, h100()));
  p = shape(384, 384, 384);
  p.batch = 400;
  EXPECT_FALSE(tf32x3_batch_pays(p, h100()));
  p = shape(128, 128, 32768);  // one tile, 2^29: a product fills the 64 MiB
  p.batch = 1000;
  EXPECT_EQ(tf32x3_batch_group(p), 1);
  EXPECT_FALSE(tf32x3_batch_pays(p, h100())) << "a group of one tile";
  p = shape(1024, 1024, 1024);
  p.batch = 1;
  EXPECT_FALSE(tf32x3_batch_pays(p, h100())) << "a single product";
}

// FP32_ACCURATE on Hopper takes its wgmma tile where k is deep (it splits k); elsewhere,
// and without the Hopper rows, the narrow tile where the wide one leaves SMs idle.
TEST(Tf32x3Tile, DeepKTakesTheTileThatSplitsK) {
  EXPECT_EQ(plan_tf32x3(shape(64, 64, 1 << 20), h100(), 0, true), 128);
  EXPECT_EQ(plan_tf32x3(shape(64, 64, 1 << 20), h100(), 0, false), 64);
  EXPECT_EQ(plan_tf32x3(shape(64, 64, 32 * kDeepKSteps - 32), h100(), 0, true), 64) << "k not deep";
  EXPECT_EQ(plan_tf32x3(shape(64, 64, 1 << 20), h100(), 64, true), 64) << "a tile asked for";
  // 128 wide tiles (more than 132 / 2): one slice each, no split; the narrow tile then.
  EXPECT_EQ(plan_tf32x3(shape(16384, 1, 16384), h100(), 0, true), 64);
  EXPECT_EQ(plan_tf32x3(shape(66 * 128, 128, 16384), h100(), 0, true), 128) << "two slices";
  // Past the wgmma kernels' extents (k > 2^31 - 513) the mma.sync tiles run, which have
  // no such limit; TF32 too, which otherwise takes its wgmma tile at every size.
  EXPECT_EQ(plan_tf32x3(shape(64, 64, kWgmmaMaxExtent + 1), h100(), 0, true), 64);
  EXPECT_EQ(plan_tf32(shape(64, 64, kWgmmaMaxExtent), h100(), 0, true), 256);
  EXPECT_EQ(plan_tf32(shape(64, 64, kWgmmaMaxExtent + 1), h100(), 0, true), 64);
}

}  // namespace
}  // namespace tiledmm
