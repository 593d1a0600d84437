// Internals tested directly, linked from the same objects as libtiledmm.so: the
// worker pool, the aliasing test and the problem's canonical form.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "error.hpp"
#include "gemm_problem.hpp"
#include "worker_pool.hpp"

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
  auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)); };
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

}  // namespace
}  // namespace tiledmm
