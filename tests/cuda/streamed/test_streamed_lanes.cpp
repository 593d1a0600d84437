// The streamed engine as a lane (lib/cuda/streamed/streamed_gemm.hpp: prepare, work over
// a UnitSource, end): a lane handed no unit, units in any order, two engines on one
// device sharing a TileQueue through run_lanes (core/lanes.hpp), sharing chunks of op(A)
// (core/shared_chunks.hpp), and a lane failing mid-call. Exact small integers, poisoned staging.
// Skips without a GPU (fails with TMM_REQUIRE_GPU=1).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/device_profile.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/lanes.hpp"
#include "core/settings.hpp"
#include "core/shared_chunks.hpp"
#include "core/worker_pool.hpp"
#include "cuda/runtime/cuda_objects.hpp"
#include "cuda/runtime/host_memory.hpp"
#include "cuda/streamed/streamed_gemm.hpp"
#include "gemm_reference.hpp"
#include "plan/stream_plan.hpp"
#include "plan/stream_schedule.hpp"
#include "plan/tile_queue.hpp"
#include "plan_fixtures.hpp"

namespace tiledmm {
namespace {

DeviceProfile this_device() {
  DeviceProfile device = tmm_test::h100();
  cudaDeviceGetAttribute(&device.cc_major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&device.cc_minor, cudaDevAttrComputeCapabilityMinor, 0);
  cudaDeviceGetAttribute(&device.multiprocessors, cudaDevAttrMultiProcessorCount, 0);
  return device;
}

// A row-major m x n x k product of exact integers, C = A B + beta C0, in single precision.
struct Product {
  int64_t m, n, k;
  float beta;
  std::vector<float> a, b, c0, c, want;

  Product(int64_t m_, int64_t n_, int64_t k_, float beta_, uint32_t seed)
      : m(m_),
        n(n_),
        k(k_),
        beta(beta_),
        a(size_t(m_ * k_)),
        b(size_t(k_ * n_)),
        c0(size_t(m_ * n_)),
        want(size_t(m_ * n_)) {
    tmm_test::fill_exact(a, seed);
    tmm_test::fill_exact(b, seed + 1);
    tmm_test::fill_exact(c0, seed + 2);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t q = 0; q < k; ++q) dot += double(a[size_t(i * k + q)]) * b[size_t(q * n + j)];
        want[size_t(i * n + j)] = float(dot + beta * double(c0[size_t(i * n + j)]));
      }
    }
    reset();
  }
  void reset() { c = c0; }
  GemmProblem problem() {
    GemmProblem p{};
    p.m = m;
    p.n = n;
    p.k = k;
    p.alpha = 1.0f;
    p.beta = beta;
    p.a = a.data();
    p.lda = k;
    p.b = b.data();
    p.ldb = n;
    p.c = c.data();
    p.ldc = n;
    return p;
  }
  bool exact() const { return std::memcmp(c.data(), want.data(), c.size() * sizeof(float)) == 0; }
  // Each element the exact result or C0's (the header's promise after a late failure).
  ::testing::AssertionResult old_or_final() const {
    for (size_t e = 0; e < c.size(); ++e) {
      if (c[e] == want[e] || c[e] == c0[e]) continue;
      return ::testing::AssertionFailure()
             << "C[" << e << "] = " << c[e] << ", exactly " << want[e] << " or as before " << c0[e];
    }
    return ::testing::AssertionSuccess();
  }
};

StreamPlan cut(const Product& x, int64_t tile_m, int64_t tile_n, int64_t chunk_k, int64_t group,
               bool b_resident) {
  StreamPlan s;
  s.tile_m = tile_m;
  s.tile_n = tile_n;
  s.chunk_k = chunk_k;
  s.tiles_m = (x.m + tile_m - 1) / tile_m;
  s.tiles_n = (x.n + tile_n - 1) / tile_n;
  s.chunks = (x.k + chunk_k - 1) / chunk_k;
  s.group = group;
  s.b_resident = b_resident;
  return s;
}

// Hands out a fixed list of units.
class ScriptedSource final : public UnitSource {
 public:
  explicit ScriptedSource(std::vector<StreamUnit> units) : units_(std::move(units)) {}
  bool next(StreamUnit& unit) override {
    if (next_ >= units_.size()) return false;
    unit = units_[next_++];
    return true;
  }

 private:
  std::vector<StreamUnit> units_;
  size_t next_ = 0;
};

Settings poisoned() {
  Settings s;
  s.poison_staging = true;
  return s;
}

// One lane's whole call: prepare, work, end.
Timing run_units(StreamedGemm& engine, const GemmProblem& p, const StreamPlan& plan,
                 UnitSource& source, const Settings& settings = poisoned()) {
  const DispatchChunkKernels kernels(settings, this_device());
  engine.prepare(p, settings, plan, kernels);
  struct End {
    StreamedGemm& e;
    ~End() { e.end(); }
  } end{engine};
  return engine.work(source);
}

// A lane the queue hands nothing (more lanes than tiles, or the others were faster):
// it writes nothing of C, and its report says so, on a fresh engine and on one that
// has run a product before (whose first-product event holds that product's moment).
TEST(StreamedLanes, ALaneGivenNoUnitsWritesNothingAndReportsNothing) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  StreamedGemm engine;  // private: fresh
  Product x(300, 200, 150, 2.0f, 3);
  const StreamPlan plan = cut(x, 64, 128, 64, 2, true);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "fresh engine" : "after a product");
    x.reset();
    ScriptedSource none({});
    GemmProblem p = x.problem();
    const Timing t = run_units(engine, p, plan, none);
    EXPECT_EQ(x.c, x.c0);
    EXPECT_EQ(t.tiles, 0);
    EXPECT_EQ(t.compute_ms, 0.0);
    EXPECT_EQ(t.devices, 0);
    EXPECT_EQ(t.panel_uploads, 0);
    EXPECT_EQ(t.upload_bytes, 0);
    EXPECT_EQ(t.download_bytes, 0);
    EXPECT_EQ(t.host_bytes, 0);
    EXPECT_STREQ(t.kernel, "none");
    // A whole product between the rounds.
    x.reset();
    p = x.problem();
    WholePlanSource all(plan);
    const Timing whole = run_units(engine, p, plan, all);
    EXPECT_TRUE(x.exact());
    EXPECT_EQ(whole.tiles, plan.tiles());
    EXPECT_GT(whole.compute_ms, 0.0);
    EXPECT_EQ(whole.panel_uploads, plan.tiles_n);
    // Every byte: A once per column tile, B once, C up (beta 2) and down once.
    const int64_t f = int64_t(sizeof(float));
    EXPECT_EQ(whole.upload_bytes, f * (x.m * x.k * plan.tiles_n + x.k * x.n + x.m * x.n));
    EXPECT_EQ(whole.download_bytes, f * x.m * x.n);
    EXPECT_EQ(whole.host_bytes, whole.upload_bytes + whole.download_bytes) << "all pageable";
    EXPECT_GT(whole.end_ms, whole.start_ms);
  }
}

// Units in an order no single engine takes: a column begun three times, single row
// tiles, a column's tail before its head; groups of 1 and 3, B resident and streamed,
// beta 0 (C NaN) and 2. Every tile it is handed is exact, the rest untouched.
TEST(StreamedLanes, ScriptedUnitsInAnyOrderGiveTheExactResult) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  StreamedGemm engine;
  for (float beta : {0.0f, 2.0f}) {
    Product x(333, 200, 700, beta, 11);
    if (beta == 0.0f) std::fill(x.c0.begin(), x.c0.end(), std::nanf(""));
    for (bool resident : {true, false}) {
      for (int64_t group : {1, 3}) {
        SCOPED_TRACE("beta " + std::to_string(beta) + (resident ? ", B resident" : ", B streamed") +
                     ", group " + std::to_string(group));
        // 7 row tiles (the last of 45 rows) x 2 column tiles (the last of 72 columns), 8
        // chunks (the last of 28).
        const StreamPlan plan = cut(x, 48, 128, 96, group, resident);
        ASSERT_EQ(plan.tiles(), 14);
        x.reset();
        ScriptedSource units({{1, 3, 5}, {0, 4, 7}, {1, 0, 1}, {0, 0, 4}, {1, 1, 3}, {1, 5, 7}});
        const GemmProblem p = x.problem();
        const Timing t = run_units(engine, p, plan, units);
        EXPECT_EQ(t.tiles, 14);
        EXPECT_EQ(t.panel_uploads, 5) << "columns begun: 1, 0, 1, 0, 1";
        EXPECT_TRUE(x.exact());
        // Half of it: the other tiles stay as they were.
        x.reset();
        ScriptedSource half({{1, 2, 4}, {0, 0, 2}});
        const Timing h = run_units(engine, x.problem(), plan, half);
        EXPECT_EQ(h.tiles, 4);
        for (int64_t i = 0; i < x.m; ++i) {
          for (int64_t j = 0; j < x.n; ++j) {
            const int64_t ti = i / 48, tj = j / 128;
            const bool handed = (tj == 1 && ti >= 2 && ti < 4) || (tj == 0 && ti < 2);
            const size_t e = size_t(i * x.n + j);
            const float expect = handed ? x.want[e] : x.c0[e];
            ASSERT_TRUE(std::memcmp(&x.c[e], &expect, sizeof(float)) == 0)
                << "C[" << i << "][" << j << "] = " << x.c[e] << ", want " << expect;
          }
        }
      }
    }
  }
}

// Two engines' whole call over `queue` through run_lanes, each prepared with `options`
// (poisoned staging); each lane's report in `times`.
LaneResults run_two_lanes(StreamedGemm (&engines)[2], const GemmProblem& p, const StreamPlan& plan,
                          TileQueue& queue, const LaneOptions& options, Timing (&times)[2]) {
  const Settings settings = poisoned();
  const DispatchChunkKernels kernels(settings, this_device());
  WorkerPool pool;
  auto prepare = [&](int i) { engines[i].prepare(p, settings, plan, kernels, options); };
  auto work = [&](int i) {
    LaneSource source(queue, i);
    times[i] = engines[i].work(source);
  };
  auto end = [&](int i) noexcept { engines[i].end(); };
  auto stop = [&]() noexcept { queue.cancel(); };
  LaneResults results;
  run_lanes(pool, 2, prepare, work, end, stop, results);
  return results;
}

// Two private engines on device 0 (two lanes of a handle listing device 0 twice) sharing
// a TileQueue through run_lanes: the exact result, every tile computed once (the lanes'
// tiles sum to the plan's and match the queue's counts), both lanes computing, at the
// same time.
TEST(StreamedLanes, TwoLanesOnDeviceZeroShareATileQueue) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  StreamedGemm engines[2];
  Product x(2048, 1536, 1024, 2.0f, 21);
  const StreamPlan plan = cut(x, 128, 256, 256, 2, true);  // 16 x 6 tiles
  for (int round = 0; round < 2; ++round) {
    x.reset();
    const GemmProblem p = x.problem();
    TileQueue queue(plan, 2);
    LaneOptions options;
    options.t0 = std::chrono::steady_clock::now();
    options.populate_threads = 0;
    Timing times[2];
    ASSERT_EQ(run_two_lanes(engines, p, plan, queue, options, times).first_failed, -1);
    EXPECT_TRUE(x.exact());
    EXPECT_EQ(times[0].tiles + times[1].tiles, plan.tiles());
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(times[i].tiles, queue.count(i).tiles) << "lane " << i;
      EXPECT_GT(times[i].tiles, 0) << "lane " << i;
      EXPECT_EQ(times[i].panel_uploads, queue.count(i).columns) << "lane " << i;
    }
    EXPECT_LT(std::max(times[0].start_ms, times[1].start_ms),
              std::min(times[0].end_ms, times[1].end_ms))
        << "the two engines overlap";
  }
}

// Two lanes on device 0 sharing chunks of op(A) (LaneOptions::shared_a, a board in
// pinned memory): with a slot for every chunk each is packed once and reused by the
// other column tiles' units; with three slots most lanes find the board full and pack
// their own. The exact result each time (staging and board slots poisoned first), every
// use counted, and less packed with the board than without.
TEST(StreamedLanes, TwoLanesShareChunksOfA) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  StreamedGemm engines[2];
  Product x(1000, 1536, 700, 2.0f, 29);
  const StreamPlan plan = cut(x, 128, 256, 256, 2, true);  // 8 x 6 tiles, 3 chunks
  const int64_t chunks = plan.tiles_m * plan.chunks;
  const int64_t slot_bytes = plan.tile_m * plan.chunk_k * int64_t(sizeof(float));
  PinnedBuffer memory;
  char* slots = memory.reserve<char>(size_t(chunks * slot_bytes));
  int64_t unshared_bytes = 0;
  for (int64_t board_slots : {int64_t(0), chunks, int64_t(3)}) {
    SCOPED_TRACE("board of " + std::to_string(board_slots) + " slots");
    x.reset();
    const GemmProblem p = x.problem();
    TileQueue queue(plan, 2);
    std::unique_ptr<SharedChunks> board;
    if (board_slots > 0)
      board = std::make_unique<SharedChunks>(slots, slot_bytes, int(board_slots), plan.tiles_n);
    LaneOptions options;
    options.populate_threads = 0;
    options.shared_a = board.get();
    Timing times[2];
    ASSERT_EQ(run_two_lanes(engines, p, plan, queue, options, times).first_failed, -1);
    EXPECT_TRUE(x.exact());
    EXPECT_EQ(times[0].tiles + times[1].tiles, plan.tiles());
    const int64_t packed = times[0].host_bytes + times[1].host_bytes;
    if (!board) {
      unshared_bytes = packed;
      continue;
    }
    const SharedChunks::Counts c = board->counts();
    EXPECT_EQ(c.packed + c.reused + c.full, plan.tiles_n * chunks) << "every use of every chunk";
    EXPECT_LT(packed, unshared_bytes);
    if (board_slots == chunks) {
      EXPECT_EQ(c.packed, chunks) << "each chunk packed once";
      EXPECT_EQ(c.full, 0);
      // A once instead of once per column tile.
      EXPECT_EQ(unshared_bytes - packed, (plan.tiles_n - 1) * x.m * x.k * int64_t(sizeof(float)));
    } else {
      EXPECT_GT(c.full, 0) << "three slots cannot hold what the lanes need";
      EXPECT_GT(c.reused, 0);
    }
  }
}

// A copy failing in one of two lanes (the injected failure hits whichever lane makes
// the n-th copy): the run reports it once every lane has ended, each element of C old or
// final, and both engines then run the product exactly. C is pinned, so the engines'
// copies write it directly: a copy still in flight after the run would change C after
// the run returned (checked after a device-wide synchronisation).
TEST(StreamedLanes, ALaneFailingMidCallLeavesNothingInFlight) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  StreamedGemm engines[2];
  Product x(1024, 768, 512, 1.0f, 31);
  ASSERT_EQ(cudaHostRegister(x.c.data(), x.c.size() * sizeof(float), cudaHostRegisterDefault),
            cudaSuccess);
  const StreamPlan plan = cut(x, 128, 128, 128, 2, true);  // 8 x 6 tiles
  const Settings settings = poisoned();
  const DispatchChunkKernels kernels(settings, this_device());
  WorkerPool pool;
  auto run = [&](int64_t fail_at) {
    x.reset();
    const GemmProblem p = x.problem();
    TileQueue queue(plan, 2);
    auto prepare = [&](int i) { engines[i].prepare(p, settings, plan, kernels); };
    auto work = [&](int i) {
      LaneSource source(queue, i);
      engines[i].work(source);
    };
    auto end = [&](int i) noexcept { engines[i].end(); };
    auto stop = [&]() noexcept { queue.cancel(); };
    LaneResults results;
    inject_copy_failure(fail_at, cudaErrorMemoryAllocation);
    run_lanes(pool, 2, prepare, work, end, stop, results);
    inject_copy_failure(0, cudaSuccess);
    return results;
  };
  for (int64_t at : {1, 5, 40, 120}) {
    SCOPED_TRACE("copy " + std::to_string(at) + " fails");
    const LaneResults failed = run(at);
    ASSERT_GE(failed.first_failed, 0);
    try {
      std::rethrow_exception(failed.errors[size_t(failed.first_failed)]);
    } catch (const Error& e) {
      EXPECT_EQ(e.status(), Status::OutOfMemory) << e.what();
    }
    const std::vector<float> on_return = x.c;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(std::memcmp(on_return.data(), x.c.data(), x.c.size() * sizeof(float)), 0)
        << "C changed after the run returned";
    EXPECT_TRUE(x.old_or_final());
    const LaneResults next = run(0);
    ASSERT_EQ(next.first_failed, -1);
    EXPECT_TRUE(x.exact());
  }
  ASSERT_EQ(cudaHostUnregister(x.c.data()), cudaSuccess);
}

// A chooser that refuses every chunk (as a device lacking the algorithm asked for).
class Refusing final : public ChunkKernelChooser {
 public:
  KernelChoice choose(const GemmProblem&) const override {
    throw Error(Status::NotSupported, "refused");
  }
};

// One lane's prepare failing (its kernel choice refuses, the way a device lacking the
// algorithm does): no lane works, C is untouched, every engine is free again (a second
// run on both engines neither waits nor fails) and exact.
TEST(StreamedLanes, AFailedPrepareReleasesEveryEngine) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  StreamedGemm engines[2];
  Product x(600, 500, 400, 2.0f, 41);
  const StreamPlan plan = cut(x, 128, 128, 128, 2, true);
  const Settings settings = poisoned();
  const DispatchChunkKernels kernels(settings, this_device());
  const Refusing refusing;
  WorkerPool pool;
  for (int refuser : {0, 1}) {
    SCOPED_TRACE("lane " + std::to_string(refuser) + " refuses");
    for (bool refuse : {true, false}) {
      x.reset();
      const GemmProblem p = x.problem();
      TileQueue queue(plan, 2);
      bool prepared[2] = {false, false};
      auto prepare = [&](int i) {
        engines[i].prepare(
            p, settings, plan,
            refuse && i == refuser ? static_cast<const ChunkKernelChooser&>(refusing) : kernels);
        prepared[i] = true;
      };
      auto work = [&](int i) {
        LaneSource source(queue, i);
        engines[i].work(source);
      };
      auto end = [&](int i) noexcept {
        if (prepared[i]) engines[i].end();
      };
      auto stop = [&]() noexcept { queue.cancel(); };
      LaneResults results;
      run_lanes(pool, 2, prepare, work, end, stop, results);
      if (refuse) {
        EXPECT_EQ(results.first_failed, refuser);
        EXPECT_FALSE(results.worked);
        EXPECT_FALSE(prepared[refuser]);
        EXPECT_EQ(x.c, x.c0) << "nothing written";
      } else {
        ASSERT_EQ(results.first_failed, -1);
        EXPECT_TRUE(x.exact());
      }
    }
  }
}

}  // namespace
}  // namespace tiledmm
