// Internals tested directly, linked from the same objects as libtiledmm.so: the
// worker pool, the host copies of the streamed path, the aliasing test and the
// problem's canonical form.
#include <gtest/gtest.h>

#if TILEDMM_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/device_profile.hpp"
#include "core/host_copy.hpp"
#include "plan/blocked_shapes.hpp"
#include "plan/tf32_shapes.hpp"
#if TILEDMM_WITH_CUDA
#include "cuda/kernels/kernels.hpp"
#include "cuda/launch/dispatch.hpp"
#include "cuda/runtime/host_memory.hpp"
#include "cuda/streamed/streamed_gemm.hpp"
#endif
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/worker_pool.hpp"
#include "gemm_reference.hpp"
#include "plan/planner.hpp"
#include "plan/stream_plan.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {
namespace {

TEST(WorkerPool, RunsEveryTaskExactlyOnceAcrossManyLoops) {
  WorkerPool pool;
  for (int round = 0; round < 200; ++round) {
    const int count = 1 + round % 9;
    std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
    auto task = [&](int i) { hits[size_t(i)].fetch_add(1); };
    ASSERT_TRUE(pool.run(count, task));
    for (int i = 0; i < count; ++i) ASSERT_EQ(hits[size_t(i)].load(), 1) << "round " << round;
  }
  EXPECT_EQ(pool.threads(), 8) << "grows to the widest loop, and no further";
}

// Every element of the block lands where it belongs, and nothing around it is
// written, for every alignment of source and destination (the streaming stores need
// 16-byte alignment and take a scalar head and tail), run lengths around the vector
// width, strided and dense (one run split across threads) blocks, 1 to 9 threads.
TEST(HostCopy, CopiesExactlyTheBlockForEveryAlignmentAndThreadCount) {
  WorkerPool pool;
  std::mt19937 rng(7);
  const float guard = -12345.0f;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rows = 1 + int64_t(rng() % 40), cols = 1 + int64_t(rng() % 300);
    const bool dense = trial % 3 == 0;
    const int64_t src_ld = dense ? cols : cols + int64_t(rng() % 9);
    const int64_t dst_ld = dense ? cols : cols + int64_t(rng() % 9);
    const int64_t src_off = int64_t(rng() % 4), dst_off = int64_t(rng() % 4);
    const int threads = 1 + int(rng() % 9);
    std::vector<float> src(size_t(src_off + rows * src_ld));
    for (float& x : src) x = float(rng() % 100000);
    std::vector<float> dst(size_t(dst_off + rows * dst_ld + 8), guard);
    copy_block(pool, threads, dst.data() + dst_off, dst_ld, src.data() + src_off, src_ld, rows,
               cols);
    for (int64_t i = 0; i < int64_t(dst.size()); ++i) {
      const int64_t at = i - dst_off, r = at / dst_ld, c = at % dst_ld;
      const bool inside = at >= 0 && r < rows && c < cols;
      const float want = inside ? src[size_t(src_off + r * src_ld + c)] : guard;
      ASSERT_EQ(dst[size_t(i)], want) << "trial " << trial << ", element " << i << " (" << rows
                                      << "x" << cols << ", threads " << threads << ")";
    }
  }
  // A dense block of 2^20 floats is shared by the threads, on 64-byte boundaries.
  std::vector<float> big(size_t(1) << 20), out(big.size() + 1, guard);
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i);
  copy_block(pool, 7, out.data() + 1, 1 << 10, big.data(), 1 << 10, 1 << 10, 1 << 10);
  EXPECT_EQ(out[0], guard);
  for (size_t i = 0; i < big.size(); ++i) ASSERT_EQ(out[i + 1], big[i]) << i;
  EXPECT_GE(default_packing_threads(), 1);
}

TEST(WorkerPool, TasksRunOnDifferentThreads) {
  WorkerPool pool;
  std::vector<std::thread::id> ids(4);
  std::atomic<int> arrived{0};
  auto task = [&](int i) {
    ids[size_t(i)] = std::this_thread::get_id();
    arrived.fetch_add(1);
    while (arrived.load() < 4) std::this_thread::yield();  // all four at once
  };
  ASSERT_TRUE(pool.run(4, task));
  EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), 4u);
  EXPECT_EQ(ids[0], std::this_thread::get_id()) << "task 0 is the caller's";
}

TEST(WorkerPool, AThrowingTaskIsReportedNotPropagated) {
  WorkerPool pool;
  std::atomic<int> done{0};
  auto task = [&](int i) {
    done.fetch_add(1);
    if (i == 2) throw std::runtime_error("task failed");
  };
  EXPECT_FALSE(pool.run(4, task));
  EXPECT_EQ(done.load(), 4);
  auto fine = [&](int) { done.fetch_add(1); };
  EXPECT_TRUE(pool.run(4, fine)) << "the failure does not stick";
}

// ---- Aliasing: check_no_alias against a brute-force element comparison -------

bool brute_force_share(const float* x, int64_t xr, int64_t xc, int64_t xld, const float* y,
                       int64_t yr, int64_t yc, int64_t yld) {
  std::set<const float*> xs;
  for (int64_t r = 0; r < xr; ++r)
    for (int64_t c = 0; c < xc; ++c) xs.insert(x + r * xld + c);
  for (int64_t r = 0; r < yr; ++r)
    for (int64_t c = 0; c < yc; ++c)
      if (xs.count(y + r * yld + c)) return true;
  return false;
}

TEST(Aliasing, MatchesBruteForceOnRandomSubmatricesOfOneArray) {
  std::vector<float> buf(4096);
  std::vector<float> other(64);
  std::mt19937 rng(1234);
  auto pick = [&](int lo, int hi) {
    return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng));
  };
  int shared = 0, apart = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const int64_t m = pick(1, 9), n = pick(1, 9), k = pick(1, 9);
    const int64_t lda = k + pick(0, 12), ldc = n + pick(0, 12);
    const float* a = buf.data() + pick(0, 300);
    float* c = buf.data() + pick(0, 300);
    GemmProblem p = make_problem(Layout::RowMajor, false, false, m, n, k, 1.0f, a, lda,
                                 other.data(), n, 0.0f, c, ldc);
    const bool want = brute_force_share(a, m, k, lda, c, m, n, ldc);
    bool got = false;
    try {
      check_no_alias(p);
    } catch (const Error& e) {
      got = true;
      EXPECT_EQ(e.status(), Status::InvalidValue);
    }
    ASSERT_EQ(got, want) << "m " << m << " n " << n << " k " << k << " lda " << lda << " ldc "
                         << ldc << " a+" << (a - buf.data()) << " c+" << (c - buf.data());
    (want ? shared : apart)++;
  }
  EXPECT_GT(shared, 400);
  EXPECT_GT(apart, 400);
}

TEST(Problem, ColumnMajorSwapsOperandsAndRemembersTheLayout) {
  float a = 0, b = 0, c = 0;
  const GemmProblem p =
      make_problem(Layout::ColMajor, true, false, 2, 3, 4, 1.0f, &a, 4, &b, 4, 0.0f, &c, 2);
  EXPECT_TRUE(p.col_major);
  EXPECT_EQ(p.m, 3);
  EXPECT_EQ(p.n, 2);
  EXPECT_EQ(p.a, &b);
  EXPECT_EQ(p.b, &a);
  EXPECT_FALSE(p.trans_a);
  EXPECT_TRUE(p.trans_b);
}

// ---- The planner, on device profiles this machine need not have --------------

DeviceProfile h100() {  // H100 SXM: 132 SMs, 1.98 GHz, 3.35 TB/s, 228 KiB per SM
  DeviceProfile d;
  d.multiprocessors = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.clock_hz = 1.98e9;
  d.memory_bandwidth = 3.35e12;
  d.shared_memory_per_sm = 233472;
  d.shared_memory_per_block_optin = 232448;
  d.max_threads_per_sm = 2048;
  d.registers_per_sm = 65536;
  return d;
}

DeviceProfile a100() {  // A100 SXM: 108 SMs, 1.41 GHz, 64 FP32 lanes per SM
  DeviceProfile d = h100();
  d.multiprocessors = 108;
  d.cc_major = 8;
  d.clock_hz = 1.41e9;
  d.memory_bandwidth = 2.04e12;
  d.shared_memory_per_sm = 167936;
  d.shared_memory_per_block_optin = 166912;
  return d;
}

DeviceProfile t4() {  // T4: Turing, 40 SMs, no TF32 tensor cores
  DeviceProfile d = h100();
  d.multiprocessors = 40;
  d.cc_major = 7;
  d.cc_minor = 5;
  d.clock_hz = 1.59e9;
  d.memory_bandwidth = 0.32e12;
  d.shared_memory_per_sm = 65536;
  d.shared_memory_per_block_optin = 65536;
  d.max_threads_per_sm = 1024;
  return d;
}

DeviceProfile consumer80() {  // an 80-SM Ampere consumer part (RTX 3080 Ti class)
  DeviceProfile d = h100();
  d.multiprocessors = 80;
  d.cc_major = 8;
  d.cc_minor = 6;
  d.clock_hz = 1.67e9;
  d.memory_bandwidth = 0.91e12;
  d.shared_memory_per_sm = 102400;
  d.shared_memory_per_block_optin = 101376;
  d.max_threads_per_sm = 1536;
  return d;
}

GemmProblem shape(int64_t m, int64_t n, int64_t k) {
  GemmProblem p{};
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = 1.0f;
  p.lda = k;
  p.ldb = n;
  p.ldc = n;
  return p;
}

const BlockedShapeInfo& info(int tile) {
  for (const BlockedShapeInfo& s : kBlockedShapes)
    if (s.tile == tile) return s;
  throw std::runtime_error("no such tile");
}

int64_t blocks_of(const GemmProblem& p, const BlockedPlan& plan) {
  const BlockedShapeInfo& s = info(plan.tile);
  return ((p.m + s.rows - 1) / s.rows) * ((p.n + s.cols - 1) / s.cols) * plan.splits;
}

struct Profile {
  const char* name;
  DeviceProfile device;
};

std::vector<Profile> profiles() {
  return {{"H100", h100()}, {"A100", a100()}, {"80-SM", consumer80()}};
}

std::vector<GemmProblem> shapes() {
  std::vector<GemmProblem> all;
  for (int64_t m : {1, 64, 200, 1000, 4096, 8192, 20000})
    for (int64_t n : {1, 100, 512, 4096, 9000})
      for (int64_t k : {1, 300, 2048, 16384}) all.push_back(shape(m, n, k));
  return all;
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
    EXPECT_GE((few_tiles.k + plan.splits - 1) / plan.splits, 512) << "each slice keeps work";
    const BlockedPlan big = plan_blocked(shape(8192, 8192, 8192), prof.device, 0);
    EXPECT_EQ(big.splits, 1) << prof.name << ": thousands of tiles need no split";
    const BlockedPlan shallow = plan_blocked(shape(256, 256, 600), prof.device, 0);
    EXPECT_EQ(shallow.splits, 1) << prof.name << ": k too short to split";
  }
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

// ---- Extreme sizes (issue 24) ---------------------------------------------------
// The planners take every problem make_problem accepts: sizes up to INT64_MAX where
// the call does not use them (m or n = 0; k with alpha = 0) and operands of up to
// INT64_MAX bytes. None of their arithmetic may overflow (the sanitizer build's UBSan
// stops at any that does).

std::vector<GemmProblem> extreme_problems() {
  static float x;  // a stand-in: the planners never read the matrices
  const int64_t big = INT64_MAX, most = INT64_MAX / 4;  // most: 2^61 - 1 floats
  const int64_t wide = (int64_t(1) << 20) + 1, deep = int64_t(1) << 40;
  struct Args {
    bool ta, tb;
    int64_t m, n, k;
    float alpha;
    int64_t lda, ldb, ldc;
  };
  const Args all[] = {
      {false, false, big, 0, big, 1.0f, big, 1, 1},      // empty, m and k INT64_MAX
      {false, false, 0, big, big, 1.0f, big, big, big},  // empty, n and k INT64_MAX
      {false, false, 1, 1, big, 0.0f, big, 1, 1},        // alpha = 0: C = beta * C
      {false, false, 2, 3, big, 0.0f, big, 3, 3},
      {false, false, most, 1, 1, 1.0f, 1, 1, 1},  // A and C of 2^61 - 1 floats
      {false, false, 1, most, 1, 1.0f, 1, most, most},
      {false, false, 1, 1, most, 1.0f, most, 1, 1},
      {true, true, 1, 1, most, 1.0f, 1, most, 1},
      {false, true, 1, wide, deep, 1.0f, deep, deep, wide},  // B: 2^60 + 2^40 floats
      {true, false, wide, 1, deep, 1.0f, wide, 1, 1},
      {false, false, int64_t(1) << 30, int64_t(1) << 30, int64_t(1) << 30, 1.0f, int64_t(1) << 30,
       int64_t(1) << 30, int64_t(1) << 30},
  };
  std::vector<GemmProblem> out;
  for (const Args& a : all)
    out.push_back(make_problem(Layout::RowMajor, a.ta, a.tb, a.m, a.n, a.k, a.alpha, &x, a.lda, &x,
                               a.ldb, 1.0f, &x, a.ldc));
  return out;
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
  for (int64_t tiles : {int64_t(133), INT64_MAX / 2, INT64_MAX})
    for (int64_t steps : {int64_t(16), INT64_MAX / 2, INT64_MAX})
      EXPECT_GE(plan_tail_split(tiles, steps, h100(), 2 * 128 * 128 * 4).splits, 1);
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

// ---- The registry ----------------------------------------------------------------

TEST(Registry, NamesAreUniqueAndEverySettingFindsItsRow) {
  std::set<std::string> names;
  size_t rows = 0;
  for (size_t i = 0; const KernelEntry* k = kernel_at(i); ++i, ++rows) {
    EXPECT_TRUE(names.insert(k->name).second) << "duplicate " << k->name;
    EXPECT_NE(std::string(k->description), "");
    EXPECT_LE(k->min_cc, k->max_cc);
    if (k->backend == BackendKind::Cuda) {
      EXPECT_NE(k->launch, nullptr) << k->name;
      // The first row of its settings, or one after a row for other devices.
      const KernelEntry* first =
          find_kernel(k->backend, k->algorithm, k->tile, k->coarsening, k->math_mode);
      ASSERT_NE(first, nullptr) << k->name;
      if (first != k) {
        EXPECT_TRUE(first->available != nullptr || first->min_cc > k->min_cc)
            << k->name << " is hidden by " << first->name;
      }
      EXPECT_TRUE(is_known_tile(k->tile));
    }
  }
  EXPECT_EQ(rows, cpu_kernel_table().count + cuda_kernel_table().count);
  EXPECT_EQ(kernel_at(rows), nullptr);
}

TEST(Registry, EachAlgorithmHasOneDefaultExceptThePlannedOne) {
  for (BackendKind b : {BackendKind::Cpu, BackendKind::Cuda}) {
    for (Algorithm a : {Algorithm::Naive, Algorithm::Tiled, Algorithm::Coarsened}) {
      int rows = 0, defaults = 0;
      for (size_t i = 0; const KernelEntry* k = kernel_at(i); ++i) {
        if (k->backend != b || k->algorithm != a) continue;
        ++rows;
        defaults += k->is_default;
      }
      if (rows > 0) {
        EXPECT_EQ(defaults, 1) << int(a);
      }
    }
  }
#if TILEDMM_WITH_CUDA
  // BLOCKED's CUDA rows are the planner's shapes, one each.
  for (const BlockedShapeInfo& s : kBlockedShapes) {
    const KernelEntry* k = find_kernel(BackendKind::Cuda, Algorithm::Blocked, s.tile, 0);
    ASSERT_NE(k, nullptr) << s.tile;
    EXPECT_EQ(k->outputs_per_thread, s.outputs_per_thread);
  }
#endif
}

// ---- The TF32 planner (host logic) ------------------------------------------------

TEST(MathMode, Tf32PlanFitsTheDeviceAndNamesOnlyItsTiles) {
  for (const Profile& prof : profiles()) {
    for (const GemmProblem& p : shapes()) {
      const int tile = plan_tf32(p, prof.device, 0);
      ASSERT_TRUE(tile == 128 || tile == 256) << prof.name;
      for (const Tf32ShapeInfo& s : kTf32Shapes) {
        if (s.tile == tile) {
          EXPECT_LE(s.shared_bytes, prof.device.shared_memory_per_block_optin) << prof.name;
        }
      }
    }
  }
  EXPECT_EQ(plan_tf32(shape(64, 64, 64), h100(), 64), 0) << "no TF32 tile of 64";
  EXPECT_EQ(plan_tf32(shape(64, 64, 64), consumer80(), 256), 0) << "162 KiB do not fit";
  EXPECT_EQ(plan_tf32(shape(64, 64, 64), h100(), 256), 256);
  EXPECT_EQ(plan_tf32(shape(4096, 4096, 4096), t4(), 0), 0) << "64 KiB per block: no shape fits";
  // 16 x 2 wide tiles, under a wave: the narrow tile, except where the wide tile runs
  // the wgmma kernel (dispatch's wide_everywhere: Hopper), the faster at every size.
  EXPECT_EQ(plan_tf32(shape(2048, 512, 512), h100(), 0), 128);
  EXPECT_EQ(plan_tf32(shape(2048, 512, 512), h100(), 0, true), 256);
  EXPECT_EQ(plan_tf32(shape(1, 1, 1), h100(), 0, true), 256);
  EXPECT_EQ(plan_tf32(shape(1, 1, 1), h100(), 128, true), 128) << "a tile asked for stays";
  EXPECT_EQ(plan_tf32(shape(1, 1, 1), consumer80(), 0, true), 128) << "162 KiB do not fit";
}

// ---- Splitting the partial last wave along k (plan_tail_split) -----------------------

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
  EXPECT_TRUE(none(100, 256, kX3)) << "a single wave: nothing to gain";
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

#if TILEDMM_WITH_CUDA
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

// The streamed engine run directly with hand-made plans: groups of 1, 2, 3 and 5 row
// tiles computed together while the panel goes up, ragged tile and chunk edges,
// beta 0 and not, transposed and not. Exact integers: every plan gives the exact
// result, bit for bit. Skips without a GPU (fails with TMM_REQUIRE_GPU=1).
TEST(StreamedGemm, EveryGroupOfRowTilesGivesTheExactResult) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  DeviceProfile device = h100();
  cudaDeviceGetAttribute(&device.cc_major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&device.cc_minor, cudaDevAttrComputeCapabilityMinor, 0);
  cudaDeviceGetAttribute(&device.multiprocessors, cudaDevAttrMultiProcessorCount, 0);
  std::shared_ptr<StreamedGemm> engine = shared_streamed_gemm(0);
  EXPECT_EQ(engine.get(), shared_streamed_gemm(0).get()) << "one engine per device";

  std::mt19937 rng(11);
  const int64_t m = 333, n = 200, k = 700;
  for (bool trans : {false, true}) {
    for (float beta : {0.0f, 2.0f}) {
      std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c0(size_t(m * n));
      for (float& x : a) x = float(int(rng() % 5) - 2);
      for (float& x : b) x = float(int(rng() % 5) - 2);
      for (float& x : c0) x = beta == 0.0f ? std::nanf("") : float(int(rng() % 7) - 3);
      std::vector<float> want(c0.size());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t q = 0; q < k; ++q) {
            const double x = trans ? a[size_t(q * m + i)] : a[size_t(i * k + q)];
            dot += x * b[size_t(q * n + j)];
          }
          want[size_t(i * n + j)] =
              float(dot + (beta == 0.0f ? 0.0 : beta * c0[size_t(i * n + j)]));
        }
      }
      for (int64_t group : {1, 2, 3, 5}) {
        SCOPED_TRACE("trans " + std::to_string(trans) + ", beta " + std::to_string(beta) +
                     ", group " + std::to_string(group));
        GemmProblem p{};
        p.trans_a = trans;
        p.trans_b = false;
        p.m = m;
        p.n = n;
        p.k = k;
        p.alpha = 1.0f;
        p.beta = beta;
        p.a = a.data();
        p.lda = trans ? m : k;
        p.b = b.data();
        p.ldb = n;
        p.ldc = n;
        StreamPlan plan;
        plan.tile_m = 48;   // 7 row tiles, the last of 45 rows
        plan.tile_n = 128;  // 2 column tiles, the last of 72 columns
        plan.chunk_k = 96;  // 8 chunks, the last of 28
        plan.tiles_m = 7;
        plan.tiles_n = 2;
        plan.chunks = 8;
        plan.group = group;
        // Small integers are exact in TF32 too: the tensor-core chunks must give the
        // same bits, and the timing must name the mode of the kernel that ran.
        for (MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
          std::vector<float> out = c0;
          p.c = out.data();
          Settings settings;
          settings.poison_staging = true;
          settings.math_mode = mode;
          const Timing t = engine->run(p, settings, device, plan);
          EXPECT_EQ(t.tiles, 14);
          EXPECT_EQ(t.math_mode, mode);
          EXPECT_EQ(std::memcmp(out.data(), want.data(), out.size() * sizeof(float)), 0)
              << "mode " << int(mode);
        }
      }
    }
  }
}
#endif

#if TILEDMM_WITH_CUDA
// ---- The streamed path after a failure -----------------------------------------

// A host product through the C API on the streamed path, many tiles and chunks: C
// (row-major, ld n) in the caller's memory, pinned or not; integer operands.
struct HostProduct {
  int64_t m, n, k;
  float beta;
  std::vector<float> a, b, c0;
  float* c = nullptr;  // pinned (cudaMallocHost) or owned by `pageable`
  std::vector<float> pageable;
  bool pinned;

  HostProduct(int64_t m_, int64_t n_, int64_t k_, float beta_, bool pinned_, uint32_t seed)
      : m(m_),
        n(n_),
        k(k_),
        beta(beta_),
        a(size_t(m_ * k_)),
        b(size_t(k_ * n_)),
        c0(size_t(m_ * n_)),
        pinned(pinned_) {
    tmm_test::fill_exact(a, seed);
    tmm_test::fill_exact(b, seed + 1);
    tmm_test::fill_exact(c0, seed + 2);
    if (pinned) {
      void* p = nullptr;
      EXPECT_EQ(cudaMallocHost(&p, c0.size() * sizeof(float)), cudaSuccess);
      c = static_cast<float*>(p);
    } else {
      pageable.resize(c0.size());
      c = pageable.data();
    }
    reset();
  }
  ~HostProduct() {
    if (pinned) cudaFreeHost(c);
  }
  HostProduct(const HostProduct&) = delete;  // c may point into pageable
  HostProduct& operator=(const HostProduct&) = delete;

  void reset() { std::copy(c0.begin(), c0.end(), c); }
  tmm_status run(tmm_handle h) {
    return tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, 1.0f, a.data(), k,
                     b.data(), n, beta, c, n);
  }
  // The exact result (integers), computed once.
  const std::vector<float>& result() {
    if (want.empty()) {
      want.resize(c0.size());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t q = 0; q < k; ++q)
            dot += double(a[size_t(i * k + q)]) * b[size_t(q * n + j)];
          want[size_t(i * n + j)] = float(dot + beta * double(c0[size_t(i * n + j)]));
        }
      }
    }
    return want;
  }
  // C equals the exact result (== on integers), or, with `or_old`, each element
  // equals either it or its value before the call (the header's promise after a
  // late failure).
  ::testing::AssertionResult exact(bool or_old = false) {
    const std::vector<float>& r = result();
    for (int64_t e = 0; e < m * n; ++e) {
      if (c[e] == r[size_t(e)] || (or_old && c[e] == c0[size_t(e)])) continue;
      return ::testing::AssertionFailure() << "C[" << e << "] = " << c[e] << ", exactly "
                                           << r[size_t(e)] << (or_old ? " or as before" : "");
    }
    return ::testing::AssertionSuccess();
  }
  std::vector<float> want;
};

tmm_handle streamed_handle() {
  tmm_handle h = nullptr;
  EXPECT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_DEVICE_MEMORY_BUDGET, 1 << 20), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_HOST_STAGING_BYTES, 256 << 10), TMM_SUCCESS);
  return h;
}

// Indices 1..count, all of them or `most` spread evenly (first and last included).
std::vector<int64_t> spread(int64_t count, int64_t most) {
  std::vector<int64_t> out;
  if (count <= most) {
    for (int64_t i = 1; i <= count; ++i) out.push_back(i);
  } else {
    for (int64_t i = 0; i < most; ++i) out.push_back(1 + i * (count - 1) / (most - 1));
  }
  return out;
}

// Poisons C right after a failed call and checks, `wait` later, that nothing of the
// call wrote it since (a copy left in flight would).
::testing::AssertionResult c_stays_poisoned(HostProduct& x, std::chrono::milliseconds wait) {
  const float poison = -7777.0f;
  std::fill(x.c, x.c + x.m * x.n, poison);
  std::this_thread::sleep_for(wait);
  for (int64_t e = 0; e < x.m * x.n; ++e)
    if (x.c[e] != poison) return ::testing::AssertionFailure() << "C[" << e << "] written late";
  return ::testing::AssertionSuccess();
}

// A copy of the streamed path failing (as a late cudaErrorMemoryAllocation would: the
// status is OUT_OF_MEMORY) at each copy in turn, C pinned and pageable: the call
// fails, leaves nothing in flight (a pinned C poisoned right after it stays poisoned),
// and the next calls, of another shape with other operands, on the same handle and on
// a second handle sharing the device's engine, are exact.
TEST(StreamedGemm, AFailingCopyAtEachStepLeavesNothingInFlight) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  tmm_handle h = streamed_handle(), other = streamed_handle();
  HostProduct next_a(333, 250, 410, 1.0f, false, 91), next_b(210, 390, 300, 0.0f, true, 93);
  for (bool pinned : {false, true}) {
    HostProduct x(600, 500, 700, 1.0f, pinned, 17);
    inject_copy_failure(int64_t(1) << 40, cudaErrorMemoryAllocation);
    ASSERT_EQ(x.run(h), TMM_SUCCESS) << tmm_get_error_message(h);
    const int64_t copies = (int64_t(1) << 40) - inject_copy_failure(0, cudaSuccess);
    ASSERT_TRUE(x.exact());
    tmm_report r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
    ASSERT_GE(r.tiles, 4);
    ASSERT_GE(r.k_chunks, 2);
    ASSERT_GE(copies, 8);
    const std::vector<int64_t> at = spread(copies, tmm_test::under_sanitizer() ? 6 : 40);
    for (size_t i = 0; i < at.size(); ++i) {
      SCOPED_TRACE(std::string(pinned ? "pinned" : "pageable") + " C, copy " +
                   std::to_string(at[i]) + " of " + std::to_string(copies) + " fails");
      x.reset();
      inject_copy_failure(at[i], cudaErrorMemoryAllocation);
      EXPECT_EQ(x.run(h), TMM_ERROR_OUT_OF_MEMORY);
      inject_copy_failure(0, cudaSuccess);
      EXPECT_TRUE(x.exact(/*or_old=*/true));
      if (pinned) {
        const bool long_wait = i == 0 || i + 1 == at.size() || i == at.size() / 2;
        EXPECT_TRUE(c_stays_poisoned(x, std::chrono::milliseconds(long_wait ? 1000 : 20)));
      }
      HostProduct& next = i % 2 ? next_b : next_a;
      next.reset();
      ASSERT_EQ(next.run(i % 4 < 2 ? h : other), TMM_SUCCESS);
      EXPECT_TRUE(next.exact());
    }
    x.reset();
    ASSERT_EQ(x.run(other), TMM_SUCCESS);
    EXPECT_TRUE(x.exact());
  }
  tmm_destroy(h);
  tmm_destroy(other);
}

// A read (A, B or C) or write (C) function of tmm_sgemm_io failing at each of its calls
// in turn: TMM_ERROR_CALLBACK, and the next calls (another shape, other operands, the
// same and a second handle) are exact.
TEST(StreamedGemm, AFailingCallbackAtEachChunkLeavesTheEngineClean) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  struct Io {
    std::vector<float>* data;
    std::atomic<int64_t> calls{0}, fail_at{-1};
    tmm_host_io io{};
    explicit Io(std::vector<float>& v) : data(&v) {
      io.struct_size = sizeof io;
      io.user = this;
      io.read = [](void* u, int64_t offset, int64_t count, float* dst) {
        auto* self = static_cast<Io*>(u);
        if (self->calls.fetch_add(1) + 1 == self->fail_at.load()) return 3;
        std::memcpy(dst, self->data->data() + offset, size_t(count) * sizeof(float));
        return 0;
      };
      io.write = [](void* u, int64_t offset, int64_t count, const float* src) {
        auto* self = static_cast<Io*>(u);
        if (self->calls.fetch_add(1) + 1 == self->fail_at.load()) return 4;
        std::memcpy(self->data->data() + offset, src, size_t(count) * sizeof(float));
        return 0;
      };
    }
  };
  tmm_handle h = streamed_handle(), other = streamed_handle();
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_HOST_THREADS, 1), TMM_SUCCESS);  // counted in order
  HostProduct next_a(333, 250, 410, 1.0f, true, 95), next_b(210, 390, 300, 0.0f, false, 97);
  HostProduct x(600, 500, 700, 1.0f, false, 19);
  std::vector<float> a = x.a, b = x.b, c(x.c0);
  Io ia(a), ib(b), ic(c);
  auto run = [&] {
    return tmm_sgemm_io(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, x.m, x.n, x.k, 1.0f, &ia.io,
                        x.k, &ib.io, x.n, 1.0f, &ic.io, x.n);
  };
  ASSERT_EQ(run(), TMM_SUCCESS) << tmm_get_error_message(h);
  std::copy(c.begin(), c.end(), x.c);
  ASSERT_TRUE(x.exact());
  const int64_t counts[3] = {ia.calls.load(), ib.calls.load(), ic.calls.load()};
  int step = 0;
  for (int which = 0; which < 3; ++which) {
    Io& io = which == 0 ? ia : which == 1 ? ib : ic;
    for (int64_t at : spread(counts[which], tmm_test::under_sanitizer() ? 4 : 25)) {
      SCOPED_TRACE(std::string("operand ") + "ABC"[which] + ", call " + std::to_string(at) +
                   " of " + std::to_string(counts[which]) + " fails");
      std::copy(x.c0.begin(), x.c0.end(), c.begin());
      for (Io* i : {&ia, &ib, &ic}) i->calls = 0;
      io.fail_at = at;
      EXPECT_EQ(run(), TMM_ERROR_CALLBACK);
      io.fail_at = -1;
      std::copy(c.begin(), c.end(), x.c);
      EXPECT_TRUE(x.exact(/*or_old=*/true)) << "C's write function got only final values";
      HostProduct& next = step % 2 ? next_b : next_a;
      next.reset();
      ASSERT_EQ(next.run(step % 4 < 2 ? h : other), TMM_SUCCESS);
      EXPECT_TRUE(next.exact());
      ++step;
    }
  }
  tmm_destroy(h);
  tmm_destroy(other);
}
#endif

#if TILEDMM_WITH_CUDA
// ---- Every tensor-core row through its own launcher ------------------------------

// The current device's compute capability, major * 10 + minor (0 if unknown).
int current_cc() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return 0;
  return 10 * major + minor;
}

// g (row-major) through `row`'s own launcher with `plan`, on device copies; C comes
// back into g. The workspace, if any, is poisoned first: a partial sum the kernel
// failed to write would show.
void run_row(const KernelEntry& row, tmm_test::GemmCase& g, const KernelPlan& plan) {
  auto upload = [](const std::vector<float>& v) {
    float* d = nullptr;
    EXPECT_EQ(cudaMalloc(&d, v.size() * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    return d;
  };
  float *a = upload(g.a), *b = upload(g.b), *c = upload(g.c), *workspace = nullptr;
  const GemmProblem p = make_problem(Layout::RowMajor, g.ta == TMM_TRANS, g.tb == TMM_TRANS, g.m,
                                     g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
  const size_t floats = row.workspace != nullptr ? row.workspace(p, plan) : 0;
  if (plan.splits > 1 && row.workspace != nullptr) {  // room for the partial sums
    EXPECT_GT(floats, row.workspace(p, KernelPlan{plan.tile, plan.coarsening, 1}));
  }
  if (floats > 0) {
    EXPECT_EQ(cudaMalloc(&workspace, floats * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemset(workspace, 0x7f, floats * sizeof(float)), cudaSuccess);
  }
  row.launch(p, plan, workspace, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(g.c.data(), c, g.c.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (float* d : {a, b, c, workspace}) cudaFree(d);
}

tmm_test::Arithmetic arithmetic_of(const KernelEntry& row) {
  return row.math_mode == MathMode::Tf32           ? tmm_test::Arithmetic::Tf32
         : row.math_mode == MathMode::Fp32Accurate ? tmm_test::Arithmetic::Fp32Accurate
                                                   : tmm_test::Arithmetic::Fp32;
}

// Through the API a setting runs the first row of it that runs on the device: on an
// H100 the mma.sync 128 x 256 row stands behind the Hopper one and would go
// untested. Here each row that runs on this device multiplies every transpose pair
// on ragged shapes, checked against FP64 with its mode's bound.
TEST(TensorCoreRows, EachRowThatRunsHereMatchesFp64) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int rows = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    if (row.math_mode == MathMode::Fp32 || !runs_here(row, cc)) continue;
    ++rows;
    int variant = 0;
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        tmm_test::GemmCase g;
        g.ta = ta;
        g.tb = tb;
        g.m = 131 + variant;
        g.n = 263 - 2 * variant;
        g.k = 77 + 5 * variant;
        g.alpha = 0.75f;
        g.beta = variant % 2 ? 0.0f : 0.5f;
        g.pad = variant % 2;
        tmm_test::fill_case(g, seed + uint32_t(variant));
        ++variant;
        SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g));
        run_row(row, g, KernelPlan{row.tile, row.coarsening, 1});
        EXPECT_TRUE(tmm_test::check_case(g, arithmetic_of(row)));
      }
    }
  }
  // Compute capability 8.0 and later have the mma.sync rows at least.
  if (cc >= 80) {
    EXPECT_GE(rows, 2);
  }
}

// The rows that split their last wave along k (plan_tail), with a split forced on small
// products: 1, 5 or 8 of the last tiles (of at least 9) in up to 4 slices of k, the last
// slice short (k = 333: 11 steps of 32, slices of 3 and a last of 2, 13 in k past the
// last whole step). Every transpose, so every variant of the TF32 kernel (D = C^T among
// them), beta 0 and not, padded rows.
TEST(TensorCoreRows, SplitLastWavesMatchFp64) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int rows = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    if (row.plan_tail == nullptr || !runs_here(row, cc)) continue;
    ++rows;
    int variant = 0;
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (int64_t tail : {1, 5, 8}) {
          tmm_test::GemmCase g;
          g.ta = ta;
          g.tb = tb;
          g.m = 300 + variant;
          g.n = 520 - variant;
          g.k = 333;
          g.alpha = -1.5f;
          g.beta = variant % 2 ? 0.0f : 0.5f;
          g.pad = variant % 3;
          tmm_test::fill_case(g, seed + uint32_t(variant));
          ++variant;
          SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g) + " tail " +
                       std::to_string(tail));
          const KernelPlan plan{row.tile, row.coarsening, 4, tail};
          run_row(row, g, plan);
          EXPECT_TRUE(tmm_test::check_case(g, arithmetic_of(row)));
        }
      }
    }
  }
  // On cc 9.0 every row with a split runs (the Hopper rows: their sm_90a code loads).
  int with_split = 0;
  for (const KernelEntry& row : cuda_kernel_table()) with_split += row.plan_tail != nullptr;
  if (cc == 90) {
    EXPECT_EQ(rows, with_split);
  }
}
#endif

}  // namespace
}  // namespace tiledmm
