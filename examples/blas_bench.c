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
 * --ab-small: the shim's own cost per call, measured in one process (run it with
 * the library preloaded, pinned, e.g. taskset -c 1 and OPENBLAS_NUM_THREADS=1):
 *
 *   LD_PRELOAD=build/blas/libtiledmm_blas.so.1 build/examples/blas_bench --ab-small
 *
 * It times (A) cblas_sgemm as the program resolves it (with the preload: the
 * library's, which sends small products to the fallback) against (B) the real
 * BLAS's own cblas_sgemm, from dlopen of its soname (an object already loaded is
 * returned as it is, and dlsym on its handle finds that object's own definition,
 * not the interposed one: the program checks it). Both run the same timing loop
 * through a function pointer, on the same A, B and C (beta = 0, one C), in samples
 * of about --sample-ms each, alternating A B / B A, --repeats samples of each
 * (default 41). Per size: the median ns per call of each, their ratio, and the
 * median and interquartile range of the paired differences A - B. It fails when A
 * and B do not produce bitwise the same C (the library calls the same BLAS), or
 * when the library's counters do not show exactly A's calls. Without the preload A
 * and B are the same function: the ratio then reads about 1.00, which checks the
 * method itself.
 *
 *   --ab-small                    the A/B comparison (default sizes 2,4,...,128)
 *   --real LIB                    B's library (default libblas.so.3)
 *   --fortran                     compare sgemm_ (column-major NN) instead
 *   --sample-ms T                 milliseconds per sample (default 5)
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
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc);
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

/* The counters of cblas_sgemm (fortran: of sgemm_). */
static tmm_blas_counters read_counters(get_counters_fn get, int fortran) {
  tmm_blas_counters c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  if (get != NULL) get(fortran ? TMM_BLAS_SGEMM : TMM_BLAS_CBLAS_SGEMM, &c);
  return c;
}

/* ---- --ab-small ---------------------------------------------------------------- */

typedef void (*cblas_fn)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                         float, float*, int);
typedef void (*fortran_fn)(const char*, const char*, const int*, const int*, const int*,
                           const float*, const float*, const int*, const float*, const int*,
                           const float*, float*, const int*);

/* One side of the comparison: an entry point (cblas_sgemm or sgemm_) and where it is. */
struct side {
  void* fn;
  const char* file;
};

static const char* file_of(const void* address, const void** base) {
  Dl_info info;
  memset(&info, 0, sizeof info);
  *base = NULL;
  if (address == NULL || dladdr(address, &info) == 0) return "?";
  *base = info.dli_fbase;
  return info.dli_fname ? info.dli_fname : "?";
}

/* One timed sample: `calls` products through `side`, in ns per call. The pointer is
 * read through a volatile, so that both sides run exactly this code: an indirect call
 * the compiler cannot turn into a direct one. */
static double ab_sample(const struct side* side, int fortran, long calls, int n, const float* a,
                        const float* b, float* c) {
  void* volatile target = side->fn;
  void* fn = target;
  const float alpha = 1.0f, beta = 0.0f;
  double t0;
  if (fortran) {
    fortran_fn f;
    memcpy(&f, &fn, sizeof f);
    t0 = now();
    for (long i = 0; i < calls; ++i) f("N", "N", &n, &n, &n, &alpha, a, &n, b, &n, &beta, c, &n);
  } else {
    cblas_fn f;
    memcpy(&f, &fn, sizeof f);
    t0 = now();
    for (long i = 0; i < calls; ++i)
      f(kRowMajor, kNoTrans, kNoTrans, n, n, n, alpha, a, n, b, n, beta, c, n);
  }
  return (now() - t0) * 1e9 / (double)calls;
}

static double median_of(double* x, int count) {
  qsort(x, (size_t)count, sizeof(double), compare_doubles);
  return count % 2 ? x[count / 2] : 0.5 * (x[count / 2 - 1] + x[count / 2]);
}

static int run_ab(const char* sizes, const char* real, int fortran, int samples, double sample_ms) {
  const char* name = fortran ? "sgemm_" : "cblas_sgemm";
  const get_counters_fn get = shim_counters();
  /* A: what the program's own calls reach (the PLT binds the same definition). */
  struct side shim_side = {dlsym(RTLD_DEFAULT, name), NULL};
  /* B: the real library's own definition. RTLD_NOLOAD first: the one already loaded. */
  void* handle = dlopen(real, RTLD_NOW | RTLD_NOLOAD);
  if (handle == NULL) handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "FAIL: cannot load %s: %s\n", real, dlerror());
    return 1;
  }
  struct side real_side = {dlsym(handle, name), NULL};
  if (shim_side.fn == NULL || real_side.fn == NULL) {
    fprintf(stderr, "FAIL: no %s %s\n", name, shim_side.fn ? "in the real BLAS" : "at all");
    return 1;
  }
  const void *shim_base, *real_base, *marker_base = NULL;
  shim_side.file = file_of(shim_side.fn, &shim_base);
  real_side.file = file_of(real_side.fn, &real_base);
  if (get != NULL) {
    void* marker = dlsym(RTLD_DEFAULT, "tmm_blas_version");
    file_of(marker, &marker_base);
  }
  printf("A/B: %s %s NN, beta = 0, one C; %d samples of each (~%g ms), alternating\n", name,
         fortran ? "column-major" : "row-major", samples, sample_ms);
  printf("A: %s as the program resolves it: %s\n", name, shim_side.file);
  printf("B: %s of %s (dlopen + dlsym): %s\n", name, real, real_side.file);
  if (real_base != NULL && real_base == marker_base) {
    printf("FAIL: dlsym on %s's handle returned libtiledmm_blas's %s\n", real, name);
    return 1;
  }
  if (shim_side.fn == real_side.fn)
    printf(
        "A and B are the same function (libtiledmm_blas is not in the path): the ratio "
        "checks the method\n");
  else if (get == NULL)
    printf("note: A and B differ, but libtiledmm_blas is not loaded\n");
  printf("%6s %9s %10s %10s %7s %9s %9s %9s %s\n", "n", "calls", "A_ns", "B_ns", "A/B", "A-B_ns",
         "paired", "iqr", get ? "libtiledmm_blas routed A's calls to" : "");
  int failures = 0;
  double* ta = malloc((size_t)samples * sizeof(double));
  double* tb = malloc((size_t)samples * sizeof(double));
  double* diff = malloc((size_t)samples * sizeof(double));
  char* list = strdup(sizes);
  if (!ta || !tb || !diff || !list) return 1;
  for (char* tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ",")) {
    const int n = atoi(tok);
    if (n <= 0) continue;
    const size_t count = (size_t)n * (size_t)n;
    float* a = malloc(count * sizeof(float));
    float* b = malloc(count * sizeof(float));
    float* c = malloc(count * sizeof(float));
    float* c_real = malloc(count * sizeof(float));
    if (!a || !b || !c || !c_real) {
      fprintf(stderr, "n = %d: out of memory\n", n);
      return 1;
    }
    fill(a, count, 1u + (uint64_t)n);
    fill(b, count, 2u + (uint64_t)n);
    fill(c, count, 3u + (uint64_t)n);
    memcpy(c_real, c, count * sizeof(float));
    const tmm_blas_counters before = read_counters(get, fortran);
    long shim_calls = 0;
    /* The check: both sides compute bitwise the same C. */
    ab_sample(&shim_side, fortran, 1, n, a, b, c);
    ab_sample(&real_side, fortran, 1, n, a, b, c_real);
    shim_calls += 1;
    const int same = memcmp(c, c_real, count * sizeof(float)) == 0;
    /* Calls per sample: about sample_ms on B (after a warm-up of each side). */
    long calls = 1;
    for (; calls < 100000000; calls *= 2) {
      ab_sample(&shim_side, fortran, calls, n, a, b, c);
      shim_calls += calls;
      if (ab_sample(&real_side, fortran, calls, n, a, b, c) * 1e-6 * (double)calls >= sample_ms)
        break;
    }
    for (int s = 0; s < samples; ++s) {
      if (s % 2 == 0) {
        ta[s] = ab_sample(&shim_side, fortran, calls, n, a, b, c);
        tb[s] = ab_sample(&real_side, fortran, calls, n, a, b, c);
      } else {
        tb[s] = ab_sample(&real_side, fortran, calls, n, a, b, c);
        ta[s] = ab_sample(&shim_side, fortran, calls, n, a, b, c);
      }
      diff[s] = ta[s] - tb[s];
      shim_calls += calls;
    }
    const tmm_blas_counters after = read_counters(get, fortran);
    const double ma = median_of(ta, samples), mb = median_of(tb, samples);
    const double md = median_of(diff, samples);
    const double iqr = diff[(3 * samples) / 4] - diff[samples / 4];
    char where[96] = "";
    int counted = 1;
    if (get != NULL) {
      const unsigned long long on_tiledmm = after.tiledmm_calls - before.tiledmm_calls;
      const unsigned long long on_fallback = after.fallback_calls - before.fallback_calls;
      snprintf(where, sizeof where, "fallback %llu, tiledmm %llu", on_fallback, on_tiledmm);
      counted = on_tiledmm + on_fallback == (unsigned long long)shim_calls;
    }
    printf("%6d %9ld %10.2f %10.2f %7.3f %9.2f %9.2f %9.2f %s\n", n, calls, ma, mb, ma / mb,
           ma - mb, md, iqr, where);
    if (!same) {
      printf("FAIL: n = %d: A and B computed different C%s\n", n,
             get && after.tiledmm_calls != before.tiledmm_calls ? " (tiledmm computed A's)" : "");
      ++failures;
    }
    if (get != NULL && shim_side.fn != real_side.fn && !counted) {
      printf("FAIL: n = %d: libtiledmm_blas counted other than A's %ld calls\n", n, shim_calls);
      ++failures;
    }
    free(a);
    free(b);
    free(c);
    free(c_real);
  }
  free(list);
  free(ta);
  free(tb);
  free(diff);
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  const char* sizes = NULL;
  const char* csv_path = NULL;
  const char* real = "libblas.so.3";
  int repeats = -1, reuse_c = 0, expect_tiledmm = 0, ab = 0, fortran = 0;
  double sample_ms = 5;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      sizes = argv[++i];
    } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
      repeats = atoi(argv[++i]);
      if (repeats < 1) repeats = 1;
    } else if (!strcmp(argv[i], "--ab-small")) {
      ab = 1;
    } else if (!strcmp(argv[i], "--real") && i + 1 < argc) {
      real = argv[++i];
    } else if (!strcmp(argv[i], "--fortran")) {
      fortran = 1;
    } else if (!strcmp(argv[i], "--sample-ms") && i + 1 < argc) {
      sample_ms = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
      csv_path = argv[++i];
    } else if (!strcmp(argv[i], "--reuse-c")) {
      reuse_c = 1;
    } else if (!strcmp(argv[i], "--expect-tiledmm")) {
      expect_tiledmm = 1;
    } else {
      fprintf(stderr,
              "usage: blas_bench [--sizes N,N,...] [--repeats R] [--reuse-c] [--csv FILE] "
              "[--expect-tiledmm]\n"
              "       blas_bench --ab-small [--sizes N,N,...] [--repeats R] [--real LIB] "
              "[--fortran] [--sample-ms T]\n");
      return 2;
    }
  }
  if (ab) {
    if (repeats < 0) repeats = 41;
    if (!(sample_ms > 0)) sample_ms = 5;
    return run_ab(sizes ? sizes : "2,4,8,16,32,64,128", real, fortran, repeats, sample_ms);
  }
  if (sizes == NULL) sizes = "1024,2048,4096,8192";
  if (repeats < 0) repeats = 5;
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
    const tmm_blas_counters before = read_counters(get, 0);
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
    const tmm_blas_counters after = read_counters(get, 0);
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
