/*
 * tiledmm: single-precision matrix multiplication (SGEMM) on CUDA GPUs, with a
 * CPU fallback, behind a plain C ABI.
 *
 * SPDX-License-Identifier: MIT
 *
 * This is the only header a user includes. It is valid C99 and C++.
 *
 * Conventions
 *   - Every function returns a tmm_status; output parameters are written only on
 *     success. On failure the handle stays usable (but see TMM_ERROR_CUDA for a lost
 *     CUDA context) and tmm_get_error_message() says what went wrong. Nothing the
 *     caller owns is modified, except C after a late failure of an sgemm:
 *
 * What C holds after a failed sgemm
 *   - Every argument check (TMM_ERROR_INVALID_VALUE, _NOT_SUPPORTED), the handle's
 *     device (TMM_ERROR_NO_DEVICE, a lost context) and every allocation the call
 *     makes (TMM_ERROR_OUT_OF_MEMORY) come before its first write to C: C is
 *     untouched.
 *   - Later, only TMM_ERROR_CUDA, TMM_ERROR_CALLBACK (a tmm_host_io function) and
 *     TMM_ERROR_OUT_OF_MEMORY (the CUDA runtime running out of memory midway, which
 *     the streamed host path can meet after tiles of C were written back) can
 *     follow. Then each element of C's m x n part holds either its value before the
 *     call or its value in the result (never a partial sum); elements outside it
 *     are never written. A caller that kept a copy of C can restore it.
 *   - Whichever way a host call (tmm_sgemm, tmm_sgemm_io) returns, none of its
 *     copies or kernels is still running: a failing call waits for the work it
 *     enqueued before it returns, so nothing writes C afterwards.
 *   - tmm_sgemm_device: a failure returned before the product is enqueued leaves C
 *     untouched; an error the kernel meets on the device is a sticky CUDA error,
 *     reported by a later call (TMM_ERROR_CUDA), and C is then lost with the
 *     context.
 *   - Matrices follow CBLAS: a layout (row or column major), a transpose flag per
 *     operand and a leading dimension per matrix.
 *   - The library never prints, never aborts and never exits.
 *
 * Thread safety
 *   Different handles may be used concurrently from different threads. Calls on one
 *   handle from several threads are serialized by a lock inside the handle, so they
 *   are safe but do not run in parallel; each thread reads the message of its own
 *   last failure (tmm_get_error_message). tmm_destroy() must not race with other
 *   calls on the same handle.
 *
 * ABI
 *   The 1.x series only adds: functions, enum values, options, and fields at the end
 *   of structs that start with a struct_size member (tmm_report). docs/ABI.md has the
 *   policy; every function carries an ELF symbol version of the release that added it.
 */
#ifndef TILEDMM_H
#define TILEDMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Export and import, as zstd does: the library is built with hidden visibility and
 * marks its API visible; a Windows DLL build defines TMM_DLL_EXPORT=1 and its users
 * TMM_DLL_IMPORT=1. */
#ifndef TMM_VISIBLE
#if defined(__GNUC__) && (__GNUC__ >= 4) && !defined(__MINGW32__)
#define TMM_VISIBLE __attribute__((visibility("default")))
#else
#define TMM_VISIBLE
#endif
#endif
#if defined(TMM_DLL_EXPORT) && (TMM_DLL_EXPORT == 1)
#define TMM_API __declspec(dllexport) TMM_VISIBLE
#elif defined(TMM_DLL_IMPORT) && (TMM_DLL_IMPORT == 1)
#define TMM_API __declspec(dllimport) TMM_VISIBLE
#else
#define TMM_API TMM_VISIBLE
#endif

/* ==================================================================== *
 *  Version
 * ==================================================================== */

/* TILEDMM_VERSION_MAJOR, _MINOR, _PATCH and TILEDMM_VERSION (one number:
 * MAJOR*10000 + MINOR*100 + PATCH), generated from CMake's project(VERSION). */
#include "tiledmm/tiledmm_version.h"

/* The version of the library actually loaded, in the form of TILEDMM_VERSION.
 * Compatible when the major versions match and tmm_version() >= TILEDMM_VERSION
 * (docs/ABI.md); do not test for equality. */
TMM_API int tmm_version(void);

/* ==================================================================== *
 *  Types
 * ==================================================================== */

/* Opaque handle: a backend, a device, its buffers, settings and the last error. */
typedef struct tmm_context_s* tmm_handle;

/* Status codes. The numbers are stable and will never be renumbered. */
typedef enum tmm_status {
  TMM_SUCCESS = 0,             /* the call did what it was asked */
  TMM_ERROR_INVALID_VALUE = 1, /* null handle or pointer, negative size, leading
                                  dimension too small, unknown enum value, size
                                  whose byte count overflows */
  TMM_ERROR_NO_DEVICE = 2,     /* the CUDA backend was asked for, but no usable
                                  device or driver exists (or the device index is
                                  out of range) */
  TMM_ERROR_OUT_OF_MEMORY = 3, /* host or device allocation failed; the handle
                                  stays usable and a smaller call may succeed */
  TMM_ERROR_NOT_SUPPORTED = 4, /* valid, but not available on this backend or
                                  build (e.g. device pointers on the CPU backend) */
  TMM_ERROR_CUDA = 5,          /* the CUDA runtime reported an error; the message
                                  carries its text. If the error destroyed the
                                  process's CUDA context on the device (an illegal
                                  address in a kernel, a launch failure: "sticky"
                                  errors), every later call on every handle of that
                                  device returns TMM_ERROR_CUDA too, saying so: only
                                  a new process can use that device again. */
  TMM_ERROR_INTERNAL = 6,      /* a bug in tiledmm; please report it */
  TMM_ERROR_CALLBACK = 7       /* a function the caller gave (tmm_host_io) reported a
                                  failure; the message names it (since 1.1) */
} tmm_status;

/* Matrix storage order (CBLAS values). */
typedef enum tmm_layout { TMM_ROW_MAJOR = 101, TMM_COL_MAJOR = 102 } tmm_layout;

/* Operand transposition (CBLAS values). */
typedef enum tmm_transpose { TMM_NO_TRANS = 111, TMM_TRANS = 112 } tmm_transpose;

/* Where the arithmetic runs. */
typedef enum tmm_backend {
  TMM_BACKEND_AUTO = 0, /* CUDA when a usable device and driver exist, else CPU */
  TMM_BACKEND_CUDA = 1,
  TMM_BACKEND_CPU = 2
} tmm_backend;

/* Which kernel computes the product. The ladder of the classic lesson on tiled
 * matrix multiplication, then faster kernels. Values are stable. */
typedef enum tmm_algorithm {
  TMM_ALGO_AUTO = 0,      /* the fastest available for the shape and device */
  TMM_ALGO_NAIVE = 1,     /* one thread per element of C, global memory only
                             (CPU: the sequential triple loop) */
  TMM_ALGO_TILED = 2,     /* shared-memory tiles of tile_size x tile_size */
  TMM_ALGO_COARSENED = 3, /* tiled, each thread computes `coarsening` outputs */
  TMM_ALGO_BLOCKED = 4    /* register-blocked: each thread keeps a block of C in
                             registers (CPU: cache-blocked and multi-threaded) */
} tmm_algorithm;

/* Where the time of the last successful sgemm or dgemm went, in milliseconds, and what ran. */
typedef struct tmm_timing {
  double upload_ms;        /* host to device copies (0 for device pointers and CPU) */
  double compute_ms;       /* the kernel(s) */
  double download_ms;      /* device to host copy (0 for device pointers and CPU) */
  double total_ms;         /* the whole call, copies included */
  tmm_algorithm algorithm; /* the algorithm that ran (never TMM_ALGO_AUTO) */
  int tile_size;           /* the tile edge that ran (0 where it does not apply) */
  int coarsening;          /* outputs per thread that ran: COARSENED's setting,
                              BLOCKED's 64 (8 x 8) or 128 (16 x 8), 0 where it does
                              not apply */
} tmm_timing;

/* How tmm_sgemm (host matrices, CUDA backend) moves the matrices. */
typedef enum tmm_host_path {
  TMM_HOST_PATH_AUTO = 0,    /* DIRECT when it fits the device memory budget and a
                                model of the link, the host copies and the kernel
                                says streaming cannot win, else STREAMED */
  TMM_HOST_PATH_DIRECT = 1,  /* copy A, B (and C) whole, multiply, copy C back; more
                                than the budget is TMM_ERROR_OUT_OF_MEMORY */
  TMM_HOST_PATH_STREAMED = 2 /* tiles of C, chunks of k, through pinned staging filled
                                by host threads; copies overlap the kernels. Every
                                allocation and argument check happens before the
                                first write to C; a later failure leaves each element
                                of C old or final ("What C holds after a failed
                                sgemm", at the top) */
} tmm_host_path;

/* The arithmetic a handle allows (TMM_OPTION_MATH_MODE), as cuBLAS's math mode: a
 * permission, not a demand. Where the allowed mode has no kernel (tensor cores need
 * compute capability 8.0 or later; the CPU; algorithms other than AUTO and BLOCKED;
 * a BLOCKED tile size the mode's kernels lack; products with m or n at most 16, which
 * the thin kernel reads at the memory's rate) the strict FP32 kernel runs, which
 * is always an allowed answer; tmm_report.math_mode says which arithmetic ran. The
 * default is strict FP32, unless the environment variable TMM_MATH_MODE (fp32,
 * tf32 or fp32_accurate, any case; other values are ignored) is set when the
 * handle is created, so that programs using the bindings or the drop-in BLAS can
 * choose a mode without a change. Since 1.1. */
typedef enum tmm_math_mode {
  TMM_MATH_FP32 = 0,         /* strict FP32: every product and sum in FP32, as the
                                reference BLAS does (the error of each element grows
                                like k * 2^-24 * sum over l of |a(i,l) b(l,j)|) */
  TMM_MATH_TF32 = 1,         /* tensor cores: A and B rounded to TF32 (10-bit
                                mantissa, round to nearest) on the way in, products
                                exact and sums in FP32. The error of an element is
                                about 1e-4 to 1e-3 of the sum over l of
                                |a(i,l) b(l,j)| (at most 2^-10 of it from the
                                rounding, plus the FP32 terms), whatever k; several
                                times faster on large products (compute capability
                                8.0 and later, AUTO or BLOCKED. Strict FP32
                                runs instead where it is the faster: with tile
                                0, for a single product whose C has at most
                                4096 elements and k is 4096 or more, where k
                                may be split over the SMs; and on 9.0, where
                                the library has its sm_90a code, under AUTO
                                for a tiny single product, C of at most 16384
                                elements and k at most 512) */
  TMM_MATH_FP32_ACCURATE = 2 /* tensor cores with FP32 accuracy, "3xTF32 with error
                                correction" (compute capability 8.0 and 9.0 and later;
                                on 9.0 it beats strict FP32, on 8.0 that is not
                                measured; not 8.6/8.9, whose TF32 runs at the
                                FP32 rate: strict FP32 there; AUTO
                                or BLOCKED with tile 0, 64 or 128; with tile 0,
                                strict FP32 where C has at most 65536 elements
                                and k is 16384 or more, or C at most 4096 and k
                                4096 or more, and k may be split over the
                                SMs, and on 9.0 (with the sm_90a code) for a
                                single product of at most 2^28 multiply-adds
                                with k at most 1024, where it is the faster):
                                each input is
                                split into two TF32 values, x = big + small (small
                                scaled by 2^11 on the way), the three products
                                big*big + big*small + small*big go through the
                                tensor cores, and their sums over each 32 of k (96
                                in the Hopper kernel) are added in FP32 (round to
                                nearest, their rounding errors kept) outside them.
                                The error of an element is of the order of strict
                                FP32's (a few units of 2^-24 of the sum over l of
                                |a(i,l) b(l,j)|, whatever k: below strict FP32's at
                                large k (measured up to k = 2^23), up to about
                                twice it at small k). Where it
                                is not FP32: Inf and NaN in A or B propagate as in
                                FP32; a finite input within 2^-11 of FLT_MAX (|x| >=
                                (2 - 2^-11) 2^127) becomes Inf, as under
                                TMM_MATH_TF32; where the sum over l of |a(i,l)
                                b(l,j)| passes about 2^127 the correction terms may
                                overflow and that element gets TF32's accuracy
                                instead; inputs below about 2^-125 in
                                magnitude (subnormals and just above) are carried
                                with an absolute error up to 2^-148 (FP32: exact).
                                Inputs around 2^-120 keep FP32 accuracy */
} tmm_math_mode;

/* Since 1.2: the element type of a product (tmm_report, tmm_kernel_info):
 * tmm_sgemm* multiply floats, tmm_dgemm* doubles. */
typedef enum tmm_precision { TMM_PRECISION_SINGLE = 0, TMM_PRECISION_DOUBLE = 1 } tmm_precision;

/* The report of the last successful sgemm or dgemm (tmm_get_last_report): where the time
 * went and what ran. Growable: the caller sets struct_size = sizeof(tmm_report)
 * before the call; the library writes at most that many bytes and sets struct_size
 * to the number it wrote, so a program built against an older header keeps working
 * with a newer library, and a newer program can tell which fields an older library
 * filled. New fields are only ever appended. */
typedef struct tmm_report {
  size_t struct_size;      /* in: sizeof(tmm_report); out: bytes written */
  double total_ms;         /* the whole call, copies included */
  double upload_ms;        /* host to device copies (0 for device pointers and CPU) */
  double compute_ms;       /* the kernel(s) */
  double download_ms;      /* device to host copy (0 for device pointers and CPU) */
  tmm_backend backend;     /* where it ran: TMM_BACKEND_CUDA or TMM_BACKEND_CPU */
  int device;              /* CUDA device index (-1 on the CPU) */
  tmm_algorithm algorithm; /* the algorithm that ran (never TMM_ALGO_AUTO) */
  int tile_size;           /* the tile edge that ran (0 where it does not apply) */
  int coarsening;          /* outputs per thread (as in tmm_timing) */
  int splits;              /* slices of k run as separate blocks (split-K); 1 = none.
                              The Hopper tensor-core kernels split only the tiles
                              of a partly full last wave of blocks */
  int host_threads;        /* CPU threads that computed (CPU backend), else 0; on
                              the system BLAS its thread count (it may use fewer
                              on a small product) */
  const char* kernel;      /* static name of the kernel that ran, e.g.
                              "blocked_128x256", or "system BLAS (library)" when
                              the CPU's AUTO ran the system BLAS (not a row of
                              tmm_get_kernel_info; see tmm_set_algorithm);
                              "scale" ("cpu_scale" on the CPU)
                              when only C = beta * C ran, "none" when nothing ran
                              (m or n = 0) */
  tmm_host_path host_path; /* the path tmm_sgemm took on CUDA (DIRECT or STREAMED);
                              AUTO for device pointers and the CPU */
  int64_t tiles;           /* tiles of C the streamed path cut the product into
                              (1 otherwise) */
  int64_t k_chunks;        /* chunks of k per tile (1 otherwise) */
  double pack_ms;          /* host time spent packing into and out of staging */
  double link_ms;          /* time host-device copies kept the link busy (streamed);
                              compute_ms is then the device's span from the first
                              product to the last epilogue, waits for data included,
                              and total_ms the wall time of the call */
  tmm_math_mode math_mode; /* the arithmetic of the kernel that ran: TMM_MATH_FP32
                              whenever the strict kernel ran (the CPU, "scale",
                              "none", a mode without a kernel for the call, and
                              every dgemm: strict in the product's precision) */
  int64_t precision;       /* since 1.2 (a tmm_precision): TMM_PRECISION_DOUBLE
                              after a dgemm, else TMM_PRECISION_SINGLE */
  int64_t batch;           /* since 1.2: the products of the call (a strided batch's
                              `batch`, 0 for an empty one; 1 for every other call);
                              the times are the whole call's, the other fields its
                              products' (each the same shape, run the same way) */
  int64_t device_count;    /* since 1.2: the devices that computed tiles of the call
                              (a handle of several devices: up to as many as it
                              lists, tmm_get_last_device_report for each); 1 for
                              every other CUDA call, 0 on the CPU */
  int64_t host_bytes;      /* since 1.2: bytes the streamed path's packing threads
                              moved into and out of staging (host_bytes / pack_ms is
                              the host's packing rate; a strided batch sums both over
                              its products); 0 on the other paths */
  int64_t workspace_bytes; /* since 1.2: bytes of device workspace the call's kernel
                              used (split-K partial sums, the Hopper kernels' packed
                              operands; device calls and the direct host path), 0
                              where it used none: what tmm_set_workspace must give
                              for a captured call to run the same kernel */
} tmm_report;

/* Since 1.2: what one device of a handle did in the last successful call
 * (tmm_get_last_device_report). Growable like tmm_report (set struct_size first). On a
 * handle of one device, index 0 is the call itself. */
typedef struct tmm_device_report {
  size_t struct_size;     /* in: sizeof(tmm_device_report); out: bytes written */
  int device;             /* the CUDA device index of this entry */
  int host_threads;       /* packing threads it had (streamed path; 0 when it took no
                             part in the call) */
  int64_t tiles;          /* tiles of C it computed (0: none reached it; 1 for a
                             call it computed off the streamed path) */
  int64_t panel_uploads;  /* column tiles it began: panels of op(B) it uploaded */
  int64_t upload_bytes;   /* bytes it copied host to device (streamed path) */
  int64_t download_bytes; /* and device to host */
  int64_t host_bytes;     /* bytes its packing threads moved through staging */
  double start_ms;        /* its first product enqueued, from the call's start (the
                             streamed path; 0 on the others and with no tile) */
  double end_ms;          /* its last tile in C, from the call's start (the same) */
  double compute_ms;      /* its device's span from first product to last epilogue */
  double link_ms;         /* time its copies kept its link busy */
  double pack_ms;         /* host time its packing threads spent */
} tmm_device_report;

/* One kernel of the library (tmm_get_kernel_info): what it is and the settings that
 * select it. Growable like tmm_report (set struct_size first). */
typedef struct tmm_kernel_info {
  size_t struct_size;         /* in: sizeof(tmm_kernel_info); out: bytes written */
  const char* name;           /* as in tmm_report.kernel, e.g. "blocked_128x256" */
  const char* description;    /* one line */
  tmm_backend backend;        /* TMM_BACKEND_CUDA or TMM_BACKEND_CPU */
  tmm_algorithm algorithm;    /* the algorithm setting that selects it */
  int tile_size;              /* the tile size setting that selects it (0: none) */
  int coarsening;             /* the coarsening setting that selects it (0: none) */
  int is_default;             /* 1 when tile size and coarsening 0 select it */
  int min_compute_capability; /* CUDA: major * 10 + minor it needs at least; CPU: 0 */
  int max_compute_capability; /* and at most (999: no limit) */
  int outputs_per_thread;     /* elements of C one thread computes (0: not fixed) */
  tmm_math_mode math_mode;    /* its arithmetic: a kernel other than TMM_MATH_FP32
                                 runs only where TMM_OPTION_MATH_MODE allows it */
  int64_t precision;          /* since 1.2 (a tmm_precision): the element type it
                                 multiplies; a dgemm runs only DOUBLE kernels */
} tmm_kernel_info;

/* What the device of a CUDA handle is. */
typedef struct tmm_device_info {
  char name[256];
  int device; /* CUDA device index */
  int compute_capability_major;
  int compute_capability_minor;
  int multiprocessors;
  uint64_t global_memory_bytes;
  uint64_t shared_memory_per_block_bytes; /* without opt-in */
  uint64_t shared_memory_per_multiprocessor_bytes;
  uint64_t l2_cache_bytes;
} tmm_device_info;

/* ==================================================================== *
 *  Status text
 * ==================================================================== */

/* A static, human-readable name for a status ("TMM_ERROR_INVALID_VALUE: ...").
 * Never NULL; unknown values give a text that says so. */
TMM_API const char* tmm_status_string(tmm_status status);

/* The detail of the calling thread's last failure on this handle (which argument,
 * the CUDA error text); "" when this thread's last call on the handle succeeded.
 * Each thread sees its own failures, so threads sharing a handle never read (or
 * race on) each other's messages. With handle NULL: the detail of the last failed
 * call on this thread that had no usable handle (tmm_create, or a call given a NULL
 * handle). The text stays valid until this thread's next call on the same handle
 * (or, for NULL, its next such call), or the handle's destruction. Never NULL. */
TMM_API const char* tmm_get_error_message(tmm_handle handle);

/* ==================================================================== *
 *  Handles
 * ==================================================================== */

/* Create a handle on the AUTO backend: CUDA device 0 when a usable device and
 * driver exist, otherwise the CPU. *out is written only on success. Since 1.2 the
 * environment variable TMM_DEVICES, read here, asks for a handle over several devices
 * where CUDA is usable (tmm_create_with_devices): "all" (every device) or device
 * indices separated by commas ("0,1"; spaces ignored); without CUDA it is ignored (the
 * CPU, as AUTO). Text that is neither: TMM_ERROR_INVALID_VALUE; an index that does not
 * exist: TMM_ERROR_NO_DEVICE. A handle of several devices takes host pointers only
 * (tmm_sgemm_device and tmm_set_stream are TMM_ERROR_NOT_SUPPORTED there): set TMM_DEVICES
 * only for programs that multiply host matrices. */
TMM_API tmm_status tmm_create(tmm_handle* out);

/* Create a handle on a chosen backend. `device` is the CUDA device index (ignored
 * for the CPU backend). CUDA without a usable device, or with no device of that
 * index, gives TMM_ERROR_NO_DEVICE. AUTO uses CUDA device `device` when CUDA is
 * usable (TMM_ERROR_NO_DEVICE if that index does not exist, never another
 * device), otherwise the CPU. */
TMM_API tmm_status tmm_create_with_backend(tmm_handle* out, tmm_backend backend, int device);

/* Since 1.2: a CUDA handle over `count` devices, `devices[0..count)` (NULL and 0: every
 * device of the process). Its host calls (tmm_sgemm, tmm_dgemm, their _io and strided
 * batched forms) cut C into tiles that the devices take as each finishes its last, so
 * that a slower or busier device takes fewer; each entry has its own streams, pinned
 * staging, device buffers and packing threads, none shared with other handles (so its
 * products neither wait for other handles' products on the same devices nor make them
 * wait; a device listed twice is two entries whose products overlap), freed by
 * tmm_destroy. The packing threads (TMM_OPTION_HOST_THREADS) are split evenly between the
 * entries, each at least one. Where the model says sharing cannot pay (small products),
 * with TMM_HOST_PATH_DIRECT, and for products that are empty or only scale C, the first
 * listed device runs the call alone (report.device_count 1); TMM_HOST_PATH_STREAMED
 * shares every product over every entry (unless an entry's budget holds no cut of it). count 1: the
 * same as tmm_create_with_backend(out, TMM_BACKEND_CUDA, devices[0]). On a handle of several
 * devices: tmm_sgemm_device, tmm_dgemm_device (and their batched forms), tmm_set_stream and
 * tmm_get_stream are TMM_ERROR_NOT_SUPPORTED (a stream and device memory belong to one device: use
 * a handle per device); tmm_synchronize succeeds at once (host calls return done);
 * TMM_OPTION_DEVICE_MEMORY_BUDGET and TMM_OPTION_HOST_STAGING_BYTES hold per entry (the default
 * budget: each device's free memory shared by the entries that list it); tmm_reserve_host_staging
 * reserves for each entry; besides them, a shared call may keep up to 256 MiB of pinned memory
 * in the handle (until tmm_destroy) for the chunks of op(A) its devices share (each packed once
 * for all of them); tmm_get_device_info describes the first. The report of a shared
 * call: tiles, host_bytes, pack_ms and link_ms summed over the devices, compute_ms the
 * longest device's span, the kernel that of the first device that computed; a strided batch
 * adds up each device's figures over its products (tmm_get_last_device_report, whose moments
 * are the last product's). A failure on one device stops
 * the others taking tiles; the call returns once every device is idle, with the first failure's
 * status and a message naming the device, C as "What C holds after a failed sgemm" says (the tiles
 * other devices finished are final), and the handle stays usable. TMM_ERROR_INVALID_VALUE: `out`
 * NULL, count < 0, count > 64, devices NULL with count > 0, or count 0 with devices not NULL;
 * TMM_ERROR_NO_DEVICE: no usable device, or an index that does not exist (no other device is used
 * instead). *out is written only on success. */
TMM_API tmm_status tmm_create_with_devices(tmm_handle* out, const int* devices, int count);

/* Since 1.2: the devices the handle computes on (1 for a single-device CUDA handle).
 * CPU backend: TMM_ERROR_NOT_SUPPORTED. */
TMM_API tmm_status tmm_get_device_count(tmm_handle handle, int* count);

/* Since 1.2: entry `index` (0 <= index < tmm_get_device_count) of the handle: its
 * device, and what it did in the last successful call (set out->struct_size first; a
 * struct_size that ends before `panel_uploads` does is
 * TMM_ERROR_INVALID_VALUE; no successful call yet: TMM_ERROR_INVALID_VALUE, as
 * tmm_get_last_time). CPU backend: TMM_ERROR_NOT_SUPPORTED. */
TMM_API tmm_status tmm_get_device_info_at(tmm_handle handle, int index, tmm_device_info* out);
TMM_API tmm_status tmm_get_last_device_report(tmm_handle handle, int index, tmm_device_report* out);

/* Release the handle and everything it owns. NULL is a no-op. Waits for work the
 * handle has queued. */
TMM_API void tmm_destroy(tmm_handle handle);

/* The backend the handle runs on (CUDA or CPU, never AUTO). */
TMM_API tmm_status tmm_get_backend(tmm_handle handle, tmm_backend* out);

/* ==================================================================== *
 *  Settings
 * ==================================================================== */

/* Choose the algorithm. The CPU backend has NAIVE, BLOCKED and AUTO; other
 * algorithms there give TMM_ERROR_NOT_SUPPORTED and leave the setting unchanged.
 * The CPU's AUTO runs the system's optimized BLAS (sgemm_ or dgemm_ of OpenBLAS,
 * BLIS or MKL) when one is found at run time, else BLOCKED. It is loaded with dlopen
 * (libtiledmm has no link-time dependency on it), at the first product, from the
 * environment variable TILEDMM_CPU_BLAS: unset, empty or "auto" searches, in order,
 * libopenblas.so.0, libopenblasp.so.0, libopenblaso.so.0, libblis.so.4, libblis.so.3,
 * libmkl_rt.so.2, libmkl_rt.so (not the reference libblas.so.3); "none" never uses
 * one; any other value is the only library tried (a path or a name). A library whose
 * gemm is libtiledmm_blas's is refused. The contract stays the library's own on that
 * path: its argument checks, aliasing rule and quick returns run first (m or n = 0;
 * k = 0 or alpha = 0 gives C = beta * C without the BLAS), a non-finite alpha runs
 * the sequential loop, and sizes or leading dimensions above INT_MAX run BLOCKED.
 * tmm_report.kernel names the path: "system BLAS (libopenblas.so.0)" or
 * "cpu_blocked" / "cpu_f64_blocked". TMM_OPTION_HOST_THREADS: at 0 (the default)
 * the BLAS uses its own thread count (OPENBLAS_NUM_THREADS, BLIS_NUM_THREADS,
 * MKL_NUM_THREADS); another value is honoured per call with MKL
 * (mkl_set_num_threads_local, restored after the call), while with OpenBLAS and BLIS,
 * whose count is global to the process and which tiledmm never changes, such a call
 * runs BLOCKED on that many threads. */
TMM_API tmm_status tmm_set_algorithm(tmm_handle handle, tmm_algorithm algorithm);
TMM_API tmm_status tmm_get_algorithm(tmm_handle handle, tmm_algorithm* out);

/* Tile edge on CUDA (tmm_get_kernel_info lists each kernel's): 8, 16 or 32 for
 * TILED, COARSENED (and the block edge of
 * NAIVE); 64, 128 or 256 for BLOCKED (a 64 x 64, 128 x 128 or 128 x 256 tile of C
 * per block; 0 lets BLOCKED also split k over several blocks where that helps), and 16
 * for BLOCKED's thin kernel (kernels "thin" and "f64_thin": products with m or n at most
 * 16, strict in the call's precision, which read the large operand once; wider products
 * run in passes of 16), which AUTO and BLOCKED with tile 0 also run, in every math mode,
 * where m or n is 1 to 16 (in double 1 to 8, or 1 to 4 where the large operand's rows
 * run along k) and the large operand is large (a long side of 256 and 2^20 elements at
 * least). Its split of k adds the slices in a fixed order: the same bits run to run.
 * 32 for BLOCKED's small kernel (kernels "small" and "f64_small", since 1.2: a 32 x 32
 * tile of C per block, strict, for strided batches of small products), which AUTO and
 * BLOCKED with tile 0 also run, in every math mode, for a strided batch of products of
 * m and n at most 32 and k at most 128 (products of m and n at most 16: TILED's 16 x 16
 * blocks). 0 selects the default for the shape; AUTO ignores the setting. Any other value
 * is TMM_ERROR_INVALID_VALUE here; a valid size that the chosen algorithm lacks
 * makes tmm_sgemm return TMM_ERROR_NOT_SUPPORTED. The CPU backend ignores it. */
TMM_API tmm_status tmm_set_tile_size(tmm_handle handle, int tile_size);
TMM_API tmm_status tmm_get_tile_size(tmm_handle handle, int* out);

/* Outputs per thread of COARSENED: 1, 2 or 4; 0 selects the default (2). */
TMM_API tmm_status tmm_set_coarsening(tmm_handle handle, int coarsening);
TMM_API tmm_status tmm_get_coarsening(tmm_handle handle, int* out);

/* Options: the growable settings of a handle. Each is an int64_t; new options are
 * appended with new numbers in later 1.x releases, and a number the loaded library
 * does not know is TMM_ERROR_INVALID_VALUE (so a program can probe for one).
 * The setters above are the same as TMM_OPTION_ALGORITHM, _TILE_SIZE, _COARSENING. */
typedef enum tmm_option {
  TMM_OPTION_ALGORITHM = 1,            /* a tmm_algorithm; default TMM_ALGO_AUTO */
  TMM_OPTION_TILE_SIZE = 2,            /* as tmm_set_tile_size; default 0 (per shape) */
  TMM_OPTION_COARSENING = 3,           /* as tmm_set_coarsening; default 0 (= 2) */
  TMM_OPTION_HOST_THREADS = 4,         /* CPU threads a call may use (the CPU backend's
                                          product, the streamed path's packing); default 0 =
                                          one per core the system reports for the CPU
                                          backend, three quarters of them for packing
                                          (which shares the memory bus with the link).
                                          From 4 on, the streamed path adds a quarter as
                                          many (at most 4) that fault in the pages of a C
                                          of 64 MiB or more ahead of its first writes */
  TMM_OPTION_DEVICE_MEMORY_BUDGET = 5, /* bytes of device memory tmm_sgemm may
                                  allocate; default 0 = what the device has free when
                                  the call starts, less a margin. A product that does
                                  not fit runs streamed, in tiles and chunks of k:
                                  any m, n and k run within any budget (and staging,
                                  option 6) of at least 1 MiB */
  TMM_OPTION_HOST_STAGING_BYTES = 6,   /* pinned host memory the streamed path may use
                                    for staging; default 0 = 512 MiB */
  TMM_OPTION_HOST_PATH = 7,            /* a tmm_host_path: how tmm_sgemm moves host matrices;
                                          default TMM_HOST_PATH_AUTO */
  TMM_OPTION_DEBUG_POISON_STAGING = 8, /* 1: fill staging buffers with NaN between
                                   uses, so a read of stale staging shows (tests);
                                   default 0, or 1 when the environment variable
                                   TMM_DEBUG_POISON_STAGING=1 is set at creation */
  TMM_OPTION_MATH_MODE = 9             /* a tmm_math_mode: the arithmetic the handle
                                          allows; default TMM_MATH_FP32, or the
                                          environment variable TMM_MATH_MODE at creation */
} tmm_option;

/* Set or read an option. Values outside the option's bounds, or not among the
 * values it takes (tile sizes), are TMM_ERROR_INVALID_VALUE and leave the setting
 * unchanged; a valid value the backend lacks is TMM_ERROR_NOT_SUPPORTED (as for
 * tmm_set_algorithm). */
TMM_API tmm_status tmm_set_option(tmm_handle handle, tmm_option option, int64_t value);
TMM_API tmm_status tmm_get_option(tmm_handle handle, tmm_option option, int64_t* value);

/* The smallest and largest value an option takes (no handle needed), and its
 * default. Either pointer may be NULL. TMM_ERROR_INVALID_VALUE for an unknown option. */
TMM_API tmm_status tmm_get_option_bounds(tmm_option option, int64_t* lower, int64_t* upper,
                                         int64_t* default_value);

/* The option's name ("host_threads"), static; NULL for an unknown option. */
TMM_API const char* tmm_option_name(tmm_option option);

/* The library's kernels, index 0, 1, ... until TMM_ERROR_INVALID_VALUE: each with
 * the settings that select it (TMM_OPTION_ALGORITHM, _TILE_SIZE, _COARSENING; BLOCKED
 * on CUDA also splits k where that helps) and, since 1.2, its precision. No handle
 * needed; set out->struct_size. A struct_size without the precision field (a
 * program built against 1.1) lists the single-precision kernels only. */
TMM_API tmm_status tmm_get_kernel_info(int index, tmm_kernel_info* out);

/* ==================================================================== *
 *  SGEMM
 * ==================================================================== */

/* C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B) k x n, C m x n, all
 * in host memory. Returns when C holds the result.
 *
 * BLAS semantics: m or n = 0 is a successful no-op; k = 0 gives C = beta * C;
 * beta = 0 never reads C (NaN in C does not leak). Leading dimensions follow CBLAS:
 * each is at least max(1, number of columns) of the stored matrix in row-major,
 * max(1, number of rows) in column-major. A pointer may be NULL only when the
 * matrix it points to has no element the call needs. Elements between rows (or
 * columns) of C beyond its m x n part are never written.
 *
 * C must not share an element with A or B (BLAS leaves that undefined): such a call
 * is TMM_ERROR_INVALID_VALUE. Submatrices of one array that interleave without
 * sharing an element (as LAPACK's sgetrf passes them) are fine.
 *
 * Arithmetic: every algorithm forms each element as alpha * (sum over l of
 * op(A)(i,l) * op(B)(l,j)) + beta * C(i,j) in FP32, in an order of summation that
 * depends on the algorithm; under TMM_MATH_TF32 (TMM_OPTION_MATH_MODE) op(A) and
 * op(B) are first rounded to TF32 (a finite value within 2^-11 of FLT_MAX rounds to
 * Inf), and the rest holds as said here. alpha multiplies the sums, never A or B, so IEEE
 * specials agree across algorithms: alpha = +-Inf gives +-Inf where the sum is
 * non-zero and NaN where it is 0; Inf or NaN in A or B propagate as in a sum of
 * products. alpha = 0 or k = 0 reads neither A nor B (C = beta * C), as in the
 * reference BLAS. (The reference BLAS's own NN loop scales B by alpha first, so
 * with alpha = Inf it can give NaN where tiledmm gives Inf.) */
TMM_API tmm_status tmm_sgemm(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                             tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                             const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                             float* C, int64_t ldc);

/* A host matrix that the library reads and writes through the caller's functions
 * instead of a pointer: memory it cannot address directly, such as a Java array
 * (the Java binding passes float[] this way, so that its copies are the streamed
 * path's packing, done by the library's threads, and not an extra pass). Offsets
 * are in elements from the matrix's first element, as a pointer to it would count
 * them (element (i, j) of a row-major matrix is at i * ld + j); one call covers part
 * of one row (row-major) or column (column-major) of the stored matrix, never its
 * padding. The functions are called from several of the library's threads at once,
 * for different ranges, and must not call into the library; each returns 0 on
 * success, anything else to fail the product (TMM_ERROR_CALLBACK). Set struct_size. */
typedef struct tmm_host_io {
  size_t struct_size; /* sizeof(tmm_host_io) */
  /* copy `count` floats from `offset` into `dst` */
  int (*read)(void* user, int64_t offset, int64_t count, float* dst);
  /* copy `count` floats from `src` to `offset` (C only; NULL for A and B) */
  int (*write)(void* user, int64_t offset, int64_t count, const float* src);
  void* user; /* passed to both */
} tmm_host_io;

/* tmm_sgemm with A, B and C behind tmm_host_io functions; the same arguments,
 * checks, semantics and paths (on CUDA the streamed path's packing threads call
 * `read` and `write` in place of their copies; smaller products and the CPU read
 * whole operands first, into memory of their own, and write C back after). An io
 * may be NULL only where tmm_sgemm accepts a NULL matrix; C's needs `write`, and
 * `read` when beta != 0. The library cannot see whether the matrices overlap: C must
 * not share an element with A or B. After a failure, C's write function has been
 * given only final values ("What C holds after a failed sgemm", at the top), and no
 * function is called after the call returns. */
TMM_API tmm_status tmm_sgemm_io(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                                tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                const tmm_host_io* A, int64_t lda, const tmm_host_io* B,
                                int64_t ldb, float beta, const tmm_host_io* C, int64_t ldc);

/* The same on device pointers (cudaMalloc or managed memory), enqueued on the
 * handle's stream: it may return before the product is done (tmm_synchronize).
 * The CPU backend gives TMM_ERROR_NOT_SUPPORTED.
 *
 * CUDA graphs (since 1.2): the device calls (tmm_sgemm_device, tmm_dgemm_device and
 * their strided batched forms) may be captured into a CUDA graph, in any capture mode,
 * on the handle's stream (tmm_set_stream): while the stream is capturing, a call
 * enqueues only its kernels, with no allocation, event or host wait, and the graph
 * replays the product with the call's pointers, shape and scalars (new scalars at each
 * replay: tmm_sgemm_device_scalars below). A captured product
 * uses only a workspace the caller gave (tmm_set_workspace): it then runs the kernel
 * the same call runs outside a capture where that kernel's workspace fits, with the same
 * bits. Without one, or where it is too small, its kernel is the one the call would
 * choose among those needing none or no more (k not split; on sm_90 a TF32 or
 * FP32_ACCURATE product whose Hopper kernel would pack its operands runs its mode's
 * mma.sync kernel), so its bits may differ from the same call made outside a capture.
 * Its report
 * (tmm_get_last_report) names the kernel, with times 0. The host calls (tmm_sgemm,
 * tmm_sgemm_io, their double and batched forms) give TMM_ERROR_NOT_SUPPORTED, before
 * reading or writing anything, while the handle's stream is capturing, and so does
 * tmm_synchronize (nothing waited for); while another
 * stream is captured, by any thread and in any mode, every call runs as usual and
 * leaves that capture alone. */
TMM_API tmm_status tmm_sgemm_device(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                                    tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                    float alpha, const float* A, int64_t lda, const float* B,
                                    int64_t ldb, float beta, float* C, int64_t ldc);

/* ==================================================================== *
 *  DGEMM (since 1.2)
 * ==================================================================== */

/* tmm_sgemm, tmm_sgemm_io and tmm_sgemm_device in double precision: the same
 * arguments, checks, messages, BLAS semantics (beta = 0 never reads C, k = 0 or
 * alpha = 0 reads neither A nor B), aliasing rule, and what C holds after a failure,
 * with double for float; leading dimensions and io offsets count doubles. Every
 * product and sum is in FP64 in an order that depends on the algorithm:
 * TMM_OPTION_MATH_MODE concerns FP32 inputs and does not change a dgemm, whose
 * report says TMM_MATH_FP32 (strict, in its precision) and TMM_PRECISION_DOUBLE.
 *
 * The CPU backend runs NAIVE, BLOCKED and AUTO in double. The CUDA backend, on the
 * direct and the streamed host paths and on device pointers: AUTO and BLOCKED run the
 * FP64 tensor cores (IEEE FP64 products and sums, as cuBLAS DGEMM's default) where they
 * pay, compute capability 8.0 and 9.0 on: tile 256 (128 x 128, where a block may hold
 * its 160 KiB of shared memory), 128 (128 x 64) or 64 (64 x 64) by the product's size
 * unless TMM_OPTION_TILE_SIZE names one; elsewhere (before 8.0, and 8.6 and 8.9) FP64
 * fused multiply-adds on the CUDA cores, tile 128 (128 x 128) or 64 (64 x 64). Where the
 * tiles leave SMs idle or k is deep they split k (the report's splits) and add the
 * slices' partial sums in a fixed order, so a call gives the same bits run to run.
 * Products with m or n at most 8 (4 where the large operand's rows run along k) run the
 * thin kernel (f64_thin; tile 16, see tmm_set_tile_size). BLOCKED with tile 256 where the FP64
 * tensor cores or its shared memory are not there, or with a tile double has no row of (8, 32),
 * gives TMM_ERROR_NOT_SUPPORTED before it reads or writes any matrix. The classic ladder runs in
 * double too (NAIVE, TILED, COARSENED: the kernels f64_*). */
TMM_API tmm_status tmm_dgemm(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                             tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                             const double* A, int64_t lda, const double* B, int64_t ldb,
                             double beta, double* C, int64_t ldc);

/* tmm_host_io for double matrices: offsets and counts in doubles. Set struct_size. */
typedef struct tmm_host_io_double {
  size_t struct_size; /* sizeof(tmm_host_io_double) */
  /* copy `count` doubles from `offset` into `dst` */
  int (*read)(void* user, int64_t offset, int64_t count, double* dst);
  /* copy `count` doubles from `src` to `offset` (C only; NULL for A and B) */
  int (*write)(void* user, int64_t offset, int64_t count, const double* src);
  void* user; /* passed to both */
} tmm_host_io_double;

TMM_API tmm_status tmm_dgemm_io(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                                tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                double alpha, const tmm_host_io_double* A, int64_t lda,
                                const tmm_host_io_double* B, int64_t ldb, double beta,
                                const tmm_host_io_double* C, int64_t ldc);

TMM_API tmm_status tmm_dgemm_device(tmm_handle handle, tmm_layout layout, tmm_transpose trans_a,
                                    tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                    double alpha, const double* A, int64_t lda, const double* B,
                                    int64_t ldb, double beta, double* C, int64_t ldc);

/* ---- Strided batched products (since 1.2) ----------------------------------------
 *
 * `batch` products of one shape in one call: product b (0 <= b < batch) is
 *   C_b = alpha * op(A_b) * op(B_b) + beta * C_b,  X_b = X + b * stride_x elements,
 * each with the arguments, rules, arithmetic and math modes of tmm_sgemm (tmm_dgemm):
 * layouts, transposes, leading dimensions, beta = 0 never reading C, quick returns.
 * Strides count elements of the call (floats, doubles) and may be 0 for A or B (one
 * matrix for every product); inputs may overlap one another. batch = 0 changes nothing
 * and needs no pointer; batch = 1 is the single call, whatever the (non-negative)
 * strides.
 * TMM_ERROR_INVALID_VALUE, before anything is read or written: whatever the single call
 * rejects; batch < 0 or a stride < 0; a matrix the call reads or writes whose last
 * product's byte offset (from its first element) does not fit 64 bits (as in the single
 * call, A and B are not looked at where k = 0 or alpha = 0); products of C that share an element
 * (stride_c = 0 with batch > 1, or interleaved products that overlap; interleaved products that
 * share none are fine); a product of C sharing an element with any product of A or B
 * (host pointers: the library checks it; device pointers: as tmm_sgemm_device says).
 * The CPU backend gives each product the bits tmm_sgemm would (its own kernel may run
 * whole products on each of its threads). The CUDA backend on device pointers chooses
 * one kernel for every product (so a product's bits may differ from its single call's):
 * the strict FP32 and FP64 kernels (AUTO's choice in strict FP32, in double, and for
 * small products in every mode) and the TF32 and FP32_ACCURATE kernels (TF32 runs strict
 * where a tensor-core tile would idle over half its area; on Hopper its wgmma kernel
 * where it reads the products as they lie, else its mma.sync rows; FP32_ACCURATE strict
 * where the Hopper rows exist, the faster there, but on its Hopper kernel for large
 * products, which it splits and packs into the workspace a group at a time, one launch
 * a group) run the whole batch with k not split, in one launch (or one a group), except
 * a batch too small to fill the GPU whose products split k alone: those run one launch
 * per product, as do the thin kernels, in order on the handle's stream; on host pointers one host
 * call per product, each finished before the next. After a failure past the checks, each element of
 * every C_b's m x n part holds its old value or its final one (products before the failing one
 * final), and the last report stays the previous successful call's. The report's `batch` says how
 * many products the call had, its kernel and splits are a product's, its times the
 * whole call's. */
TMM_API tmm_status tmm_sgemm_strided_batched(tmm_handle handle, tmm_layout layout,
                                             tmm_transpose trans_a, tmm_transpose trans_b,
                                             int64_t m, int64_t n, int64_t k, float alpha,
                                             const float* A, int64_t lda, int64_t stride_a,
                                             const float* B, int64_t ldb, int64_t stride_b,
                                             float beta, float* C, int64_t ldc, int64_t stride_c,
                                             int64_t batch);
TMM_API tmm_status tmm_dgemm_strided_batched(tmm_handle handle, tmm_layout layout,
                                             tmm_transpose trans_a, tmm_transpose trans_b,
                                             int64_t m, int64_t n, int64_t k, double alpha,
                                             const double* A, int64_t lda, int64_t stride_a,
                                             const double* B, int64_t ldb, int64_t stride_b,
                                             double beta, double* C, int64_t ldc, int64_t stride_c,
                                             int64_t batch);
/* The same on device pointers (CUDA backend; the CPU backend: TMM_ERROR_NOT_SUPPORTED). */
TMM_API tmm_status tmm_sgemm_strided_batched_device(tmm_handle handle, tmm_layout layout,
                                                    tmm_transpose trans_a, tmm_transpose trans_b,
                                                    int64_t m, int64_t n, int64_t k, float alpha,
                                                    const float* A, int64_t lda, int64_t stride_a,
                                                    const float* B, int64_t ldb, int64_t stride_b,
                                                    float beta, float* C, int64_t ldc,
                                                    int64_t stride_c, int64_t batch);
TMM_API tmm_status tmm_dgemm_strided_batched_device(tmm_handle handle, tmm_layout layout,
                                                    tmm_transpose trans_a, tmm_transpose trans_b,
                                                    int64_t m, int64_t n, int64_t k, double alpha,
                                                    const double* A, int64_t lda, int64_t stride_a,
                                                    const double* B, int64_t ldb, int64_t stride_b,
                                                    double beta, double* C, int64_t ldc,
                                                    int64_t stride_c, int64_t batch);

/* The device calls with alpha and beta in device memory, as cuBLAS's
 * CUBLAS_POINTER_MODE_DEVICE (since 1.2): `alpha` and `beta` each point to one element
 * of the call's type in device memory of the handle's device (cudaMalloc or managed
 * memory), read by the kernels when they run, not by the call. So a graph captured
 * with these calls replays with the values that memory holds at each replay, and a
 * kernel may compute the scalars it uses. Otherwise each is its device call above
 * (tmm_sgemm_device, tmm_dgemm_device, the strided batched forms): the same arguments,
 * checks, kernels, streams, workspace, reports and capture rules, with these
 * differences, since the call cannot see the values:
 *  - A and B must be valid for every product whose k > 0, and C for every product
 *    with m, n > 0, whatever alpha and beta hold (the value calls need no A or B
 *    where alpha = 0, no C read where beta = 0). The kernels read A and B even where
 *    alpha holds 0; each element of C then becomes beta * C (0 where beta holds 0),
 *    A's and B's values (NaN, Inf) never showing. Where beta holds 0, C is not read
 *    (a NaN there does not show), as in the value calls.
 *  - k = 0 launches a kernel that writes beta * C (the value call's scale-only case).
 *  - The result's bits are those of the value call with the same scalars (the same
 *    kernel reads them from memory instead of its arguments), alpha 0 aside.
 *  - TMM_ERROR_INVALID_VALUE also where `alpha` or `beta` is NULL or not aligned to its
 *    type, and where a kernel
 *    would run (m, n and batch > 0) where either is not a device, managed or registered
 *    host pointer (as the matrices) or shares a byte with a product of C (the kernels
 *    write C while others read the scalars), or with memory given by tmm_set_workspace
 *    (as the matrices: the kernels write it). The memory must not change
 *    while the call's kernels run: change it on the handle's stream (or after
 *    tmm_synchronize), as between the replays of a graph.
 * The CPU backend and a handle of several devices: TMM_ERROR_NOT_SUPPORTED. */
TMM_API tmm_status tmm_sgemm_device_scalars(tmm_handle handle, tmm_layout layout,
                                            tmm_transpose trans_a, tmm_transpose trans_b, int64_t m,
                                            int64_t n, int64_t k, const float* alpha,
                                            const float* A, int64_t lda, const float* B,
                                            int64_t ldb, const float* beta, float* C, int64_t ldc);
TMM_API tmm_status tmm_dgemm_device_scalars(tmm_handle handle, tmm_layout layout,
                                            tmm_transpose trans_a, tmm_transpose trans_b, int64_t m,
                                            int64_t n, int64_t k, const double* alpha,
                                            const double* A, int64_t lda, const double* B,
                                            int64_t ldb, const double* beta, double* C,
                                            int64_t ldc);
TMM_API tmm_status tmm_sgemm_strided_batched_device_scalars(
    tmm_handle handle, tmm_layout layout, tmm_transpose trans_a, tmm_transpose trans_b, int64_t m,
    int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda, int64_t stride_a,
    const float* B, int64_t ldb, int64_t stride_b, const float* beta, float* C, int64_t ldc,
    int64_t stride_c, int64_t batch);
TMM_API tmm_status tmm_dgemm_strided_batched_device_scalars(
    tmm_handle handle, tmm_layout layout, tmm_transpose trans_a, tmm_transpose trans_b, int64_t m,
    int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda, int64_t stride_a,
    const double* B, int64_t ldb, int64_t stride_b, const double* beta, double* C, int64_t ldc,
    int64_t stride_c, int64_t batch);

/* The CUDA stream (a cudaStream_t) the handle enqueues on. NULL selects the
 * handle's own stream, created with it. CPU backend: TMM_ERROR_NOT_SUPPORTED.
 * A handle the CUDA runtime rejects gives TMM_ERROR_INVALID_VALUE; the stream must
 * stay alive while the handle uses it (CUDA cannot detect a destroyed stream
 * safely, so using one is undefined, as it is in CUDA).
 * The stream may change between any two calls: a handle's calls on different
 * streams never share its device workspace (split-K partial sums, packed operands)
 * while either may still run. Each call that uses the workspace makes its stream
 * wait (cudaStreamWaitEvent, no host wait) for the work that last used it, on
 * whatever stream; so products of one handle on two streams run one after the other
 * on the device where they need the workspace. For products that overlap, use one
 * handle per stream. */
TMM_API tmm_status tmm_set_stream(tmm_handle handle, void* stream);
TMM_API tmm_status tmm_get_stream(tmm_handle handle, void** out);

/* Since 1.2: `bytes` of the caller's device memory at `workspace` (cudaMalloc'd, or a
 * 256-byte aligned part of such memory, on the handle's device) for the device calls'
 * workspace (split-K partial sums, the Hopper kernels' packed operands), in place of
 * the handle's own, as cublasSetWorkspace; NULL and 0 give the device calls back the
 * handle's own (allocated and grown as calls need). The host calls never use it.
 * A call whose kernel needs more than `bytes` runs one that needs no more (k split less
 * or not at all, or its mode's kernel needing none), as where device memory runs out:
 * it never fails for that. A call's report gives the bytes its kernel used
 * (tmm_report.workspace_bytes): make a call outside a capture to learn what its
 * captured form needs. Outside a capture the calls order their uses of it across the
 * handle's streams as they order the handle's own (each waits for the last, also where
 * the memory was given again or replaced since, on whatever stream); captured
 * calls use it without waiting (CUDA graphs, at tmm_sgemm_device), so the caller must
 * not let a replay of the graph run while other work uses the memory (another replay,
 * a call of this handle on another stream, or another handle given the same memory),
 * and keeps it allocated while queued work or a graph that captured it may run. The
 * kernels write it: a device call whose matrices (or scalars in device memory) share a
 * byte with it, while it is given, gives TMM_ERROR_INVALID_VALUE before it enqueues
 * anything. TMM_ERROR_INVALID_VALUE, the setting unchanged: workspace NULL with bytes > 0 or not
 * NULL with 0; not 256-byte aligned; not device memory of the handle's device (managed
 * and host memory included); `bytes` running past the end of its allocation. CPU
 * backend and handles of several devices: TMM_ERROR_NOT_SUPPORTED. */
TMM_API tmm_status tmm_set_workspace(tmm_handle handle, void* workspace, size_t bytes);

/* Allocate now the pinned host staging that the streamed host path
 * (TMM_HOST_PATH_STREAMED) fills, so that the first large tmm_sgemm does not pay for it:
 * pinning host memory is slow (tens of milliseconds per GiB). `bytes` is 0 for the
 * handle's staging budget (TMM_OPTION_HOST_STAGING_BYTES, default 512 MiB) or at most
 * that budget (more is TMM_ERROR_INVALID_VALUE). The streamed path's staging, device
 * buffers and packing threads belong to the device, not the handle: every handle of
 * the process on that device shares them (products on host memory through one device
 * run one at a time), they grow as products need and are freed with the last handle
 * on the device; a handle of tmm_create_with_devices has its own for each entry, and
 * this reserves `bytes` for each. TMM_ERROR_OUT_OF_MEMORY when the memory cannot be had (the handle
 * works on). The CPU backend has no staging: a no-op. */
TMM_API tmm_status tmm_reserve_host_staging(tmm_handle handle, int64_t bytes);

/* Wait until all work the handle has enqueued is done. A no-op on the CPU. */
TMM_API tmm_status tmm_synchronize(tmm_handle handle);

/* ==================================================================== *
 *  Timing and device
 * ==================================================================== */

/* Compute time of the last successful sgemm or dgemm, in milliseconds: CUDA events on the
 * GPU, a steady clock on the CPU. After tmm_sgemm_device this waits for that
 * product to finish. TMM_ERROR_INVALID_VALUE if no sgemm or dgemm has succeeded yet. */
TMM_API tmm_status tmm_get_last_time(tmm_handle handle, double* ms);

/* The breakdown of the last successful sgemm or dgemm. Same rules as tmm_get_last_time. */
TMM_API tmm_status tmm_get_last_timing(tmm_handle handle, tmm_timing* out);

/* The full report of the last successful sgemm or dgemm (see tmm_report): set
 * out->struct_size first. Same rules as tmm_get_last_time; a struct_size smaller
 * than the 1.1 tmm_report is TMM_ERROR_INVALID_VALUE. */
TMM_API tmm_status tmm_get_last_report(tmm_handle handle, tmm_report* out);

/* The handle's CUDA device (a handle of several: the first listed). CPU backend:
 * TMM_ERROR_NOT_SUPPORTED. */
TMM_API tmm_status tmm_get_device_info(tmm_handle handle, tmm_device_info* out);

#ifdef __cplusplus
}
#endif

#endif /* TILEDMM_H */
