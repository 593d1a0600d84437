// The streamed host path (TMM_HOST_PATH_STREAMED): products cut into tiles of C and
// chunks of k through pinned staging. Small device budgets force many tiles on any
// GPU. Exact arithmetic (small integers) makes results comparable bit for bit across
// tile and chunk edges, with the direct path, and between concurrent handles.
// Skips without a GPU; fails instead when TMM_REQUIRE_GPU=1.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gemm_reference.hpp"

namespace {

using tmm_test::GemmCase;

class Streamed : public ::testing::Test {
 protected:
  void SetUp() override {
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
    stream(h_, 1 << 20, 256 << 10);
  }
  void TearDown() override { tmm_destroy(h_); }

  // Forces the streamed path with `device` bytes of device memory and `staging`
  // bytes of pinned staging.
  static void stream(tmm_handle h, int64_t device, int64_t staging) {
    ASSERT_EQ(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h, TMM_OPTION_DEVICE_MEMORY_BUDGET, device), TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h, TMM_OPTION_HOST_STAGING_BYTES, staging), TMM_SUCCESS);
  }

  static tmm_report report(tmm_handle h) {
    tmm_report r{};
    r.struct_size = sizeof r;
    EXPECT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
    return r;
  }

  tmm_handle h_ = nullptr;
};

// A case with integer operands in [-2, 2] and integer C: every result is exact.
GemmCase exact_case(tmm_layout layout, tmm_transpose ta, tmm_transpose tb, int64_t m, int64_t n,
                    int64_t k, float alpha, float beta, int64_t pad, uint32_t seed) {
  GemmCase g;
  g.layout = layout;
  g.ta = ta;
  g.tb = tb;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = alpha;
  g.beta = beta;
  g.pad = pad;
  tmm_test::fill_case(g, seed);
  std::mt19937 rng(seed);
  for (float& x : g.a) x = float(int(rng() % 5) - 2);
  for (float& x : g.b) x = float(int(rng() % 5) - 2);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float& c = g.c[size_t(g.at(i, j, g.ldc))];
      if (!std::isnan(c)) c = float(int(rng() % 7) - 3);
    }
  g.c0 = g.c;
  return g;
}

// The exact result: alpha * dot + beta * c0 in FP64 (exact for these integers).
::testing::AssertionResult exactly_right(const GemmCase& g) {
  int64_t wrong = 0;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double dot = 0;
      for (int64_t q = 0; q < g.k; ++q) dot += g.op_a(i, q) * g.op_b(q, j);
      const double c0 = g.c0[size_t(g.at(i, j, g.ldc))];
      const float want = float(g.alpha * dot + (g.beta == 0.0f ? 0.0 : g.beta * c0));
      wrong += g.c[size_t(g.at(i, j, g.ldc))] != want;
    }
  }
  if (wrong) return ::testing::AssertionFailure() << wrong << " element(s) not exact";
  return tmm_test::check_case(g);  // and the padding untouched
}

TEST_F(Streamed, ExactAcrossTileAndChunkEdgesInEveryLayout) {
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int variant = 0;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (float beta : {0.0f, -2.0f}) {
          GemmCase g = exact_case(layout, ta, tb, 333 + variant, 257 - variant, 1111 + 3 * variant,
                                  variant % 2 ? 0.5f : 1.0f, beta, variant % 3, seed + variant);
          ++variant;
          SCOPED_TRACE(tmm_test::describe(g));
          ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
          EXPECT_TRUE(exactly_right(g));
          const tmm_report r = report(h_);
          EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
          EXPECT_GE(r.tiles, 4) << "a 1 MiB budget cuts C into several tiles";
          EXPECT_GT(r.k_chunks, 1) << "and k into chunks";
          EXPECT_GT(r.link_ms, 0.0);
        }
      }
    }
  }
}

TEST_F(Streamed, RandomDataMatchesFp64AndTheDirectPathBitForBitOnIntegers) {
  GemmCase g = tmm_test::GemmCase{};
  g.m = 700;
  g.n = 530;
  g.k = 900;
  g.alpha = 0.75f;
  g.beta = 0.25f;
  g.pad = 5;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  EXPECT_TRUE(tmm_test::check_case(g));

  GemmCase e = exact_case(TMM_ROW_MAJOR, TMM_TRANS, TMM_NO_TRANS, 640, 480, 2500, 1.0f, 3.0f, 2,
                          tmm_test::fresh_seed());
  GemmCase direct = e;
  ASSERT_EQ(tmm_test::run_case(h_, e), TMM_SUCCESS);
  tmm_handle d = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&d, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(d, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  ASSERT_EQ(tmm_test::run_case(d, direct), TMM_SUCCESS);
  EXPECT_EQ(report(d).host_path, TMM_HOST_PATH_DIRECT);
  tmm_destroy(d);
  EXPECT_EQ(std::memcmp(e.c.data(), direct.c.data(), e.c.size() * sizeof(float)), 0);
  EXPECT_TRUE(exactly_right(e));
}

TEST_F(Streamed, PoisonedStagingChangesNothing) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEBUG_POISON_STAGING, 1), TMM_SUCCESS);
  for (int round = 0; round < 3; ++round) {  // staging reused across calls, poisoned between
    GemmCase g = exact_case(TMM_COL_MAJOR, TMM_NO_TRANS, TMM_TRANS, 300 + 41 * round, 280, 777,
                            1.0f, round == 1 ? 0.0f : 1.0f, 1, tmm_test::fresh_seed());
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
    EXPECT_TRUE(exactly_right(g)) << "round " << round;
  }
}

TEST_F(Streamed, AlphaInfinityFollowsTheOneRule) {
  tmm_test::expect_alpha_inf_rule(h_, TMM_ALGO_AUTO, 700);
  EXPECT_EQ(report(h_).host_path, TMM_HOST_PATH_STREAMED);
}

TEST_F(Streamed, EveryAlgorithmRunsTheChunks) {
  for (tmm_algorithm a : {TMM_ALGO_NAIVE, TMM_ALGO_TILED, TMM_ALGO_COARSENED, TMM_ALGO_BLOCKED}) {
    ASSERT_EQ(tmm_set_algorithm(h_, a), TMM_SUCCESS);
    GemmCase g = exact_case(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 200, 150, 600, 1.0f, 1.0f, 0,
                            tmm_test::fresh_seed());
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
    EXPECT_TRUE(exactly_right(g));
    EXPECT_EQ(report(h_).algorithm, a);
  }
}

// Any k at the stated minimum budgets (1 MiB of device memory and of staging): a
// panel of B as deep as k cannot fit, so B's chunks stream too. Operands in {-1, 0, 1}
// keep every partial sum an integer far below 2^24 (a random walk of 2^23 steps), so
// results are exact; elements are sampled from every row and column of C, so from every
// tile. Under compute-sanitizer, k shrinks 8-fold (the same path).
TEST_F(Streamed, AnyKRunsAtTheMinimumBudgetStreamingB) {
  stream(h_, 1 << 20, 1 << 20);
  // Under compute-sanitizer (racecheck runs each of the minimum budget's many small
  // launches slowly) k shrinks 64-fold: B's panel still does not fit, so B still streams.
  const int64_t shrink = tmm_test::under_sanitizer() ? 64 : 1;
  struct Case {
    int64_t m, n, k;
    tmm_transpose t;
    float beta;
  };
  const Case cases[] = {{64, 64, (int64_t(1) << 23) / shrink, TMM_NO_TRANS, 1.0f},
                        {200, 150, (int64_t(1) << 21) / shrink, TMM_TRANS, 0.0f}};
  uint64_t state = tmm_test::fresh_seed() | 1u;
  SCOPED_TRACE("seed " + std::to_string(state));
  auto next = [&state] {  // xorshift64: billions of operands in seconds
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + " x " + std::to_string(c.n) + " x " + std::to_string(c.k));
    const bool t = c.t == TMM_TRANS;
    std::vector<float> a(size_t(c.m * c.k)), b(size_t(c.k * c.n)), c0(size_t(c.m * c.n));
    for (float& x : a) x = float(int(next() % 3) - 1);
    for (float& x : b) x = float(int(next() % 3) - 1);
    for (float& x : c0) x = c.beta == 0.0f ? NAN : float(int(next() % 7) - 3);
    std::vector<float> out = c0;
    const int64_t lda = t ? c.m : c.k, ldb = t ? c.k : c.n;
    ASSERT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, c.t, c.t, c.m, c.n, c.k, 1.0f, a.data(), lda, b.data(),
                        ldb, c.beta, out.data(), c.n),
              TMM_SUCCESS)
        << tmm_get_error_message(h_);
    const tmm_report r = report(h_);
    EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
    EXPECT_GE(r.k_chunks, c.k / 4096) << "k in chunks of at most 4096";
    auto check = [&](int64_t i, int64_t j) {
      double dot = 0;
      for (int64_t q = 0; q < c.k; ++q) {
        const double x = t ? a[size_t(q * c.m + i)] : a[size_t(i * c.k + q)];
        const double y = t ? b[size_t(j * c.k + q)] : b[size_t(q * c.n + j)];
        dot += x * y;
      }
      const double want = dot + (c.beta == 0.0f ? 0.0 : c.beta * c0[size_t(i * c.n + j)]);
      return double(out[size_t(i * c.n + j)]) == want;
    };
    int64_t wrong = 0, checked = 0;
    for (int64_t i = 0; i < c.m; ++i, ++checked) wrong += !check(i, (i * 37 + 5) % c.n);
    for (int64_t j = 0; j < c.n; ++j, ++checked) wrong += !check((j * 13 + 3) % c.m, j);
    EXPECT_EQ(wrong, 0) << "of " << checked << " sampled elements";
  }
}

TEST_F(Streamed, BudgetTooSmallForAnyTileIsOutOfMemoryAndTouchesNothing) {
  stream(h_, 4096, 4096);
  GemmCase g = exact_case(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 100, 100, 100, 1.0f, 1.0f, 1,
                          tmm_test::fresh_seed());
  EXPECT_EQ(tmm_test::run_case(h_, g), TMM_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("budget"), std::string::npos)
      << tmm_get_error_message(h_);
  EXPECT_EQ(std::memcmp(g.c.data(), g.c0.data(), g.c.size() * sizeof(float)), 0);
  // The direct path over its budget is the same error.
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  EXPECT_EQ(tmm_test::run_case(h_, g), TMM_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(std::memcmp(g.c.data(), g.c0.data(), g.c.size() * sizeof(float)), 0);
  // The handle works on.
  stream(h_, 1 << 20, 256 << 10);
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);
  EXPECT_TRUE(exactly_right(g));
}

TEST_F(Streamed, AutoStreamsWhatDoesNotFitTheBudget) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_AUTO), TMM_SUCCESS);
  GemmCase g = exact_case(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 512, 512, 512, 1.0f, 0.0f, 0,
                          tmm_test::fresh_seed());
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS);  // 3 MiB of matrices, 1 MiB budget
  EXPECT_EQ(report(h_).host_path, TMM_HOST_PATH_STREAMED);
  EXPECT_TRUE(exactly_right(g));
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, 0), TMM_SUCCESS);
  GemmCase small = exact_case(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 64, 64, 64, 1.0f, 0.0f, 0,
                              tmm_test::fresh_seed());
  ASSERT_EQ(tmm_test::run_case(h_, small), TMM_SUCCESS);
  EXPECT_EQ(report(h_).host_path, TMM_HOST_PATH_DIRECT) << "streaming cannot win at 64^3";
}

TEST_F(Streamed, ConcurrentHandlesGiveTheSingleHandleResultBitForBit) {
  const uint32_t seed = tmm_test::fresh_seed();
  GemmCase reference =
      exact_case(TMM_ROW_MAJOR, TMM_TRANS, TMM_TRANS, 420, 390, 1300, 1.0f, 1.0f, 3, seed);
  ASSERT_EQ(tmm_test::run_case(h_, reference), TMM_SUCCESS);
  ASSERT_TRUE(exactly_right(reference));
  std::vector<GemmCase> cases(
      4, exact_case(TMM_ROW_MAJOR, TMM_TRANS, TMM_TRANS, 420, 390, 1300, 1.0f, 1.0f, 3, seed));
  std::vector<tmm_status> status(cases.size(), TMM_ERROR_INTERNAL);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < cases.size(); ++t) {
    threads.emplace_back([&, t] {
      tmm_handle h = nullptr;
      if (tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0) != TMM_SUCCESS) return;
      stream(h, int64_t(1) << 20 << t, 256 << 10);  // different cuts, same result
      status[t] = tmm_test::run_case(h, cases[t]);
      tmm_destroy(h);
    });
  }
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < cases.size(); ++t) {
    EXPECT_EQ(status[t], TMM_SUCCESS);
    EXPECT_EQ(
        std::memcmp(cases[t].c.data(), reference.c.data(), reference.c.size() * sizeof(float)), 0)
        << "handle " << t;
  }
}

// Host memory of one kind for a test operand: pageable, pinned by the CUDA runtime
// (cudaMallocHost), or pageable with only its first half registered
// (cudaHostRegister), which must be treated as pageable.
class HostArray {
 public:
  enum Kind { Pageable, Pinned, PartlyPinned };
  HostArray(const std::vector<float>& v, Kind kind) : kind_(kind), bytes_(v.size() * 4) {
    const size_t page = 4096, rounded = (bytes_ + page - 1) / page * page;
    if (kind == Pinned) {
      EXPECT_EQ(cudaMallocHost(reinterpret_cast<void**>(&p_), bytes_), cudaSuccess);
    } else {
      p_ = static_cast<float*>(std::aligned_alloc(page, rounded));
      if (kind == PartlyPinned) {
        registered_ = rounded / 2 / page * page;
        EXPECT_GT(registered_, 0u) << "the test needs operands of two pages or more";
        EXPECT_EQ(cudaHostRegister(p_, registered_, cudaHostRegisterDefault), cudaSuccess);
      }
    }
    std::memcpy(p_, v.data(), bytes_);
  }
  ~HostArray() {
    if (kind_ == Pinned) {
      cudaFreeHost(p_);
      return;
    }
    if (registered_) cudaHostUnregister(p_);
    std::free(p_);
  }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  float* get() const { return p_; }
  void copy_to(std::vector<float>& v) const { std::memcpy(v.data(), p_, bytes_); }

 private:
  Kind kind_;
  size_t bytes_;
  size_t registered_ = 0;
  float* p_ = nullptr;
};

// Operands the caller pinned over their whole range are copied by the DMA engines in
// place (no host packing at all when all three are), and the result is the same bit
// for bit; a range only partly pinned goes through staging like pageable memory.
TEST_F(Streamed, PinnedOperandsSkipStagingAndPartlyPinnedOnesAreStaged) {
  using K = HostArray::Kind;
  struct Mix {
    K a, b, c;
    bool none_staged;
  };
  const Mix mixes[] = {{K::Pinned, K::Pinned, K::Pinned, true},
                       {K::Pinned, K::Pageable, K::Pinned, false},
                       {K::Pageable, K::Pinned, K::Pageable, false},
                       {K::PartlyPinned, K::Pinned, K::PartlyPinned, false}};
  int variant = 0;
  for (const Mix& mix : mixes) {
    for (float beta : {0.0f, 2.0f}) {
      ++variant;
      SCOPED_TRACE("mix " + std::to_string(variant));
      GemmCase g = exact_case(variant % 2 ? TMM_ROW_MAJOR : TMM_COL_MAJOR, TMM_NO_TRANS,
                              variant % 3 ? TMM_TRANS : TMM_NO_TRANS, 300, 260, 700, 1.0f, beta, 2,
                              tmm_test::fresh_seed());
      HostArray a(g.a, mix.a), b(g.b, mix.b), c(g.c, mix.c);
      ASSERT_EQ(tmm_sgemm(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a.get(), g.lda, b.get(),
                          g.ldb, g.beta, c.get(), g.ldc),
                TMM_SUCCESS)
          << tmm_get_error_message(h_);
      c.copy_to(g.c);
      EXPECT_TRUE(exactly_right(g));
      const tmm_report r = report(h_);
      EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
      EXPECT_GE(r.tiles, 4);
      if (mix.none_staged) {
        EXPECT_EQ(r.pack_ms, 0.0) << "all three pinned: nothing to pack";
      } else {
        EXPECT_GT(r.pack_ms, 0.0) << "a pageable or partly pinned operand is packed";
      }
    }
  }
}

TEST_F(Streamed, ReserveHostStagingChecksItsBoundsAndAFailureKeepsTheHandleUsable) {
  EXPECT_EQ(tmm_reserve_host_staging(nullptr, 0), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_reserve_host_staging(h_, -1), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_reserve_host_staging(h_, (256 << 10) + 1), TMM_ERROR_INVALID_VALUE)
      << "over the handle's staging budget";
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("TMM_OPTION_HOST_STAGING_BYTES"),
            std::string::npos);
  EXPECT_EQ(tmm_reserve_host_staging(h_, 0), TMM_SUCCESS) << tmm_get_error_message(h_);
  // A petabyte of pinned memory cannot be had: out of memory, and the handle works on.
  const int64_t huge = int64_t(1) << 50;
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_STAGING_BYTES, huge), TMM_SUCCESS);
  EXPECT_EQ(tmm_reserve_host_staging(h_, huge), TMM_ERROR_OUT_OF_MEMORY);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("pinned"), std::string::npos)
      << tmm_get_error_message(h_);
  stream(h_, 1 << 20, 256 << 10);
  GemmCase g = exact_case(TMM_ROW_MAJOR, TMM_TRANS, TMM_NO_TRANS, 200, 190, 300, 1.0f, 1.0f, 1,
                          tmm_test::fresh_seed());
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  EXPECT_TRUE(exactly_right(g));
}

// The device allocation of the streamed path fails (another user holds the device's
// memory) after the handle's earlier calls had set up smaller buffers: out of memory,
// C untouched, and the next call after the memory comes back works.
TEST_F(Streamed, OutOfDeviceMemoryMidSetupLeavesCUntouchedAndTheHandleWorksOn) {
  GemmCase warm = exact_case(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 64, 64, 64, 1.0f, 1.0f, 0,
                             tmm_test::fresh_seed());
  ASSERT_EQ(tmm_test::run_case(h_, warm), TMM_SUCCESS);
  stream(h_, int64_t(256) << 20, int64_t(64) << 20);  // an explicit budget: no free-memory check
  GemmCase g = exact_case(TMM_COL_MAJOR, TMM_NO_TRANS, TMM_TRANS, 1024, 1000, 256, 1.0f, 1.0f, 3,
                          tmm_test::fresh_seed());
  size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  void* hog = nullptr;
  for (size_t take = free - (size_t(1) << 20); take > (size_t(64) << 20); take -= size_t(2) << 20) {
    if (cudaMalloc(&hog, take) == cudaSuccess) break;
    cudaGetLastError();
    hog = nullptr;
  }
  ASSERT_NE(hog, nullptr);
  const tmm_status st = tmm_test::run_case(h_, g);
  cudaFree(hog);
  EXPECT_EQ(st, TMM_ERROR_OUT_OF_MEMORY) << tmm_get_error_message(h_);
  EXPECT_EQ(std::memcmp(g.c.data(), g.c0.data(), g.c.size() * sizeof(float)), 0) << "C untouched";
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << tmm_get_error_message(h_);
  EXPECT_TRUE(exactly_right(g));
}

}  // namespace
