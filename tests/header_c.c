/* The public header compiled as C99 (with -pedantic): every declaration must be
 * valid C, and the loaded library must match the header's version. */
#include <stdio.h>

#include "tiledmm/tiledmm.h"

int main(void) {
  tmm_handle h = NULL;
  tmm_timing timing;
  tmm_device_info info;
  (void)timing;
  (void)info;
  if (tmm_version() != TILEDMM_VERSION) {
    fprintf(stderr, "header %d, library %d\n", TILEDMM_VERSION, tmm_version());
    return 1;
  }
  if (tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0) != TMM_SUCCESS) return 1;
  tmm_destroy(h);
  printf("1 passed, 0 failed\n");
  return 0;
}
