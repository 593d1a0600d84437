/* cblas_sgemm as an existing program calls it: linked against the system BLAS
 * (-lblas), not against tiledmm. Run it as it is, then with libtiledmm_blas
 * preloaded, and compare:
 *
 *   build/examples/blas_bench
 *   LD_PRELOAD=build/blas/libtiledmm_blas.so.1 build/examples/blas_bench
 *
 * Each size is a square row-major product C = A B with beta = 0 and, as NumPy's
 * a @ b does, a freshly allocated C for every call (its allocation is timed with
 * it; --reuse-c keeps one C). Small products are timed in batches of calls, so that
 * the per-call cost of the library shows. Prints the median of the repeats in ms
 * and TFLOP/s, the worst error of 64 sampled elements against a double-precision
 * reference (relative to the FP32 rounding bound: <= 1 passes), and, when
 * libtiledmm_blas is loaded, where its calls ran.
 *
 *   --sizes 1024,2048,4096,8192   the square sizes (default)
 *   --repeats R                   timed samples per size (default 5; 1 warm-up first)
 *   --reuse-c                     one C per size instead of a fresh one per call
 *   --csv FILE                    also write the table as CSV
 *   --expect-tiledmm              fail unless libtiledmm_blas computed every product
 *
 * Exits 0 when every check passes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tiledmm/tiledmm_blas.h" /* only the counters' layout: nothing is linked */

/* CBLAS, as cblas.h declares it (its enums are ints). */
void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
enum { kRowMajor = 101, kNoTrans = 111 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void* x, const void* y) {
  const double a = *(const double*)x, b = *(const double*)y;
  return (a > b) - (a < b);
}

/* Uniform values in [-1, 1) from a 64-bit LCG (no libc rand state). */
static void fill(float* x, size_t count, uint64_t seed) {
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((double)(seed >> 40) / 8388608.0 - 1.0);
  }
}

/* The worst |C - ref| / bound over 64 sampled elements (<= 1 passes). */
static double sampled_error(int n, const float* a, const float* b, const float* c) {
  const double eps = 5.960464477539063e-08; /* 2^-24 */
  double worst = 0;
  for (int s = 0; s < 64; ++s) {
    const int i = (int)(((uint64_t)s * 2654435761u) % (uint64_t)n);
    const int j = (int)(((uint64_t)s * 40503u + 17u) % (uint64_t)n);
    double dot = 0, mag = 0;
    for (int l = 0; l < n; ++l) {
      const double t = (double)a[(size_t)i * n + l] * b[(size_t)l * n + j];
      dot += t;
      mag += fabs(t);
    }
    const double e = fabs((double)c[(size_t)i * n + j] - dot) / (2.0 * (n + 2) * eps * mag + 1e-30);
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

typedef tmm_status (*get_counters_fn)(tmm_blas_routine, tmm_blas_counters*);

static get_counters_fn shim_counters(void) {
  get_counters_fn f = NULL;
  void* symbol = dlsym(RTLD_DEFAULT, "tmm_blas_get_counters");
  memcpy(&f, &symbol, sizeof f); /* ISO C has no cast from object to function pointer */
  return f;
}

static tmm_blas_counters read_counters(get_counters_fn get) {
  tmm_blas_counters c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  if (get != NULL) get(TMM_BLAS_CBLAS_SGEMM, &c);
  return c;
}

int main(int argc, char** argv) {
  const char* sizes = "1024,2048,4096,8192";
  const char* csv_path = NULL;
  int repeats = 5, reuse_c = 0, expect_tiledmm = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes = argv[++i];
    } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
      repeats = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
      csv_path = argv[++i];
    } else if (!strcmp(argv[i], "--reuse-c")) {
      reuse_c = 1;
    } else if (!strcmp(argv[i], "--expect-tiledmm")) {
      expect_tiledmm = 1;
    } else {
      fprintf(stderr,
              "usage: blas_bench [--sizes N,N,...] [--repeats R] [--reuse-c] [--csv FILE] "
              "[--expect-tiledmm]\n");
      return 2;
    }
  }
  if (repeats < 1) repeats = 1;
  const get_counters_fn get = shim_counters();
  printf("cblas_sgemm, row-major NN, beta = 0, %s C per call; libtiledmm_blas %s\n",
         reuse_c ? "one" : "a fresh", get ? "loaded" : "not loaded (the system BLAS alone)");
  printf("%6s %8s %12s %10s %10s %s\n", "n", "calls", "median_ms", "TFLOP/s", "max_err",
         get ? "ran on" : "");
  FILE* csv = csv_path ? fopen(csv_path, "w") : NULL;
  if (csv)
    fprintf(csv, "n,calls_per_sample,median_ms,tflops,max_err,tiledmm_calls,fallback_calls\n");
  int failures = 0;
  char* list = strdup(sizes);
  for (char* tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
    const int n = atoi(tok);
    if (n <= 0) continue;
    const size_t count = (size_t)n * (size_t)n;
    float* a = malloc(count * sizeof(float));
    float* b = malloc(count * sizeof(float));
    float* kept = reuse_c ? malloc(count * sizeof(float)) : NULL;
    double* samples = malloc((size_t)repeats * sizeof(double));
    if (!a || !b || !samples || (reuse_c && !kept)) {
      fprintf(stderr, "n = %d: out of memory\n", n);
      return 1;
    }
    fill(a, count, 1u + (uint64_t)n);
    fill(b, count, 2u + (uint64_t)n);
    const double flops = 2.0 * n * (double)n * n;
    long calls = 1;
    double worst = 0;
    const tmm_blas_counters before = read_counters(get);
    for (int r = -1; r < repeats; ++r) { /* r = -1: the warm-up, which also sizes batches */
      if (r == 0) {
        /* Calls per sample: enough for about 20 ms, so that small products time well. */
        for (double t = 0; calls < 10000000; calls *= 2) {
          const double t1 = now();
          for (long call = 0; call < calls; ++call) {
            float* c = reuse_c ? kept : malloc(count * sizeof(float));
            if (c == NULL) return 1;
            cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
            if (!reuse_c) free(c);
          }
          t = now() - t1;
          if (t >= 0.02) break;
        }
      }
      const double t0 = now();
      for (long call = 0; call < calls; ++call) {
        float* c = reuse_c ? kept : malloc(count * sizeof(float));
        if (c == NULL) {
          fprintf(stderr, "n = %d: out of memory\n", n);
          return 1;
        }
        cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        if (call == 0 && r == repeats - 1) worst = sampled_error(n, a, b, c);
        if (!reuse_c) free(c);
      }
      const double seconds = now() - t0;
      if (r >= 0) samples[r] = seconds / (double)calls;
    }
    qsort(samples, (size_t)repeats, sizeof(double), compare_doubles);
    const double median = samples[repeats / 2];
    const tmm_blas_counters after = read_counters(get);
    const unsigned long long on_tiledmm = after.tiledmm_calls - before.tiledmm_calls;
    const unsigned long long on_fallback = after.fallback_calls - before.fallback_calls;
    char where[64] = "";
    if (get) snprintf(where, sizeof where, "tiledmm %llu, fallback %llu", on_tiledmm, on_fallback);
    const int pass = worst <= 1.0;
    printf("%6d %8ld %12.4f %10.3f %10.3g %s%s\n", n, calls, median * 1e3, flops / median / 1e12,
           worst, where, pass ? "" : "  FAIL: wrong result");
    if (csv)
      fprintf(csv, "%d,%ld,%.6f,%.4f,%.3g,%llu,%llu\n", n, calls, median * 1e3,
              flops / median / 1e12, worst, on_tiledmm, on_fallback);
    failures += !pass;
    if (expect_tiledmm && (get == NULL || on_fallback != 0 || on_tiledmm == 0)) {
      printf("FAIL: n = %d: expected libtiledmm_blas to compute every product\n", n);
      ++failures;
    }
    free(a);
    free(b);
    free(kept);
    free(samples);
  }
  free(list);
  if (csv) fclose(csv);
  return failures ? 1 : 0;
}
