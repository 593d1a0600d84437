// libtiledmm_blas when tiledmm fails. This program defines tmm_sgemm itself (exported),
// so the library's calls land here first: it forwards to the real one (RTLD_NEXT) or
// fails the way the test asks, including a CUDA fault after C was partly written,
// which a machine without a GPU cannot produce otherwise, and an out-of-memory or
// callback failure after C was partly written (a late cudaErrorMemoryAllocation is
// TMM_ERROR_OUT_OF_MEMORY). Checked: the result is right anyway (the fallback
// recomputes it, from the saved C when beta != 0), each kind of failure is logged
// once, tiledmm is off after a CUDA fault, and without the saved C
// (TILEDMM_BLAS_KEEP_C=0) C is NaN after any failure that may have written it, never
// silently wrong. The settings of each run (tests/blas/CMakeLists.txt) give the log
// file in TILEDMM_BLAS_LOG.
#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <cstdio>

#include "blas_test_util.hpp"
#include "gemm_reference.hpp"

namespace {

enum class Fault {
  kNone,
  kOutOfMemory,
  kInvalidValue,
  kCudaAfterWrite,
  kOutOfMemoryAfterWrite,
  kCallbackAfterWrite
};
std::atomic<Fault> g_fault{Fault::kNone};
std::atomic<int> g_calls{0};

}  // namespace

extern "C" tmm_status tmm_sgemm(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                                tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                const float* A, int64_t lda, const float* B, int64_t ldb,
                                float beta, float* C, int64_t ldc) {
  using Fn = decltype(&tmm_sgemm);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "tmm_sgemm"));
  ++g_calls;
  switch (g_fault.load()) {
    case Fault::kOutOfMemory:
      return TMM_ERROR_OUT_OF_MEMORY;
    case Fault::kInvalidValue:
      return TMM_ERROR_INVALID_VALUE;
    case Fault::kCudaAfterWrite:
    case Fault::kOutOfMemoryAfterWrite:
    case Fault::kCallbackAfterWrite: {
      // Some tiles came back before the fault: half the columns hold garbage.
      for (int64_t j = 0; j < n / 2 + 1 && j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
          C[layout == TMM_COL_MAJOR ? j * ldc + i : i * ldc + j] = 1e30f;
      const Fault f = g_fault.load();
      return f == Fault::kCudaAfterWrite          ? TMM_ERROR_CUDA
             : f == Fault::kOutOfMemoryAfterWrite ? TMM_ERROR_OUT_OF_MEMORY
                                                  : TMM_ERROR_CALLBACK;
    }
    case Fault::kNone:
      break;
  }
  return real(handle, layout, trans_a, trans_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

namespace {

using tmm_test::GemmCase;

GemmCase make_case(uint32_t seed, float beta) {
  GemmCase g;
  g.layout = TMM_COL_MAJOR;
  g.ta = seed % 2 ? TMM_TRANS : TMM_NO_TRANS;
  g.m = 45;
  g.n = 38;
  g.k = 51;
  g.alpha = 0.75f;
  g.beta = beta;
  g.pad = 2;
  tmm_test::fill_case(g, seed);
  return g;
}

void run(GemmCase& g) {
  const int m = int(g.m), n = int(g.n), k = int(g.k), lda = int(g.lda), ldb = int(g.ldb),
            ldc = int(g.ldc);
  sgemm_(g.ta == TMM_TRANS ? "T" : "N", "N", &m, &n, &k, &g.alpha, g.a.data(), &lda, g.b.data(),
         &ldb, &g.beta, g.c.data(), &ldc);
}

// A fresh log for this run: removed before the library opens it (at the first call).
[[maybe_unused]] const bool g_fresh_log = [] {
  const std::string path = tmm_blas_test::env_or("TILEDMM_BLAS_LOG");
  if (!path.empty()) std::remove(path.c_str());
  return true;
}();

std::string log_text() {
  return tmm_blas_test::read_file(tmm_blas_test::env_or("TILEDMM_BLAS_LOG"));
}

class BlasFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    TMM_BLAS_NEED_FILE(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK"), "the fallback BLAS");
    ASSERT_FALSE(tmm_blas_test::env_or("TILEDMM_BLAS_LOG").empty()) << "run with TILEDMM_BLAS_LOG";
    g_fault = Fault::kNone;
  }
  void TearDown() override { g_fault = Fault::kNone; }
};

// A failure before C is touched: the fallback computes every such call, the log
// names the failure once, and tiledmm is tried again on the next call.
void expect_recovered(Fault fault, const char* status_name) {
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto before = tmm_blas_test::counters(TMM_BLAS_SGEMM);
  const int calls_before = g_calls.load();
  g_fault = fault;
  for (int i = 0; i < 3; ++i) {
    GemmCase g = make_case(seed + uint32_t(i), i == 1 ? 0.0f : -0.5f);
    run(g);
    EXPECT_TRUE(tmm_test::check_case(g)) << "call " << i;
  }
  g_fault = Fault::kNone;
  const auto after = tmm_blas_test::counters(TMM_BLAS_SGEMM);
  EXPECT_EQ(g_calls.load() - calls_before, 3) << "tiledmm is tried on every call";
  EXPECT_EQ(after.recovered_calls - before.recovered_calls, 3u);
  EXPECT_EQ(after.fallback_calls - before.fallback_calls, 3u);
  EXPECT_EQ(after.tiledmm_calls, before.tiledmm_calls);
  EXPECT_EQ(tmm_blas_test::count_lines(log_text(), {"note: tiledmm failed", status_name}), 1)
      << log_text();
  EXPECT_EQ(tmm_blas_test::count_lines(log_text(), {"-> fallback (recovered:", status_name}), 3);
  // And the next call goes to tiledmm again.
  GemmCase g = make_case(seed + 9, 1.0f);
  run(g);
  EXPECT_TRUE(tmm_test::check_case(g));
  EXPECT_EQ(tmm_blas_test::counters(TMM_BLAS_SGEMM).tiledmm_calls, after.tiledmm_calls + 1);
}

TEST_F(BlasFaults, OutOfMemoryBeforeCIsTouched) {
  expect_recovered(Fault::kOutOfMemory, "TMM_ERROR_OUT_OF_MEMORY");
}

TEST_F(BlasFaults, ArgumentTiledmmRejects) {
  expect_recovered(Fault::kInvalidValue, "TMM_ERROR_INVALID_VALUE");
}

// A CUDA fault after tiles of C were written: C is recomputed from the copy kept
// before the call (beta != 0) or from A and B alone (beta = 0); tiledmm is off
// afterwards. Each settings run tries one beta, since the first fault ends tiledmm.
void cuda_fault_then_off(float beta, bool keep_c) {
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  GemmCase warm = make_case(seed, 0.5f);
  run(warm);  // tiledmm works before the fault
  ASSERT_TRUE(tmm_test::check_case(warm));
  const auto before = tmm_blas_test::counters(TMM_BLAS_SGEMM);
  g_fault = Fault::kCudaAfterWrite;
  GemmCase g = make_case(seed + 1, beta);
  run(g);
  const auto after = tmm_blas_test::counters(TMM_BLAS_SGEMM);
  if (keep_c || beta == 0.0f) {
    EXPECT_TRUE(tmm_test::check_case(g));
    EXPECT_EQ(after.recovered_calls - before.recovered_calls, 1u);
    EXPECT_EQ(after.lost_calls, before.lost_calls);
  } else {
    // No copy of C: the call cannot be finished, and says so with NaN in every
    // element of C's m x n part (never a wrong number), and in the log.
    for (int64_t j = 0; j < g.n; ++j)
      for (int64_t i = 0; i < g.m; ++i) ASSERT_TRUE(std::isnan(g.c[size_t(j * g.ldc + i)]));
    EXPECT_EQ(after.lost_calls - before.lost_calls, 1u);
    EXPECT_EQ(tmm_blas_test::count_lines(log_text(), {"could not be computed", "no copy of C"}), 1)
        << log_text();
  }
  // tiledmm is off now: later calls never reach it.
  const int calls = g_calls.load();
  g_fault = Fault::kNone;
  for (int i = 0; i < 3; ++i) {
    GemmCase later = make_case(seed + 10 + uint32_t(i), 0.25f);
    run(later);
    EXPECT_TRUE(tmm_test::check_case(later));
  }
  EXPECT_EQ(g_calls.load(), calls);
  EXPECT_EQ(tmm_blas_test::counters(TMM_BLAS_SGEMM).fallback_calls, after.fallback_calls + 3);
  const std::string text = log_text();
  EXPECT_EQ(tmm_blas_test::count_lines(text, {"note: tiledmm failed", "TMM_ERROR_CUDA"}), 1)
      << text;
  EXPECT_EQ(tmm_blas_test::count_lines(text, {"tiledmm is off for the rest of this process"}), 1);
  EXPECT_NE(tmm_blas_test::describe().find("tiledmm: off"), std::string::npos);
}

TEST_F(BlasFaults, CudaFaultAfterWriteBetaNonZero) {
  cuda_fault_then_off(-0.5f, tmm_blas_test::env_or("TILEDMM_BLAS_KEEP_C", "1") != "0");
}

TEST_F(BlasFaults, CudaFaultAfterWriteBetaZero) { cuda_fault_then_off(0.0f, true); }

// The fallback's own sgemm_, called directly (not through the library).
using FortranSgemm = void (*)(const char*, const char*, const int*, const int*, const int*,
                              const float*, const float*, const int*, const float*, const int*,
                              const float*, float*, const int*, size_t, size_t);
FortranSgemm fallback_sgemm() {
  void* lib = dlopen(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK").c_str(), RTLD_NOW | RTLD_LOCAL);
  return lib != nullptr ? reinterpret_cast<FortranSgemm>(dlsym(lib, "sgemm_")) : nullptr;
}

// A failure other than CUDA's after tiles of C were written (beta != 0): with the
// saved C (the default), C ends as the fallback computes it from the original C, bit
// for bit; without it (TILEDMM_BLAS_KEEP_C=0), C is NaN and the call is counted lost.
// Either way tiledmm stays on (neither failure ends it) and the next call runs there.
void late_failure(Fault fault, const char* status_name) {
  const bool keep_c = tmm_blas_test::env_or("TILEDMM_BLAS_KEEP_C", "1") != "0";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const FortranSgemm direct = fallback_sgemm();
  ASSERT_NE(direct, nullptr);
  GemmCase g = make_case(seed, -0.5f);
  GemmCase want = g;
  {
    const int m = int(g.m), n = int(g.n), k = int(g.k), lda = int(g.lda), ldb = int(g.ldb),
              ldc = int(g.ldc);
    direct(g.ta == TMM_TRANS ? "T" : "N", "N", &m, &n, &k, &g.alpha, g.a.data(), &lda, g.b.data(),
           &ldb, &g.beta, want.c.data(), &ldc, 1, 1);
  }
  const auto before = tmm_blas_test::counters(TMM_BLAS_SGEMM);
  const int calls_before = g_calls.load();
  g_fault = fault;
  run(g);
  g_fault = Fault::kNone;
  const auto after = tmm_blas_test::counters(TMM_BLAS_SGEMM);
  EXPECT_EQ(g_calls.load() - calls_before, 1) << "tiledmm was not tried";
  const std::string text = log_text();
  EXPECT_EQ(tmm_blas_test::count_lines(text, {"note: tiledmm failed", status_name}), 1) << text;
  if (keep_c) {
    EXPECT_EQ(g.c, want.c) << "C is not what the fallback computes from the original C";
    EXPECT_EQ(after.recovered_calls - before.recovered_calls, 1u);
    EXPECT_EQ(after.fallback_calls - before.fallback_calls, 1u);
    EXPECT_EQ(after.lost_calls, before.lost_calls);
    EXPECT_EQ(tmm_blas_test::count_lines(text, {"-> fallback (recovered:", status_name}), 1)
        << text;
  } else {
    for (int64_t j = 0; j < g.n; ++j) {
      for (int64_t i = 0; i < g.ldc; ++i) {
        const float x = g.c[size_t(j * g.ldc + i)];
        if (i < g.m) {
          ASSERT_TRUE(std::isnan(x)) << "C(" << i << ", " << j << ") = " << x;
        } else {
          ASSERT_EQ(x, tmm_test::kPadSentinel) << "padding of C written";
        }
      }
    }
    EXPECT_EQ(after.lost_calls - before.lost_calls, 1u);
    EXPECT_EQ(after.recovered_calls, before.recovered_calls);
    EXPECT_GE(tmm_blas_test::count_lines(text, {"could not be computed", "no copy of C"}), 1)
        << text;
  }
  // tiledmm stays on.
  GemmCase next = make_case(seed + 1, 0.5f);
  run(next);
  EXPECT_TRUE(tmm_test::check_case(next));
  EXPECT_EQ(g_calls.load() - calls_before, 2);
  EXPECT_EQ(tmm_blas_test::counters(TMM_BLAS_SGEMM).tiledmm_calls, after.tiledmm_calls + 1);
}

TEST_F(BlasFaults, OutOfMemoryAfterCWasWritten) {
  late_failure(Fault::kOutOfMemoryAfterWrite, "TMM_ERROR_OUT_OF_MEMORY");
}

TEST_F(BlasFaults, CallbackFailureAfterCWasWritten) {
  late_failure(Fault::kCallbackAfterWrite, "TMM_ERROR_CALLBACK");
}

// No usable device (TILEDMM_BLAS_BACKEND=cuda, a device index no machine has): the
// fallback computes everything, tiledmm's tmm_sgemm is never called, and the log
// says why once.
TEST_F(BlasFaults, NoDevice) {
  const uint32_t seed = tmm_test::fresh_seed();
  const auto before = tmm_blas_test::counters(TMM_BLAS_SGEMM);
  for (int i = 0; i < 4; ++i) {
    GemmCase g = make_case(seed + uint32_t(i), i % 2 ? 0.0f : 2.0f);
    run(g);
    EXPECT_TRUE(tmm_test::check_case(g));
  }
  const auto after = tmm_blas_test::counters(TMM_BLAS_SGEMM);
  EXPECT_EQ(g_calls.load(), 0);
  EXPECT_EQ(after.fallback_calls - before.fallback_calls, 4u);
  EXPECT_EQ(after.tiledmm_calls, 0u);
  const std::string text = log_text();
  EXPECT_EQ(tmm_blas_test::count_lines(text, {"tiledmm is off", "no usable CUDA device"}), 1)
      << text;
  EXPECT_NE(tmm_blas_test::describe().find("tiledmm: off (no usable CUDA device"),
            std::string::npos);
}

}  // namespace
