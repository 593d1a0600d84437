/* tiledmm's CPU backend against the system BLAS it may call: tmm_sgemm and tmm_dgemm
 * on host memory with a CPU handle (AUTO, or --algorithm blocked for the own kernels),
 * timed in turns with the BLAS's own sgemm_ and dgemm_, called directly from the
 * library this program dlopens (default libopenblas.so.0; the same object the CPU
 * backend loads, so both use the same threads). For a machine without a GPU:
 *
 *   build/examples/cpu_bench --sizes 1024,2048,4096 --repeats 5
 *
 * Each size is a square column-major product C = A B (beta = 0) on random data in
 * [-1, 1), the same A, B for both; one warm-up call each, then --repeats rounds of
 * one timed call each, the order alternating (tiledmm first, then the BLAS first).
 * Prints the median GFLOP/s of each, their ratio (tiledmm / BLAS), the kernel
 * tiledmm's report names, and the largest difference between the two results relative
 * to the sum of |a||b| over k (a few units of the precision's epsilon times sqrt(k)
 * is rounding).
 *
 *   --sizes N,N,...        square sizes (default 1024,2048,4096)
 *   --repeats R            timed rounds per size and precision (default 5)
 *   --precision s|d|both   (default both)
 *   --blas LIB             the BLAS to call directly (default libopenblas.so.0)
 *   --algorithm auto|blocked  tiledmm's algorithm (default auto)
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tiledmm/tiledmm.h"

typedef void (*sgemm_fn)(const char*, const char*, const int*, const int*, const int*, const float*,
                         const float*, const int*, const float*, const int*, const float*, float*,
                         const int*, size_t, size_t);
typedef void (*dgemm_fn)(const char*, const char*, const int*, const int*, const int*,
                         const double*, const double*, const int*, const double*, const int*,
                         const double*, double*, const int*, size_t, size_t);

static sgemm_fn blas_sgemm;
static dgemm_fn blas_dgemm;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_double(const void* x, const void* y) {
  const double a = *(const double*)x, b = *(const double*)y;
  return (a > b) - (a < b);
}

static double median(double* v, int count) {
  qsort(v, (size_t)count, sizeof *v, compare_double);
  return count % 2 ? v[count / 2] : 0.5 * (v[count / 2 - 1] + v[count / 2]);
}

/* One product by tiledmm (which = 0) or the BLAS (1); returns seconds, or -1. */
static double run(int which, int dbl, tmm_handle h, int n, const void* a, const void* b, void* c) {
  const char no = 'N';
  const double t0 = now_s();
  if (dbl) {
    const double one = 1.0, zero = 0.0;
    if (which == 0) {
      if (tmm_dgemm(h, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, one, a, n, b, n, zero, c,
                    n) != TMM_SUCCESS)
        return -1.0;
    } else {
      blas_dgemm(&no, &no, &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
    }
  } else {
    const float one = 1.0f, zero = 0.0f;
    if (which == 0) {
      if (tmm_sgemm(h, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, one, a, n, b, n, zero, c,
                    n) != TMM_SUCCESS)
        return -1.0;
    } else {
      blas_sgemm(&no, &no, &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n, 1, 1);
    }
  }
  return now_s() - t0;
}

static double element(const void* v, int dbl, size_t i) {
  return dbl ? ((const double*)v)[i] : (double)((const float*)v)[i];
}

/* The largest |c1 - c2| over 256 sampled elements, relative to sum |a||b| there. */
static double difference(int dbl, int n, const void* a, const void* b, const void* c1,
                         const void* c2) {
  double worst = 0.0;
  unsigned seed = 12345u;
  for (int s = 0; s < 256; ++s) {
    seed = seed * 1103515245u + 12345u;
    const int i = (int)((seed >> 8) % (unsigned)n);
    seed = seed * 1103515245u + 12345u;
    const int j = (int)((seed >> 8) % (unsigned)n);
    double scale = 0.0;
    for (int q = 0; q < n; ++q)
      scale += fabs(element(a, dbl, (size_t)q * n + i) * element(b, dbl, (size_t)j * n + q));
    const size_t at = (size_t)j * n + i;
    const double d = fabs(element(c1, dbl, at) - element(c2, dbl, at)) / (scale + 1e-300);
    if (d > worst) worst = d;
  }
  return worst;
}

static int bench(tmm_handle h, int dbl, int n, int repeats) {
  const size_t e = dbl ? sizeof(double) : sizeof(float);
  const size_t count = (size_t)n * (size_t)n;
  void* a = malloc(count * e);
  void* b = malloc(count * e);
  void* c1 = malloc(count * e);
  void* c2 = malloc(count * e);
  double* t_tmm = malloc(sizeof(double) * (size_t)repeats);
  double* t_blas = malloc(sizeof(double) * (size_t)repeats);
  int ok = a && b && c1 && c2 && t_tmm && t_blas;
  if (ok) {
    srand(42u + (unsigned)n);
    for (size_t i = 0; i < count; ++i) {
      const double x = 2.0 * rand() / ((double)RAND_MAX + 1.0) - 1.0;
      const double y = 2.0 * rand() / ((double)RAND_MAX + 1.0) - 1.0;
      if (dbl) {
        ((double*)a)[i] = x;
        ((double*)b)[i] = y;
      } else {
        ((float*)a)[i] = (float)x;
        ((float*)b)[i] = (float)y;
      }
    }
    ok = run(0, dbl, h, n, a, b, c1) >= 0.0 && run(1, dbl, h, n, a, b, c2) >= 0.0;  // warm-up
  }
  for (int r = 0; ok && r < repeats; ++r) {
    const int first = r % 2;  // alternate which runs first
    const double t_first = run(first, dbl, h, n, a, b, first ? c2 : c1);
    const double t_second = run(!first, dbl, h, n, a, b, first ? c1 : c2);
    ok = t_first >= 0.0 && t_second >= 0.0;
    t_tmm[r] = first ? t_second : t_first;
    t_blas[r] = first ? t_first : t_second;
  }
  if (ok) {
    tmm_report rep;
    memset(&rep, 0, sizeof rep);
    rep.struct_size = sizeof rep;
    tmm_get_last_report(h, &rep);
    const double flops = 2.0 * n * (double)n * n;
    const double g_tmm = flops / median(t_tmm, repeats) * 1e-9;
    const double g_blas = flops / median(t_blas, repeats) * 1e-9;
    printf("%-6s %6d  %9.1f  %9.1f  %6.3fx  %8.1e  %s (%d threads)\n", dbl ? "dgemm" : "sgemm", n,
           g_tmm, g_blas, g_tmm / g_blas, difference(dbl, n, a, b, c1, c2), rep.kernel,
           rep.host_threads);
    fflush(stdout);
  } else {
    fprintf(stderr, "n = %d: %s\n", n, tmm_get_error_message(h));
  }
  free(a);
  free(b);
  free(c1);
  free(c2);
  free(t_tmm);
  free(t_blas);
  return ok;
}

int main(int argc, char** argv) {
  const char* sizes = "1024,2048,4096";
  const char* precision = "both";
  const char* blas = "libopenblas.so.0";
  const char* algorithm = "auto";
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && strcmp(argv[i], "--sizes") == 0) {
      sizes = argv[++i];
    } else if (i + 1 < argc && strcmp(argv[i], "--repeats") == 0) {
      repeats = atoi(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--precision") == 0) {
      precision = argv[++i];
    } else if (i + 1 < argc && strcmp(argv[i], "--blas") == 0) {
      blas = argv[++i];
    } else if (i + 1 < argc && strcmp(argv[i], "--algorithm") == 0) {
      algorithm = argv[++i];
    } else {
      fprintf(stderr,
              "usage: %s [--sizes N,N,...] [--repeats R] [--precision s|d|both] [--blas LIB] "
              "[--algorithm auto|blocked]\n",
              argv[0]);
      return 2;
    }
  }
  if (repeats < 1) repeats = 1;
  void* lib = dlopen(blas, RTLD_NOW | RTLD_LOCAL);
  blas_sgemm = lib ? (sgemm_fn)dlsym(lib, "sgemm_") : NULL;
  blas_dgemm = lib ? (dgemm_fn)dlsym(lib, "dgemm_") : NULL;
  if (blas_sgemm == NULL || blas_dgemm == NULL) {
    fprintf(stderr, "cannot load sgemm_ and dgemm_ from %s: %s\n", blas, dlerror());
    return 1;
  }
  tmm_handle h;
  if (tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0) != TMM_SUCCESS) {
    fprintf(stderr, "tmm_create_with_backend: %s\n", tmm_get_error_message(NULL));
    return 1;
  }
  if (strcmp(algorithm, "blocked") == 0) tmm_set_algorithm(h, TMM_ALGO_BLOCKED);
  printf("tiledmm %d, CPU backend (%s) against %s, median of %d, interleaved\n", tmm_version(),
         algorithm, blas, repeats);
  printf("%-6s %6s  %9s  %9s  %7s  %8s  %s\n", "", "n", "tiledmm", "BLAS", "ratio", "diff",
         "tiledmm's kernel");
  printf("%-6s %6s  %9s  %9s\n", "", "", "GFLOP/s", "GFLOP/s");
  int ok = 1;
  for (const char* p = sizes; ok && *p != '\0';) {
    const int n = atoi(p);
    if (n > 0) {
      if (strcmp(precision, "d") != 0) ok = bench(h, 0, n, repeats);
      if (ok && strcmp(precision, "s") != 0) ok = bench(h, 1, n, repeats);
    }
    p = strchr(p, ',');
    if (p == NULL) break;
    ++p;
  }
  tmm_destroy(h);
  return ok ? 0 : 1;
}
