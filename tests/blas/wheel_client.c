/* The names pip's NumPy and SciPy wheels call (scipy_sgemm_, scipy_sgemm_64_,
 * scipy_cblas_sgemm, scipy_cblas_sgemm64_ and the same four in double precision),
 * called through libtiledmm_blas preloaded (tests/blas/run_wheel_names.sh). The
 * program links no BLAS: it finds each name with dlsym(RTLD_DEFAULT), as an extension
 * module's reference to it is bound to the preloaded library first.
 *
 *   wheel_client tiledmm|fallback|stub|stub-untouched|stub-late
 *
 * For each name it multiplies small integer matrices (exact in either precision),
 * every transpose and, for the CBLAS names, both layouts, and checks
 *   - the result, exactly, and that the standard twin (dgemm_64_ for scipy_dgemm_64_,
 *     ...) gives the same;
 *   - the name's own counters (tmm_blas_get_counters): each call on tiledmm
 *     (tiledmm) or on a fallback (fallback, stub), and its twin's counters unmoved;
 *   - an invalid call (m = -1): counted as invalid, and reported as its twin reports
 *     the same call (xerbla_ or cblas_xerbla, routine and parameter number, captured
 *     here: the program exports both);
 *   - stub: every call reached the next definition of the same prefixed name
 *     (wheel_stub.so, preloaded after the library: the wheel's own OpenBLAS), the
 *     invalid ones too, and the system BLAS computed none; stub-untouched (every call
 *     routed to tiledmm): the stub saw none of the valid calls, and the invalid ones
 *     still go to it, to be reported as the wheel reports them.
 * With WHEEL_STUB_DLOPEN=path the stub is not preloaded but opened here with
 * RTLD_LOCAL, as Python opens an extension module and its wheel's OpenBLAS (out of
 * dlsym(RTLD_NEXT)'s reach): before any call (stub), or (stub-late) after the ILP64
 * names were called and fell back to the system BLAS, before the LP64 ones, which must
 * then reach it, as SciPy imported after NumPy's first product does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiledmm/tiledmm_blas.h"

static int failures = 0;
#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) {                  \
      printf("FAIL: " __VA_ARGS__); \
      printf("\n");                 \
      ++failures;                   \
    }                               \
  } while (0)

/* The last error report, from xerbla_ or cblas_xerbla. */
static struct {
  int count, cblas, info;
  char routine[32];
} g_report;

void xerbla_(const char* name, const int* info, size_t length);
void xerbla_(const char* name, const int* info, size_t length) {
  size_t n = 0;
  while (n < length && n < sizeof g_report.routine - 1 && name[n] != '\0' && name[n] != ' ') ++n;
  memcpy(g_report.routine, name, n);
  g_report.routine[n] = '\0';
  g_report.count++, g_report.cblas = 0, g_report.info = *info;
}

void cblas_xerbla(int info, const char* routine, const char* format, ...);
void cblas_xerbla(int info, const char* routine, const char* format, ...) {
  (void)format;
  snprintf(g_report.routine, sizeof g_report.routine, "%s", routine);
  g_report.count++, g_report.cblas = 1, g_report.info = info;
}

typedef tmm_status (*get_counters_fn)(tmm_blas_routine, tmm_blas_counters*);
static tmm_blas_counters counters(tmm_blas_routine r) {
  static get_counters_fn get = NULL;
  tmm_blas_counters c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  if (get == NULL) get = (get_counters_fn)dlsym(RTLD_DEFAULT, "tmm_blas_get_counters");
  if (get == NULL || get(r, &c) != TMM_SUCCESS) CHECK(0, "no counters for routine %d", (int)r);
  return c;
}

static int* stub_calls; /* wheel_stub.so's, when it is loaded */
static int* stub_last_info;

/* One name and its twin. */
typedef struct {
  const char* name;
  const char* twin;
  int dbl, wide, cblas;
  tmm_blas_routine routine, twin_routine;
} entry;

static const entry kEntries[] = {
    {"scipy_sgemm_", "sgemm_", 0, 0, 0, TMM_BLAS_SCIPY_SGEMM, TMM_BLAS_SGEMM},
    {"scipy_sgemm_64_", "sgemm_64_", 0, 1, 0, TMM_BLAS_SCIPY_SGEMM_64, TMM_BLAS_SGEMM_64},
    {"scipy_cblas_sgemm", "cblas_sgemm", 0, 0, 1, TMM_BLAS_SCIPY_CBLAS_SGEMM, TMM_BLAS_CBLAS_SGEMM},
    {"scipy_cblas_sgemm64_", "cblas_sgemm64_", 0, 1, 1, TMM_BLAS_SCIPY_CBLAS_SGEMM_64,
     TMM_BLAS_CBLAS_SGEMM_64},
    {"scipy_dgemm_", "dgemm_", 1, 0, 0, TMM_BLAS_SCIPY_DGEMM, TMM_BLAS_DGEMM},
    {"scipy_dgemm_64_", "dgemm_64_", 1, 1, 0, TMM_BLAS_SCIPY_DGEMM_64, TMM_BLAS_DGEMM_64},
    {"scipy_cblas_dgemm", "cblas_dgemm", 1, 0, 1, TMM_BLAS_SCIPY_CBLAS_DGEMM, TMM_BLAS_CBLAS_DGEMM},
    {"scipy_cblas_dgemm64_", "cblas_dgemm64_", 1, 1, 1, TMM_BLAS_SCIPY_CBLAS_DGEMM_64,
     TMM_BLAS_CBLAS_DGEMM_64},
};

enum { M = 7, N = 5, K = 6, LD = 9 }; /* LD > M, N, K: padded leading dimensions */

/* Calls `fn` (one of the eight signatures) on the case; m = -1 makes it invalid. The
 * matrices are doubles, copied to floats for single precision. */
#define CALL_FORTRAN(T, Int)                                                                     \
  do {                                                                                           \
    typedef void (*fn_t)(const char*, const char*, const Int*, const Int*, const Int*, const T*, \
                         const T*, const Int*, const T*, const Int*, const T*, T*, const Int*);  \
    T ta_[LD * LD], tb_[LD * LD], tc_[LD * LD];                                                  \
    for (int i = 0; i < LD * LD; ++i) ta_[i] = (T)a[i], tb_[i] = (T)b[i], tc_[i] = (T)c[i];      \
    const Int m_ = m, n_ = N, k_ = K, ld_ = LD;                                                  \
    const T alpha_ = 2, beta_ = -1;                                                              \
    ((fn_t)fn)(ta ? "T" : "N", tb ? "t" : "n", &m_, &n_, &k_, &alpha_, ta_, &ld_, tb_, &ld_,     \
               &beta_, tc_, &ld_);                                                               \
    for (int i = 0; i < LD * LD; ++i) c[i] = (double)tc_[i];                                     \
  } while (0)
#define CALL_CBLAS(T, Int)                                                                        \
  do {                                                                                            \
    typedef void (*fn_t)(int, int, int, Int, Int, Int, T, const T*, Int, const T*, Int, T, T*,    \
                         Int);                                                                    \
    T ta_[LD * LD], tb_[LD * LD], tc_[LD * LD];                                                   \
    for (int i = 0; i < LD * LD; ++i) ta_[i] = (T)a[i], tb_[i] = (T)b[i], tc_[i] = (T)c[i];       \
    ((fn_t)fn)(row ? 101 : 102, ta ? 112 : 111, tb ? 113 : 111, m, N, K, 2, ta_, LD, tb_, LD, -1, \
               tc_, LD);                                                                          \
    for (int i = 0; i < LD * LD; ++i) c[i] = (double)tc_[i];                                      \
  } while (0)

static void call(const entry* e, void* fn, int m, int ta, int tb, int row, const double* a,
                 const double* b, double* c) {
  if (!e->cblas && !e->dbl && !e->wide) CALL_FORTRAN(float, int);
  if (!e->cblas && !e->dbl && e->wide) CALL_FORTRAN(float, int64_t);
  if (!e->cblas && e->dbl && !e->wide) CALL_FORTRAN(double, int);
  if (!e->cblas && e->dbl && e->wide) CALL_FORTRAN(double, int64_t);
  if (e->cblas && !e->dbl && !e->wide) CALL_CBLAS(float, int);
  if (e->cblas && !e->dbl && e->wide) CALL_CBLAS(float, int64_t);
  if (e->cblas && e->dbl && !e->wide) CALL_CBLAS(double, int);
  if (e->cblas && e->dbl && e->wide) CALL_CBLAS(double, int64_t);
}

/* The exact C = 2 op(A) op(B) - C0 in the caller's layout (all values are small
 * integers). */
static double expected(int i, int j, int ta, int tb, int row, const double* a, const double* b,
                       const double* c0) {
  double s = 0;
  for (int l = 0; l < K; ++l) {
    /* op(A)(i, l), op(B)(l, j) of matrices stored in the layout, ld = LD. */
    const double x =
        row ? (ta ? a[l * LD + i] : a[i * LD + l]) : (ta ? a[i * LD + l] : a[l * LD + i]);
    const double y =
        row ? (tb ? b[j * LD + l] : b[l * LD + j]) : (tb ? b[l * LD + j] : b[j * LD + l]);
    s += x * y;
  }
  return 2 * s - (row ? c0[i * LD + j] : c0[j * LD + i]);
}

static void check_entry(const entry* e, const char* mode) {
  void* fn = dlsym(RTLD_DEFAULT, e->name);
  void* twin = dlsym(RTLD_DEFAULT, e->twin);
  if (fn == NULL || twin == NULL) {
    CHECK(0, "%s or %s not found", e->name, e->twin);
    return;
  }
  double a[LD * LD], b[LD * LD], c0[LD * LD], c[LD * LD], ct[LD * LD];
  for (int i = 0; i < LD * LD; ++i) {
    a[i] = (double)((i * 7) % 11 - 5);
    b[i] = (double)((i * 5) % 9 - 4);
    c0[i] = (double)((i * 3) % 7 - 3);
  }
  const tmm_blas_counters before = counters(e->routine);
  const int stub_before = stub_calls ? *stub_calls : 0;
  int calls = 0;
  for (int row = 0; row <= e->cblas; ++row)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        memcpy(c, c0, sizeof c);
        memcpy(ct, c0, sizeof ct);
        call(e, fn, M, ta, tb, row, a, b, c);
        call(e, twin, M, ta, tb, row, a, b, ct);
        ++calls;
        int bad = 0;
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < N; ++j) {
            const double want = expected(i, j, ta, tb, row, a, b, c0);
            const double got = row ? c[i * LD + j] : c[j * LD + i];
            bad += got != want;
          }
        /* The padding stays as it was. */
        for (int p = 0; p < LD * LD; ++p) {
          const int i = row ? p / LD : p % LD, j = row ? p % LD : p / LD;
          if (i >= M || j >= N) bad += c[p] != c0[p];
        }
        CHECK(bad == 0, "%s %s%c%c: %d elements wrong", e->name, row ? "row " : "", ta ? 'T' : 'N',
              tb ? 'T' : 'N', bad);
        CHECK(memcmp(c, ct, sizeof c) == 0, "%s and %s differ", e->name, e->twin);
      }
  const tmm_blas_counters after = counters(e->routine);
  const uint64_t on_tiledmm = after.tiledmm_calls - before.tiledmm_calls;
  const uint64_t on_fallback = after.fallback_calls - before.fallback_calls;
  const int want_tiledmm = !strcmp(mode, "tiledmm") || !strcmp(mode, "stub-untouched");
  CHECK(on_tiledmm == (uint64_t)(want_tiledmm ? calls : 0) &&
            on_fallback == (uint64_t)(want_tiledmm ? 0 : calls),
        "%s: %d calls, counted %llu on tiledmm and %llu on the fallback (%s expected)", e->name,
        calls, (unsigned long long)on_tiledmm, (unsigned long long)on_fallback,
        want_tiledmm ? "tiledmm" : "the fallback");
  if (stub_calls != NULL) {
    const int reached = *stub_calls - stub_before;
    const int want = !strcmp(mode, "stub") ? calls : 0;
    CHECK(reached == want,
          "%s: the wheel's own routine (wheel_stub) got %d of %d calls, %d "
          "expected",
          e->name, reached, calls, want);
  }

  /* An invalid call: m = -1. Counted as invalid; reported as the twin reports it (or
   * handed to the wheel's own routine). */
  memset(&g_report, 0, sizeof g_report);
  const int stub_before_error = stub_calls ? *stub_calls : 0;
  call(e, fn, -1, 0, 0, 0, a, b, c);
  const int count = g_report.count, cblas = g_report.cblas, info = g_report.info;
  char routine[32];
  snprintf(routine, sizeof routine, "%s", g_report.routine);
  memset(&g_report, 0, sizeof g_report);
  call(e, twin, -1, 0, 0, 0, a, b, ct);
  CHECK(counters(e->routine).invalid_calls - after.invalid_calls == 1,
        "%s: the invalid call not counted as invalid", e->name);
  if (stub_calls != NULL) {
    CHECK(*stub_calls - stub_before_error == 1 && *stub_last_info == (e->cblas ? 4 : 3),
          "%s: the invalid call did not reach the wheel's own routine with info %d", e->name,
          e->cblas ? 4 : 3);
  } else {
    CHECK(count == 1 && count == g_report.count && cblas == g_report.cblas &&
              info == g_report.info && !strcmp(routine, g_report.routine),
          "%s reported %s(%s, %d) x%d, %s reports %s(%s, %d) x%d", e->name,
          cblas ? "cblas_xerbla" : "xerbla_", routine, info, count, e->twin,
          g_report.cblas ? "cblas_xerbla" : "xerbla_", g_report.routine, g_report.info,
          g_report.count);
    printf("%s: invalid m reported as %s(%s, %d), as %s does\n", e->name,
           cblas ? "cblas_xerbla" : "xerbla_", routine, info, e->twin);
  }
}

/* Opens wheel_stub.so as Python opens a wheel's libraries: RTLD_LOCAL. */
static int open_stub(const char* path) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return 0;
  stub_calls = (int*)dlsym(h, "wheel_stub_calls");
  stub_last_info = (int*)dlsym(h, "wheel_stub_last_info");
  return stub_calls != NULL && stub_last_info != NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "tiledmm") && strcmp(mode, "fallback") && strcmp(mode, "stub") &&
      strcmp(mode, "stub-untouched") && strcmp(mode, "stub-late")) {
    fprintf(stderr, "usage: wheel_client tiledmm|fallback|stub|stub-untouched|stub-late\n");
    return 2;
  }
  const char* dlopen_stub = getenv("WHEEL_STUB_DLOPEN");
  const int late = !strcmp(mode, "stub-late");
  if (late && dlopen_stub == NULL) {
    printf("FAIL: stub-late needs WHEEL_STUB_DLOPEN\n");
    return 1;
  }
  if (dlopen_stub != NULL && !late && !open_stub(dlopen_stub)) {
    printf("FAIL: cannot open %s\n", dlopen_stub);
    return 1;
  }
  if (dlopen_stub == NULL) {
    stub_calls = (int*)dlsym(RTLD_DEFAULT, "wheel_stub_calls");
    stub_last_info = (int*)dlsym(RTLD_DEFAULT, "wheel_stub_last_info");
  }
  if (!strncmp(mode, "stub", 4) && !late && stub_calls == NULL) {
    printf("FAIL: wheel_stub.so is not loaded\n");
    return 1;
  }
  if (dlsym(RTLD_DEFAULT, "tmm_blas_get_counters") == NULL) {
    printf("FAIL: libtiledmm_blas is not loaded (LD_PRELOAD)\n");
    return 1;
  }
  tmm_blas_counters twins_before[8];
  for (int i = 0; i < 8; ++i) twins_before[i] = counters(kEntries[i].twin_routine);
  if (late) {
    /* The ILP64 names first, no wheel loaded: the system BLAS; then the stub, and the
     * LP64 names must reach it. */
    for (int i = 0; i < 8; ++i)
      if (kEntries[i].wide) check_entry(&kEntries[i], "fallback");
    if (!open_stub(dlopen_stub)) {
      printf("FAIL: cannot open %s\n", dlopen_stub);
      return 1;
    }
    for (int i = 0; i < 8; ++i)
      if (!kEntries[i].wide) check_entry(&kEntries[i], "stub");
  } else {
    /* The twins are called too, after each name: their counters move by exactly their
     * own calls, checked below. */
    for (int i = 0; i < 8; ++i) check_entry(&kEntries[i], mode);
  }
  for (int i = 0; i < 8; ++i) {
    const tmm_blas_counters t = counters(kEntries[i].twin_routine);
    const uint64_t calls = t.tiledmm_calls + t.fallback_calls - twins_before[i].tiledmm_calls -
                           twins_before[i].fallback_calls;
    const uint64_t want = kEntries[i].cblas ? 8 : 4;
    CHECK(calls == want, "%s counted %llu calls, %llu expected (its own only)", kEntries[i].twin,
          (unsigned long long)calls, (unsigned long long)want);
  }
  printf("wheel_client %s: %s\n", mode, failures == 0 ? "all checks passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
