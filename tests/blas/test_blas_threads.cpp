// libtiledmm_blas under threads and fork(): several threads calling sgemm_ and
// cblas_sgemm (dgemm_ and cblas_dgemm: every test but the settings' load is written
// once over the element type, BlasThreads/Single.* and BlasThreads/Double.*) at once (more threads
// than handles, so some wait for one), a child of fork() calling BLAS after its parent used tiledmm
// (also while other threads of the parent were in the middle of calls), and the flop threshold
// splitting calls exactly. Each scenario runs in its own process with its own settings
// (tests/blas/CMakeLists.txt picks them with --gtest_filter).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "blas_test_util.hpp"
#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

namespace {

using tmm_blas_test::Blas;
using tmm_test::GemmCase;

template <class T = float>
typename Blas<T>::Case make_case(uint32_t seed, int64_t m, int64_t n, int64_t k) {
  typename Blas<T>::Case g;
  g.layout = seed % 2 ? TMM_ROW_MAJOR : TMM_COL_MAJOR;
  g.ta = seed % 3 ? TMM_NO_TRANS : TMM_TRANS;
  g.tb = seed % 5 ? TMM_NO_TRANS : TMM_TRANS;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = T(1.25);
  g.beta = seed % 4 ? T(0.5) : T(0);
  g.pad = seed % 3;
  tmm_test::fill_case(g, seed);
  return g;
}

// Column-major cases through sgemm_ (dgemm_), the others through cblas_sgemm
// (cblas_dgemm).
template <class Case>
void run(Case& g) {
  using B = Blas<decltype(Case::alpha)>;
  const int ta = g.ta == TMM_TRANS ? tmm_blas_test::kTrans : tmm_blas_test::kNoTrans;
  const int tb = g.tb == TMM_TRANS ? tmm_blas_test::kTrans : tmm_blas_test::kNoTrans;
  if (g.layout == TMM_COL_MAJOR) {
    const int m = int(g.m), n = int(g.n), k = int(g.k), lda = int(g.lda), ldb = int(g.ldb),
              ldc = int(g.ldc);
    B::gemm(ta == tmm_blas_test::kTrans ? "T" : "N", tb == tmm_blas_test::kTrans ? "T" : "N", &m,
            &n, &k, &g.alpha, g.a.data(), &lda, g.b.data(), &ldb, &g.beta, g.c.data(), &ldc);
  } else {
    B::cblas(tmm_blas_test::kRowMajor, ta, tb, int(g.m), int(g.n), int(g.k), g.alpha, g.a.data(),
             int(g.lda), g.b.data(), int(g.ldb), g.beta, g.c.data(), int(g.ldc));
  }
}

uint64_t routed(const tmm_blas_counters& c) { return c.tiledmm_calls; }

// The typed tests' fixtures: one instance per precision.
template <class T>
class BlasThreads : public ::testing::Test {};
TYPED_TEST_SUITE(BlasThreads, tmm_blas_test::Precisions, tmm_blas_test::PrecisionName);
template <class T>
class BlasFork : public ::testing::Test {};
TYPED_TEST_SUITE(BlasFork, tmm_blas_test::Precisions, tmm_blas_test::PrecisionName);
template <class T>
class BlasThreshold : public ::testing::Test {};
TYPED_TEST_SUITE(BlasThreshold, tmm_blas_test::Precisions, tmm_blas_test::PrecisionName);

TYPED_TEST(BlasThreads, ManyThreadsAtOnce) {
  TMM_BLAS_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  constexpr int kThreads = 8, kCallsEach = 6;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto before = tmm_blas_test::counters(TMM_BLAS_ALL);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsEach; ++i) {
        const uint32_t s = seed + uint32_t(t * 100 + i);
        auto g = make_case<T>(s, 40 + 7 * t, 33 + 5 * i, 24 + int64_t(s % 50));
        run(g);
        if (!tmm_test::check_case(g)) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  const auto after = tmm_blas_test::counters(TMM_BLAS_ALL);
  EXPECT_EQ(after.tiledmm_calls - before.tiledmm_calls, uint64_t(kThreads * kCallsEach));
  EXPECT_EQ(after.fallback_calls, before.fallback_calls);
  EXPECT_EQ(after.recovered_calls, before.recovered_calls);
}

// Runs `child` in a child process; true when it exits 0 within the time limit.
template <class Body>
bool in_child(Body child) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(60);  // a deadlock in the child fails the test instead of hanging it
    _exit(child() ? 0 : 1);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// What a child's product ran on: "tiledmm" or "fallback" (or "wrong" / "none").
template <class T>
std::string child_product(uint32_t seed) {
  const auto before = tmm_blas_test::counters(TMM_BLAS_ALL);
  auto g = make_case<T>(seed, 150, 130, 170);  // big enough for several CPU threads
  run(g);
  if (!tmm_test::check_case(g)) return "wrong";
  const auto after = tmm_blas_test::counters(TMM_BLAS_ALL);
  if (after.tiledmm_calls == before.tiledmm_calls + 1) return "tiledmm";
  if (after.fallback_calls == before.fallback_calls + 1) return "fallback";
  return "none";
}

// The route a child takes: tiledmm on the CPU backend (the parent never started
// CUDA); the fallback when the parent's handle was asked of CUDA (AUTO or CUDA).
std::string child_route() {
  return tmm_blas_test::env_or("TILEDMM_BLAS_BACKEND") == "cpu" ? "tiledmm" : "fallback";
}

TYPED_TEST(BlasFork, ChildOfAProcessThatUsedTiledmm) {
  using T = TypeParam;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto g = make_case<T>(seed, 150, 130, 170);
  run(g);  // the parent's handle, with its worker threads
  ASSERT_TRUE(tmm_test::check_case(g));
  ASSERT_GE(tmm_blas_test::counters(TMM_BLAS_ALL).tiledmm_calls, 1u);
  const std::string expected = child_route();
  EXPECT_TRUE(in_child([&] { return child_product<T>(seed + 1) == expected; }))
      << "the child's product was wrong, hung, or did not run on " << expected;
  EXPECT_TRUE(in_child([&] {
    // A grandchild, and two products in a row in each.
    return child_product<T>(seed + 2) == expected &&
           in_child([&] { return child_product<T>(seed + 3) == expected; }) &&
           child_product<T>(seed + 4) == expected;
  }));
  auto after = make_case<T>(seed + 5, 90, 60, 70);  // the parent still works
  run(after);
  EXPECT_TRUE(tmm_test::check_case(after));
}

// ASan's allocator (clang 14) has no fork handlers: a child forked while another
// thread held its lock hangs at its first allocation, whatever the code under test.
// glibc's malloc has them, so this runs everywhere else.
#if defined(__SANITIZE_ADDRESS__)
#define TMM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TMM_ASAN 1
#endif
#endif

TYPED_TEST(BlasFork, ForkWhileOtherThreadsCall) {
#ifdef TMM_ASAN
  GTEST_SKIP() << "ASan's allocator cannot fork while other threads allocate";
#endif
  using T = TypeParam;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&, t] {
      for (uint32_t i = 0; !stop.load(); ++i) {
        auto g = make_case<T>(seed + uint32_t(t) * 1000 + i, 70, 50, 90);
        run(g);
        if (!tmm_test::check_case(g)) ++failures;
      }
    });
  }
  const std::string expected = child_route();
  for (int f = 0; f < 6; ++f) {
    EXPECT_TRUE(in_child([&] { return child_product<T>(seed + 77 + uint32_t(f)) == expected; }))
        << "fork " << f;
  }
  stop = true;
  for (auto& th : callers) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// A fork while another thread is inside the one-time load of the settings: the
// child's first BLAS call must load them itself, not wait for a thread it does not
// have. The settings file (TILEDMM_BLAS_CONFIG) is a FIFO, so the first call, on
// another thread, stays inside the load until this test writes to it; the child,
// which has no such thread, names no file (else it would wait on the FIFO itself).
// A deadlock ends the child by its alarm, and fails the test.
TEST(BlasForkDuringConfigLoad, ChildsFirstCallReturns) {
  const std::string fifo = tmm_blas_test::env_or("TILEDMM_BLAS_CONFIG");
  ASSERT_FALSE(fifo.empty()) << "run with TILEDMM_BLAS_CONFIG naming a path for a FIFO";
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << fifo;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::atomic<bool> loader_ok{false};
  std::thread loader([&] {
    GemmCase g = make_case(seed, 40, 30, 20);
    run(g);  // the process's first BLAS call: reads the settings
    loader_ok = bool(tmm_test::check_case(g));
  });
  // A writer opens a FIFO without blocking only once a reader has it open: then the
  // loader is inside the load, reading the file.
  int writer = -1;
  for (int i = 0; i < 30000 && writer < 0; ++i) {
    writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer < 0) usleep(1000);
  }
  if (writer < 0) {
    loader.detach();
    FAIL() << "the first BLAS call never opened the settings file " << fifo;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(20);  // a deadlock fails the test instead of hanging it
    close(writer);
    setenv("TILEDMM_BLAS_CONFIG", "", 1);
    GemmCase g = make_case(seed + 1, 30, 20, 10);
    run(g);
    const bool ok = tmm_test::check_case(g) &&
                    tmm_blas_test::describe().find("config=none") != std::string::npos;
    _exit(ok ? 0 : 1);
  }
  const char text[] = "# written after the fork\nthreshold = all\n";
  EXPECT_EQ(write(writer, text, sizeof text - 1), ssize_t(sizeof text - 1));
  close(writer);
  loader.join();
  EXPECT_TRUE(loader_ok.load());
  EXPECT_NE(tmm_blas_test::describe().find("config=" + fifo), std::string::npos)
      << tmm_blas_test::describe();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << (WIFSIGNALED(status) ? "the child was killed by signal " + std::to_string(WTERMSIG(status))
                              : "the child's product was wrong");
  unlink(fifo.c_str());
}

// TILEDMM_BLAS_THRESHOLD=<flops>: a call goes to tiledmm exactly when 2 m n k
// reaches it. The settings of this run use 1e6.
TYPED_TEST(BlasThreshold, FlopsSplitCallsExactly) {
  using T = TypeParam;
  TMM_BLAS_NEED_FILE(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK"), "the fallback BLAS");
  const double threshold = std::atof(tmm_blas_test::env_or("TILEDMM_BLAS_THRESHOLD", "0").c_str());
  ASSERT_GT(threshold, 0) << "run with TILEDMM_BLAS_THRESHOLD set to a flop count";
  const uint32_t seed = tmm_test::fresh_seed();
  uint64_t above = 0, below = 0;
  const auto before = tmm_blas_test::counters(TMM_BLAS_ALL);
  for (int i = 0; i < 12; ++i) {
    const int64_t m = 20 + 15 * i, n = 30 + 9 * i, k = 25 + 11 * i;
    auto g = make_case<T>(seed + uint32_t(i), m, n, k);
    run(g);
    EXPECT_TRUE(tmm_test::check_case(g)) << i;
    (double(2 * m * n * k) >= threshold ? above : below) += 1;
  }
  const auto after = tmm_blas_test::counters(TMM_BLAS_ALL);
  EXPECT_GT(above, 0u);
  EXPECT_GT(below, 0u);
  EXPECT_EQ(routed(after) - routed(before), above);
  EXPECT_EQ(after.fallback_calls - before.fallback_calls, below);
}

// Both sides of the bound itself, through sgemm_ and cblas_sgemm (dgemm_ and
// cblas_dgemm) in both layouts:
// 2 m n k = 999,998 (31 x 127 x 127) stays on the fallback, 1,000,000 (100 x 100 x 50)
// goes to tiledmm (THRESHOLD=1e6: calls of at least 1e6 flops). The small calls'
// fast path (in assembly on x86-64) makes this comparison for the first.
TYPED_TEST(BlasThreshold, BothSidesOfTheBound) {
  using T = TypeParam;
  TMM_BLAS_NEED_FILE(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK"), "the fallback BLAS");
  const double threshold = std::atof(tmm_blas_test::env_or("TILEDMM_BLAS_THRESHOLD", "0").c_str());
  ASSERT_EQ(threshold, 1e6) << "run with TILEDMM_BLAS_THRESHOLD=1e6";
  const uint32_t seed = tmm_test::fresh_seed();
  struct Shape {
    int64_t m, n, k;
    bool tiledmm;
  };
  for (const Shape s : {Shape{31, 127, 127, false}, Shape{100, 100, 50, true}}) {
    for (tmm_layout layout : {TMM_COL_MAJOR, TMM_ROW_MAJOR}) {
      auto g = make_case<T>(seed, s.m, s.n, s.k);
      g.layout = layout;
      tmm_test::fill_case(g, seed + uint32_t(s.m));
      const auto before = tmm_blas_test::counters(TMM_BLAS_ALL);
      run(g);
      const auto after = tmm_blas_test::counters(TMM_BLAS_ALL);
      EXPECT_TRUE(tmm_test::check_case(g)) << s.m << "x" << s.n << "x" << s.k;
      const uint64_t flops = uint64_t(2 * s.m * s.n * s.k);
      if (s.tiledmm) {
        EXPECT_EQ(routed(after) - routed(before), 1u) << s.m << "x" << s.n << "x" << s.k;
        EXPECT_EQ(after.tiledmm_flops - before.tiledmm_flops, flops);
      } else {
        EXPECT_EQ(after.fallback_calls - before.fallback_calls, 1u)
            << s.m << "x" << s.n << "x" << s.k;
        EXPECT_EQ(after.fallback_flops - before.fallback_flops, flops);
      }
    }
  }
}

}  // namespace
