// The streamed path's cut and its model (lib/plan/stream_plan.hpp), host C++: every
// plan fits its budgets and covers the product, down to the minimum budget and up to
// the extreme sizes, and the model keeps small products direct; shared by several
// devices, the cut fits every one's budgets and has tiles enough to balance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "plan/measured_rates.hpp"
#include "plan/stream_plan.hpp"
#include "plan_fixtures.hpp"

namespace tiledmm {
namespace {

using tmm_test::extreme_problems;
using tmm_test::h100;
using tmm_test::shape;
using tmm_test::shapes;

// ---- The streamed path's cut and model -----------------------------------------

TEST(StreamPlan, FitsItsBudgetsAndCoversTheProduct) {
  for (const GemmProblem& base : shapes()) {
    if (base.k < 16) continue;
    for (bool trans : {false, true}) {
      for (float beta : {0.0f, 1.0f}) {
        GemmProblem p = base;
        p.trans_a = p.trans_b = trans;
        p.beta = beta;
        for (int64_t device : {int64_t(1) << 20, int64_t(64) << 20, int64_t(8) << 30}) {
          const int64_t staging = std::min<int64_t>(device, int64_t(512) << 20);
          // Every shape plans at every budget from the minimum up (streaming B's chunks
          // where a k x 16 panel of B exceeds it).
          const StreamPlan s = plan_stream(p, device, staging, 0.74 * h100().fp32_peak(), 16);
          EXPECT_LE(stream_device_bytes(p, s), device);
          EXPECT_LE(stream_staging_bytes(p, s), staging);
          EXPECT_GE(s.tiles_m * s.tile_m, p.m);
          EXPECT_GE(s.tiles_n * s.tile_n, p.n);
          EXPECT_GE(s.chunks * s.chunk_k, p.k);
          EXPECT_LT((s.tiles_m - 1) * s.tile_m, p.m) << "no empty row tile";
        }
      }
    }
  }
}

// Any k, at the stated minimum budgets: the plan streams B's chunks where no panel of
// all of k fits, fits both budgets, covers the product, and no size computed on the
// way overflows (UBSan runs this in CI), up to k = 2^60 and m = 2^40.
TEST(StreamPlan, AnyShapeFitsTheMinimumBudget) {
  const int64_t min = kMinStreamBudget;
  const double rate = 0.74 * h100().fp32_peak();
  struct Case {
    int64_t m, n, k;
    bool resident;  // a panel of all of k fits the minimum
  };
  const Case cases[] = {{64, 64, int64_t(1) << 23, false}, {8192, 8192, int64_t(1) << 20, false},
                        {1, 1, int64_t(1) << 60, false},   {int64_t(1) << 40, 1, 1, true},
                        {1, int64_t(1) << 40, 1, true},    {300, 200, 4096, true}};
  for (const Case& c : cases) {
    for (bool trans : {false, true}) {
      for (float beta : {0.0f, 1.0f}) {
        GemmProblem p = shape(c.m, c.n, c.k);
        p.trans_a = p.trans_b = trans;
        p.beta = beta;
        SCOPED_TRACE(std::to_string(c.m) + " x " + std::to_string(c.n) + " x " +
                     std::to_string(c.k) + (trans ? " TT" : " NN") + " beta " +
                     std::to_string(beta));
        const StreamPlan s = plan_stream(p, min, min, rate, 16);
        EXPECT_EQ(s.b_resident, c.resident);
        EXPECT_LE(stream_device_bytes(p, s), min);
        EXPECT_LE(stream_staging_bytes(p, s), min);
        EXPECT_GE(s.tiles_m * s.tile_m, p.m);
        EXPECT_GE(s.tiles_n * s.tile_n, p.n);
        EXPECT_GE(s.chunks * s.chunk_k, p.k);
        EXPECT_GE(s.tile_m, 1);
        EXPECT_GE(s.chunk_k, 1);
        if (!s.b_resident) {
          EXPECT_EQ(s.panels(), 2);
          EXPECT_EQ(s.b_uploads(), (s.tiles_m + s.group - 1) / s.group);
          EXPECT_EQ(s.next_row_tile(s.group), std::min(2 * s.group, s.tiles_m))
              << "streaming B, groups all the way down";
        }
      }
    }
  }
  // Below the minimum of 16 x 16 tiles, 16-deep chunks and groups of one: refused,
  // whatever the shape.
  EXPECT_THROW(plan_stream(shape(64, 64, 1 << 20), 4 << 10, min, rate, 16), Error);
}

TEST(StreamPlan, UploadsAOnceWhenThePanelFits) {
  const double rate = 0.74 * h100().fp32_peak();
  GemmProblem p = shape(8192, 8192, 8192);
  const StreamPlan s = plan_stream(p, int64_t(70) << 30, int64_t(512) << 20, rate, 16);
  EXPECT_EQ(s.tiles_n, 1) << "B's panel of 256 MiB fits: A is uploaded once";
  EXPECT_GE(s.tiles_m, 2) << "two row tiles at least, so downloads overlap compute";
  EXPECT_GT(s.group, 1) << "packing the 256 MiB panel takes longer than one row tile's "
                           "products: several row tiles meet each chunk of it";
  EXPECT_LE(s.group, s.tiles_m);
  std::printf("8192^3 plan: %lld x %lld tiles of %lld x %lld, %lld chunks of %lld, group %lld\n",
              (long long)s.tiles_m, (long long)s.tiles_n, (long long)s.tile_m, (long long)s.tile_n,
              (long long)s.chunks, (long long)s.chunk_k, (long long)s.group);
}

TEST(StreamPlan, ModelKeepsSmallProductsDirectAndStreamsLargeOnes) {
  const HostRates rates;
  const double rate = 0.74 * h100().fp32_peak();
  for (int64_t n : {64, 256}) {
    GemmProblem p = shape(n, n, n);
    const StreamPlan s = plan_stream(p, int64_t(70) << 30, int64_t(512) << 20, rate, 16);
    EXPECT_GT(streamed_seconds(p, s, rate, 16, rates), direct_seconds(p, rate, rates)) << n;
  }
  for (int64_t n : {8192, 16384}) {
    GemmProblem p = shape(n, n, n);
    const StreamPlan s = plan_stream(p, int64_t(70) << 30, int64_t(512) << 20, rate, 16);
    const double streamed = streamed_seconds(p, s, rate, 16, rates);
    EXPECT_LT(streamed, 0.5 * direct_seconds(p, rate, rates)) << n;
    // Streaming hides most of the copies: within 2x of the kernel alone.
    EXPECT_LT(streamed, 2.0 * (2.0 * double(n) * n * n / rate)) << n;
  }
}

// C's staging is kCStrips strips each way of whole rows of a tile, up to kCStripBytes
// each (one row at least, the tile at most), whatever the group; fewer where the C
// slots' tiles hold fewer.
TEST(StreamPlan, CStagingIsARingOfStrips) {
  const GemmProblem p = shape(4096, 16384, 4096);
  StreamPlan s;
  s.tile_m = 1024;
  s.tile_n = 4096;
  EXPECT_EQ(c_strip_rows(s, 4), 1024) << "16 MiB: the whole tile";
  EXPECT_EQ(c_strip_rows(s, 8), 512);
  s.tile_n = int64_t(1) << 22;  // a row of 32 MiB in double
  EXPECT_EQ(c_strip_rows(s, 8), 1);
  EXPECT_EQ(c_strips(s, 8), kCStrips);
  s.tile_m = 16;
  s.tile_n = 16;
  EXPECT_EQ(c_strip_rows(s, 4), 16);
  EXPECT_EQ(c_strips(s, 4), 2) << "no more strips than the C slots' tiles";
  // The staging does not grow with the group.
  StreamPlan g1, g8;
  for (StreamPlan* q : {&g1, &g8}) {
    q->tile_m = 512;
    q->tile_n = 16384;
    q->chunk_k = 512;
    q->tiles_m = 8;
    q->tiles_n = 1;
    q->chunks = 8;
  }
  g8.group = 8;
  EXPECT_EQ(stream_staging_bytes(p, g1), stream_staging_bytes(p, g8));
  GemmProblem q = p;
  q.beta = 1.0;
  // Up strips as well, 16 MiB each (half a tile of 512 x 16384 floats).
  EXPECT_EQ(stream_staging_bytes(q, g8) - stream_staging_bytes(p, g8), int64_t(kCStrips) << 24);
}

// Double at 16384^3: the deep cut (tiles of 1024 x 16384, chunks of 1024, groups of 8)
// needed nine tiles of 128 MiB of C's staging, over the default 512 MiB; with strips it
// fits, and the planner picks chunks at least that deep.
TEST(StreamPlan, DeepDoubleCutFitsTheDefaultStaging) {
  GemmProblem p = shape(16384, 16384, 16384);
  p.precision = Precision::F64;
  StreamPlan s;
  s.tile_m = 1024;
  s.tile_n = 16384;
  s.chunk_k = 1024;
  s.tiles_m = 16;
  s.tiles_n = 1;
  s.chunks = 16;
  s.group = 8;
  const int64_t staging = stream_staging_bytes(p, s);
  std::printf("16384^3 double, 1024 x 16384 tiles, chunks of 1024, group 8: %lld MiB staging\n",
              (long long)(staging >> 20));
  EXPECT_LT(staging, int64_t(512) << 20);
  const StreamPlan planned =
      plan_stream(p, int64_t(74) * 1000 * 1000 * 1000, int64_t(512) << 20, 0.7 * 66.9e12, 12);
  EXPECT_GE(planned.chunk_k, 1024);
  std::printf("planned: tiles of %lld x %lld, chunks of %lld, group %lld\n",
              (long long)planned.tile_m, (long long)planned.tile_n, (long long)planned.chunk_k,
              (long long)planned.group);
}

// ---- One product over several devices ------------------------------------------

std::vector<StreamLane> h100_lanes(int count, int64_t device = int64_t(8) << 30,
                                   int64_t staging = int64_t(512) << 20) {
  return std::vector<StreamLane>(size_t(count),
                                 StreamLane{device, staging, 0.74 * h100().fp32_peak()});
}

// One lane is plan_stream's cut, its model streamed_seconds.
TEST(SharedStreamPlan, OneLaneIsPlanStream) {
  for (const GemmProblem& p : {shape(4096, 4096, 4096), shape(16384, 16384, 16384),
                               shape(333, 20000, 700), shape(64, 64, 1 << 20)}) {
    const std::vector<StreamLane> one = h100_lanes(1);
    const SharedStreamPlan s = plan_shared_stream(p, one, 16);
    const StreamPlan alone =
        plan_stream(p, one[0].device_bytes, one[0].staging_bytes, one[0].flops_per_s, 16);
    EXPECT_EQ(s.lanes, 1);
    EXPECT_EQ(s.plan.tile_m, alone.tile_m);
    EXPECT_EQ(s.plan.tile_n, alone.tile_n);
    EXPECT_EQ(s.plan.chunk_k, alone.chunk_k);
    EXPECT_EQ(s.plan.group, alone.group);
    EXPECT_EQ(s.one_seconds, streamed_seconds(p, alone, one[0].flops_per_s, 16, HostRates()));
    EXPECT_EQ(shared_streamed_seconds(p, alone, one[0].flops_per_s, 1, 16),
              streamed_seconds(p, alone, one[0].flops_per_s, 16, HostRates()));
  }
}

// Shared, the cut fits the smallest budgets of the lanes (here the second lane's) and
// has at least 4 tiles a lane (these shapes have such cuts); plan_shared_stream uses it
// where the model says all the lanes beat the first alone by a tenth, and the first
// lane's own cut otherwise.
TEST(SharedStreamPlan, FitsTheSmallestBudgetWithTilesToBalance) {
  for (const GemmProblem& base : {shape(16384, 16384, 16384), shape(32768, 32768, 16384),
                                  shape(8192, 2048, 65536), shape(100, 40000, 4096)}) {
    for (int lanes : {2, 4, 8}) {
      for (bool double_precision : {false, true}) {
        GemmProblem p = base;
        if (double_precision) p.precision = Precision::F64;
        std::vector<StreamLane> all = h100_lanes(lanes);
        all[1].device_bytes = int64_t(1) << 30;
        all[1].staging_bytes = int64_t(128) << 20;
        SCOPED_TRACE(std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                     " lanes " + std::to_string(lanes));
        const double rate = all[0].flops_per_s;
        const StreamPlan cut = plan_stream(p, all[1].device_bytes, all[1].staging_bytes,
                                           rate * lanes, 48, HostRates(), lanes);
        EXPECT_LE(stream_device_bytes(p, cut), all[1].device_bytes);
        EXPECT_LE(stream_staging_bytes(p, cut), all[1].staging_bytes);
        EXPECT_GE(cut.tiles(), 4 * lanes)
            << cut.tiles_m << " x " << cut.tiles_n << " tiles of " << cut.tile_m;
        const SharedStreamPlan s = plan_shared_stream(p, all, 48);
        const double shared = shared_streamed_seconds(p, cut, rate * lanes, lanes, 48);
        EXPECT_EQ(s.lanes, shared < 0.9 * s.one_seconds ? lanes : 1);
        const StreamPlan expected =
            s.lanes > 1 ? cut : plan_stream(p, all[0].device_bytes, all[0].staging_bytes, rate, 48);
        EXPECT_EQ(s.plan.tile_m, expected.tile_m);
        EXPECT_EQ(s.plan.tile_n, expected.tile_n);
        EXPECT_EQ(s.plan.chunk_k, expected.chunk_k);
        EXPECT_EQ(s.plan.group, expected.group);
      }
    }
  }
}

// The steal cost of a shared cut: a row tile at the slowest lane's rate or its bytes (A's
// chunks, C's tile) at a lane's share of the host's packing, whichever is slower; a
// panel of op(B) at that share (or its link, if slower); 16384^3 in single precision on
// four H100 lanes: a panel costs several tiles, so the queue takes no tile or two at the
// end of another lane's column for it. A lane of no speed (a device reporting no clock)
// leaves the plain rule.
TEST(SharedStreamPlan, StealCostIsATileAndAPanel) {
  const GemmProblem p = shape(16384, 16384, 16384);
  std::vector<StreamLane> lanes = h100_lanes(4);
  lanes[3].flops_per_s /= 2;
  const int threads = 48;
  const HostRates r;
  const SharedStreamPlan s = plan_shared_stream(p, lanes, threads, r, true);
  ASSERT_EQ(s.lanes, 4);
  ASSERT_TRUE(s.plan.b_resident);
  const double pack =
      std::min(std::max(r.pack_max, r.pack_shared_max), r.pack_per_thread * threads);
  const double lane_rate = std::min(pack / 4, r.pinned_link);
  const double flops = 2.0 * double(s.plan.tile_m) * double(s.plan.tile_n) * double(p.k);
  const double bytes = 4.0 * double(s.plan.tile_m) * (double(p.k) + double(s.plan.tile_n));
  EXPECT_DOUBLE_EQ(s.steal.tile_s, std::max(flops / lanes[3].flops_per_s, bytes / lane_rate));
  EXPECT_DOUBLE_EQ(s.steal.panel_s, 4.0 * double(p.k) * double(s.plan.tile_n) / lane_rate);
  EXPECT_GT(s.steal.panel_s, 2 * s.steal.tile_s);
  // One lane: no steal, the default cost.
  const SharedStreamPlan one = plan_shared_stream(p, h100_lanes(1), threads);
  EXPECT_EQ(one.steal.tile_s, StealCost().tile_s);
  EXPECT_EQ(one.steal.panel_s, 0.0);
  lanes[3].flops_per_s = 0;
  const SharedStreamPlan stalled = plan_shared_stream(p, lanes, threads, r, true);
  EXPECT_EQ(stalled.steal.tile_s, StealCost().tile_s);
  EXPECT_EQ(stalled.steal.panel_s, StealCost().panel_s);
}

// A lane whose budgets hold no cut at all (under kMinStreamBudget) does not take the
// others down: the first lane runs the product alone, as plan_stream would.
TEST(SharedStreamPlan, ALaneTooSmallForAnyCutLeavesTheFirstAlone) {
  const GemmProblem p = shape(16384, 16384, 16384);
  std::vector<StreamLane> all = h100_lanes(4);
  all[2].device_bytes = 4 << 10;
  const SharedStreamPlan s = plan_shared_stream(p, all, 48);
  EXPECT_EQ(s.lanes, 1);
  const StreamPlan alone =
      plan_stream(p, all[0].device_bytes, all[0].staging_bytes, all[0].flops_per_s, 48);
  EXPECT_EQ(s.plan.tile_m, alone.tile_m);
  EXPECT_EQ(s.plan.chunk_k, alone.chunk_k);
  all[0].device_bytes = 4 << 10;  // the first lane's own budget: an error, as plan_stream's
  try {
    plan_shared_stream(p, all, 48);
    ADD_FAILURE() << "no cut fits the first lane";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::OutOfMemory);
  }
}

// every_lane (a multi-device handle's TMM_HOST_PATH_STREAMED): the small products the
// model keeps on one lane are shared by every lane, on the shared cut.
TEST(SharedStreamPlan, EveryLaneWhenAskedEvenForSmallProducts) {
  for (const GemmProblem& p :
       {shape(256, 256, 256), shape(1024, 1024, 1024), shape(64, 64, 4096)}) {
    const SharedStreamPlan s = plan_shared_stream(p, h100_lanes(4), 48, HostRates(), true);
    EXPECT_EQ(s.lanes, 4) << p.m << "x" << p.n << "x" << p.k;
    const std::vector<StreamLane> lanes = h100_lanes(4);
    EXPECT_EQ(s.plan.tiles(), plan_stream(p, lanes[0].device_bytes, lanes[0].staging_bytes,
                                          4 * lanes[0].flops_per_s, 48, HostRates(), 4)
                                  .tiles());
  }
}

// Double precision moves twice the bytes for its flops: with one lane's packing rate the
// model kept 32768 x 32768 x 16384 on one of two H100s, where two lanes pack faster
// together (HostRates::pack_shared_max, measured). Two lanes now, at 16384^3 too.
TEST(SharedStreamPlan, DoublePrecisionSharesLargeProducts) {
  for (const GemmProblem& shaped : {shape(32768, 32768, 16384), shape(16384, 16384, 16384)}) {
    GemmProblem p = shaped;
    p.precision = Precision::F64;
    const std::vector<StreamLane> lanes(2,
                                        StreamLane{int64_t(70) << 30, int64_t(512) << 20, 60e12});
    const SharedStreamPlan s = plan_shared_stream(p, lanes, 24);
    EXPECT_EQ(s.lanes, 2) << p.m << "x" << p.n << "x" << p.k;
    HostRates one_lanes_rate;  // the model before: lanes packing no faster than one
    one_lanes_rate.pack_shared_max = one_lanes_rate.pack_max;
    EXPECT_EQ(plan_shared_stream(p, lanes, 24, one_lanes_rate).lanes, 1);
  }
}

// The model: small products stay on one lane (the others' panels, fills and tails cost
// more than their share of the flops saves); large ones share, but no faster than the
// host's packing threads move A, B and C. Each lane packs its own panels of op(B): with
// the default HostRates (30 GB/s of packing), 16384^3 in single precision gains 1.2x on
// two lanes and nothing on four, which the multi-device benchmark must measure first;
// with a host that packs at 200 GB/s, 3.7x on four.
TEST(SharedStreamPlan, ModelPicksOneDeviceForSmallProductsAndAllForLargeOnes) {
  for (const GemmProblem& p :
       {shape(256, 256, 256), shape(1024, 1024, 1024), shape(64, 64, 4096)}) {
    EXPECT_EQ(plan_shared_stream(p, h100_lanes(4), 48).lanes, 1) << p.m << "x" << p.n << "x" << p.k;
  }
  const GemmProblem big = shape(16384, 16384, 16384);
  const double bytes = 4.0 * 3 * 16384.0 * 16384.0;  // A, B and C once each at least
  HostRates fast;
  fast.pack_per_thread = 10e9;
  fast.pack_max = 200e9;
  fast.pack_shared_max = 200e9;
  for (const HostRates& r : {HostRates(), fast}) {
    for (int lanes : {2, 4, 8}) {
      const SharedStreamPlan s = plan_shared_stream(big, h100_lanes(lanes), 48, r);
      std::printf("16384^3, %.0f GB/s of packing, %d lanes: %s, %.1f ms (one lane %.1f ms)\n",
                  r.pack_max / 1e9, lanes, s.lanes > 1 ? "shared" : "one lane",
                  1e3 * s.shared_seconds, 1e3 * s.one_seconds);
      EXPECT_GE(s.shared_seconds, bytes / std::max(r.pack_max, r.pack_shared_max))
          << "the host's copies bound it";
      if (lanes == 2) {
        EXPECT_EQ(s.lanes, 2);
        EXPECT_LT(s.shared_seconds, 0.9 * s.one_seconds);
      }
      if (r.pack_max == fast.pack_max && lanes == 4) {
        EXPECT_EQ(s.lanes, 4);
        EXPECT_LT(s.shared_seconds, 0.3 * s.one_seconds);
      }
    }
  }
}

// The streamed path plans every product it may be given (A and B used): a cut that
// fits both budgets and covers the product, or OUT_OF_MEMORY; the byte counts of
// candidate cuts whose panel of B passes 2^63 bytes must not wrap into "fits".
TEST(ExtremeSizes, StreamPlanFitsOrSaysOutOfMemory) {
  const double rate = 0.74 * h100().fp32_peak();
  for (const GemmProblem& p : extreme_problems()) {
    if (is_empty(p) || is_scale_only(p)) continue;  // never planned: no A or B to stream
    for (int64_t budget : {int64_t(8) << 30, INT64_MAX}) {
      StreamPlan s;
      try {
        s = plan_stream(p, budget, std::min<int64_t>(budget, int64_t(512) << 20), rate, 16);
      } catch (const Error& e) {
        EXPECT_EQ(e.status(), Status::OutOfMemory) << e.what();
        continue;
      }
      EXPECT_LE(stream_device_bytes(p, s), budget);
      EXPECT_GE(s.tiles_m * s.tile_m, p.m);
      EXPECT_GE(s.tiles_n * s.tile_n, p.n);
      EXPECT_GE(s.chunks * s.chunk_k, p.k);
      EXPECT_GT(streamed_seconds(p, s, rate, 16, HostRates()), 0.0);
      EXPECT_GT(direct_seconds(p, rate, HostRates()), 0.0);
    }
  }
  // A panel of 2^20 columns of B by 2^40 of k: 2^62 bytes each, two of them (B has a
  // second column tile), 2^63 bytes in all: more than any budget.
  GemmProblem p = extreme_problems()[8];
  StreamPlan wide;
  wide.tile_m = 1;
  wide.tile_n = int64_t(1) << 20;
  wide.chunk_k = 4096;
  wide.tiles_m = 1;
  wide.tiles_n = 2;
  wide.chunks = p.k / 4096;
  EXPECT_EQ(stream_device_bytes(p, wide), INT64_MAX) << "saturates";
}

}  // namespace
}  // namespace tiledmm
