// blas/support/counters: per-thread counters; nothing lost when threads exit, resets,
// readers meanwhile, fork().
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "support/counters.hpp"
#include "tiledmm/tiledmm_blas.h"

namespace {

using tiledmm::blas::Counter;
using tiledmm::blas::Counters;
using tiledmm::blas::Routine;

// ---- Counters ---------------------------------------------------------------------

tmm_blas_counters read_counters(int routine = TMM_BLAS_ALL) {
  tmm_blas_counters c{};
  EXPECT_TRUE(Counters::read(routine, c));
  return c;
}

// What one thread counts in count_some: `calls` fallback calls of 3 flops through
// sgemm_, one quick return through cblas_sgemm, and tiledmm's largest k.
void count_some(int calls, int64_t k) {
  for (int i = 0; i < calls; ++i)
    Counters::add_call(Routine::kSgemm, Counter::kFallbackCalls, Counter::kFallbackFlops, 3);
  Counters::add(Routine::kCblasSgemm, Counter::kNoop);
  Counters::note_k(Routine::kSgemm, k);
}

void run_threads(int threads, int calls, int64_t k) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(count_some, calls, k + t);
  for (auto& th : pool) th.join();
}

TEST(BlasCounters, ThreadsThatExitedKeepTheirCounts) {
  Counters::reset();
  EXPECT_EQ(read_counters().fallback_calls, 0u);
  constexpr int kThreads = 8, kCalls = 1000;
  // Every thread has exited before each read; from the second round on, the new
  // threads take the blocks the old ones gave back.
  for (int round = 1; round <= 3; ++round) {
    run_threads(kThreads, kCalls, 100 * round);
    const auto all = read_counters();
    EXPECT_EQ(all.fallback_calls, uint64_t(round * kThreads * kCalls)) << round;
    EXPECT_EQ(all.fallback_flops, uint64_t(3 * round * kThreads * kCalls)) << round;
    EXPECT_EQ(all.noop_calls, uint64_t(round * kThreads)) << round;
    EXPECT_EQ(all.tiledmm_max_k, 100 * round + kThreads - 1) << round;
    EXPECT_EQ(read_counters(TMM_BLAS_SGEMM).fallback_calls, all.fallback_calls);
    EXPECT_EQ(read_counters(TMM_BLAS_SGEMM).noop_calls, 0u);
    EXPECT_EQ(read_counters(TMM_BLAS_CBLAS_SGEMM).noop_calls, all.noop_calls);
  }
  tmm_blas_counters unknown{};
  EXPECT_FALSE(Counters::read(int(Routine::kCount), unknown));
}

// Each wheel name (support/wheel_names.hpp) has a routine of its own, named as the
// library exports it, whose twin is the standard name without the prefix; a count
// under it is not its twin's.
TEST(BlasCounters, EveryWheelNameCountsApartFromItsTwin) {
  using tiledmm::blas::routine_name;
  using tiledmm::blas::standard_twin;
  const std::string prefix = "scipy_";
  int wheels = 0;
  for (int i = 0; i < int(Routine::kCount); ++i) {
    const Routine r = Routine(i);
    const std::string name = routine_name(r);
    if (!tiledmm::blas::is_wheel(r)) {
      EXPECT_EQ(name.rfind(prefix, 0), std::string::npos) << name;
      EXPECT_EQ(standard_twin(r), r) << name;
      continue;
    }
    ++wheels;
    ASSERT_EQ(name.rfind(prefix, 0), 0u) << name;
    const Routine twin = standard_twin(r);
    EXPECT_EQ(routine_name(twin), name.substr(prefix.size())) << name;
    EXPECT_EQ(tiledmm::blas::is_cblas(r), tiledmm::blas::is_cblas(twin)) << name;
    EXPECT_EQ(tiledmm::blas::is_wide(r), tiledmm::blas::is_wide(twin)) << name;
    Counters::reset();
    Counters::add(r, Counter::kInvalid);
    EXPECT_EQ(read_counters(i).invalid_calls, 1u) << name;
    EXPECT_EQ(read_counters(int(twin)).invalid_calls, 0u) << name;
  }
  EXPECT_EQ(wheels, 8);
  EXPECT_EQ(std::string(routine_name(Routine(TMM_BLAS_SCIPY_CBLAS_DGEMM_64))),
            "scipy_cblas_dgemm64_");
}

TEST(BlasCounters, ResetZeroesEveryThreadsCounts) {
  Counters::reset();
  count_some(5, 7);         // this thread's block
  run_threads(4, 50, 900);  // blocks given back
  // A thread alive across the reset, with counts before and after it.
  std::atomic<int> step{0};
  std::thread live([&] {
    count_some(20, 1000);
    step = 1;
    while (step.load() != 2) std::this_thread::yield();
    count_some(3, 11);
  });
  while (step.load() != 1) std::this_thread::yield();
  EXPECT_EQ(read_counters().fallback_calls, 5u + 4 * 50 + 20);
  EXPECT_EQ(read_counters().tiledmm_max_k, 1000);
  Counters::reset();
  const auto zero = read_counters();
  EXPECT_EQ(zero.fallback_calls, 0u);
  EXPECT_EQ(zero.fallback_flops, 0u);
  EXPECT_EQ(zero.noop_calls, 0u);
  EXPECT_EQ(zero.tiledmm_max_k, 0);
  step = 2;
  live.join();
  count_some(2, 5);
  run_threads(2, 10, 3);
  const auto after = read_counters();
  EXPECT_EQ(after.fallback_calls, 3u + 2 + 2 * 10);
  EXPECT_EQ(after.fallback_flops, 3u * (3 + 2 + 2 * 10));
  EXPECT_EQ(after.noop_calls, 4u);
  EXPECT_EQ(after.tiledmm_max_k, 11);
  EXPECT_TRUE(Counters::ready());
}

TEST(BlasCounters, ReadersWhileThreadsCount) {
  Counters::reset();
  constexpr int kThreads = 6, kCalls = 20000;
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t)
    pool.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      count_some(kCalls, 1);
    });
  go = true;
  uint64_t last = 0;
  bool monotonic = true;
  for (int i = 0; i < 200; ++i) {
    const uint64_t now = read_counters().fallback_calls;
    monotonic = monotonic && now >= last && now <= uint64_t(kThreads) * kCalls;
    last = now;
  }
  for (auto& th : pool) th.join();
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(read_counters().fallback_calls, uint64_t(kThreads) * kCalls);
}

// Reads while another thread counts and resets over and over: a read never shows more
// than the calls made (a reset between a read's loads of a counter's value and of its
// base once made the difference wrap to near 2^64). The counting thread resets too,
// so that its values change between those two loads on a machine of two CPUs.
TEST(BlasCounters, ReadsDuringResetsNeverExceedTheCallsMade) {
  Counters::reset();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> made{0};
  std::thread counter([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      Counters::add_call(Routine::kSgemm, Counter::kFallbackCalls, Counter::kFallbackFlops, 3);
      made.fetch_add(1, std::memory_order_relaxed);
      Counters::reset();
    }
  });
  while (made.load() == 0) std::this_thread::yield();
  uint64_t worst = 0, worst_flops = 0;
  int reads = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  for (; reads < 100000 || std::chrono::steady_clock::now() < end; ++reads) {
    const auto c = read_counters(TMM_BLAS_SGEMM);
    worst = std::max(worst, c.fallback_calls);
    worst_flops = std::max(worst_flops, c.fallback_flops);
  }
  stop = true;
  counter.join();
  EXPECT_LE(worst, made.load()) << "of " << reads << " reads";
  EXPECT_LE(worst_flops, 3 * made.load());
}

// TSan cannot start threads in the child of a multi-threaded fork().
#if defined(__SANITIZE_THREAD__)
#define TMM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TMM_TSAN 1
#endif
#endif
#ifdef TMM_TSAN
constexpr int kChildThreadCalls = 0;
#else
constexpr int kChildThreadCalls = 7;
#endif

// A child of fork() forked while other threads count: its one thread counts on in
// its block, a thread it starts gets one, and nothing waits for the parent's threads.
TEST(BlasCounters, ChildOfForkCounts) {
  Counters::reset();
  count_some(1, 1);
  std::atomic<bool> stop{false};
  std::atomic<int> running{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 3; ++t)
    pool.emplace_back([&] {
      count_some(1, 1);
      ++running;
      while (!stop.load()) count_some(100, 1);
    });
  // Forks while they count, not while they start: a sanitizer's runtime may hold its
  // own locks while a thread starts, and its child would wait for them for ever.
  while (running.load() != 3) std::this_thread::yield();
  for (int f = 0; f < 4; ++f) {
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(60);  // a deadlock fails the test instead of hanging it
      const uint64_t before = read_counters().fallback_calls;
      count_some(10, 1);
      if (kChildThreadCalls > 0) std::thread(count_some, kChildThreadCalls, 1).join();
      const uint64_t after = read_counters().fallback_calls;
      Counters::reset();
      count_some(4, 1);
      const bool ok =
          after - before == 10u + kChildThreadCalls && read_counters().fallback_calls == 4;
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "fork " << f;
  }
  stop = true;
  for (auto& th : pool) th.join();
}

}  // namespace
