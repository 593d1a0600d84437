/* The public header compiled as C99 (with -pedantic): every declaration must be
 * valid C, and the loaded library must match the header's version. */
#include <stdio.h>

#include "tiledmm/tiledmm.h"

int main(void) {
  tmm_handle h = NULL;
  tmm_timing timing;
  tmm_device_info info;
  tmm_report report;
  tmm_kernel_info kernel;
  tmm_device_report device_report;
  int count = 0;
  int64_t lower = 0;
  (void)timing;
  (void)info;
  report.struct_size = sizeof report;
  kernel.struct_size = sizeof kernel;
  device_report.struct_size = sizeof device_report;
  if (tmm_get_kernel_info(0, &kernel) != TMM_SUCCESS || kernel.name == NULL) return 1;
  if (tmm_get_option_bounds(TMM_OPTION_HOST_THREADS, &lower, NULL, NULL) != TMM_SUCCESS) return 1;
  if (tmm_version() != TILEDMM_VERSION) {
    fprintf(stderr, "header %d, library %d\n", TILEDMM_VERSION, tmm_version());
    return 1;
  }
  if (tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0) != TMM_SUCCESS) return 1;
  if (tmm_get_last_report(h, &report) != TMM_ERROR_INVALID_VALUE) return 1; /* no sgemm yet */
  if (tmm_get_device_count(h, &count) != TMM_ERROR_NOT_SUPPORTED) return 1; /* the CPU */
  if (tmm_get_last_device_report(h, 0, &device_report) != TMM_ERROR_NOT_SUPPORTED) return 1;
  tmm_destroy(h);
  printf("1 passed, 0 failed\n");
  return 0;
}
