/* tiledmm_blas.h compiled as C99 (with -pedantic), linked against the library: the
 * query API answers (the double-precision routines' counters too), and the version
 * matches the header's. */
#include <stdio.h>

#include "tiledmm/tiledmm_blas.h"

int main(void) {
  tmm_blas_counters counters;
  char text[16];
  counters.struct_size = sizeof counters;
  if (tmm_blas_get_counters(TMM_BLAS_ALL, &counters) != TMM_SUCCESS) return 1;
  if (counters.tiledmm_calls != 0 || counters.fallback_calls != 0) return 1;
  if (tmm_blas_get_counters(TMM_BLAS_PILAENV, NULL) != TMM_ERROR_INVALID_VALUE) return 1;
  /* The double-precision routines (since 1.2) and the sum over all. */
  if (tmm_blas_get_counters(TMM_BLAS_CBLAS_DGEMM_64, &counters) != TMM_SUCCESS) return 1;
  if (TMM_BLAS_DGEMM != 5 || TMM_BLAS_CBLAS_DGEMM != 6 || TMM_BLAS_DGEMM_64 != 7) return 1;
  if (tmm_blas_describe(text, sizeof text) < sizeof text) return 1; /* the text is longer */
  tmm_blas_reset_counters();
  if (tmm_blas_version() != TILEDMM_VERSION) {
    fprintf(stderr, "header %d, library %d\n", TILEDMM_VERSION, tmm_blas_version());
    return 1;
  }
  printf("1 passed, 0 failed\n");
  return 0;
}
