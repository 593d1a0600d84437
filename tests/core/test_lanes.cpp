// The lanes of a multi-device call (lib/core/lanes.hpp) over a shared TileQueue, with
// simulated engines: every lane on its own thread and all of them ended before
// run_lanes returns; a lane failing mid-call is the error reported, the queue stops
// handing out, the others finish what they hold, and the same pool runs the next call
// whole; a failed prepare (allocation) stops every lane before any works; each lane ends
// on its own thread whatever happened; the packing threads split evenly.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/lanes.hpp"
#include "core/worker_pool.hpp"
#include "plan/stream_plan.hpp"
#include "plan/tile_queue.hpp"

namespace tiledmm {
namespace {

StreamPlan grid(int64_t tiles_m, int64_t tiles_n) {
  StreamPlan s;
  s.tile_m = s.tile_n = 64;
  s.chunk_k = 64;
  s.tiles_m = tiles_m;
  s.tiles_n = tiles_n;
  s.chunks = 1;
  s.group = 2;
  return s;
}

// What the simulated engines did: the tiles each lane finished, per lane in order.
struct Done {
  std::mutex mutex;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> tiles;  // (column, row tile)
  explicit Done(int lanes) : tiles(size_t(lanes)) {}
  void add(int lane, const StreamUnit& u) {
    std::lock_guard<std::mutex> lock(mutex);
    for (int64_t t = u.t0; t < u.t1; ++t) tiles[size_t(lane)].emplace_back(u.column, t);
  }
};

std::string what(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

// Every lane runs on a thread of its own, all at once (each waits in work() until all
// have started it), and every lane has ended when run_lanes returns.
TEST(Lanes, EveryLaneOnItsOwnThreadAndAllEndedOnReturn) {
  WorkerPool pool;
  for (int lanes : {1, 2, 4, 8}) {
    std::vector<std::thread::id> ids(static_cast<size_t>(lanes));
    std::atomic<int> started{0}, ended{0};
    auto prepare = [&](int lane) { ids[size_t(lane)] = std::this_thread::get_id(); };
    auto work = [&](int lane) {
      started.fetch_add(1);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (started.load() < lanes && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(2 * lane));
      ended.fetch_add(1);
    };
    auto end = [](int) {};
    auto stop = [] {};
    LaneResults r;
    run_lanes(pool, lanes, prepare, work, end, stop, r);
    EXPECT_EQ(ended.load(), lanes) << "every lane ended before run_lanes returned";
    EXPECT_EQ(started.load(), lanes);
    EXPECT_TRUE(r.worked);
    EXPECT_EQ(r.first_failed, -1);
    ASSERT_EQ(r.errors.size(), size_t(lanes));
    for (const std::exception_ptr& e : r.errors) EXPECT_FALSE(e);
    EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), size_t(lanes));
  }
}

// Simulated engines pull units from a shared queue; lane 1 throws at its third unit.
// The error reported is lane 1's; stop() cancels the queue, after which no lane gets a
// unit (every tile handed out was done, but lane 1's last); the other lanes finish the
// units they hold (every tile done once at most); every lane has returned. The same pool and
// a new queue then run a whole product.
TEST(Lanes, ALaneFailingMidCallStopsTheOthersAndIsReported) {
  WorkerPool pool;
  const StreamPlan plan = grid(40, 6);
  for (int round = 0; round < 20; ++round) {
    const int lanes = 3;
    TileQueue queue(plan, lanes);
    Done done(lanes);
    auto prepare = [](int) {};
    // The other lanes take one unit each, then wait for lane 1 to fail (the queue
    // cancelled): lane 1 always gets its three units, however the threads are scheduled.
    auto work = [&](int lane) {
      StreamUnit u;
      int units = 0;
      while (queue.next(lane, u)) {
        if (lane == 1 && ++units == 3) throw Error(Status::Cuda, "lane 1: a simulated failure");
        done.add(lane, u);
        if (lane != 1) {
          while (!queue.cancelled()) std::this_thread::yield();
        }
      }
    };
    auto end = [](int) {};
    auto stop = [&] { queue.cancel(); };
    LaneResults r;
    run_lanes(pool, lanes, prepare, work, end, stop, r);
    EXPECT_TRUE(r.worked);
    ASSERT_EQ(r.first_failed, 1);
    EXPECT_NE(what(r.errors[1]).find("simulated"), std::string::npos);
    EXPECT_FALSE(r.errors[0]);
    EXPECT_FALSE(r.errors[2]);
    EXPECT_TRUE(queue.cancelled());
    std::set<std::pair<int64_t, int64_t>> all;
    size_t count = 0;
    for (const auto& lane : done.tiles) {
      all.insert(lane.begin(), lane.end());
      count += lane.size();
    }
    EXPECT_EQ(all.size(), count) << "a tile done twice";
    EXPECT_EQ(done.tiles[1].size(), 3u) << "lane 1's first two units: a group, then one tile";
    EXPECT_LT(count, size_t(plan.tiles())) << "the call stopped early";
    int64_t handed = 0;
    for (int lane = 0; lane < lanes; ++lane) handed += queue.count(lane).tiles;
    EXPECT_EQ(handed, int64_t(count) + 1) << "handed out: the tiles done and lane 1's last unit";

    // The next call on the same pool: every tile, once.
    TileQueue again(plan, lanes);
    Done whole(lanes);
    auto work2 = [&](int lane) {
      StreamUnit u;
      while (again.next(lane, u)) whole.add(lane, u);
    };
    auto stop2 = [&] { again.cancel(); };
    LaneResults r2;
    run_lanes(pool, lanes, prepare, work2, end, stop2, r2);
    EXPECT_EQ(r2.first_failed, -1);
    std::set<std::pair<int64_t, int64_t>> every;
    for (const auto& lane : whole.tiles) every.insert(lane.begin(), lane.end());
    EXPECT_EQ(int64_t(every.size()), plan.tiles());
  }
}

// A lane whose prepare (its allocations) fails: no lane works, the error is that lane's,
// stop() is called, and the others' prepares ran (their allocations are theirs to free).
TEST(Lanes, AFailedPrepareStopsEveryLaneBeforeAnyWorks) {
  WorkerPool pool;
  for (int failing = 0; failing < 4; ++failing) {
    std::atomic<int> prepared{0}, worked{0}, stops{0};
    auto prepare = [&](int lane) {
      prepared.fetch_add(1);
      if (lane == failing) fail(Status::OutOfMemory, "lane ", lane, ": no device memory");
    };
    auto work = [&](int) { worked.fetch_add(1); };
    auto end = [](int) {};
    auto stop = [&] { stops.fetch_add(1); };
    LaneResults r;
    run_lanes(pool, 4, prepare, work, end, stop, r);
    EXPECT_EQ(prepared.load(), 4);
    EXPECT_EQ(worked.load(), 0) << "a lane worked after lane " << failing << " failed to prepare";
    EXPECT_FALSE(r.worked);
    EXPECT_EQ(r.first_failed, failing);
    EXPECT_EQ(stops.load(), 1);
    ASSERT_TRUE(r.errors[size_t(failing)]);
    EXPECT_NE(what(r.errors[size_t(failing)]).find("no device memory"), std::string::npos);
  }
}

// Two lanes failing: stop() once, both errors kept, first_failed the earlier.
TEST(Lanes, TwoFailuresStopOnceAndKeepBoth) {
  WorkerPool pool;
  std::atomic<int> stops{0};
  auto prepare = [](int) {};
  // Lane 1 throws once lane 0's failure has called stop(): its error comes second.
  auto work = [&](int lane) {
    if (lane == 0) throw std::runtime_error("lane 0");
    while (stops.load() == 0) std::this_thread::yield();
    throw std::runtime_error("lane " + std::to_string(lane));
  };
  auto end = [](int) {};
  auto stop = [&] { stops.fetch_add(1); };
  LaneResults r;
  run_lanes(pool, 2, prepare, work, end, stop, r);
  EXPECT_EQ(stops.load(), 1);
  EXPECT_EQ(r.first_failed, 0);
  EXPECT_EQ(what(r.errors[0]), "lane 0");
  EXPECT_EQ(what(r.errors[1]), "lane 1");
}

// end(lane) runs exactly once per lane, on the thread that ran its prepare, whether
// every lane succeeded, a prepare failed (no work) or a work failed: so an engine taken
// in prepare (a mutex) can be released by the thread that took it.
TEST(Lanes, EndRunsOnceOnEachLanesOwnThread) {
  WorkerPool pool;
  for (int failing_phase : {0, 1, 2}) {  // none, lane 2's prepare, lane 1's work
    const int lanes = 4;
    std::vector<std::thread::id> prepared(static_cast<size_t>(lanes)),
        ended(static_cast<size_t>(lanes));
    std::vector<std::atomic<int>> ends(static_cast<size_t>(lanes));
    auto prepare = [&](int lane) {
      prepared[size_t(lane)] = std::this_thread::get_id();
      if (failing_phase == 1 && lane == 2) throw std::runtime_error("prepare");
    };
    auto work = [&](int lane) {
      if (failing_phase == 2 && lane == 1) throw std::runtime_error("work");
    };
    auto end = [&](int lane) {
      ended[size_t(lane)] = std::this_thread::get_id();
      ends[size_t(lane)].fetch_add(1);
    };
    auto stop = [] {};
    LaneResults r;
    run_lanes(pool, lanes, prepare, work, end, stop, r);
    for (int lane = 0; lane < lanes; ++lane) {
      EXPECT_EQ(ends[size_t(lane)].load(), 1) << "phase " << failing_phase << " lane " << lane;
      EXPECT_EQ(ended[size_t(lane)], prepared[size_t(lane)])
          << "lane " << lane << " ended on another thread than the one that prepared it";
    }
    EXPECT_EQ(r.worked, failing_phase != 1);
    EXPECT_EQ(r.first_failed, failing_phase == 0 ? -1 : failing_phase == 1 ? 2 : 1);
  }
}

TEST(Lanes, PackingThreadsSplitEvenly) {
  for (int total : {1, 2, 7, 16, 48}) {
    for (int lanes : {1, 2, 3, 4, 8}) {
      int sum = 0, low = total, high = 0;
      for (int i = 0; i < lanes; ++i) {
        const int t = lane_threads(total, lanes, i);
        EXPECT_GE(t, 1);
        sum += t;
        low = std::min(low, t);
        high = std::max(high, t);
      }
      EXPECT_EQ(sum, std::max(total, lanes)) << total << " threads, " << lanes << " lanes";
      EXPECT_LE(high - low, 1);
    }
  }
}

}  // namespace
}  // namespace tiledmm
