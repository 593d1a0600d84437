// Thread safety as the header documents it: different handles run concurrently,
// and one handle shared by several threads serialises their calls. Runs on the CPU
// backend, and on CUDA when a device is present.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gemm_reference.hpp"

namespace {

using tmm_test::GemmCase;

GemmCase make_case(uint32_t seed, int64_t m, int64_t n, int64_t k) {
  GemmCase g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = 1.5f;
  g.beta = seed % 2 ? 0.0f : -0.5f;
  g.ta = seed % 3 ? TMM_NO_TRANS : TMM_TRANS;
  g.layout = seed % 5 ? TMM_ROW_MAJOR : TMM_COL_MAJOR;
  tmm_test::fill_case(g, seed);
  return g;
}

void run_handles_in_threads(tmm_backend backend) {
  constexpr int kThreads = 6, kCallsEach = 5;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      tmm_handle h = nullptr;
      if (tmm_create_with_backend(&h, backend, 0) != TMM_SUCCESS) {
        ++failures;
        return;
      }
      for (int i = 0; i < kCallsEach; ++i) {
        GemmCase g = make_case(seed + uint32_t(t * 100 + i), 40 + t, 33 + i, 57);
        if (tmm_test::run_case(h, g) != TMM_SUCCESS || !tmm_test::check_case(g)) ++failures;
      }
      tmm_destroy(h);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

void run_shared_handle(tmm_backend backend) {
  constexpr int kThreads = 6, kCallsEach = 5;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, backend, 0), TMM_SUCCESS);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCallsEach; ++i) {
        // Different sizes, so that the handle's buffers grow while others use them.
        GemmCase g = make_case(seed + uint32_t(t * 100 + i), 20 + 9 * t, 25 + 4 * i, 31 + t);
        if (tmm_test::run_case(h, g) != TMM_SUCCESS || !tmm_test::check_case(g)) ++failures;
        double ms = 0;
        if (tmm_get_last_time(h, &ms) != TMM_SUCCESS) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  tmm_destroy(h);
}

// Many threads, several handles each and one shared by all, random calls (layouts,
// transposes, shapes, alpha/beta, algorithms), every result checked.
void run_stress(tmm_backend backend) {
  constexpr int kThreads = 8, kHandlesEach = 3, kCalls = 12;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  tmm_handle shared = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&shared, backend, 0), TMM_SUCCESS);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(seed + uint32_t(t));
      std::vector<tmm_handle> own(kHandlesEach, nullptr);
      for (tmm_handle& h : own)
        if (tmm_create_with_backend(&h, backend, 0) != TMM_SUCCESS) ++failures;
      const tmm_algorithm algos[] = {TMM_ALGO_AUTO, TMM_ALGO_NAIVE, TMM_ALGO_BLOCKED};
      for (int i = 0; i < kCalls; ++i) {
        GemmCase g;
        g.layout = rng() % 2 ? TMM_ROW_MAJOR : TMM_COL_MAJOR;
        g.ta = rng() % 2 ? TMM_TRANS : TMM_NO_TRANS;
        g.tb = rng() % 2 ? TMM_TRANS : TMM_NO_TRANS;
        g.m = 1 + rng() % 70;
        g.n = 1 + rng() % 70;
        g.k = rng() % 90;
        g.alpha = rng() % 3 ? 1.5f : -0.5f;
        g.beta = rng() % 2 ? 0.0f : 0.75f;
        g.pad = rng() % 3;
        tmm_test::fill_case(g, uint32_t(rng()));
        tmm_handle h = rng() % 4 == 0 ? shared : own[rng() % kHandlesEach];
        if (h != shared && tmm_set_algorithm(h, algos[rng() % 3]) != TMM_SUCCESS) ++failures;
        if (tmm_test::run_case(h, g) != TMM_SUCCESS || !tmm_test::check_case(g)) ++failures;
      }
      for (tmm_handle h : own) tmm_destroy(h);
    });
  }
  for (auto& th : threads) th.join();
  tmm_destroy(shared);
  EXPECT_EQ(failures.load(), 0);
}

// A call that fails for a reason only thread t gives: m = -(t + 1).
tmm_status fail_as(tmm_handle h, int t) {
  float x = 0;
  return tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, -(t + 1), 1, 1, 1.0f, &x, 1, &x, 1,
                   0.0f, &x, 1);
}

std::string own_reason(int t) { return "(got " + std::to_string(-(t + 1)) + ")"; }

// Eight threads on one handle mix failing calls, message reads, successful calls,
// option changes and report reads. Each thread must read its own last failure's
// message (never another thread's, never a torn one), "" after its own success.
// TSan runs this (scripts/hardening.sh): a racy message would show there.
void run_shared_handle_messages(tmm_backend backend) {
  constexpr int kThreads = 8, kRounds = 150;
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, backend, 0), TMM_SUCCESS);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(t));
      float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 1, 1, 1, 1, 1}, c[4] = {};
      for (int i = 0; i < kRounds; ++i) {
        switch (rng() % 4) {
          case 0:
            if (fail_as(h, t) != TMM_ERROR_INVALID_VALUE) ++wrong;
            if (std::string(tmm_get_error_message(h)).find(own_reason(t)) == std::string::npos)
              ++wrong;
            break;
          case 1:
            if (tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 2, 2, 3, 1.0f, a, 3, b, 2,
                          0.0f, c, 2) != TMM_SUCCESS ||
                c[0] != 6.0f || c[3] != 15.0f)
              ++wrong;
            if (std::string(tmm_get_error_message(h)) != "") ++wrong;
            break;
          case 2: {
            int64_t v = -1;
            if (tmm_set_option(h, TMM_OPTION_HOST_THREADS, int64_t(rng() % 4)) != TMM_SUCCESS)
              ++wrong;
            if (tmm_get_option(h, TMM_OPTION_HOST_THREADS, &v) != TMM_SUCCESS || v < 0 || v > 3)
              ++wrong;
            if (tmm_set_option(h, TMM_OPTION_TILE_SIZE, 7) != TMM_ERROR_INVALID_VALUE) ++wrong;
            if (std::string(tmm_get_error_message(h)).find("(got 7)") == std::string::npos) ++wrong;
            break;
          }
          default: {
            tmm_report r{};
            r.struct_size = sizeof r;
            const tmm_status s = tmm_get_last_report(h, &r);
            if (s != TMM_SUCCESS && s != TMM_ERROR_INVALID_VALUE) ++wrong;
            break;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  tmm_destroy(h);
}

// Two threads fail on one handle for different reasons at the same moment, then
// read their messages at the same moment: each reads its own.
void run_simultaneous_failures(tmm_backend backend) {
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, backend, 0), TMM_SUCCESS);
  std::atomic<int> arrived{0}, wrong{0};
  auto barrier = [&](int round) {  // both threads pass together, round after round
    arrived.fetch_add(1);
    while (arrived.load() < 2 * round) std::this_thread::yield();
  };
  auto body = [&](int t) {
    for (int round = 1; round <= 200; ++round) {
      barrier(2 * round - 1);
      if (fail_as(h, t) != TMM_ERROR_INVALID_VALUE) ++wrong;
      barrier(2 * round);
      const std::string text = tmm_get_error_message(h);
      if (text.find(own_reason(t)) == std::string::npos) ++wrong;
    }
  };
  std::thread first(body, 0), second(body, 1);
  first.join();
  second.join();
  EXPECT_EQ(wrong.load(), 0);
  tmm_destroy(h);
}

TEST(ThreadsCpu, StressManyHandlesRandomCalls) { run_stress(TMM_BACKEND_CPU); }
TEST(ThreadsCpu, HandlePerThread) { run_handles_in_threads(TMM_BACKEND_CPU); }
TEST(ThreadsCpu, SharedHandle) { run_shared_handle(TMM_BACKEND_CPU); }
TEST(ThreadsCpu, SharedHandleEachThreadReadsItsOwnMessage) {
  run_shared_handle_messages(TMM_BACKEND_CPU);
}
TEST(ThreadsCpu, SimultaneousFailuresKeepTheirOwnMessages) {
  run_simultaneous_failures(TMM_BACKEND_CPU);
}

class ThreadsCuda : public ::testing::Test {
 protected:
  void SetUp() override { TMM_SKIP_OR_FAIL_WITHOUT_GPU(); }
};

TEST_F(ThreadsCuda, HandlePerThread) { run_handles_in_threads(TMM_BACKEND_CUDA); }
TEST_F(ThreadsCuda, SharedHandle) { run_shared_handle(TMM_BACKEND_CUDA); }
TEST_F(ThreadsCuda, StressManyHandlesRandomCalls) { run_stress(TMM_BACKEND_CUDA); }
TEST_F(ThreadsCuda, SharedHandleEachThreadReadsItsOwnMessage) {
  run_shared_handle_messages(TMM_BACKEND_CUDA);
}

}  // namespace
