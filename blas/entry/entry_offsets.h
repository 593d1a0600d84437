/* The numbers the x86-64 entry points (entry/trampolines_x86_64.S) read from C++
 * objects, in a form both the assembler and C++ include; entry/trampolines.cpp checks
 * each against the C++ layout with static_assert, so a change of Route, CounterBlock
 * or Routine that moves one fails the build instead of the assembly. */
#ifndef TILEDMM_BLAS_ENTRY_OFFSETS_H
#define TILEDMM_BLAS_ENTRY_OFFSETS_H

/* RouteOf<float, int> (route/router.hpp), at the address g_route holds. */
#define TMM_ROUTE_CBLAS_DIRECT 2 /* bool cblas_direct */
#define TMM_ROUTE_SGEMM_DIRECT 3 /* bool gemm_direct */
#define TMM_ROUTE_MAX_FLOPS 8    /* uint64_t fallback_max_flops */
#define TMM_ROUTE_SGEMM 16       /* FortranSgemm<int> gemm */
#define TMM_ROUTE_CBLAS 24       /* CblasSgemm<int> cblas_gemm */

/* This thread's CounterBlock (support/counters.hpp): the fallback's calls and flops
 * of sgemm_ and of cblas_sgemm. */
#define TMM_SGEMM_CALLS 16
#define TMM_SGEMM_FLOPS 24
#define TMM_CBLAS_CALLS 80
#define TMM_CBLAS_FLOPS 88

#endif
