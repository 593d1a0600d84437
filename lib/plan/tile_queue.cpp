#include "plan/tile_queue.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.hpp"

namespace tiledmm {

TileQueue::TileQueue(const StreamPlan& plan, int lanes, StealCost cost, Clock now)
    : plan_(plan), cost_(cost), now_(std::move(now)) {
  require(lanes >= 1, Status::InvalidValue, "tile queue: ", lanes, " lanes (at least 1)");
  require(std::isfinite(cost.tile_s) && cost.tile_s > 0 && std::isfinite(cost.panel_s) &&
              cost.panel_s >= 0,
          Status::InvalidValue,
          "tile queue: a steal cost needs a tile's time above 0 and a panel's of 0 or more, "
          "both finite");
  if (!now_) {
    const auto t0 = std::chrono::steady_clock::now();
    now_ = [t0] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
  }
  require(plan.tiles_m >= 0 && plan.tiles_n >= 0 && plan.group >= 1, Status::InvalidValue,
          "tile queue: a plan of ", plan.tiles_m, " x ", plan.tiles_n, " tiles, groups of ",
          plan.group);
  ranges_.reserve(size_t(plan.tiles_n) + size_t(lanes) * 8);
  for (int64_t c = 0; c < plan.tiles_n; ++c) ranges_.push_back(Range{c, 0, plan.tiles_m, -1});
  unbegun_ = plan.tiles_m > 0 ? plan.tiles_n : 0;
  lanes_.resize(size_t(lanes));
  for (int i = 0; i < lanes; ++i) lanes_[size_t(i)].home = i;
}

int64_t TileQueue::claim(int lane) {
  Lane& l = lanes_[size_t(lane)];
  const int64_t d = lanes();
  auto begin = [&](int64_t r) {
    ranges_[size_t(r)].owner = lane;
    --unbegun_;
    return r;
  };
  // 1. Its home columns.
  while (l.home < plan_.tiles_n) {
    const int64_t c = l.home;
    l.home += d;
    if (ranges_[size_t(c)].owner < 0 && ranges_[size_t(c)].front < ranges_[size_t(c)].back)
      return begin(c);
  }
  // 2. A column no lane has begun, from the last one down.
  for (int64_t c = plan_.tiles_n - 1; unbegun_ > 0 && c >= 0; --c) {
    if (ranges_[size_t(c)].owner < 0 && ranges_[size_t(c)].front < ranges_[size_t(c)].back)
      return begin(c);
  }
  // 3. The back half of the range whose taking gains the most, if any does. A lane that
  // has had no tile yet counts no panel: the cut was planned for every lane, each with
  // its panels, and a lane left idle is the largest loss.
  const double now = now_();
  const bool idle = l.count.tiles == 0;
  const double own_pace = pace(l, now);
  int64_t best = -1, most = 0;
  double best_gain = 0;
  for (size_t r = 0; r < ranges_.size(); ++r) {
    const int64_t left = ranges_[r].back - ranges_[r].front, half = left / 2;
    if (half < 1 || ranges_[r].owner < 0) continue;
    const double owner_pace = pace(lanes_[size_t(ranges_[r].owner)], now);
    const double panel = idle || ranges_[r].column == l.last_column ? 0.0 : cost_.panel_s;
    const double shared =
        std::max(double(left - half) * owner_pace, panel + double(half) * own_pace);
    const double gain = double(left) * owner_pace - shared;
    if (gain > best_gain * (1 + 1e-12) || (best >= 0 && gain >= best_gain && left > most))
      best = int64_t(r), most = left, best_gain = gain;
  }
  if (best < 0) return -1;
  const Range& victim = ranges_[size_t(best)];
  const int64_t middle = victim.front + (most + 1) / 2;  // its lane keeps the front half
  const Range stolen{victim.column, middle, victim.back, lane};
  // The new range first: if it cannot be stored (bad_alloc), no tile has left the victim.
  ranges_.push_back(stolen);
  ranges_[size_t(best)].back = middle;
  ++l.count.steals;
  return int64_t(ranges_.size()) - 1;
}

double TileQueue::pace(const Lane& l, double now) const {
  if (l.count.tiles <= 0) return cost_.tile_s;
  return std::max(cost_.tile_s, (now - l.first_s) / double(l.count.tiles));
}

bool TileQueue::next(int lane, StreamUnit& unit) {
  require(lane >= 0 && lane < lanes(), Status::Internal, "tile queue: no lane ", lane);
  std::lock_guard<std::mutex> lock(mutex_);
  if (cancelled_) return false;
  Lane& l = lanes_[size_t(lane)];
  if (l.done) return false;
  if (l.range < 0 || ranges_[size_t(l.range)].front >= ranges_[size_t(l.range)].back) {
    l.range = claim(lane);
    if (l.range < 0) {
      l.done = true;  // its walk ends here (UnitSource: never true again)
      return false;
    }
    l.fresh = ranges_[size_t(l.range)].column != l.last_column;
  }
  Range& r = ranges_[size_t(l.range)];
  const int64_t size = l.fresh || !plan_.b_resident ? plan_.group : 1;
  unit = StreamUnit{r.column, r.front, std::min(r.front + size, r.back)};
  r.front = unit.t1;
  if (l.count.tiles == 0) l.first_s = now_();
  l.count.columns += l.fresh;
  l.count.tiles += unit.t1 - unit.t0;
  ++l.count.units;
  l.fresh = false;
  l.last_column = unit.column;
  return true;
}

void TileQueue::cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_ = true;
}

bool TileQueue::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

TileQueue::LaneCount TileQueue::count(int lane) const {
  require(lane >= 0 && lane < lanes(), Status::Internal, "tile queue: no lane ", lane);
  std::lock_guard<std::mutex> lock(mutex_);
  return lanes_[size_t(lane)].count;
}

}  // namespace tiledmm
