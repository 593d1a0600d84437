/* A program built against the system BLAS only (-lblas), as any existing program is:
 * run with libtiledmm_blas preloaded (tests/blas/run_preload.sh), it checks that
 *   - loading the library did nothing: no thread started (as many threads as the
 *     same program has without it: PRELOAD_BASELINE_THREADS), no log file written,
 *     until the first GEMM call;
 *   - ddot_ (and every routine but the GEMMs) is the real BLAS's: correct, and the
 *     library neither counted nor logged it;
 *   - sgemm_, cblas_sgemm, dgemm_ and cblas_dgemm go through the library (its
 *     counters, read with dlsym: the program does not link it) and are right;
 *   - a child of fork() calls sgemm_ and gets the right result.
 * Exits 0 when all hold; prints what failed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tiledmm/tiledmm_blas.h"

double ddot_(const int* n, const double* x, const int* incx, const double* y, const int* incy);
void cblas_dgemm(int layout, int ta, int tb, int m, int n, int k, double alpha, const double* a,
                 int lda, const double* b, int ldb, double beta, double* c, int ldc);
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc);
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc);
void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float* a,
                 int lda, const float* b, int ldb, float beta, float* c, int ldc);

static int failures = 0;
#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) {                  \
      printf("FAIL: " __VA_ARGS__); \
      printf("\n");                 \
      ++failures;                   \
    }                               \
  } while (0)

static int threads(void) {
  int n = 0;
  DIR* d = opendir("/proc/self/task");
  struct dirent* e;
  while (d && (e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

typedef tmm_status (*get_counters_fn)(tmm_blas_routine, tmm_blas_counters*);

static tmm_blas_counters counters(tmm_blas_routine r) {
  static get_counters_fn get = NULL;
  tmm_blas_counters c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  if (get == NULL) get = (get_counters_fn)dlsym(RTLD_DEFAULT, "tmm_blas_get_counters");
  if (get != NULL) get(r, &c);
  return c;
}

/* C (m x n) = A (m x k) B (k x n), column-major, with small integers: exact in FP32. */
enum { M = 37, N = 29, K = 41 };
static float a[M * K], b[K * N], c[M * N];
static double exact(int i, int j) {
  double s = 0;
  for (int l = 0; l < K; ++l) s += (double)a[l * M + i] * b[j * K + l];
  return s;
}
static int sgemm_right(void) {
  const int m = M, n = N, k = K;
  const float one = 1.0f, zero = 0.0f;
  for (int i = 0; i < M * N; ++i) c[i] = NAN;
  sgemm_("N", "N", &m, &n, &k, &one, a, &m, b, &k, &zero, c, &m);
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < M; ++i)
      if (c[j * M + i] != exact(i, j)) return 0;
  return 1;
}

int main(int argc, char** argv) {
  const char* log = argc > 1 ? argv[1] : NULL;
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 5 - 2);
  for (int i = 0; i < K * N; ++i) b[i] = (float)((i * 3) % 7 - 3);

  /* --threads: the threads a process has at this point without the library (OpenBLAS
   * starts its pool when it loads), for the comparison below. */
  if (log != NULL && !strcmp(log, "--threads")) {
    printf("%d\n", threads());
    return 0;
  }
  const char* baseline = getenv("PRELOAD_BASELINE_THREADS");
  CHECK(dlsym(RTLD_DEFAULT, "tmm_blas_get_counters") != NULL, "libtiledmm_blas is not preloaded");
  CHECK(baseline == NULL || threads() == atoi(baseline),
        "%d threads before any BLAS call, %s without the library", threads(), baseline);
  CHECK(log == NULL || access(log, F_OK) != 0, "the log exists before any BLAS call");

  const double x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y[9] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
  /* ddot_: the real BLAS, untouched by the library. */
  {
    const int n = 9, one = 1;
    const double dot = ddot_(&n, x, &one, y, &one);
    CHECK(dot == 165.0, "ddot_ result %g", dot);
    const tmm_blas_counters all = counters(TMM_BLAS_ALL);
    CHECK(all.tiledmm_calls + all.fallback_calls + all.noop_calls + all.invalid_calls == 0,
          "ddot_ was counted by libtiledmm_blas");
    CHECK(log == NULL || access(log, F_OK) != 0, "ddot_ started libtiledmm_blas (log written)");
  }

  /* dgemm_ and cblas_dgemm: through the library. */
  {
    const int n = 3;
    const double one = 1.0, zero = 0.0;
    double z[9], w[9];
    dgemm_("N", "T", &n, &n, &n, &one, x, &n, y, &n, &zero, z, &n);
    /* z(0,0) = 1*9 + 4*6 + 7*3, z(2,2) = 3*7 + 6*4 + 9*1, z(2,0) = 3*9 + 6*6 + 9*3 */
    CHECK(z[0] == 54.0 && z[8] == 54.0 && z[2] == 90.0, "dgemm_ result %g %g %g", z[0], z[8], z[2]);
    /* Row-major Y^T X (y and x read by rows) is column-major X Y^T: the same numbers. */
    cblas_dgemm(101, 112, 111, n, n, n, 1.0, y, n, x, n, 0.0, w, n);
    CHECK(memcmp(z, w, sizeof z) == 0, "cblas_dgemm result differs from dgemm_");
  }

  /* sgemm_ and cblas_sgemm: through the library. */
  CHECK(sgemm_right(), "sgemm_ result");
  {
    float d[M * N];
    cblas_sgemm(102, 111, 111, M, N, K, 1.0f, a, M, b, K, 0.0f, d, M);
    CHECK(memcmp(c, d, sizeof d) == 0, "cblas_sgemm result differs from sgemm_");
  }
  const tmm_blas_routine routines[4] = {TMM_BLAS_SGEMM, TMM_BLAS_CBLAS_SGEMM, TMM_BLAS_DGEMM,
                                        TMM_BLAS_CBLAS_DGEMM};
  const char* names[4] = {"sgemm_", "cblas_sgemm", "dgemm_", "cblas_dgemm"};
  const char* expect = getenv("PRELOAD_EXPECT_ROUTE");
  for (int r = 0; r < 4; ++r) {
    const tmm_blas_counters x = counters(routines[r]);
    printf("%s: tiledmm %llu, fallback %llu\n", names[r], (unsigned long long)x.tiledmm_calls,
           (unsigned long long)x.fallback_calls);
    CHECK(x.tiledmm_calls + x.fallback_calls == 1, "the library did not see the call of %s",
          names[r]);
    if (expect && !strcmp(expect, "tiledmm"))
      CHECK(x.tiledmm_calls == 1, "expected tiledmm to compute %s", names[r]);
  }

  /* fork: the child's BLAS works. */
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(60);
    const tmm_blas_counters before = counters(TMM_BLAS_SGEMM);
    const int ok = sgemm_right();
    const tmm_blas_counters after = counters(TMM_BLAS_SGEMM);
    _exit(ok && after.tiledmm_calls + after.fallback_calls ==
                      before.tiledmm_calls + before.fallback_calls + 1
              ? 0
              : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the child of fork() got a wrong sgemm_ result (or hung)");
  printf("%s\n", failures ? "preload_client: FAILED" : "preload_client: all checks passed");
  return failures ? 1 : 0;
}
