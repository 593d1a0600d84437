// libtiledmm_blas when tiledmm fails. This program defines tmm_sgemm and tmm_dgemm
// itself (exported), so the library's calls land here first: it forwards to the real
// one (RTLD_NEXT) or fails the way the test asks, including a CUDA fault after C was partly
// written, which a machine without a GPU cannot produce otherwise, and an out-of-memory or callback
// failure after C was partly written (a late cudaErrorMemoryAllocation is TMM_ERROR_OUT_OF_MEMORY).
// Checked: the result is right anyway (the fallback recomputes it, from the saved C when beta !=
// 0), each kind of failure is logged once, tiledmm is off after a CUDA fault, and without the saved
// C (TILEDMM_BLAS_KEEP_C=0) C is NaN after any failure that may have written it, never silently
// wrong. The settings of each run (tests/blas/CMakeLists.txt) give the log file in
// TILEDMM_BLAS_LOG. Each test is written once over the element type and runs for sgemm_
// (BlasFaults/Single.*) and dgemm_ (BlasFaults/Double.*), each precision in a process of its own (a
// CUDA fault ends tiledmm for the process).
#include <dlfcn.h>

#include <atomic>
#include <cmath>
#include <cstdio>

#include "blas_test_util.hpp"
#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

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

namespace {

// tmm_sgemm or tmm_dgemm (`real`, the library's), or the fault the test asks for.
template <class T, class Fn>
tmm_status faulty_gemm(Fn real, tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                       tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* A,
                       int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
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
          C[layout == TMM_COL_MAJOR ? j * ldc + i : i * ldc + j] = T(1e30);
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

}  // namespace

extern "C" tmm_status tmm_sgemm(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                                tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                const float* A, int64_t lda, const float* B, int64_t ldb,
                                float beta, float* C, int64_t ldc) {
  using Fn = decltype(&tmm_sgemm);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "tmm_sgemm"));
  return faulty_gemm(real, handle, layout, trans_a, trans_b, m, n, k, alpha, A, lda, B, ldb, beta,
                     C, ldc);
}

extern "C" tmm_status tmm_dgemm(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                                tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                double alpha, const double* A, int64_t lda, const double* B,
                                int64_t ldb, double beta, double* C, int64_t ldc) {
  using Fn = decltype(&tmm_dgemm);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "tmm_dgemm"));
  return faulty_gemm(real, handle, layout, trans_a, trans_b, m, n, k, alpha, A, lda, B, ldb, beta,
                     C, ldc);
}

namespace {

using tmm_blas_test::Blas;

template <class T>
typename Blas<T>::Case make_case(uint32_t seed, T beta) {
  typename Blas<T>::Case g;
  g.layout = TMM_COL_MAJOR;
  g.ta = seed % 2 ? TMM_TRANS : TMM_NO_TRANS;
  g.m = 45;
  g.n = 38;
  g.k = 51;
  g.alpha = T(0.75);
  g.beta = beta;
  g.pad = 2;
  tmm_test::fill_case(g, seed);
  return g;
}

template <class Case>
void run(Case& g) {
  const int m = int(g.m), n = int(g.n), k = int(g.k), lda = int(g.lda), ldb = int(g.ldb),
            ldc = int(g.ldc);
  Blas<decltype(Case::alpha)>::gemm(g.ta == TMM_TRANS ? "T" : "N", "N", &m, &n, &k, &g.alpha,
                                    g.a.data(), &lda, g.b.data(), &ldb, &g.beta, g.c.data(), &ldc);
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

template <class T>
class BlasFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    TMM_BLAS_NEED_FILE(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK"), "the fallback BLAS");
    ASSERT_FALSE(tmm_blas_test::env_or("TILEDMM_BLAS_LOG").empty()) << "run with TILEDMM_BLAS_LOG";
    g_fault = Fault::kNone;
  }
  void TearDown() override { g_fault = Fault::kNone; }
};
TYPED_TEST_SUITE(BlasFaults, tmm_blas_test::Precisions, tmm_blas_test::PrecisionName);

// A failure before C is touched: the fallback computes every such call, the log
// names the failure once, and tiledmm is tried again on the next call.
template <class T>
void expect_recovered(Fault fault, const char* status_name) {
  constexpr tmm_blas_routine routine = Blas<T>::kFortran;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const auto before = tmm_blas_test::counters(routine);
  const int calls_before = g_calls.load();
  g_fault = fault;
  for (int i = 0; i < 3; ++i) {
    auto g = make_case<T>(seed + uint32_t(i), i == 1 ? T(0) : T(-0.5));
    run(g);
    EXPECT_TRUE(tmm_test::check_case(g)) << "call " << i;
  }
  g_fault = Fault::kNone;
  const auto after = tmm_blas_test::counters(routine);
  EXPECT_EQ(g_calls.load() - calls_before, 3) << "tiledmm is tried on every call";
  EXPECT_EQ(after.recovered_calls - before.recovered_calls, 3u);
  EXPECT_EQ(after.fallback_calls - before.fallback_calls, 3u);
  EXPECT_EQ(after.tiledmm_calls, before.tiledmm_calls);
  EXPECT_EQ(tmm_blas_test::count_lines(log_text(), {"note: tiledmm failed", status_name}), 1)
      << log_text();
  EXPECT_EQ(tmm_blas_test::count_lines(log_text(), {"-> fallback (recovered:", status_name}), 3);
  // And the next call goes to tiledmm again.
  auto g = make_case<T>(seed + 9, T(1));
  run(g);
  EXPECT_TRUE(tmm_test::check_case(g));
  EXPECT_EQ(tmm_blas_test::counters(routine).tiledmm_calls, after.tiledmm_calls + 1);
}

TYPED_TEST(BlasFaults, OutOfMemoryBeforeCIsTouched) {
  expect_recovered<TypeParam>(Fault::kOutOfMemory, "TMM_ERROR_OUT_OF_MEMORY");
}

TYPED_TEST(BlasFaults, ArgumentTiledmmRejects) {
  expect_recovered<TypeParam>(Fault::kInvalidValue, "TMM_ERROR_INVALID_VALUE");
}

// A CUDA fault after tiles of C were written: C is recomputed from the copy kept
// before the call (beta != 0) or from A and B alone (beta = 0); tiledmm is off
// afterwards. Each settings run tries one beta, since the first fault ends tiledmm.
template <class T>
void cuda_fault_then_off(T beta, bool keep_c) {
  constexpr tmm_blas_routine routine = Blas<T>::kFortran;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  auto warm = make_case<T>(seed, T(0.5));
  run(warm);  // tiledmm works before the fault
  ASSERT_TRUE(tmm_test::check_case(warm));
  const auto before = tmm_blas_test::counters(routine);
  g_fault = Fault::kCudaAfterWrite;
  auto g = make_case<T>(seed + 1, beta);
  run(g);
  const auto after = tmm_blas_test::counters(routine);
  if (keep_c || beta == 0) {
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
    auto later = make_case<T>(seed + 10 + uint32_t(i), T(0.25));
    run(later);
    EXPECT_TRUE(tmm_test::check_case(later));
  }
  EXPECT_EQ(g_calls.load(), calls);
  EXPECT_EQ(tmm_blas_test::counters(routine).fallback_calls, after.fallback_calls + 3);
  const std::string text = log_text();
  EXPECT_EQ(tmm_blas_test::count_lines(text, {"note: tiledmm failed", "TMM_ERROR_CUDA"}), 1)
      << text;
  EXPECT_EQ(tmm_blas_test::count_lines(text, {"tiledmm is off for the rest of this process"}), 1);
  EXPECT_NE(tmm_blas_test::describe().find("tiledmm: off"), std::string::npos);
}

TYPED_TEST(BlasFaults, CudaFaultAfterWriteBetaNonZero) {
  cuda_fault_then_off(TypeParam(-0.5), tmm_blas_test::env_or("TILEDMM_BLAS_KEEP_C", "1") != "0");
}

TYPED_TEST(BlasFaults, CudaFaultAfterWriteBetaZero) { cuda_fault_then_off(TypeParam(0), true); }

// The fallback's own sgemm_ (dgemm_), called directly (not through the library).
template <class T>
using FortranGemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*,
                             const T*, const int*, const T*, const int*, const T*, T*, const int*,
                             size_t, size_t);
template <class T>
FortranGemm<T> fallback_gemm() {
  void* lib = dlopen(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK").c_str(), RTLD_NOW | RTLD_LOCAL);
  return lib != nullptr ? reinterpret_cast<FortranGemm<T>>(dlsym(lib, Blas<T>::kFortranName))
                        : nullptr;
}

// A failure other than CUDA's after tiles of C were written (beta != 0): with the
// saved C (the default), C ends as the fallback computes it from the original C, bit
// for bit; without it (TILEDMM_BLAS_KEEP_C=0), C is NaN and the call is counted lost.
// Either way tiledmm stays on (neither failure ends it) and the next call runs there.
template <class T>
void late_failure(Fault fault, const char* status_name) {
  constexpr tmm_blas_routine routine = Blas<T>::kFortran;
  const bool keep_c = tmm_blas_test::env_or("TILEDMM_BLAS_KEEP_C", "1") != "0";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const FortranGemm<T> direct = fallback_gemm<T>();
  ASSERT_NE(direct, nullptr);
  auto g = make_case<T>(seed, T(-0.5));
  auto want = g;
  {
    const int m = int(g.m), n = int(g.n), k = int(g.k), lda = int(g.lda), ldb = int(g.ldb),
              ldc = int(g.ldc);
    direct(g.ta == TMM_TRANS ? "T" : "N", "N", &m, &n, &k, &g.alpha, g.a.data(), &lda, g.b.data(),
           &ldb, &g.beta, want.c.data(), &ldc, 1, 1);
  }
  const auto before = tmm_blas_test::counters(routine);
  const int calls_before = g_calls.load();
  g_fault = fault;
  run(g);
  g_fault = Fault::kNone;
  const auto after = tmm_blas_test::counters(routine);
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
        const T x = g.c[size_t(j * g.ldc + i)];
        if (i < g.m) {
          ASSERT_TRUE(std::isnan(x)) << "C(" << i << ", " << j << ") = " << x;
        } else {
          ASSERT_EQ(x, T(tmm_test::kPadSentinel)) << "padding of C written";
        }
      }
    }
    EXPECT_EQ(after.lost_calls - before.lost_calls, 1u);
    EXPECT_EQ(after.recovered_calls, before.recovered_calls);
    EXPECT_GE(tmm_blas_test::count_lines(text, {"could not be computed", "no copy of C"}), 1)
        << text;
  }
  // tiledmm stays on.
  auto next = make_case<T>(seed + 1, T(0.5));
  run(next);
  EXPECT_TRUE(tmm_test::check_case(next));
  EXPECT_EQ(g_calls.load() - calls_before, 2);
  EXPECT_EQ(tmm_blas_test::counters(routine).tiledmm_calls, after.tiledmm_calls + 1);
}

TYPED_TEST(BlasFaults, OutOfMemoryAfterCWasWritten) {
  late_failure<TypeParam>(Fault::kOutOfMemoryAfterWrite, "TMM_ERROR_OUT_OF_MEMORY");
}

TYPED_TEST(BlasFaults, CallbackFailureAfterCWasWritten) {
  late_failure<TypeParam>(Fault::kCallbackAfterWrite, "TMM_ERROR_CALLBACK");
}

// No usable device (TILEDMM_BLAS_BACKEND=cuda, a device index no machine has): the
// fallback computes everything, tiledmm's tmm_sgemm (tmm_dgemm) is never called, and
// the log says why once.
TYPED_TEST(BlasFaults, NoDevice) {
  using T = TypeParam;
  constexpr tmm_blas_routine routine = Blas<T>::kFortran;
  const uint32_t seed = tmm_test::fresh_seed();
  const auto before = tmm_blas_test::counters(routine);
  for (int i = 0; i < 4; ++i) {
    auto g = make_case<T>(seed + uint32_t(i), i % 2 ? T(0) : T(2));
    run(g);
    EXPECT_TRUE(tmm_test::check_case(g));
  }
  const auto after = tmm_blas_test::counters(routine);
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
