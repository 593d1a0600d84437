// The tiles of one streamed product shared by several engines (lib/plan/tile_queue.hpp),
// host C++: every tile handed out once whatever the interleaving, one lane walks the
// plan as the single-device engine does, the lanes start apart, a lane out of work takes
// the back half of the longest range (or, its cost weighed, only where that ends the
// range sooner), lanes of unequal speed finish together with tiles in proportion, and
// cancel() stops the handing out.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "plan/stream_plan.hpp"
#include "plan/stream_schedule.hpp"
#include "plan/tile_queue.hpp"

namespace tiledmm {
namespace {

StreamPlan grid(int64_t tiles_m, int64_t tiles_n, int64_t group, bool resident = true) {
  StreamPlan s;
  s.tile_m = 64;
  s.tile_n = 64;
  s.chunk_k = 32;
  s.tiles_m = tiles_m;
  s.tiles_n = tiles_n;
  s.chunks = 3;
  s.group = group;
  s.b_resident = resident;
  return s;
}

// Which lane each tile went to (-1: none), from units taken until none is left; checks
// that no tile is handed out twice and that units lie inside the grid.
struct Coverage {
  const StreamPlan& plan;
  std::vector<int> owner;
  explicit Coverage(const StreamPlan& p) : plan(p), owner(size_t(p.tiles()), -1) {}
  void take(int lane, const StreamUnit& u) {
    ASSERT_GE(u.column, 0);
    ASSERT_LT(u.column, plan.tiles_n);
    ASSERT_GE(u.t0, 0);
    ASSERT_LT(u.t0, u.t1) << "an empty unit";
    ASSERT_LE(u.t1, plan.tiles_m);
    for (int64_t t = u.t0; t < u.t1; ++t) {
      int& o = owner[size_t(u.column * plan.tiles_m + t)];
      EXPECT_EQ(o, -1) << "tile " << t << " of column " << u.column << " handed out twice";
      o = lane;
    }
  }
  bool all() const {
    return std::all_of(owner.begin(), owner.end(), [](int o) { return o >= 0; });
  }
};

// Lanes pulling in a random order (some lanes more often than others), over grids with
// ragged counts, one tile, one column, one row of tiles, more lanes than columns, both
// kinds of B, every group: each tile exactly once, each lane's tiles as its counts say,
// and nothing more for any lane once the queue is dry.
TEST(TileQueue, EveryTileExactlyOnce) {
  std::mt19937 rng(20261126);
  const std::tuple<int64_t, int64_t> grids[] = {{1, 1},  {7, 1},  {1, 9},  {13, 5},
                                                {64, 3}, {5, 64}, {33, 17}};
  for (const auto& [tm, tn] : grids) {
    for (int lanes = 1; lanes <= 8; ++lanes) {
      for (int64_t group : {1, 2, 4, 8}) {
        for (bool resident : {true, false}) {
          SCOPED_TRACE(std::to_string(tm) + " x " + std::to_string(tn) + " tiles, " +
                       std::to_string(lanes) + " lanes, group " + std::to_string(group) +
                       (resident ? "" : ", streaming B"));
          const StreamPlan plan = grid(tm, tn, group, resident);
          TileQueue q(plan, lanes);
          Coverage cover(plan);
          std::vector<bool> dry(size_t(lanes), false);
          std::discrete_distribution<int> pick(size_t(lanes), 0.0, 1.0,
                                               [](double x) { return 1.0 + 4.0 * x; });
          int dry_lanes = 0;
          while (dry_lanes < lanes) {
            const int lane = pick(rng);
            StreamUnit u;
            if (!q.next(lane, u)) {
              if (!dry[size_t(lane)]) ++dry_lanes;
              dry[size_t(lane)] = true;
              continue;
            }
            EXPECT_FALSE(dry[size_t(lane)]) << "a unit after the queue said none";
            cover.take(lane, u);
          }
          EXPECT_TRUE(cover.all()) << "a tile was never handed out";
          int64_t counted = 0;
          for (int lane = 0; lane < lanes; ++lane) {
            const int64_t mine = std::count(cover.owner.begin(), cover.owner.end(), lane);
            EXPECT_EQ(q.count(lane).tiles, mine);
            counted += q.count(lane).tiles;
          }
          EXPECT_EQ(counted, plan.tiles());
        }
      }
    }
  }
}

// Records a walk's steps as text (enough to tell two walks apart).
struct Trace {
  std::vector<std::string> steps;
  void begin_column(const StreamColumn& c) {
    steps.push_back("col " + std::to_string(c.index) + " panel " + std::to_string(c.panel));
  }
  void begin_group(const StreamColumn&, const StreamGroup& g) {
    steps.push_back("group " + std::to_string(g.first) + "-" + std::to_string(g.end) + " c" +
                    std::to_string(g.tiles[0].c_slot));
  }
  void begin_chunk(const StreamColumn&, const StreamGroup&, const StreamChunk& c) {
    steps.push_back("chunk " + std::to_string(c.index) + " b" + std::to_string(c.b_slot));
  }
  void product(const StreamColumn&, const StreamGroup&, const StreamChunk&, const StreamRowTile& t,
               int a_slot) {
    steps.push_back("tile " + std::to_string(t.index) + " a" + std::to_string(a_slot));
  }
  void end_chunk(const StreamColumn&, const StreamGroup&, const StreamChunk&) {}
  void end_group(const StreamColumn&, const StreamGroup&) {}
  void end_column(const StreamColumn&) { steps.push_back("end col"); }
};

// One lane: the single-device engine's walk, step for step (the walk over the queue's
// units is the walk over the whole plan).
TEST(TileQueue, OneLaneIsThePlanOrder) {
  for (const auto& [tm, tn] : {std::tuple<int64_t, int64_t>{1, 1}, {9, 4}, {30, 1}, {3, 7}}) {
    for (int64_t group : {1, 3, 8}) {
      for (bool resident : {true, false}) {
        const StreamPlan plan = grid(tm, tn, group, resident);
        const int64_t m = tm * plan.tile_m - 5, n = tn * plan.tile_n - 7, k = 90;
        Trace whole, queued;
        walk_stream_plan(plan, m, n, k, whole);
        TileQueue q(plan, 1);
        LaneSource source(q, 0);
        walk_stream_units(plan, m, n, k, source, queued);
        EXPECT_EQ(queued.steps, whole.steps)
            << tm << " x " << tn << " tiles, group " << group << " resident " << resident;
        EXPECT_EQ(q.count(0).columns, tn) << "one panel per column";
        EXPECT_EQ(q.count(0).steals, 0);
      }
    }
  }
}

// D lanes start on columns 0..D-1 (their home columns), whatever order they come in,
// with a group of row tiles from the top; then each goes on down its own column one
// tile at a time and moves to its next home column (i + D).
TEST(TileQueue, LanesStartOnDistinctColumnsAndKeepToTheirHomes) {
  const StreamPlan plan = grid(6, 8, 4);
  TileQueue q(plan, 4);
  StreamUnit u;
  for (int lane : {2, 0, 3, 1}) {
    ASSERT_TRUE(q.next(lane, u));
    EXPECT_EQ(u.column, lane);
    EXPECT_EQ(u.t0, 0);
    EXPECT_EQ(u.t1, 4) << "the first unit of a column is a group";
  }
  for (int64_t t = 4; t < 6; ++t) {
    ASSERT_TRUE(q.next(1, u));
    EXPECT_EQ(u.column, 1);
    EXPECT_EQ(u.t0, t);
    EXPECT_EQ(u.t1, t + 1) << "later units are one row tile";
  }
  ASSERT_TRUE(q.next(1, u));
  EXPECT_EQ(u.column, 5) << "lane 1 of 4: columns 1, 5";
  EXPECT_EQ(u.t1 - u.t0, 4);
  EXPECT_EQ(q.count(1).columns, 2);
  EXPECT_EQ(q.count(1).steals, 0);
}

// A lane whose home columns are done takes an unbegun column from the last one down,
// and when none is left the back half of the range with the most row tiles left (of at
// least two), whose lane stops at the middle; a range of one tile is not split.
TEST(TileQueue, StealsTheBackHalfOfTheLongestRange) {
  const StreamPlan plan = grid(10, 3, 2);
  TileQueue q(plan, 2);  // lane 0: columns 0, 2; lane 1: column 1
  StreamUnit u;
  ASSERT_TRUE(q.next(0, u));  // column 0, tiles 0-2
  ASSERT_TRUE(q.next(1, u));  // column 1, tiles 0-2
  EXPECT_EQ(u.column, 1);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(q.next(1, u));  // column 1 done
  EXPECT_EQ(u.t1, 10);
  ASSERT_TRUE(q.next(1, u));
  EXPECT_EQ(u.column, 2) << "lane 0's unbegun home column, taken from the back";
  EXPECT_EQ(u.t1 - u.t0, 2);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(q.next(1, u));  // column 2 done
  // Column 0 has tiles 2..9 left (8), in lane 0's range: lane 1 takes 6..9.
  ASSERT_TRUE(q.next(1, u));
  EXPECT_EQ(u.column, 0);
  EXPECT_EQ(u.t0, 6);
  EXPECT_EQ(u.t1, 8) << "a new column for lane 1: a group";
  EXPECT_EQ(q.count(1).steals, 1);
  EXPECT_EQ(q.count(1).columns, 3);
  std::vector<int64_t> lane0;
  while (q.next(0, u)) {
    EXPECT_EQ(u.column, 0);
    lane0.push_back(u.t0);
    if (lane0.size() > 10) break;
  }
  // Lane 0 keeps 2..5 (one tile a unit) and then steals from lane 1's 8..9 (two left):
  // the back half, tile 9, in a column it is already in (no group, no new panel).
  EXPECT_EQ(lane0, (std::vector<int64_t>{2, 3, 4, 5, 9}));
  EXPECT_EQ(q.count(0).steals, 1);
  EXPECT_EQ(q.count(0).columns, 1);
  ASSERT_TRUE(q.next(1, u));
  EXPECT_EQ(u.t0, 8);
  EXPECT_EQ(u.t1, 9);
  EXPECT_FALSE(q.next(1, u));
  EXPECT_FALSE(q.next(0, u));
}

// A simulated clock: lane i computes a row tile in 1 / speed[i] and uploads a panel in
// `panel` (time units); the lane whose clock is earliest pulls next, as the engines do
// when they have enqueued their last unit. Returns each lane's finishing time.
// `now`, where given, is set to the pulling lane's clock before each pull (the clock of
// a queue that weighs its steals).
std::vector<double> simulate(TileQueue& q, const std::vector<double>& speed, double panel,
                             double* now = nullptr) {
  const size_t lanes = speed.size();
  std::vector<double> clock(lanes, 0.0);
  std::vector<bool> done(lanes, false);
  for (;;) {
    size_t lane = lanes;
    for (size_t i = 0; i < lanes; ++i)
      if (!done[i] && (lane == lanes || clock[i] < clock[lane])) lane = i;
    if (lane == lanes) return clock;
    const int64_t columns = q.count(int(lane)).columns;
    if (now) *now = clock[lane];
    StreamUnit u;
    if (!q.next(int(lane), u)) {
      done[lane] = true;
      continue;
    }
    clock[lane] += double(u.t1 - u.t0) / speed[lane];
    if (q.count(int(lane)).columns > columns) clock[lane] += panel;
  }
}

// Lanes of speeds 1:3 and 1:1:1:4 (and one lane of a busy device at a tenth of the
// others' speed) finish within the longest unit a lane can hold at the end (a group,
// and one more tile, and a panel) of each other, with tiles in proportion to speed
// within that much work.
TEST(TileQueue, UnequalSpeedsFinishTogether) {
  const double panel = 2.0;
  for (const std::vector<double>& speed :
       {std::vector<double>{1, 3}, {1, 1, 1, 4}, {1, 1}, {0.1, 1, 1}, {3, 1, 2, 1, 1, 1, 1, 1}}) {
    for (bool resident : {true, false}) {
      const StreamPlan plan = grid(96, 10, 4, resident);
      TileQueue q(plan, int(speed.size()));
      const std::vector<double> finish = simulate(q, speed, panel);
      const double slowest = *std::min_element(speed.begin(), speed.end());
      const double unit = double(plan.group + 1) / slowest + panel;
      const auto [first, last] = std::minmax_element(finish.begin(), finish.end());
      EXPECT_LE(*last - *first, unit)
          << "lanes of speeds " << speed.size() << " resident " << resident << ": finish spread";
      double total_speed = 0;
      for (double s : speed) total_speed += s;
      for (size_t i = 0; i < speed.size(); ++i) {
        const double share = double(plan.tiles()) * speed[i] / total_speed;
        const double slack = speed[i] * (unit + panel * double(q.count(int(i)).columns));
        EXPECT_NEAR(double(q.count(int(i)).tiles), share, slack)
            << "lane " << i << " of speed " << speed[i];
      }
    }
  }
}

// A queue that weighs its steals (StealCost: a tile at speed 1, a panel of 6 tiles'
// time) against the plain rule: at every mix of speeds the last lane ends no later and
// fewer panels go up; where a steal costs a panel for a tile or two (one lane a fifth
// slower than three others: 3 tiles left when they end), none is taken; a busy lane (a
// tenth of the others' speed) still has its range taken from it.
TEST(TileQueue, WeighedStealsEndNoLaterWithFewerPanels) {
  const double panel = 6.0;
  for (const std::vector<double>& speed : {std::vector<double>{1, 1, 1, 0.8},
                                           {1, 3},
                                           {1, 1, 1, 4},
                                           {0.1, 1, 1},
                                           {3, 1, 2, 1, 1, 1, 1, 1},
                                           {1, 1, 1, 1}}) {
    for (int64_t group : {1, 4}) {
      const StreamPlan plan = grid(16, int64_t(speed.size()), group);
      TileQueue plain(plan, int(speed.size()));
      double now = 0;
      TileQueue weighed(plan, int(speed.size()), StealCost{1.0, panel}, [&now] { return now; });
      const std::vector<double> a = simulate(plain, speed, panel);
      const std::vector<double> b = simulate(weighed, speed, panel, &now);
      int64_t panels_a = 0, panels_b = 0, tiles = 0;
      for (size_t i = 0; i < speed.size(); ++i) {
        panels_a += plain.count(int(i)).columns;
        panels_b += weighed.count(int(i)).columns;
        tiles += weighed.count(int(i)).tiles;
      }
      SCOPED_TRACE(std::to_string(speed.size()) + " lanes, group " + std::to_string(group));
      EXPECT_EQ(tiles, plan.tiles());
      EXPECT_LE(*std::max_element(b.begin(), b.end()),
                *std::max_element(a.begin(), a.end()) + 1e-9);
      EXPECT_LE(panels_b, panels_a);
      if (speed == std::vector<double>{1, 1, 1, 0.8}) {
        int64_t steals = 0;
        for (size_t i = 0; i < speed.size(); ++i) steals += weighed.count(int(i)).steals;
        EXPECT_EQ(steals, 0);
        EXPECT_GT(panels_a, panels_b) << "the plain rule takes a panel for a tile or two";
      }
      if (speed[0] == 0.1) {
        EXPECT_LT(weighed.count(0).tiles, 8) << "the busy lane's column was shared";
      }
    }
  }
}

// Fewer columns than lanes, and a panel dearer than half a column: a lane that has had no
// tile yet still takes half a range (the cut was planned for every lane), so every
// lane computes; later, no lane takes a range in a column other than its own.
TEST(TileQueue, ALaneWithNoTileYetStealsWhateverThePanel) {
  const StreamPlan plan = grid(32, 2, 1);
  double now = 0;
  TileQueue q(plan, 4, StealCost{1.0, 100.0}, [&now] { return now; });
  const std::vector<double> finish = simulate(q, {1, 1, 1, 1.5}, 100.0, &now);
  int64_t tiles = 0;
  for (int lane = 0; lane < 4; ++lane) {
    EXPECT_GT(q.count(lane).tiles, 0) << "lane " << lane;
    EXPECT_EQ(q.count(lane).columns, 1) << "lane " << lane << ": a second panel";
    tiles += q.count(lane).tiles;
  }
  EXPECT_EQ(tiles, plan.tiles());
  EXPECT_LT(*std::max_element(finish.begin(), finish.end()), 100.0 + 32.0) << "one panel a lane";
}

// The cost is checked: a tile takes some time, a panel none or more.
TEST(TileQueue, StealCostIsChecked) {
  const StreamPlan plan = grid(4, 4, 2);
  EXPECT_THROW(TileQueue(plan, 2, StealCost{0.0, 1.0}), Error);
  EXPECT_THROW(TileQueue(plan, 2, StealCost{1.0, -1.0}), Error);
  EXPECT_THROW(TileQueue(plan, 2, StealCost{HUGE_VAL, 1.0}), Error);
  EXPECT_THROW(TileQueue(plan, 2, StealCost{1.0, HUGE_VAL}), Error);
  EXPECT_THROW(TileQueue(plan, 2, StealCost{std::nan(""), 1.0}), Error);
  EXPECT_NO_THROW(TileQueue(plan, 2, StealCost{1e-3, 0.0}));
}

// A lane told "no more" is told so on every later call (its walk has ended), though a
// steal would pay later: lane 0 ends its column while lane 1 has two tiles of its own
// left, not worth a panel of 100; then lane 1's pace shows a busy device, and lane 0 is
// still refused.
TEST(TileQueue, NoMoreStaysNoMore) {
  const StreamPlan plan = grid(4, 2, 1);
  double now = 0;
  TileQueue q(plan, 2, StealCost{1.0, 100.0}, [&now] { return now; });
  StreamUnit u;
  ASSERT_TRUE(q.next(0, u));  // column 0, tile 0
  ASSERT_TRUE(q.next(1, u));  // column 1, tile 0
  now = 1;
  ASSERT_TRUE(q.next(1, u));                              // column 1, tile 1
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.next(0, u));  // column 0, tiles 1-3
  EXPECT_FALSE(q.next(0, u)) << "two tiles of another column are not worth a panel of 100";
  now = 1e6;  // lane 1 now looks very slow: a steal would pay
  EXPECT_FALSE(q.next(0, u)) << "told no more before";
  while (q.next(1, u)) {
  }
  EXPECT_EQ(q.count(0).tiles + q.count(1).tiles, plan.tiles());
  EXPECT_EQ(q.count(1).tiles, 4);
}

// More lanes than tiles: each tile once, the lanes with none get nothing.
TEST(TileQueue, MoreLanesThanTiles) {
  const StreamPlan plan = grid(1, 2, 4);
  TileQueue q(plan, 5);
  Coverage cover(plan);
  StreamUnit u;
  for (int round = 0; round < 3; ++round) {
    for (int lane = 4; lane >= 0; --lane) {
      if (q.next(lane, u)) cover.take(lane, u);
    }
  }
  EXPECT_TRUE(cover.all());
  int64_t tiles = 0;
  for (int lane = 0; lane < 5; ++lane) tiles += q.count(lane).tiles;
  EXPECT_EQ(tiles, 2);
  const StreamPlan empty = grid(0, 3, 2);
  TileQueue none(empty, 2);
  EXPECT_FALSE(none.next(0, u));
  EXPECT_FALSE(none.next(1, u));
}

// After cancel() no lane gets a unit, and the counts stay as they were.
TEST(TileQueue, CancelStopsHandingOut) {
  const StreamPlan plan = grid(20, 4, 2);
  TileQueue q(plan, 3);
  StreamUnit u;
  ASSERT_TRUE(q.next(0, u));
  ASSERT_TRUE(q.next(1, u));
  ASSERT_TRUE(q.next(1, u));
  EXPECT_FALSE(q.cancelled());
  q.cancel();
  EXPECT_TRUE(q.cancelled());
  for (int lane = 0; lane < 3; ++lane) EXPECT_FALSE(q.next(lane, u));
  EXPECT_EQ(q.count(0).tiles, 2);
  EXPECT_EQ(q.count(1).tiles, 3);
  EXPECT_EQ(q.count(2).tiles, 0);
}

// Lanes on threads of their own, pulling as fast as they can: each tile exactly once.
TEST(TileQueue, LanesOnThreadsTakeEachTileOnce) {
  const StreamPlan plan = grid(500, 37, 4);
  for (int lanes : {2, 4, 8}) {
    TileQueue q(plan, lanes);
    std::vector<std::vector<StreamUnit>> taken(static_cast<size_t>(lanes));
    std::vector<std::thread> threads;
    for (int lane = 0; lane < lanes; ++lane) {
      threads.emplace_back([&, lane] {
        StreamUnit u;
        while (q.next(lane, u)) taken[size_t(lane)].push_back(u);
      });
    }
    for (std::thread& t : threads) t.join();
    Coverage cover(plan);
    for (int lane = 0; lane < lanes; ++lane)
      for (const StreamUnit& u : taken[size_t(lane)]) cover.take(lane, u);
    EXPECT_TRUE(cover.all());
  }
}

TEST(TileQueue, BadArgumentsAreErrors) {
  const StreamPlan plan = grid(4, 4, 2);
  EXPECT_THROW(TileQueue(plan, 0), Error);
  StreamPlan bad = plan;
  bad.group = 0;
  EXPECT_THROW(TileQueue(bad, 2), Error);
  TileQueue q(plan, 2);
  StreamUnit u;
  EXPECT_THROW(q.next(2, u), Error);
  EXPECT_THROW(q.next(-1, u), Error);
}

}  // namespace
}  // namespace tiledmm
