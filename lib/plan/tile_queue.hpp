// The tiles of one streamed product shared by several engines ("lanes", one per device
// of a multi-device handle), handed out as each engine gets to them, so that a slower or
// busier device takes fewer (host C++, no CUDA: unit-tested in
// tests/plan/test_tile_queue.cpp).
//
// Every lane walks the same StreamPlan (walk_stream_units) over the units its next()
// returns. A lane works down a range of row tiles of one column tile, from its front:
// its first unit there is plan.group row tiles (the group that hides the upload of the
// column's panel of op(B)), the later ones one row tile each (streaming B: a group each).
// A lane that has no range left takes, in this order:
//   1. its home columns: lane i of D starts on column i, then i + D, i + 2D, ... (so the
//      lanes start apart and each uploads panels no other lane needs);
//   2. a column no lane has begun, from the last one down (the columns the others would
//      reach last);
//   3. the back half of a range, which its lane then ends at the middle, where that ends
//      the range sooner: its lane would need the tiles left at its pace (seconds since
//      its first unit per tile handed to it, at least StealCost::tile_s); taken, the
//      later of its front half at that pace and this lane's panel of op(B) (StealCost::
//      panel_s, unless the range is in the column of its last unit) and the back half at
//      this lane's own pace (no panel for a lane that has had no tile yet: the cut was
//      planned for every lane). Of those, the one that gains the most (then the longest). A steal
//      that costs a panel for a tile or two does not pay: with the default cost (tile 1,
//      panel 0) any range of two tiles or more does, the longest first.
// A lane gets nothing more when no range has a tile left, or no steal pays, or after
// cancel() (a lane failed: the others finish the units they hold and stop); once told
// so, it is told so on every later call (its walk has ended). Every tile is handed out
// once. A lane that declined a steal does not come back if the range's lane slows down
// later (a device that turns busy near the end): the owner finishes its range.
// One mutex; next() is called once per unit, a few thousand times per product at most.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "plan/stream_plan.hpp"
#include "plan/stream_schedule.hpp"

namespace tiledmm {

class TileQueue {
 public:
  // Seconds on some steady clock (the lanes' paces are measured with it); the default is
  // std::chrono::steady_clock's.
  using Clock = std::function<double()>;

  // Throws Error(InvalidValue) for lanes < 1, a plan with a negative count of tiles, or
  // a cost with tile_s <= 0 or panel_s < 0, or either not finite.
  TileQueue(const StreamPlan& plan, int lanes, StealCost cost = StealCost(), Clock now = Clock());
  TileQueue(const TileQueue&) = delete;
  TileQueue& operator=(const TileQueue&) = delete;

  // The next unit of `lane` (0 <= lane < lanes()), or false when there is none.
  bool next(int lane, StreamUnit& unit);

  // Hands out nothing more, to any lane. Units already handed out are the lanes' to
  // finish.
  void cancel();
  bool cancelled() const;

  // What a lane took so far.
  struct LaneCount {
    int64_t tiles = 0;    // row tiles handed to it
    int64_t units = 0;    // units (calls of next that returned one)
    int64_t columns = 0;  // ranges it began in a column other than its last: panels of op(B)
    int64_t steals = 0;   // ranges it took from another lane (rule 3)
  };
  LaneCount count(int lane) const;
  int lanes() const { return int(lanes_.size()); }

 private:
  // Row tiles [front, back) of a column tile, not yet handed out, worked by `owner`
  // (-1: a column no lane has begun).
  struct Range {
    int64_t column, front, back;
    int owner;
  };
  struct Lane {
    int64_t range = -1;        // its range in ranges_, or -1
    int64_t home = 0;          // its next home column
    int64_t last_column = -1;  // the column of its last unit
    bool fresh = false;        // its next unit is the first of a column
    double first_s = 0;        // when it got its first unit (count.tiles > 0)
    bool done = false;         // next() said no more: it says so from then on
    LaneCount count;
  };

  int64_t claim(int lane);  // a range for the lane (rules 1-3), or -1; mutex_ held
  double pace(const Lane& l, double now) const;  // seconds a tile, at least cost_.tile_s

  StreamPlan plan_;
  StealCost cost_;
  Clock now_;
  mutable std::mutex mutex_;
  std::vector<Range> ranges_;  // one per column tile first (index = column), then stolen halves
  std::vector<Lane> lanes_;
  int64_t unbegun_ = 0;  // columns no lane has begun
  bool cancelled_ = false;
};

// One lane's view of a TileQueue: the source walk_stream_units pulls from.
class LaneSource final : public UnitSource {
 public:
  LaneSource(TileQueue& queue, int lane) : queue_(queue), lane_(lane) {}
  bool next(StreamUnit& unit) override { return queue_.next(lane_, unit); }

 private:
  TileQueue& queue_;
  int lane_;
};

}  // namespace tiledmm
