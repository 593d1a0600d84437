/*
 * tiledmm_blas: a drop-in BLAS front end for tiledmm (libtiledmm_blas.so).
 *
 * SPDX-License-Identifier: MIT
 *
 * Put libtiledmm_blas.so in front of the system BLAS (LD_PRELOAD, or link it before
 * -lblas) and a program's matrix products (SGEMM and DGEMM) go to tiledmm without a
 * line changed:
 *
 *   LD_PRELOAD=libtiledmm_blas.so.1 python3 my_numpy_program.py
 *
 * It exports, with the exact semantics of the reference BLAS:
 *   sgemm_          Fortran SGEMM: column-major, every argument by reference
 *   cblas_sgemm     CBLAS: row- or column-major
 *   sgemm_64_       sgemm_ with 64-bit integers (OpenBLAS's ILP64 name)
 *   cblas_sgemm64_  cblas_sgemm with 64-bit integers (OpenBLAS's ILP64 name)
 *   dgemm_, cblas_dgemm, dgemm_64_, cblas_dgemm64_  (since 1.2) the same four in
 *                   double precision: DGEMM, with the same rules as the single ones
 *   scipy_sgemm_, scipy_sgemm_64_, scipy_cblas_sgemm, scipy_cblas_sgemm64_,
 *   scipy_dgemm_, scipy_dgemm_64_, scipy_cblas_dgemm, scipy_cblas_dgemm64_
 *                   (since 1.2) the names pip's NumPy and SciPy wheels call (their
 *                   bundled OpenBLAS's prefixed names), each exactly like its
 *                   unprefixed twin (scipy_dgemm_64_ like dgemm_64_, ...): the same
 *                   checks, routing and xerbla numbers, its own counters; its fallback
 *                   is the next definition of the same prefixed name (the wheel's
 *                   OpenBLAS), else the fallback of its twin
 *   pilaenv_        ScaLAPACK's PBLAS panel width (see TILEDMM_BLAS_PANEL)
 * and the query functions below. Every other BLAS routine is the real BLAS's, reached
 * through the ordinary symbol lookup.
 *
 * Each call with valid arguments goes either to tiledmm (host memory: tmm_sgemm for
 * the single-precision names, tmm_dgemm, strict FP64, for the double ones) or to the
 * real BLAS underneath (the "fallback"), found at run time: the library named by
 * TILEDMM_BLAS_FALLBACK, else the next sgemm_ in the process (the BLAS the program
 * linked), else libblas.so.3, else libopenblas.so.0; never this library itself. The
 * double-precision routines (dgemm_, cblas_dgemm, and the ILP64 ones) are the same
 * library's; where it has none, double calls go to tiledmm.
 * Invalid arguments are passed to the fallback's own routine, which reports them
 * through xerbla exactly as the reference BLAS does (routine "SGEMM " or "DGEMM ",
 * cblas_sgemm or cblas_dgemm, and the reference's parameter number). The reference's quick returns
 * are made here, after the argument checks, and reach neither tiledmm nor the
 * fallback: m or n = 0 does nothing; alpha = 0 (either sign) or k = 0 reads neither A
 * nor B and gives C = beta * C, where beta = 1 leaves C as it is and beta = 0 stores
 * zeros without reading C (NaN there goes). Otherwise too, beta = 0 never reads C.
 *
 * Settings: environment variables, or the same keys in a file named by
 * TILEDMM_BLAS_CONFIG ("KEY = value" or "short_name = value" lines, # comments; the
 * environment wins). Read once, at the first BLAS call. A value that does not parse
 * keeps its default and says so in the log.
 *
 *   TILEDMM_BLAS_THRESHOLD   auto (default): the cost model decides per call (below);
 *          (threshold)       all or 0: every call with work in it goes to tiledmm;
 *                            never: every call goes to the fallback;
 *                            a number: calls of at least that many flops (2 m n k)
 *   TILEDMM_BLAS_BACKEND     auto (default), cuda or cpu: tiledmm's backend. auto
 *          (backend)         routing never sends work to the CPU backend (it is not
 *                            faster than an optimised BLAS): use it with all or a
 *                            number, as the tests do
 *   TILEDMM_BLAS_DEVICE      CUDA device indices, e.g. 0 or 0,1,2,3 (default 0). Handle
 *          (device)          i of a process uses entry (local rank + i) mod count, the
 *                            local rank being OMPI_COMM_WORLD_LOCAL_RANK,
 *                            MPI_LOCALRANKID, SLURM_LOCALID or PALS_LOCAL_RANKID (0
 *                            outside MPI): list a node's GPUs and its ranks spread
 *                            over them
 *   TILEDMM_BLAS_MATH        fp32, tf32 or fp32_accurate (any case): the
 *          (math)            TMM_OPTION_MATH_MODE of each handle (tiledmm.h says what
 *                            each allows). Unset: the library's default (TMM_MATH_MODE,
 *                            else fp32). Another value is rejected with a log line and
 *                            the default is kept. Single precision only: dgemm_ and
 *                            cblas_dgemm are strict FP64 whatever it says
 *   TILEDMM_BLAS_FALLBACK    the real BLAS: a path or a library name
 *          (fallback)
 *   TILEDMM_BLAS_FALLBACK64  the ILP64 BLAS for sgemm_64_/cblas_sgemm64_ (and
 *          (fallback64)      dgemm_64_/cblas_dgemm64_) when the fallback has no *64_ names (default
 * libblas64.so.3; empty: none). Without one, 64-bit calls whose sizes fit in 32 bits use the LP64
 * fallback and larger ones go to tiledmm TILEDMM_BLAS_LOG         off (default), stderr, or a file
 * (%p: the process id): a (log)             line per call (routine, sizes, where it ran, time) and
 * a line per notable event; appended, one write per line. A symbolic link, or a file another user
 * owns, is refused (the log stays off) TILEDMM_BLAS_PANEL       the panel width pilaenv_ returns
 * for single and double precision ('S', PSGEMM's, and 'D', PDGEMM's) (panel) while tiledmm is
 *                            on (default 4096; 0: never widen; the complex precisions get
 *                            ScaLAPACK's own). PBLAS steps k by this width, so each rank's
 *                            local sgemm_ or dgemm_ is m x n x PANEL instead of m x n x 32.
 *                            Workspace per rank grows to about e * PANEL * (local m +
 *                            local n) bytes (e = 4, 8 in double)
 *   TILEDMM_BLAS_HANDLES     tiledmm handles a process uses at once (default 2 per
 *          (handles)         device listed); more concurrent calls wait for one
 *   TILEDMM_BLAS_HOST_THREADS  TMM_OPTION_HOST_THREADS of each handle (default 0:
 *          (host_threads)    the library's default)
 *   TILEDMM_BLAS_KEEP_C      1 (default): before a routed call with beta != 0, copy
 *          (keep_c)          C, so that after any failure of tiledmm C is restored
 *                            and the fallback recomputes the call. 0 saves the copy;
 *                            a beta != 0 call is then recomputed only after a failure
 *                            sure to come before C is written (TMM_ERROR_INVALID_VALUE,
 *                            TMM_ERROR_NO_DEVICE); after any other (out of memory,
 *                            CUDA, callback, ...) C is filled with NaN and the log
 *                            says so (never silently wrong data). beta = 0 calls need
 *                            no copy: C is recomputed from A and B
 *   TILEDMM_BLAS_LINK_GBPS, _GPU_TFLOPS, _CPU_GFLOPS, _OVERHEAD_US
 *          (link_gbps, gpu_tflops, cpu_gflops, overhead_us)  the cost model's inputs
 *   TILEDMM_BLAS_GPU_TFLOPS_FP64, _CPU_GFLOPS_FP64  (since 1.2)
 *          (gpu_tflops_fp64, cpu_gflops_fp64)  the GPU and CPU rates of the double-
 *                            precision calls (GPU_TFLOPS and CPU_GFLOPS are single
 *                            precision's)
 *
 * Cost model (THRESHOLD=auto): a call goes to tiledmm when
 *     overhead + bytes / link + flops / gpu  <  flops / cpu
 * with flops = 2 m n k and bytes = e (m k + k n + m n), plus e m n when beta != 0, e
 * the element's size (4 bytes, 8 in double). Defaults: link 20 GB/s; gpu =
 * multiprocessors x 0.35 TFLOP/s, read from the device at the first routed call (40
 * TFLOP/s before); cpu = 40 GFLOP/s per CPU the process may run on; overhead 50 us.
 * With a 16-CPU host and an H100, square products go to tiledmm from n ~ 330;
 * ScaLAPACK's default m x n x 32 updates never do. In double: gpu = multiprocessors x
 * 0.30 TFLOP/s on compute capability 8.0 and 9.0 (full-rate FP64 tensor cores), 1/32
 * of the single-precision default per multiprocessor on other GPUs (30 TFLOP/s
 * before a device is read); cpu = half the single-precision CPU rate (set or
 * derived); the same link and overhead. These are the model's assumptions, not
 * measurements of this library. With the same host and an H100, double squares go
 * from n ~ 290.
 *
 * Safety (both precisions alike): nothing happens at load time; the settings, the
 * fallback and tiledmm are set up at the first call, CUDA at the first call routed to tiledmm.
 * Calls from several threads run at once (up to TILEDMM_BLAS_HANDLES of them in tiledmm). After
 * fork() the child reads the settings and finds the fallback itself if its parent was
 * still at it on another thread, drops the parent's handles (never destroying them)
 * and makes its own, except when the parent had initialised CUDA: the child then uses
 * the fallback only. When tiledmm fails, the fallback computes the call and the log
 * says so once per kind of failure. Any failure but a rejected argument or a missing
 * device may come after tiledmm wrote part of C (a device allocation that fails late
 * is TMM_ERROR_OUT_OF_MEMORY too): C is then restored from the saved copy first
 * (TILEDMM_BLAS_KEEP_C). After a CUDA fault tiledmm is off for the rest of the
 * process. The library never prints (except to the log), never aborts and never
 * exits.
 */
#ifndef TILEDMM_BLAS_H
#define TILEDMM_BLAS_H

#include <stddef.h>
#include <stdint.h>

#include "tiledmm/tiledmm.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef TMM_BLAS_API
#if defined(__GNUC__) && (__GNUC__ >= 4)
#define TMM_BLAS_API __attribute__((visibility("default")))
#else
#define TMM_BLAS_API
#endif
#endif

/* The entry points counted separately. Values are stable. */
typedef enum tmm_blas_routine {
  TMM_BLAS_SGEMM = 0,          /* sgemm_ */
  TMM_BLAS_CBLAS_SGEMM = 1,    /* cblas_sgemm */
  TMM_BLAS_SGEMM_64 = 2,       /* sgemm_64_ */
  TMM_BLAS_CBLAS_SGEMM_64 = 3, /* cblas_sgemm64_ */
  TMM_BLAS_PILAENV = 4,        /* pilaenv_: tiledmm_calls counts widened answers,
                                  fallback_calls ScaLAPACK's own */
  TMM_BLAS_DGEMM = 5,          /* dgemm_ (since 1.2) */
  TMM_BLAS_CBLAS_DGEMM = 6,    /* cblas_dgemm (since 1.2) */
  TMM_BLAS_DGEMM_64 = 7,       /* dgemm_64_ (since 1.2) */
  TMM_BLAS_CBLAS_DGEMM_64 = 8, /* cblas_dgemm64_ (since 1.2) */
  /* The names pip's NumPy and SciPy wheels call (since 1.2), each counted apart from
   * its standard twin: */
  TMM_BLAS_SCIPY_SGEMM = 9,           /* scipy_sgemm_ (SciPy) */
  TMM_BLAS_SCIPY_CBLAS_SGEMM = 10,    /* scipy_cblas_sgemm */
  TMM_BLAS_SCIPY_SGEMM_64 = 11,       /* scipy_sgemm_64_ */
  TMM_BLAS_SCIPY_CBLAS_SGEMM_64 = 12, /* scipy_cblas_sgemm64_ (NumPy) */
  TMM_BLAS_SCIPY_DGEMM = 13,          /* scipy_dgemm_ (SciPy) */
  TMM_BLAS_SCIPY_CBLAS_DGEMM = 14,    /* scipy_cblas_dgemm */
  TMM_BLAS_SCIPY_DGEMM_64 = 15,       /* scipy_dgemm_64_ */
  TMM_BLAS_SCIPY_CBLAS_DGEMM_64 = 16, /* scipy_cblas_dgemm64_ (NumPy) */
  TMM_BLAS_ALL = 100                  /* the sum over every routine */
} tmm_blas_routine;

/* What the calls of a routine did since the start (or tmm_blas_reset_counters).
 * Growable like tmm_report: set struct_size = sizeof(tmm_blas_counters) first. */
typedef struct tmm_blas_counters {
  size_t struct_size;       /* in: sizeof(tmm_blas_counters); out: bytes written */
  uint64_t tiledmm_calls;   /* calls tiledmm computed */
  uint64_t tiledmm_flops;   /* their 2 m n k */
  uint64_t fallback_calls;  /* calls the fallback BLAS computed (recovered included) */
  uint64_t fallback_flops;  /* their 2 m n k */
  uint64_t recovered_calls; /* sent to tiledmm, failed, recomputed by the fallback */
  uint64_t invalid_calls;   /* invalid arguments, reported through xerbla */
  uint64_t noop_calls;      /* quick returns: m or n = 0, alpha = 0 or k = 0 (C =
                               beta * C at most, done by this library) */
  uint64_t lost_calls;      /* could be computed nowhere: C filled with NaN, logged */
  int64_t tiledmm_max_k;    /* the largest k tiledmm computed (0: none) */
} tmm_blas_counters;

/* The version of libtiledmm_blas loaded, as tmm_version(). */
TMM_BLAS_API int tmm_blas_version(void);

/* The counters of one routine, or of all (TMM_BLAS_ALL). TMM_ERROR_INVALID_VALUE for
 * a NULL pointer, an unknown routine or a struct_size below the first release's. */
TMM_BLAS_API tmm_status tmm_blas_get_counters(tmm_blas_routine routine, tmm_blas_counters* out);

/* Sets every counter to zero. Calls running meanwhile may be counted either side; a
 * read meanwhile sees each count from before or after the reset, never more than the
 * calls made. */
TMM_BLAS_API void tmm_blas_reset_counters(void);

/* The effective settings, the fallback libraries, the small calls' fast path of each
 * entry point (jump: straight to the fallback's routine; scoped: to it, marked as the
 * fallback's own so that its inner calls return there; off; unmade: no call yet), the
 * cost model and whether tiledmm has started, as one line of text, like snprintf:
 * writes at most `size` bytes (NUL included) and returns the length of the whole
 * text. Reads the settings and finds the fallback, but starts neither tiledmm nor
 * CUDA. */
TMM_BLAS_API size_t tmm_blas_describe(char* buffer, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TILEDMM_BLAS_H */
