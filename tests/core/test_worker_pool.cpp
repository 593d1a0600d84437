// The worker pool (lib/core/worker_pool.hpp), linked from the library's own objects:
// every task runs once, on its own thread, and a task that throws is reported as a
// failed run, not propagated.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/worker_pool.hpp"

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

}  // namespace
}  // namespace tiledmm
