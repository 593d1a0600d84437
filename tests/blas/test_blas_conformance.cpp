// Reference-BLAS conformance of sgemm_, cblas_sgemm, sgemm_64_ and cblas_sgemm64_,
// and of dgemm_, cblas_dgemm, dgemm_64_ and cblas_dgemm64_, through libtiledmm_blas
// (built again as test_blas_conformance_wheel, the same for the wheels' prefixed twins,
// scipy_sgemm_ ... scipy_cblas_dgemm64_: blas_test_util.hpp's Blas<T>):
// each test is written once over the element type (typed tests: BlasConformance/Single.*
// for the single-precision names, BlasConformance/Double.* for the double ones): every transpose
// (N, T, C, either case), both CBLAS layouts, padded leading dimensions, alpha/beta including beta
// = 0 with NaN in C and alpha = 0 with NaN in A and B, m/n/k = 0, quick returns with NULL pointers,
// and the argument errors the reference reports (xerbla's routine name and parameter number).
//
// The same program runs under several settings (tests/blas/CMakeLists.txt): every
// call routed to tiledmm (TILEDMM_BLAS_THRESHOLD=all, CPU backend) or to the
// fallback (never), over the reference BLAS or OpenBLAS; the counters must show the
// route taken. Results are checked against an FP64 reference in single precision
// (tests/gemm_reference.hpp) and against a double-double one with strict FP64's bound
// in double (tests/gemm_reference_f64.hpp), which a product computed in single
// precision fails.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "blas_test_util.hpp"
#include "gemm_reference.hpp"
#include "reference_checks.hpp"

namespace {

using tmm_blas_test::Blas;
using tmm_blas_test::kColMajor;
using tmm_blas_test::kConjTrans;
using tmm_blas_test::kNoTrans;
using tmm_blas_test::kRowMajor;
using tmm_blas_test::kTrans;
using tmm_blas_test::Report;

enum class Entry { kFortran, kCblasCol, kCblasRow, kFortran64, kCblas64Col, kCblas64Row };

template <class T>
std::string entry_name(Entry e) {
  using B = Blas<T>;
  switch (e) {
    case Entry::kFortran:
      return B::kFortranName;
    case Entry::kCblasCol:
      return std::string(B::kCblasName) + " col";
    case Entry::kCblasRow:
      return std::string(B::kCblasName) + " row";
    case Entry::kFortran64:
      return B::kFortran64Name;
    case Entry::kCblas64Col:
      return std::string(B::kCblas64Name) + " col";
    case Entry::kCblas64Row:
      return std::string(B::kCblas64Name) + " row";
  }
  return "?";
}

template <class T>
tmm_blas_routine routine_of(Entry e) {
  using B = Blas<T>;
  switch (e) {
    case Entry::kFortran:
      return B::kFortran;
    case Entry::kCblasCol:
    case Entry::kCblasRow:
      return B::kCblas;
    case Entry::kFortran64:
      return B::kFortran64;
    case Entry::kCblas64Col:
    case Entry::kCblas64Row:
      return B::kCblas64;
  }
  return TMM_BLAS_ALL;
}

// The routines of precision T.
template <class T>
std::vector<tmm_blas_routine> routines() {
  using B = Blas<T>;
  return {B::kFortran, B::kCblas, B::kFortran64, B::kCblas64};
}

// The typed tests' fixtures: one instance per precision (tmm_blas_test::Precisions).
template <class T>
class BlasConformance : public ::testing::Test {};
TYPED_TEST_SUITE(BlasConformance, tmm_blas_test::Precisions, tmm_blas_test::PrecisionName);
template <class T>
class BlasFallback : public ::testing::Test {};
TYPED_TEST_SUITE(BlasFallback, tmm_blas_test::Precisions, tmm_blas_test::PrecisionName);

// The settings must name the fallback explicitly, so that the test knows what it
// runs on; it must exist (in CI: or the test fails).
// On the CUDA backend (a GPU machine) the tests need a GPU.
#define NEED_FALLBACK()                                              \
  TMM_BLAS_NEED_FILE(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK"), \
                     "the fallback BLAS (TILEDMM_BLAS_FALLBACK)");   \
  TMM_BLAS_SKIP_WITHOUT_GPU()

// Calls the entry on the case, spelling each transpose as `spelling` picks: Fortran
// characters in either case, and C for T; CBLAS CblasConjTrans for CblasTrans.
template <class Case>
void call(Entry e, Case& g, int spelling) {
  using T = decltype(Case::alpha);
  using B = Blas<T>;
  const bool ta = g.ta == TMM_TRANS, tb = g.tb == TMM_TRANS;
  const char* trans_chars = "TtCc";
  const char ca = ta ? trans_chars[spelling % 4] : "Nn"[spelling % 2];
  const char cb = tb ? trans_chars[(spelling + 1) % 4] : "nN"[spelling % 2];
  const int ia = ta ? (spelling % 2 ? kConjTrans : kTrans) : kNoTrans;
  const int ib = tb ? (spelling % 3 ? kTrans : kConjTrans) : kNoTrans;
  T* c = g.c.data();
  switch (e) {
    case Entry::kFortran: {
      const int m = int(g.m), n = int(g.n), k = int(g.k), lda = int(g.lda), ldb = int(g.ldb),
                ldc = int(g.ldc);
      B::gemm(&ca, &cb, &m, &n, &k, &g.alpha, g.a.data(), &lda, g.b.data(), &ldb, &g.beta, c, &ldc);
      break;
    }
    case Entry::kFortran64:
      B::gemm64(&ca, &cb, &g.m, &g.n, &g.k, &g.alpha, g.a.data(), &g.lda, g.b.data(), &g.ldb,
                &g.beta, c, &g.ldc);
      break;
    case Entry::kCblasCol:
    case Entry::kCblasRow:
      B::cblas(e == Entry::kCblasRow ? kRowMajor : kColMajor, ia, ib, int(g.m), int(g.n), int(g.k),
               g.alpha, g.a.data(), int(g.lda), g.b.data(), int(g.ldb), g.beta, c, int(g.ldc));
      break;
    case Entry::kCblas64Col:
    case Entry::kCblas64Row:
      B::cblas64(e == Entry::kCblas64Row ? kRowMajor : kColMajor, ia, ib, g.m, g.n, g.k, g.alpha,
                 g.a.data(), g.lda, g.b.data(), g.ldb, g.beta, c, g.ldc);
      break;
  }
}

// The reference's quick returns, which the library makes itself (counted as
// noop_calls): m or n = 0, alpha = 0 or k = 0 (C = beta * C at most).
template <class Case>
bool quick_return(const Case& g) {
  return g.m == 0 || g.n == 0 || g.alpha == 0 || g.k == 0;
}

template <class Case>
uint64_t flops(const Case& g) {
  return g.alpha == 0 || g.k == 0 ? 0 : uint64_t(2 * g.m * g.n * g.k);
}

// Counters of every GEMM routine of both precisions, to compare before and after.
std::map<tmm_blas_routine, tmm_blas_counters> snapshot() {
  std::map<tmm_blas_routine, tmm_blas_counters> s;
  for (auto r : tmm_blas_test::kGemmRoutines) s[r] = tmm_blas_test::counters(r);
  return s;
}

// What one call did to a routine's counters: invalid, quick returns, products and
// their flops (wherever they ran).
struct CallCount {
  uint64_t invalid, noop, work, flops;
};
CallCount delta(const tmm_blas_counters& a, const tmm_blas_counters& b) {
  return {a.invalid_calls - b.invalid_calls, a.noop_calls - b.noop_calls,
          a.tiledmm_calls + a.fallback_calls - b.tiledmm_calls - b.fallback_calls,
          a.tiledmm_flops + a.fallback_flops - b.tiledmm_flops - b.fallback_flops};
}
bool operator==(const CallCount& x, const CallCount& y) {
  return x.invalid == y.invalid && x.noop == y.noop && x.work == y.work && x.flops == y.flops;
}

// Every call of precision T counted on its own routines, and nothing on the other
// precision's (a double call counted as a single one, or the reverse, fails here).
TYPED_TEST(BlasConformance, EveryLayoutTransposeShapePaddingAndScaling) {
  NEED_FALLBACK();
  using T = TypeParam;
  using Case = typename Blas<T>::Case;
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1},    {7, 5, 3}, {33, 17, 64}, {64, 65, 31},
                          {97, 40, 70}, {0, 5, 3}, {5, 0, 3},    {5, 3, 0}};
  const std::pair<T, T> scalings[] = {{T(1), T(0)},  {T(-1.5), T(0.5)}, {T(0.75), T(1)},
                                      {T(0), T(0)},  {T(0), T(2)},      {T(0), T(1)},
                                      {T(2), T(-1)}, {T(1), T(1)}};
  std::map<tmm_blas_routine, uint64_t> work_calls, work_flops, noops;
  const auto before = snapshot();
  int spelling = 0, cases = 0, failures = 0;
  for (Entry e : {Entry::kFortran, Entry::kCblasCol, Entry::kCblasRow, Entry::kFortran64,
                  Entry::kCblas64Col, Entry::kCblas64Row}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (const Shape& s : shapes) {
          for (const auto& ab : scalings) {
            for (int64_t pad : {0, 3}) {
              Case g;
              g.layout = (e == Entry::kCblasRow || e == Entry::kCblas64Row) ? TMM_ROW_MAJOR
                                                                            : TMM_COL_MAJOR;
              g.ta = ta;
              g.tb = tb;
              g.m = s.m;
              g.n = s.n;
              g.k = s.k;
              g.alpha = ab.first;
              g.beta = ab.second;
              g.pad = pad;
              tmm_test::fill_case(g, seed + uint32_t(cases));
              call(e, g, spelling++);
              ++cases;
              const ::testing::AssertionResult ok = tmm_test::check_case(g);
              if (!ok && failures++ < 10)
                ADD_FAILURE() << entry_name<T>(e) << " " << tmm_test::describe(g) << ": "
                              << ok.message();
              if (quick_return(g)) {
                ++noops[routine_of<T>(e)];
              } else {
                ++work_calls[routine_of<T>(e)];
                work_flops[routine_of<T>(e)] += flops(g);
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0) << "of " << cases << " cases";
  EXPECT_TRUE(tmm_blas_test::take_reports().empty()) << "valid calls reported an error";

  // Every call with work in it went where the settings say, and nothing else happened.
  const auto after = snapshot();
  const auto route = tmm_blas_test::expected_route();
  // The other precision's routines: no count at all (the maps are empty for them).
  for (auto r : tmm_blas_test::kGemmRoutines) {
    SCOPED_TRACE("routine " + std::to_string(int(r)));
    const tmm_blas_counters& b = before.at(r);
    const tmm_blas_counters& a = after.at(r);
    const uint64_t tiledmm = a.tiledmm_calls - b.tiledmm_calls;
    const uint64_t fallback = a.fallback_calls - b.fallback_calls;
    EXPECT_EQ(a.noop_calls - b.noop_calls, noops[r]);
    EXPECT_EQ(tiledmm + fallback, work_calls[r]);
    EXPECT_EQ(a.tiledmm_flops - b.tiledmm_flops + a.fallback_flops - b.fallback_flops,
              work_flops[r]);
    EXPECT_EQ(a.recovered_calls - b.recovered_calls, 0u);
    EXPECT_EQ(a.lost_calls - b.lost_calls, 0u);
    EXPECT_EQ(a.invalid_calls - b.invalid_calls, 0u);
    if (route == tmm_blas_test::Route::kTiledmm) {
      EXPECT_EQ(fallback, 0u);
    }
    if (route == tmm_blas_test::Route::kFallback) {
      EXPECT_EQ(tiledmm, 0u);
    }
  }
}

// alpha = 0 reads neither A nor B (NaN there stays out): C = beta * C, exactly.
TYPED_TEST(BlasConformance, AlphaZeroReadsNeitherAnorB) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const int m = 19, n = 23, k = 11;
  std::vector<T> a(m * k, nan), b(k * n, nan), c(m * n), c0;
  for (size_t i = 0; i < c.size(); ++i) c[i] = T(int(i % 13) - 6);
  c0 = c;
  const T alpha = 0, beta = 0.5;
  B::gemm("N", "N", &m, &n, &k, &alpha, a.data(), &m, b.data(), &k, &beta, c.data(), &m);
  for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i], T(0.5) * c0[i]) << i;
  B::cblas(kRowMajor, kTrans, kNoTrans, m, n, k, alpha, a.data(), m, b.data(), n, T(0), c.data(),
           n);
  for (T x : c) ASSERT_EQ(x, T(0));
}

// The quick returns of alpha = 0 (either sign) and k = 0, through every entry point,
// made by the library itself and never by the fallback (OpenBLAS's Zen kernels
// multiply NaN in A and B by alpha = 0): A and B full of NaN are never read; beta = 0
// sets C to exact zeros without reading it (NaN in C goes); beta = 1 leaves C as it
// is (NaN included); any other beta gives beta * C exactly. Counted as quick returns.
TYPED_TEST(BlasConformance, AlphaZeroAndKZeroAreQuickReturnsOfEveryEntry) {
  NEED_FALLBACK();
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  int failures = 0;
  for (Entry e : {Entry::kFortran, Entry::kCblasCol, Entry::kCblasRow, Entry::kFortran64,
                  Entry::kCblas64Col, Entry::kCblas64Row}) {
    for (const auto& ak : {std::pair<T, int64_t>{T(0), 11}, {-T(0), 11}, {T(1.5), 0}}) {
      for (T beta : {T(0), T(1), T(0.5), T(-2)}) {
        typename Blas<T>::Case g;
        g.layout =
            (e == Entry::kCblasRow || e == Entry::kCblas64Row) ? TMM_ROW_MAJOR : TMM_COL_MAJOR;
        g.m = 19;
        g.n = 23;
        g.k = ak.second;
        g.alpha = ak.first;
        g.beta = beta;
        g.pad = 2;
        tmm_test::fill_case(g, 7);
        std::fill(g.a.begin(), g.a.end(), nan);
        std::fill(g.b.begin(), g.b.end(), nan);
        for (size_t i = 0; i < g.c.size(); ++i)
          g.c[i] = beta == 0 && i % 3 == 0 ? nan : T(int(i % 13) - 6);
        const std::vector<T> c0 = g.c;
        const auto before = tmm_blas_test::counters(routine_of<T>(e));
        call(e, g, 0);
        const CallCount got = delta(tmm_blas_test::counters(routine_of<T>(e)), before);
        if (!(got == CallCount{0, 1, 0, 0}) && failures++ < 10)
          ADD_FAILURE() << entry_name<T>(e) << " alpha=" << g.alpha << " k=" << g.k
                        << " beta=" << beta << ": not counted as a quick return (work " << got.work
                        << ")";
        const int64_t rows = g.layout == TMM_COL_MAJOR ? g.m : g.n;
        const int64_t cols = g.layout == TMM_COL_MAJOR ? g.n : g.m;
        for (int64_t j = 0; j < cols; ++j) {
          for (int64_t i = 0; i < g.ldc; ++i) {
            const size_t at = size_t(j * g.ldc + i);
            const T want = i >= rows ? c0[at] : beta == 0 ? T(0) : beta * c0[at];
            const bool same = std::isnan(want) ? std::isnan(g.c[at]) : g.c[at] == want;
            if (!same && failures++ < 10)
              ADD_FAILURE() << entry_name<T>(e) << " alpha=" << g.alpha << " k=" << g.k
                            << " beta=" << beta << ": C[" << at << "] = " << g.c[at] << ", want "
                            << want;
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_TRUE(tmm_blas_test::take_reports().empty());
}

// Quick returns: nothing is read or written, NULL pointers included, NaN in C stays.
TYPED_TEST(BlasConformance, QuickReturnsTouchNothing) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  const auto before = tmm_blas_test::counters(TMM_BLAS_ALL);
  const auto before_own = tmm_blas_test::counters(B::kFortran);
  const int zero = 0, one = 1, five = 5;
  const T alpha = 1, beta = 1, beta0 = 0;
  B::gemm("N", "N", &zero, &five, &five, &alpha, nullptr, &one, nullptr, &five, &beta0, nullptr,
          &one);
  B::gemm("T", "N", &five, &zero, &five, &alpha, nullptr, &five, nullptr, &five, &beta0, nullptr,
          &five);
  std::vector<T> c(25, std::numeric_limits<T>::quiet_NaN());
  B::gemm("N", "N", &five, &five, &zero, &alpha, nullptr, &five, nullptr, &one, &beta, c.data(),
          &five);
  B::cblas(kRowMajor, kNoTrans, kNoTrans, 5, 5, 0, T(1), nullptr, 1, nullptr, 5, T(1), c.data(), 5);
  B::cblas(kColMajor, kNoTrans, kNoTrans, 0, 0, 0, T(1), nullptr, 1, nullptr, 1, T(0), nullptr, 1);
  for (T x : c) EXPECT_TRUE(std::isnan(x));
  // k = 0 with beta != 1: C = beta * C, A and B unread, made by the library itself.
  std::vector<T> d(25, T(4));
  const T half = 0.5;
  B::gemm("N", "N", &five, &five, &zero, &alpha, nullptr, &five, nullptr, &one, &half, d.data(),
          &five);
  for (T x : d) EXPECT_EQ(x, T(2));
  const auto after = tmm_blas_test::counters(TMM_BLAS_ALL);
  EXPECT_EQ(after.noop_calls - before.noop_calls, 6u);
  EXPECT_EQ(tmm_blas_test::counters(B::kFortran).noop_calls - before_own.noop_calls, 4u);
  EXPECT_EQ(
      after.tiledmm_calls + after.fallback_calls - before.tiledmm_calls - before.fallback_calls,
      0u);
  EXPECT_TRUE(tmm_blas_test::take_reports().empty());
}

// One invalid Fortran call: its expected INFO (the reference's check order).
struct FortranError {
  const char *ta, *tb;
  int m, n, k, lda, ldb, ldc;
  int info;
};

const FortranError kFortranErrors[] = {
    {"X", "N", 4, 4, 4, 4, 4, 4, 1},  {"N", "Q", 4, 4, 4, 4, 4, 4, 2},
    {"N", "N", -1, 4, 4, 4, 4, 4, 3}, {"N", "N", 4, -1, 4, 4, 4, 4, 4},
    {"N", "N", 4, 4, -1, 4, 4, 4, 5}, {"N", "N", 4, 4, 4, 3, 4, 4, 8},
    {"T", "N", 4, 4, 5, 4, 5, 4, 8},  {"N", "N", 4, 4, 5, 4, 4, 4, 10},
    {"N", "T", 4, 5, 4, 4, 4, 4, 10}, {"N", "N", 4, 4, 4, 4, 4, 3, 13},
    {"N", "N", 0, 4, 4, 0, 4, 1, 8},  {"n", "t", -2, -1, 4, 0, 0, 0, 3},
    {"X", "N", -1, 4, 4, 0, 4, 4, 1}, {"N", "N", 4, 4, 0, 4, 0, 4, 10},
};

// The fallback's Fortran xGEMM of T, as the library calls it (with the hidden lengths).
template <class T>
using FortranGemm = void (*)(const char*, const char*, const int*, const int*, const int*, const T*,
                             const T*, const int*, const T*, const int*, const T*, T*, const int*,
                             size_t, size_t);

// The fallback's own routine, called directly (not through the library).
template <class Fn>
Fn from_fallback(const char* name) {
  void* lib = dlopen(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK").c_str(), RTLD_NOW | RTLD_LOCAL);
  return lib != nullptr ? reinterpret_cast<Fn>(dlsym(lib, name)) : nullptr;
}

bool have_ilp64_fallback() {
  return tmm_blas_test::describe().find("fallback64=none") == std::string::npos;
}

// The fast path's state for one entry point, as tmm_blas_describe reports it.
std::string fast_path_of(const std::string& text, const std::string& entry) {
  const size_t at = text.find("fast path: ");
  if (at == std::string::npos) return "(no fast path in the description)";
  const size_t from = text.find(" " + entry + "=", at);
  const size_t begin = from == std::string::npos ? text.find(": " + entry + "=", at) : from;
  if (begin == std::string::npos) return "(" + entry + " not described)";
  const size_t value = text.find('=', begin) + 1;
  return text.substr(value, text.find_first_of(" ;", value) - value);
}

// The small calls' fast path (blas/entry/fast_path.hpp) is as the settings make it, as
// tmm_blas_describe reports it: off when every call goes to tiledmm; with routing
// "never", a jump to the fallback's routine, or into it inside a scope for the
// reference CBLAS (which calls sgemm_ or dgemm_ back through the PLT); for the ILP64
// names only with an ILP64 fallback (and for cblas_xgemm64_ only when that library has the
// suffixed name, which is taken never to call back: OpenBLAS's does not). Calls made
// once the routes exist are counted on the fallback and compute what the fallback's
// own routine computes, bit for bit. (The fast path and the general way count alike:
// which one a call took is not visible here; the conformance runs under "never" are
// what exercise the fast path's every argument.)
TYPED_TEST(BlasConformance, FastPathOfFortranAndCblasEntriesAsTheSettingsSay) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  const int n = 5;
  const T alpha = 1.25, beta = -0.5;
  std::vector<T> a(n * n), b(n * n), c(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = T(i % 7) - T(3);
    b[i] = T(i % 5) * T(0.5) - T(1);
  }
  const int64_t n64 = n;
  auto run_all = [&](std::vector<T>& out) {
    std::vector<T> c0(n * n, T(0.25));
    out.clear();
    for (int e = 0; e < 4; ++e) {
      std::vector<T> x = c0;
      if (e == 0)
        B::gemm("T", "n", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, x.data(), &n);
      if (e == 1)
        B::cblas(kRowMajor, kNoTrans, kTrans, n, n, n, alpha, a.data(), n, b.data(), n, beta,
                 x.data(), n);
      if (e == 2)
        B::gemm64("n", "C", &n64, &n64, &n64, &alpha, a.data(), &n64, b.data(), &n64, &beta,
                  x.data(), &n64);
      if (e == 3)
        B::cblas64(kColMajor, kConjTrans, kNoTrans, n64, n64, n64, alpha, a.data(), n64, b.data(),
                   n64, beta, x.data(), n64);
      out.insert(out.end(), x.begin(), x.end());
    }
  };
  std::vector<T> first, second;
  run_all(first);  // the first calls make the routes
  const std::string text = tmm_blas_test::describe();
  const auto route = tmm_blas_test::expected_route();
  const bool reference = tmm_blas_test::env_or("TMM_TEST_FALLBACK_FLAVOUR") == "reference";
  std::string cblas64 = "off";
  const size_t f64 = text.find("fallback64=");
  if (have_ilp64_fallback() && f64 != std::string::npos) {
    const size_t from = f64 + std::strlen("fallback64=");
    const std::string path = text.substr(from, text.find(';', from) - from);
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (lib != nullptr && dlsym(lib, B::kCblas64Name) != nullptr) cblas64 = "jump";
  }
  if (route == tmm_blas_test::Route::kTiledmm) {
    for (const char* e : {B::kFortranName, B::kCblasName, B::kFortran64Name, B::kCblas64Name})
      EXPECT_EQ(fast_path_of(text, e), "off") << e << ": " << text;
  } else if (route == tmm_blas_test::Route::kFallback) {
    EXPECT_EQ(fast_path_of(text, B::kFortranName), "jump") << text;
    EXPECT_EQ(fast_path_of(text, B::kCblasName), reference ? "scoped" : "jump") << text;
    EXPECT_EQ(fast_path_of(text, B::kFortran64Name), have_ilp64_fallback() ? "jump" : "off")
        << text;
    EXPECT_EQ(fast_path_of(text, B::kCblas64Name), cblas64) << text;
  }
  // The same calls again, now that the routes are made: the same results, bit for
  // bit, and each counted once where the settings send it.
  const auto before = snapshot();
  run_all(second);
  const auto after = snapshot();
  EXPECT_EQ(first, second);
  for (auto r : routines<T>()) {
    const uint64_t tiledmm = after.at(r).tiledmm_calls - before.at(r).tiledmm_calls;
    const uint64_t fallback = after.at(r).fallback_calls - before.at(r).fallback_calls;
    EXPECT_EQ(tiledmm + fallback, 1u) << "routine " << int(r);
    if (route == tmm_blas_test::Route::kFallback) {
      EXPECT_EQ(fallback, 1u) << "routine " << int(r);
      EXPECT_EQ(after.at(r).fallback_flops - before.at(r).fallback_flops, uint64_t(2 * n * n * n));
    }
  }
  // And what the fallback's own routines compute from the same arguments.
  const auto direct = from_fallback<FortranGemm<T>>(B::kFortranName);
  ASSERT_NE(direct, nullptr);
  std::vector<T> x(n * n, T(0.25));
  direct("T", "n", &n, &n, &n, &alpha, a.data(), &n, b.data(), &n, &beta, x.data(), &n, 1, 1);
  if (route == tmm_blas_test::Route::kFallback) {
    EXPECT_TRUE(std::equal(x.begin(), x.end(), second.begin()));
  }
  // Against FP64, whoever computed them: op(A) op(B) with the four spellings above.
  for (int e = 0; e < 4; ++e) {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        double sum = 0.0;
        for (int l = 0; l < n; ++l) {
          // Column-major views: e 0: A^T B; e 1 (row-major A B^T): C^T = B A^T, the same
          // column-major C^T; e 2: A B^T; e 3: A^T B.
          double av, bv;
          if (e == 0 || e == 3) {
            av = a[i * n + l];
            bv = b[j * n + l];
          } else if (e == 1) {
            // Row-major C (i, j) = sum_l A(i, l) B(j, l): stored at i * n + j.
            av = a[i * n + l];
            bv = b[j * n + l];
          } else {
            av = a[l * n + i];
            bv = b[l * n + j];
          }
          sum += av * bv;
        }
        const double want = double(alpha) * sum + double(beta) * 0.25;
        const size_t at = size_t(e) * n * n + (e == 1 ? size_t(i) * n + j : size_t(j) * n + i);
        EXPECT_NEAR(second[at], want, 1e-5 * (1.0 + std::fabs(want))) << e << " " << i << " " << j;
      }
    }
  }
}

// What one call must do to a routine's counters, as the reference's checks say
// (reference_checks.hpp, the tests' own statement of them): invalid (reported), a
// quick return (m, n or k = 0 or alpha = +-0, whatever beta: the library scales C
// itself), or a product of 2 m n k flops on tiledmm or the fallback. Every call of
// the grids below starts in the entry points' fast path when the routing leaves
// small calls to the fallback (the assembly's on x86-64, and the C++ decision behind
// it), so any call it takes that it should not (invalid, alpha = +-0, a quick
// return), or counts otherwise, fails here: every call the assembly takes is valid
// by the reference's rule, which test_blas_internals shows is entry/args.hpp's.
// (Which way a valid call went is not visible: both count alike. BlasThreshold
// checks the flop bound.)
template <class T>
CallCount expected_count(bool invalid, int m, int n, int k, T alpha) {
  if (invalid) return {1, 0, 0, 0};
  if (m == 0 || n == 0 || alpha == 0 || k == 0) return {0, 1, 0, 0};
  return {0, 0, 1, uint64_t(2) * m * n * k};
}

TYPED_TEST(BlasConformance, EveryFortranAndCblasCallCountedAsTheReferenceChecksSay) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  std::vector<T> a(64, T(0.5)), b(64, T(-1)), c(64, T(2));
  // Negative sizes and leading dimensions (a signed test made unsigned would take
  // them), -0.0 (a zero alpha by value), every spelling of each transpose.
  const int sizes[] = {-1, 0, 1, 2}, lds[] = {-1, 0, 1, 2, 3};
  const T alphas[] = {T(0), -T(0), T(1.5)};
  const T beta = 0.5;
  int64_t checked = 0, failures = 0;
  for (char ta : {'N', 'n', 'T', 't', 'C', 'c', 'X'}) {
    for (char tb : {'N', 'n', 'T', 't', 'C', 'c', '?'})
      for (int m : sizes)
        for (int n : sizes)
          for (int k : sizes)
            for (int lda : lds)
              for (int ldb : lds)
                for (int ldc : lds)
                  for (T alpha : alphas) {
                    const auto before = tmm_blas_test::counters(B::kFortran);
                    B::gemm(&ta, &tb, &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta,
                            c.data(), &ldc);
                    const CallCount got = delta(tmm_blas_test::counters(B::kFortran), before);
                    const int info = tmm_blas_reference::sgemm_info(ta, tb, m, n, k, lda, ldb, ldc);
                    ++checked;
                    if (!(got == expected_count(info != 0, m, n, k, alpha)) && failures++ < 10)
                      ADD_FAILURE()
                          << B::kFortranName << " " << ta << tb << " m=" << m << " n=" << n
                          << " k=" << k << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc
                          << " alpha=" << alpha << ": invalid " << got.invalid << " noop "
                          << got.noop << " work " << got.work << " flops " << got.flops;
                  }
    tmm_blas_test::take_reports();
  }
  for (int layout : {kRowMajor, kColMajor, 103})
    for (int ta : {kNoTrans, kTrans, kConjTrans, 114}) {
      for (int tb : {kNoTrans, kTrans, kConjTrans, 110})
        for (int m : sizes)
          for (int n : sizes)
            for (int k : sizes)
              for (int lda : lds)
                for (int ldb : lds)
                  for (int ldc : lds)
                    for (T alpha : alphas) {
                      const auto before = tmm_blas_test::counters(B::kCblas);
                      B::cblas(layout, ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta,
                               c.data(), ldc);
                      const CallCount got = delta(tmm_blas_test::counters(B::kCblas), before);
                      const int info = tmm_blas_reference::cblas_sgemm_info(layout, ta, tb, m, n, k,
                                                                            lda, ldb, ldc);
                      ++checked;
                      if (!(got == expected_count(info != 0, m, n, k, alpha)) && failures++ < 10)
                        ADD_FAILURE() << B::kCblasName << " " << layout << " " << ta << " " << tb
                                      << " m=" << m << " n=" << n << " k=" << k << " lda=" << lda
                                      << " ldb=" << ldb << " ldc=" << ldc << " alpha=" << alpha
                                      << ": invalid " << got.invalid << " noop " << got.noop
                                      << " work " << got.work << " flops " << got.flops;
                    }
      tmm_blas_test::take_reports();
    }
  EXPECT_EQ(failures, 0) << "of " << checked << " calls";
  EXPECT_EQ(checked, int64_t(7 * 7 + 3 * 4 * 4) * 64 * 125 * 3);
}

// Each invalid call is reported exactly as the fallback's own sgemm_ (dgemm_) reports
// it (the reference: xerbla_("SGEMM ", INFO), or "DGEMM ", in the order above; OpenBLAS differs in
// one place: it takes lda = 0 with m = 0, as the leading-dimension checks there lack the max(1,
// .)). sgemm_64_ (dgemm_64_) goes to the ILP64 reference BLAS when there is one.
TYPED_TEST(BlasConformance, FortranArgumentErrorsGoToXerbla) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  const auto direct = from_fallback<FortranGemm<T>>(B::kFortranName);
  ASSERT_NE(direct, nullptr);
  const bool reference = tmm_blas_test::env_or("TMM_TEST_FALLBACK_FLAVOUR") == "reference";
  const bool have64 = have_ilp64_fallback();
  tmm_blas_test::take_reports();
  std::vector<T> a(64, T(1)), b(64, T(2)), c(64, T(3));
  const auto before = snapshot();
  for (const FortranError& x : kFortranErrors) {
    SCOPED_TRACE(std::string("transa ") + x.ta + " m " + std::to_string(x.m) + " expected info " +
                 std::to_string(x.info));
    const T alpha = 1, beta = 0;
    direct(x.ta, x.tb, &x.m, &x.n, &x.k, &alpha, a.data(), &x.lda, b.data(), &x.ldb, &beta,
           c.data(), &x.ldc, 1, 1);
    const std::vector<Report> fallback_says = tmm_blas_test::take_reports();
    const std::vector<Report> reference_says{{false, B::kXerbla, x.info}};
    if (reference) {
      EXPECT_EQ(fallback_says, reference_says);
    }
    B::gemm(x.ta, x.tb, &x.m, &x.n, &x.k, &alpha, a.data(), &x.lda, b.data(), &x.ldb, &beta,
            c.data(), &x.ldc);
    EXPECT_EQ(tmm_blas_test::take_reports(), fallback_says) << B::kFortranName;
    const int64_t m = x.m, n = x.n, k = x.k, lda = x.lda, ldb = x.ldb, ldc = x.ldc;
    B::gemm64(x.ta, x.tb, &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta, c.data(),
              &ldc);
    EXPECT_EQ(tmm_blas_test::take_reports(), have64 ? reference_says : fallback_says)
        << B::kFortran64Name;
    // (What OpenBLAS accepts, it computes: C = beta * C for lda = 0 with m = 0.)
    if (!fallback_says.empty()) {
      for (T v : c) ASSERT_EQ(v, T(3)) << "C written by an invalid call";
    }
    std::fill(c.begin(), c.end(), T(3));
  }
  const auto after = snapshot();
  const uint64_t n = sizeof kFortranErrors / sizeof kFortranErrors[0];
  for (auto r : {B::kFortran, B::kFortran64}) {
    EXPECT_EQ(after.at(r).invalid_calls - before.at(r).invalid_calls, n);
    EXPECT_EQ(after.at(r).tiledmm_calls + after.at(r).fallback_calls,
              before.at(r).tiledmm_calls + before.at(r).fallback_calls);
  }
}

// An ILP64 argument error whose other values do not fit in 32 bits is still reported
// with the reference's number.
TYPED_TEST(BlasConformance, Ilp64ErrorWithValuesBeyondInt32) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  tmm_blas_test::take_reports();
  std::vector<T> a(4), b(4), c(4, T(3));
  const int64_t m = -1, n = 1, k = 1, huge = int64_t(1) << 40, ldb = 1, ldc = 1;
  const T alpha = 1, beta = 0;
  B::gemm64("N", "N", &m, &n, &k, &alpha, a.data(), &huge, b.data(), &ldb, &beta, c.data(), &ldc);
  const std::vector<Report> got = tmm_blas_test::take_reports();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], (Report{false, B::kXerbla, 3}));
  for (T v : c) EXPECT_EQ(v, T(3));
}

// A valid ILP64 call with a leading dimension beyond 32 bits (only its first column
// is touched): computed by the ILP64 fallback, or by tiledmm when there is none.
TYPED_TEST(BlasConformance, Ilp64LeadingDimensionBeyondInt32) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  const int64_t m = 1, n = 2, k = 1, lda = (int64_t(1) << 32) + 5, ldb = 1, ldc = 1;
  std::vector<T> a{T(3)}, b{T(2), T(-4)}, c{T(100), T(100)};
  const T alpha = 0.5, beta = 1;
  const auto before = tmm_blas_test::counters(B::kFortran64);
  B::gemm64("N", "N", &m, &n, &k, &alpha, a.data(), &lda, b.data(), &ldb, &beta, c.data(), &ldc);
  EXPECT_EQ(c[0], T(103));
  EXPECT_EQ(c[1], T(94));
  const auto after = tmm_blas_test::counters(B::kFortran64);
  if (!have_ilp64_fallback() || tmm_blas_test::expected_route() == tmm_blas_test::Route::kTiledmm) {
    EXPECT_EQ(after.tiledmm_calls - before.tiledmm_calls, 1u) << tmm_blas_test::describe();
  } else {
    EXPECT_EQ(after.fallback_calls - before.fallback_calls, 1u) << tmm_blas_test::describe();
  }
  EXPECT_TRUE(tmm_blas_test::take_reports().empty());
}

// One invalid CBLAS call.
struct CblasError {
  int layout, ta, tb, m, n, k, lda, ldb, ldc;
};

const CblasError kCblasErrors[] = {
    {100, kNoTrans, kNoTrans, 4, 4, 4, 4, 4, 4},   // layout
    {kColMajor, 115, kNoTrans, 4, 4, 4, 4, 4, 4},  // TransA
    {kRowMajor, kNoTrans, 99, 4, 4, 4, 4, 4, 4},   // TransB
    {kColMajor, kNoTrans, kNoTrans, -1, 4, 4, 4, 4, 4},
    {kRowMajor, kNoTrans, kNoTrans, 4, -1, 4, 4, 4, 4},
    {kRowMajor, kNoTrans, kNoTrans, 4, 4, -3, 4, 4, 4},
    {kColMajor, kNoTrans, kNoTrans, 5, 4, 4, 4, 4, 5},   // lda < m
    {kRowMajor, kNoTrans, kNoTrans, 4, 4, 5, 4, 5, 4},   // lda < k
    {kRowMajor, kNoTrans, kTrans, 4, 5, 5, 5, 4, 5},     // ldb < k (B^T stored n x k)
    {kColMajor, kTrans, kNoTrans, 4, 4, 4, 4, 4, 3},     // ldc < m
    {kRowMajor, kNoTrans, kNoTrans, 4, 6, 4, 4, 6, 5},   // ldc < n
    {kRowMajor, kNoTrans, kNoTrans, -1, 4, 4, 0, 4, 4},  // first error wins
};

// Through the shim, an invalid CBLAS call is reported exactly as the fallback's own
// cblas_sgemm (cblas_dgemm) reports it (routine and number), and C is untouched.
TYPED_TEST(BlasConformance, CblasArgumentErrorsReportedAsTheFallbackDoes) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  void* lib = dlopen(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Cblas = void (*)(int, int, int, int, int, int, T, const T*, int, const T*, int, T, T*, int);
  auto direct = reinterpret_cast<Cblas>(dlsym(lib, B::kCblasName));
  ASSERT_NE(direct, nullptr);
  std::vector<T> a(64, T(1)), b(64, T(2)), c(64, T(3));
  tmm_blas_test::take_reports();
  for (const CblasError& x : kCblasErrors) {
    SCOPED_TRACE("layout " + std::to_string(x.layout) + " m " + std::to_string(x.m) + " lda " +
                 std::to_string(x.lda) + " ldb " + std::to_string(x.ldb));
    direct(x.layout, x.ta, x.tb, x.m, x.n, x.k, T(1), a.data(), x.lda, b.data(), x.ldb, T(0),
           c.data(), x.ldc);
    const std::vector<Report> reference = tmm_blas_test::take_reports();
    ASSERT_EQ(reference.size(), 1u) << "the fallback itself reports each error once";
    const auto before = tmm_blas_test::counters(B::kCblas);
    B::cblas(x.layout, x.ta, x.tb, x.m, x.n, x.k, T(1), a.data(), x.lda, b.data(), x.ldb, T(0),
             c.data(), x.ldc);
    std::vector<Report> got = tmm_blas_test::take_reports();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], reference[0]);
    B::cblas64(x.layout, x.ta, x.tb, x.m, x.n, x.k, T(1), a.data(), x.lda, b.data(), x.ldb, T(0),
               c.data(), x.ldc);
    got = tmm_blas_test::take_reports();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0], reference[0]) << B::kCblas64Name;
    const auto after = tmm_blas_test::counters(B::kCblas);
    EXPECT_EQ(after.invalid_calls - before.invalid_calls, 1u);
    for (T v : c) ASSERT_EQ(v, T(3)) << "C written by an invalid call";
  }
}

// The reference BLAS's own numbers (Debian's libblas3: CBLAS checks the layout and
// transposes itself, and lets the Fortran SGEMM or DGEMM report the sizes of the call it
// makes, which for row-major is the transposed one).
TYPED_TEST(BlasConformance, CblasErrorsOverTheReferenceBlas) {
  NEED_FALLBACK();
  using T = TypeParam;
  using B = Blas<T>;
  if (tmm_blas_test::env_or("TMM_TEST_FALLBACK_FLAVOUR") != "reference")
    GTEST_SKIP() << "the fallback is not the reference BLAS";
  // Row-major with an invalid TransB: the reference reports parameter 2, not 3 (its
  // row-major branch checks TransB under TransA's number); the library keeps that.
  const char* const cblas = B::kCblasName;
  const char* const fortran = B::kXerbla;
  const Report expected[] = {
      {true, cblas, 1},    {true, cblas, 2},     {true, cblas, 2},     {false, fortran, 3},
      {false, fortran, 3}, {false, fortran, 5},  {false, fortran, 8},  {false, fortran, 10},
      {false, fortran, 8}, {false, fortran, 13}, {false, fortran, 13}, {false, fortran, 4},
  };
  std::vector<T> a(64, T(1)), b(64, T(2)), c(64, T(3));
  tmm_blas_test::take_reports();
  size_t i = 0;
  for (const CblasError& x : kCblasErrors) {
    B::cblas(x.layout, x.ta, x.tb, x.m, x.n, x.k, T(1), a.data(), x.lda, b.data(), x.ldb, T(0),
             c.data(), x.ldc);
    const std::vector<Report> got = tmm_blas_test::take_reports();
    ASSERT_EQ(got.size(), 1u) << "case " << i;
    EXPECT_EQ(got[0], expected[i]) << "case " << i;
    ++i;
  }
}

TYPED_TEST(BlasConformance, DescribeNamesTheSettingsAndTheFallback) {
  NEED_FALLBACK();
  using B = Blas<TypeParam>;
  const std::string text = tmm_blas_test::describe();
  char resolved[PATH_MAX];
  ASSERT_NE(realpath(tmm_blas_test::env_or("TILEDMM_BLAS_FALLBACK").c_str(), resolved), nullptr);
  EXPECT_NE(text.find(std::string("fallback=") + resolved), std::string::npos) << text;
  EXPECT_NE(text.find("threshold=" + tmm_blas_test::env_or("TILEDMM_BLAS_THRESHOLD", "auto")),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("math=fp32"), std::string::npos) << text;
  // This precision's entry points in the fast path's list, its figures in the model's.
  for (const char* e : {B::kFortranName, B::kCblasName, B::kFortran64Name, B::kCblas64Name})
    EXPECT_NE(text.find(std::string(" ") + e + "="), std::string::npos) << e << ": " << text;
  EXPECT_NE(text.find(sizeof(TypeParam) == sizeof(float) ? ", single gpu " : ", double gpu "),
            std::string::npos)
      << text;
  EXPECT_EQ(tmm_blas_version(), TILEDMM_VERSION);
  tmm_blas_counters c{};
  c.struct_size = sizeof c - 1;
  EXPECT_EQ(tmm_blas_get_counters(B::kFortran, &c), TMM_ERROR_INVALID_VALUE);
  c.struct_size = sizeof c;
  EXPECT_EQ(tmm_blas_get_counters(B::kCblas64, &c), TMM_SUCCESS);
  EXPECT_EQ(tmm_blas_get_counters(tmm_blas_routine(77), &c), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_blas_get_counters(TMM_BLAS_SCIPY_CBLAS_DGEMM_64, &c), TMM_SUCCESS);
  EXPECT_EQ(tmm_blas_get_counters(tmm_blas_routine(TMM_BLAS_SCIPY_CBLAS_DGEMM_64 + 1), &c),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_blas_get_counters(B::kFortran, nullptr), TMM_ERROR_INVALID_VALUE);
}

}  // namespace

namespace {

// TILEDMM_BLAS_FALLBACK naming this library, or a copy of it elsewhere, is refused
// (it would call back into tiledmm): with no other fallback, tiledmm computes every
// call, whatever the threshold, and argument errors still reach xerbla_.
TYPED_TEST(BlasFallback, RefusesItself) {
  if (tmm_blas_test::env_or("TMM_TEST_FALLBACK_IS_SELF") != "1")
    GTEST_SKIP() << "run with TILEDMM_BLAS_FALLBACK naming libtiledmm_blas";
  using T = TypeParam;
  using B = Blas<T>;
  const std::string text = tmm_blas_test::describe();
  EXPECT_NE(text.find("fallback=none (refused: "), std::string::npos) << text;
  EXPECT_NE(text.find("it is libtiledmm_blas itself"), std::string::npos) << text;
  const auto before = tmm_blas_test::counters(TMM_BLAS_ALL);
  const uint32_t seed = tmm_test::fresh_seed();
  for (Entry e : {Entry::kFortran, Entry::kCblasRow}) {
    typename B::Case g;
    g.layout = e == Entry::kCblasRow ? TMM_ROW_MAJOR : TMM_COL_MAJOR;
    g.m = 31;
    g.n = 17;
    g.k = 23;
    g.alpha = T(1.5);
    g.beta = T(0.5);
    tmm_test::fill_case(g, seed);
    call(e, g, 0);
    EXPECT_TRUE(tmm_test::check_case(g)) << entry_name<T>(e);
  }
  const auto after = tmm_blas_test::counters(TMM_BLAS_ALL);
  EXPECT_EQ(after.tiledmm_calls - before.tiledmm_calls, 2u);
  EXPECT_EQ(after.fallback_calls, before.fallback_calls);
  tmm_blas_test::take_reports();
  const int m = -1, one = 1;
  const T x = 1;
  T c = 0;
  B::gemm("N", "N", &m, &one, &one, &x, &x, &one, &x, &one, &x, &c, &one);
  EXPECT_EQ(tmm_blas_test::take_reports(), (std::vector<Report>{{false, B::kXerbla, 3}}));
}

}  // namespace
