// Several lanes of one call, each on a thread of its own (a multi-device handle runs one
// per device: its engine's walk over a shared TileQueue), in two phases: every lane
// prepares (its allocations), and only if every one succeeded do they work. So a call
// that cannot get all its memory fails before any lane writes the caller's C, and a lane
// that fails while working lets the others finish what they hold (stop() tells them to
// take nothing more) and is reported once all have ended: no work in flight on return.
// Host C++: unit-tested in tests/core/test_lanes.cpp.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <vector>

#include "core/error.hpp"
#include "core/worker_pool.hpp"

namespace tiledmm {

// The packing threads of lane i of `lanes` when a handle has `total`: an even split,
// the first total % lanes lanes one more, every lane at least one.
inline int lane_threads(int total, int lanes, int i) {
  if (lanes <= 0) return 1;
  const int share = total / lanes + (i < total % lanes ? 1 : 0);
  return share > 0 ? share : 1;
}

// How the lanes of one run ended.
struct LaneResults {
  std::vector<std::exception_ptr> errors;  // per lane: what its prepare or work threw, or null
  int first_failed = -1;                   // the lane that failed first in time; -1: none
  bool worked = false;                     // whether the work phase ran (every prepare succeeded)
};

namespace detail {

// Waits until every lane has prepared; whether all of them succeeded.
class LaneBarrier {
 public:
  explicit LaneBarrier(int lanes) : waiting_(lanes) {}
  bool arrive(bool ok) {
    std::unique_lock<std::mutex> lock(mutex_);
    all_ok_ = all_ok_ && ok;
    if (--waiting_ == 0) {
      ready_.notify_all();
    } else {
      ready_.wait(lock, [&] { return waiting_ == 0; });
    }
    return all_ok_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  int waiting_;
  bool all_ok_ = true;
};

}  // namespace detail

// Runs lanes 0..lanes-1 on threads of `pool` (lane 0 on the calling thread): each calls
// prepare(lane); when every lane has prepared without throwing, each calls work(lane);
// last, whatever happened, each calls end(lane) on the same thread as its prepare (an
// engine taken in prepare is released there: a mutex is the locking thread's to unlock).
// On the first throw, from any lane and either phase, stop() is called once. end() and
// stop() must not throw (a shared queue's cancel(), an engine's release). Returns when
// every lane has returned, with results.errors resized to `lanes`. Where the pool cannot
// start a thread for every lane no lane runs (no prepare, no end), and every lane's
// error is Error(OutOfMemory). `pool` is the lanes' alone while they run: WorkerPool's
// loops do not nest, so a lane whose work runs a parallel loop of its own (packing
// threads) takes another pool for it, never this one.
template <class Prepare, class Work, class End, class Stop>
void run_lanes(WorkerPool& pool, int lanes, Prepare& prepare, Work& work, End& end, Stop& stop,
               LaneResults& results) {
  results.errors.assign(size_t(lanes > 0 ? lanes : 0), nullptr);
  results.first_failed = -1;
  results.worked = false;
  if (lanes <= 0) return;
  if (!pool.reserve(lanes - 1)) {
    std::exception_ptr e;
    try {
      fail(Status::OutOfMemory, "could not start a host thread for each of ", lanes, " devices");
    } catch (...) {
      e = std::current_exception();
    }
    for (std::exception_ptr& x : results.errors) x = e;
    results.first_failed = 0;
    return;
  }
  detail::LaneBarrier barrier(lanes);
  std::atomic<int> first{-1};
  std::atomic<bool> worked{false};
  auto failed = [&](int lane) {
    results.errors[size_t(lane)] = std::current_exception();
    int none = -1;
    if (first.compare_exchange_strong(none, lane)) stop();
  };
  auto lane_task = [&](int lane) {
    bool ok = true;
    try {
      prepare(lane);
    } catch (...) {
      ok = false;
      failed(lane);
    }
    if (barrier.arrive(ok)) {
      worked.store(true);
      try {
        work(lane);
      } catch (...) {
        failed(lane);
      }
    }
    end(lane);
  };
  pool.run(lanes, lane_task);  // the tasks catch everything: run() cannot fail
  results.first_failed = first.load();
  results.worked = worked.load();
}

}  // namespace tiledmm
