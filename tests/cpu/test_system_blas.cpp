// The CPU backend's AUTO on the system BLAS (lib/cpu/system_blas.hpp), through the
// public API, in both precisions: which path ran (the report), and the contract on it
// (layouts, transposes, padded leading dimensions, beta = 0 never reading C, the quick
// returns, the aliasing rule, the host_threads option).
//
// The path this process should take comes from the environment, as ctest's entries set
// it (tests/CMakeLists.txt):
//   TILEDMM_CPU_BLAS=none             the own kernels (cpu_blocked, cpu_f64_blocked);
//   TMM_TEST_CPU_BLAS_EXPECT=own      the own kernels (a library that must be refused);
//   otherwise                         the system BLAS. Without one the tests skip, or
//                                     fail in CI (CI=true), where Debian's OpenBLAS is
//                                     installed (scripts/deps.sh).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tiledmm/tiledmm.h"

namespace {

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

bool expect_own_kernels() {
  return env_is("TILEDMM_CPU_BLAS", "none") || env_is("TMM_TEST_CPU_BLAS_EXPECT", "own");
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && *ci != '\0' && std::strcmp(ci, "false") != 0 && std::strcmp(ci, "0") != 0;
}

bool is_system_blas(const char* kernel) { return std::strncmp(kernel, "system BLAS (", 13) == 0; }

template <class T>
const char* blocked_name() {
  return sizeof(T) == sizeof(double) ? "cpu_f64_blocked" : "cpu_blocked";
}
template <class T>
const char* naive_name() {
  return sizeof(T) == sizeof(double) ? "cpu_f64_naive" : "cpu_naive";
}

template <class T>
tmm_status gemm(tmm_handle h, tmm_layout layout, tmm_transpose ta, tmm_transpose tb, int64_t m,
                int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b, int64_t ldb,
                T beta, T* c, int64_t ldc) {
  if constexpr (sizeof(T) == sizeof(double)) {
    return tmm_dgemm(h, layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    return tmm_sgemm(h, layout, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

// One call's operands in any layout, with leading dimensions padded by `pad`; padding
// holds a marker that must survive.
template <class T>
struct Operands {
  tmm_layout layout;
  tmm_transpose ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  std::vector<T> a, b, c;

  Operands(tmm_layout layout_, tmm_transpose ta_, tmm_transpose tb_, int64_t m_, int64_t n_,
           int64_t k_, int64_t pad, unsigned seed)
      : layout(layout_), ta(ta_), tb(tb_), m(m_), n(n_), k(k_) {
    const bool row = layout == TMM_ROW_MAJOR;
    // Stored shapes: rows x cols in the layout's own sense.
    const int64_t a_rows = ta == TMM_NO_TRANS ? m : k, a_cols = ta == TMM_NO_TRANS ? k : m;
    const int64_t b_rows = tb == TMM_NO_TRANS ? k : n, b_cols = tb == TMM_NO_TRANS ? n : k;
    lda = (row ? a_cols : a_rows) + pad;
    ldb = (row ? b_cols : b_rows) + pad;
    ldc = (row ? n : m) + pad;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    auto fill = [&](std::vector<T>& v, int64_t outer, int64_t inner, int64_t ld) {
      v.assign(size_t(std::max<int64_t>(outer, 1) * ld), T(777));  // marker in the padding
      for (int64_t i = 0; i < outer; ++i)
        for (int64_t j = 0; j < inner; ++j) v[size_t(i * ld + j)] = T(dist(rng));
    };
    fill(a, row ? a_rows : a_cols, row ? a_cols : a_rows, lda);
    fill(b, row ? b_rows : b_cols, row ? b_cols : b_rows, ldb);
    fill(c, row ? m : n, row ? n : m, ldc);
  }
  // Element (i, j) of a stored matrix in the call's layout.
  size_t at(int64_t i, int64_t j, int64_t ld) const {
    return size_t(layout == TMM_ROW_MAJOR ? i * ld + j : j * ld + i);
  }
  double op_a(int64_t i, int64_t q) const {
    return ta == TMM_NO_TRANS ? double(a[at(i, q, lda)]) : double(a[at(q, i, lda)]);
  }
  double op_b(int64_t q, int64_t j) const {
    return tb == TMM_NO_TRANS ? double(b[at(q, j, ldb)]) : double(b[at(j, q, ldb)]);
  }
  tmm_status run(tmm_handle h, T alpha, T beta) {
    return gemm<T>(h, layout, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(),
                   ldc);
  }
  // Checks `c` against alpha * op(A) op(B) + beta * c0 (c0: C before the call; beta = 0
  // reads nothing of it), and that the padding of C is untouched.
  void check(const std::vector<T>& c0, T alpha, T beta) const {
    const double eps = double(std::numeric_limits<T>::epsilon());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, bound = 0;
        for (int64_t q = 0; q < k; ++q) {
          sum += op_a(i, q) * op_b(q, j);
          bound += std::fabs(op_a(i, q) * op_b(q, j));
        }
        const double before = beta == T(0) ? 0.0 : double(beta) * double(c0[at(i, j, ldc)]);
        const double want = double(alpha) * sum + before;
        const double tol = 2.0 * double(k + 2) * eps *
                           (std::fabs(double(alpha)) * bound + std::fabs(before) + 1e-30);
        ASSERT_NEAR(double(c[at(i, j, ldc)]), want, tol) << "at " << i << ", " << j;
      }
    }
    const int64_t outer = layout == TMM_ROW_MAJOR ? m : n, inner = layout == TMM_ROW_MAJOR ? n : m;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t x = inner; x < ldc; ++x)
        ASSERT_EQ(c[size_t(o * ldc + x)], T(777)) << "padding of C written";
  }
};

template <class T>
class SystemBlasPath : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }

  tmm_report report() {
    tmm_report r{};
    r.struct_size = sizeof r;
    EXPECT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
    return r;
  }
  // Checks that the last call ran the path this process expects; skips (or fails, in
  // CI) when a system BLAS is expected but none was found.
  void expect_auto_path() {
    const tmm_report r = report();
    ASSERT_NE(r.kernel, nullptr);
    EXPECT_EQ(r.backend, TMM_BACKEND_CPU);
    EXPECT_EQ(r.algorithm, TMM_ALGO_BLOCKED);
    EXPECT_GE(r.host_threads, 1);
    if (expect_own_kernels()) {
      EXPECT_STREQ(r.kernel, blocked_name<T>());
    } else if (!is_system_blas(r.kernel)) {
      ASSERT_FALSE(in_ci()) << "CI=true and no system BLAS was found: AUTO ran " << r.kernel
                            << " (scripts/deps.sh installs libopenblas0-pthread)";
      GTEST_SKIP() << "no system BLAS on this machine (AUTO ran " << r.kernel << ")";
    }
  }

  tmm_handle h_ = nullptr;
};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SystemBlasPath, Precisions);

TYPED_TEST(SystemBlasPath, ReportNamesThePathAndNaiveAndBlockedStayOwn) {
  using T = TypeParam;
  Operands<T> ops(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 64, 48, 40, 0, 1);
  ASSERT_EQ(ops.run(this->h_, T(1), T(0)), TMM_SUCCESS);
  this->expect_auto_path();
  ASSERT_EQ(tmm_set_algorithm(this->h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(ops.run(this->h_, T(1), T(0)), TMM_SUCCESS);
  EXPECT_STREQ(this->report().kernel, blocked_name<T>());
  ASSERT_EQ(tmm_set_algorithm(this->h_, TMM_ALGO_NAIVE), TMM_SUCCESS);
  ASSERT_EQ(ops.run(this->h_, T(1), T(0)), TMM_SUCCESS);
  EXPECT_STREQ(this->report().kernel, naive_name<T>());
}

// Every layout and transpose pair, padded and tight leading dimensions, alpha and beta
// not 1, ragged sizes; a product large enough for the BLAS's threads too.
TYPED_TEST(SystemBlasPath, EveryLayoutTransposeAndPaddedLdMatches) {
  using T = TypeParam;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (int64_t pad : {0, 3}) {
          SCOPED_TRACE(::testing::Message()
                       << "layout " << layout << " ta " << ta << " tb " << tb << " pad " << pad);
          Operands<T> ops(layout, ta, tb, 37, 29, 41, pad, unsigned(7 + pad));
          const std::vector<T> c0 = ops.c;
          ASSERT_EQ(ops.run(this->h_, T(1.5), T(-0.5)), TMM_SUCCESS);
          this->expect_auto_path();
          ops.check(c0, T(1.5), T(-0.5));
        }
      }
    }
  }
  Operands<T> big(TMM_ROW_MAJOR, TMM_TRANS, TMM_NO_TRANS, 301, 203, 257, 5, 11);
  const std::vector<T> c0 = big.c;
  ASSERT_EQ(big.run(this->h_, T(0.75), T(2)), TMM_SUCCESS);
  this->expect_auto_path();
  big.check(c0, T(0.75), T(2));
}

TYPED_TEST(SystemBlasPath, BetaZeroNeverReadsC) {
  using T = TypeParam;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    Operands<T> ops(layout, TMM_TRANS, TMM_NO_TRANS, 33, 17, 25, 2, 3);
    const int64_t outer = layout == TMM_ROW_MAJOR ? ops.m : ops.n;
    const int64_t inner = layout == TMM_ROW_MAJOR ? ops.n : ops.m;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t x = 0; x < inner; ++x)
        ops.c[size_t(o * ops.ldc + x)] = std::numeric_limits<T>::quiet_NaN();
    const std::vector<T> c0 = ops.c;
    ASSERT_EQ(ops.run(this->h_, T(2), T(0)), TMM_SUCCESS);
    this->expect_auto_path();
    ops.check(c0, T(2), T(0));
  }
}

// m or n = 0: nothing runs; k = 0 or alpha = 0: C = beta * C by the library itself, A
// and B unread (NaN there does not leak), on the AUTO path as on the others.
TYPED_TEST(SystemBlasPath, EmptyAndScaleOnlyCallsAreTheLibrarysOwn) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> a(64, nan), b(64, nan), c(64, T(3));
  ASSERT_EQ(gemm<T>(this->h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0, 4, 4, T(1), a.data(), 4,
                    b.data(), 4, T(0), c.data(), 4),
            TMM_SUCCESS);
  EXPECT_STREQ(this->report().kernel, "none");
  ASSERT_EQ(gemm<T>(this->h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 0, 4, T(1), a.data(), 4,
                    b.data(), 4, T(0), c.data(), 4),
            TMM_SUCCESS);
  EXPECT_EQ(c, std::vector<T>(64, T(3)));
  ASSERT_EQ(gemm<T>(this->h_, TMM_COL_MAJOR, TMM_TRANS, TMM_NO_TRANS, 4, 4, 0, T(1), nullptr, 1,
                    nullptr, 1, T(2), c.data(), 8),
            TMM_SUCCESS);
  EXPECT_STREQ(this->report().kernel, "cpu_scale");
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(c[size_t(j * 8 + i)], i < 4 ? T(6) : T(3));
  ASSERT_EQ(gemm<T>(this->h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_TRANS, 4, 4, 4, T(0), a.data(), 4,
                    b.data(), 4, T(0.5), c.data(), 4),
            TMM_SUCCESS);
  EXPECT_STREQ(this->report().kernel, "cpu_scale");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(c[size_t(i)], (i % 8) < 4 ? T(3) : T(1.5)) << i;
}

// alpha = Inf multiplies the whole sum (the header's "Arithmetic"): the single-sum loop
// runs, whatever AUTO would choose.
TYPED_TEST(SystemBlasPath, InfiniteAlphaRunsTheSingleSumLoop) {
  using T = TypeParam;
  Operands<T> ops(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 8, 8, 8, 0, 5);
  ASSERT_EQ(ops.run(this->h_, std::numeric_limits<T>::infinity(), T(0)), TMM_SUCCESS);
  EXPECT_STREQ(this->report().kernel, naive_name<T>());
}

TYPED_TEST(SystemBlasPath, CSharingAnElementWithAIsRejected) {
  using T = TypeParam;
  std::vector<T> buf(256, T(1)), b(64, T(1));
  const std::vector<T> before = buf;
  EXPECT_EQ(gemm<T>(this->h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 8, 8, 8, T(1), buf.data(),
                    8, b.data(), 8, T(0), buf.data() + 60, 8),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(buf, before);
}

// host_threads set: the BLAS runs only where it takes a count per call (MKL); OpenBLAS
// and BLIS, whose counts are global, leave the call to the own kernels, which honour it.
TYPED_TEST(SystemBlasPath, HostThreadsOptionIsHonoured) {
  using T = TypeParam;
  ASSERT_EQ(tmm_set_option(this->h_, TMM_OPTION_HOST_THREADS, 1), TMM_SUCCESS);
  Operands<T> ops(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 256, 64, 128, 0, 9);
  const std::vector<T> c0 = ops.c;
  ASSERT_EQ(ops.run(this->h_, T(1), T(1)), TMM_SUCCESS);
  const tmm_report r = this->report();
  EXPECT_EQ(r.host_threads, 1);
  if (!is_system_blas(r.kernel)) {
    EXPECT_STREQ(r.kernel, blocked_name<T>());
  }
  ops.check(c0, T(1), T(1));
}

// fork() while other threads are inside AUTO's products: OpenBLAS's fork handler stops
// its worker threads, which would strand a call in progress in the parent; the library
// holds the fork until no product is inside the BLAS. The parent's callers finish, and
// the child computes a product of its own.
TYPED_TEST(SystemBlasPath, ForkWhileOtherThreadsMultiply) {
  using T = TypeParam;
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&, t] {
      tmm_handle h = nullptr;
      if (tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0) != TMM_SUCCESS) {
        ++failures;
        return;
      }
      for (unsigned i = 0; !stop.load(); ++i) {
        Operands<T> ops(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_TRANS, 96, 80, 120, 0, 100u * t + i);
        if (ops.run(h, T(1), T(0)) != TMM_SUCCESS) ++failures;
      }
      tmm_destroy(h);
    });
  }
  for (int f = 0; f < 4; ++f) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      tmm_handle h = nullptr;
      bool ok = tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0) == TMM_SUCCESS;
      std::vector<T> a(64 * 64, T(1)), b(64 * 64, T(2)), c(64 * 64, T(0));
      ok = ok && gemm<T>(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 64, 64, 64, T(1), a.data(),
                         64, b.data(), 64, T(0), c.data(), 64) == TMM_SUCCESS;
      ok = ok && c == std::vector<T>(64 * 64, T(128));
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's product failed";
  }
  stop = true;
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
  Operands<T> after(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_TRANS, 96, 80, 120, 0, 1);
  ASSERT_EQ(after.run(this->h_, T(1), T(0)), TMM_SUCCESS);  // the parent's path, still
  this->expect_auto_path();
}

}  // namespace
