/* sgemm_basic: multiply two matrices with tiledmm from C, checking every status.
 *
 *   C (M x N) = A (M x K) * B (K x N), row-major, on the best backend available.
 *
 * Build against an installed tiledmm:
 *   cc sgemm_basic.c $(pkg-config --cflags --libs tiledmm) -o sgemm_basic
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tiledmm/tiledmm.h>

#define M 300
#define N 200
#define K 500

/* Print the failure and its detail, and say whether the call failed. */
static int failed(tmm_status status, tmm_handle h, const char* what) {
  if (status == TMM_SUCCESS) return 0;
  fprintf(stderr, "%s failed: %s (%s)\n", what, tmm_status_string(status),
          tmm_get_error_message(h));
  return 1;
}

int main(void) {
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
  for (i = 0; i < M * K; ++i) a[i] = (float)rand() / RAND_MAX - 0.5f;
  for (i = 0; i < K * N; ++i) b[i] = (float)rand() / RAND_MAX - 0.5f;

  if (tmm_version() != TILEDMM_VERSION) {
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
         backend == TMM_BACKEND_CUDA ? "CUDA" : "CPU", M, N, K, timing.total_ms,
         timing.compute_ms, max_err);
  rc = max_err < 1e-3 ? 0 : 1;
  if (rc) fprintf(stderr, "result is wrong\n");

done:
  tmm_destroy(h);
  free(a);
  free(b);
  free(c);
  return rc;
}
