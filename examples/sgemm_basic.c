/* sgemm_basic: multiply two matrices with tiledmm from C, checking every status.
 *
 *   C (M x N) = A (M x K) * B (K x N), row-major, on the best backend available.
 *
 * Build against an installed tiledmm:
 *   cc sgemm_basic.c $(pkg-config --cflags --libs tiledmm) -lm -o sgemm_basic
 * With --overhead it also times repeated calls at 64^3 and 1024^3.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiledmm/tiledmm.h>
#include <time.h>

#define M 300
#define N 200
#define K 500

/* --overhead: wall-clock time per call of repeated size^3 products, the baseline
 * for the same loop in the Java and C# examples. */
static int overhead(tmm_handle h, int size) {
  float* a = malloc(sizeof(float) * size * size);
  float* b = malloc(sizeof(float) * size * size);
  float* c = malloc(sizeof(float) * size * size);
  int calls = size <= 64 ? 20000 : 20, i, rc = 1;
  struct timespec t0, t1;
  if (!a || !b || !c) goto out;
  for (i = 0; i < size * size; ++i) a[i] = 0.5f, b[i] = 0.25f;
  for (i = 0; i < calls + calls / 10 + 1; ++i) {
    if (i == calls / 10 + 1) clock_gettime(CLOCK_MONOTONIC, &t0); /* after the warm-up */
    if (tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, size, size, size, 1.0f, a, size, b,
                  size, 0.0f, c, size) != TMM_SUCCESS)
      goto out;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("C     %4d^3: %10.2f us per call (%d calls)\n", size,
         ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3) / calls, calls);
  rc = 0;
out:
  free(a);
  free(b);
  free(c);
  return rc;
}

/* Print the failure and its detail, and say whether the call failed. */
static int failed(tmm_status status, tmm_handle h, const char* what) {
  if (status == TMM_SUCCESS) return 0;
  fprintf(stderr, "%s failed: %s (%s)\n", what, tmm_status_string(status),
          tmm_get_error_message(h));
  return 1;
}

int main(int argc, char** argv) {
  float* a = malloc(sizeof(float) * M * K);
  float* b = malloc(sizeof(float) * K * N);
  float* c = malloc(sizeof(float) * M * N);
  tmm_handle h = NULL;
  tmm_backend backend = TMM_BACKEND_AUTO;
  tmm_timing timing;
  double max_err = 0.0;
  int i, j, q, rc = 1;

  if (!a || !b || !c) {
    fprintf(stderr, "out of memory\n");
    goto done;
  }
  srand(42);
  for (i = 0; i < M * K; ++i) a[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  for (i = 0; i < K * N; ++i) b[i] = (float)rand() / (float)RAND_MAX - 0.5f;

  /* Any later 1.x library runs this program (docs/ABI.md): same major, not older. */
  if (tmm_version() / 10000 != TILEDMM_VERSION_MAJOR || tmm_version() < TILEDMM_VERSION) {
    fprintf(stderr, "header/library mismatch: %d vs %d\n", TILEDMM_VERSION, tmm_version());
    goto done;
  }
  if (failed(tmm_create(&h), NULL, "tmm_create")) goto done;
  if (failed(tmm_get_backend(h, &backend), h, "tmm_get_backend")) goto done;
  if (failed(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, M, N, K, 1.0f, a, K, b, N,
                       0.0f, c, N),
             h, "tmm_sgemm"))
    goto done;
  if (failed(tmm_get_last_timing(h, &timing), h, "tmm_get_last_timing")) goto done;

  /* Check against a double-precision product. */
  for (i = 0; i < M; ++i) {
    for (j = 0; j < N; ++j) {
      double ref = 0.0;
      for (q = 0; q < K; ++q) ref += (double)a[i * K + q] * b[q * N + j];
      if (fabs(ref - c[i * N + j]) > max_err) max_err = fabs(ref - c[i * N + j]);
    }
  }
  printf("tiledmm %d.%d.%d on %s: %dx%dx%d in %.3f ms (compute %.3f ms), max error %.2e\n",
         TILEDMM_VERSION_MAJOR, TILEDMM_VERSION_MINOR, TILEDMM_VERSION_PATCH,
         backend == TMM_BACKEND_CUDA ? "CUDA" : "CPU", M, N, K, timing.total_ms, timing.compute_ms,
         max_err);
  rc = max_err < 1e-3 ? 0 : 1;
  if (rc) fprintf(stderr, "result is wrong\n");
  if (rc == 0 && argc > 1 && strcmp(argv[1], "--overhead") == 0)
    rc = overhead(h, 64) || overhead(h, 1024);

done:
  tmm_destroy(h);
  free(a);
  free(b);
  free(c);
  return rc;
}
