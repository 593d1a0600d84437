// tmm_bench: tiledmm's CUDA kernels against cuBLAS SGEMM (DGEMM with --precision double),
// in the same run.
//
// For each shape, layout and transpose pair: random inputs, outputs poisoned with
// NaN, warm-up, then the median of timed repeats (CUDA events on one stream) for
// each algorithm through the device-pointer API and for cuBLAS in the matching math
// mode. When a problem fits in L2, the repeats rotate over several input sets so
// that they do not measure the cache. The error of every result is the relative
// Frobenius norm against a full FP64 reference (double-double in double) that this
// program computes on the GPU itself. A table goes to stdout, CSV to --csv. Last, the
// host-memory API against the device API at one large size, with the breakdown of
// where the time goes.
//
// --math picks the arithmetic on both sides (TMM_OPTION_MATH_MODE and cuBLAS's math
// mode): fp32 (default) is tiledmm's strict FP32 against CUBLAS_DEFAULT_MATH (no
// TF32); tf32 is TMM_MATH_TF32 against CUBLAS_TF32_TENSOR_OP_MATH, on the issue's
// shapes unless --square or --shapes names others; fp32_accurate is
// TMM_MATH_FP32_ACCURATE against CUBLAS_DEFAULT_MATH (FP32 accuracy on both sides),
// with one more line per shape, "cublas_3x": 3xTF32 composed by hand from cuBLAS (A and
// B split into TF32 and remainder, three TF32 calls), fast but not FP32-accurate.
// The kernel column is what tiledmm's report says ran.
//
// --seconds S times each side for S seconds instead of ~0.3 s: the sustained speed,
// once the clock has settled under the power cap. --alternate times cuBLAS and tiledmm
// in turns, a run of each per repeat, so that both see the same clock (one after the
// other, the side timed first may run faster while the GPU is cool).
//
// --inputs spread draws inputs whose exponents spread over 2^-16..2^16 (sign and
// mantissa random) instead of uniform [-1, 1).
//
// --suite FILE reads the shapes from a suite file (bench/shapes.txt, the one every
// published figure uses; its format is in bench/shape_suite.hpp), --groups g,g,... only
// those of the groups named. A suite shape with batch=N (the batched group) is a strided
// batch of N dense products, one after another: tmm_?gemm_strided_batched_device against
// cublas?gemmStridedBatched (cublasGemmStridedBatchedEx for TF32), its TFLOP/s over all
// N, its error over 8 of them (the first, the last and 6 between). A suite run times AUTO (unless
// --algos says otherwise) in turns with cuBLAS (--alternate), with no host-memory part. --math
// takes a list (fp32,tf32 or all) to run each mode in turn. Last, for every run, a summary per math
// mode and algorithm (and per group of a suite): the geometric mean of tiledmm's speed
// over cuBLAS's and the lowest, with its shape.
//
// --precision double times tmm_dgemm_device against cublasDgemm (CUBLAS_DEFAULT_MATH)
// on doubles from the same generator, by the same timing (and --alternate, --seconds,
// --suite). FP64's own reference could not measure FP64's error, so in double the
// reference is double-double (each element an unevaluated sum hi + lo, about 106 bits,
// Dot2 as tests/gemm_reference_f64.hpp computes it) and the error of a result c is
// (c - hi) - lo. The math mode concerns FP32 inputs and does not change a dgemm, so
// --math takes fp32 alone there; the table, the summary and the CSV name the
// arithmetic "fp64", and the CSV has one more column, precision ("double"), at the
// end (single's columns are unchanged). The default algorithms are AUTO and the FP64
// tensor-core tiles (blocked256 where it runs, blocked128, blocked64); --algos naming a setting
// with no double kernel in tmm_get_kernel_info stops at once. The host-memory part runs tmm_dgemm.
//
//   tmm_bench [--quick] [--square n,n,...] [--shapes MxNxK,...] [--suite FILE [--groups g,...]]
//             [--precision single|double] [--math fp32|tf32|fp32_accurate|all|m,m,...]
//             [--inputs uniform|spread] [--seconds S] [--alternate] [--no-host] [--csv FILE]
//             [--algos a,b,...] [--forms all] [--bandwidth]
//
// --forms all runs each --square or --shapes shape in its 8 forms (both layouts, every
// transpose pair; the shapes are otherwise row-major NN). --bandwidth adds two columns
// before the kernel's name: the larger operand's bytes (max(m, n) x k elements) over
// the time, in TB/s, for tiledmm and for cuBLAS: what bounds a thin product (m or n at
// most 16; BLOCKED's tile 16, --algos thin, is its kernel). The CSV is unchanged.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "shape_suite.hpp"
#include "tiledmm/tiledmm.h"

namespace {

#define CHECK_CUDA(x) check_cuda((x), #x, __LINE__)
void check_cuda(cudaError_t e, const char* what, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "line %d: %s: %s\n", line, what, cudaGetErrorString(e));
  std::exit(1);
}
void check_cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "%s: cuBLAS status %d\n", what, int(s));
  std::exit(1);
}
void check_tmm(tmm_status s, tmm_handle h, const char* what) {
  if (s == TMM_SUCCESS) return;
  std::fprintf(stderr, "%s: %s (%s)\n", what, tmm_status_string(s), tmm_get_error_message(h));
  std::exit(1);
}

struct Shape {
  int64_t m, n, k;
  tmm_layout layout;
  tmm_transpose ta, tb;
  int64_t batch = 1;  // a suite's strided batch: products dense, one after another
};

struct Algo {
  std::string name;
  tmm_algorithm algorithm;
  int tile, coarsening;
};

// ---- device helpers: random fill, FP64 reference, error norms ----------------
// Each over the element type T: float, or double under --precision double.

// Uniform in [-1, 1), or (spread) +-m 2^e with m uniform in [1, 2) and e uniform in
// -16..16; drawn in double and rounded to T (a double keeps all 53 random bits).
template <class T>
__global__ void fill_kernel(T* x, int64_t n, uint64_t seed, bool spread) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint64_t z = (uint64_t(i) + seed) * 0x9E3779B97F4A7C15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const double u = double(z >> 11) * (1.0 / 9007199254740992.0);  // [0, 1), bits 11..63
    if (spread)
      x[i] = T((z & 1 ? -1.0 : 1.0) * ldexp(1.0 + u, int((z >> 1) % 33) - 16));
    else
      x[i] = T(2.0 * u - 1.0);  // [-1, 1)
  }
}

// C64(i, j) = sum_q op(A)(i, q) op(B)(q, j), every element addressed through
// strides, so one kernel covers both layouts and all transposes.
struct Strides {
  int64_t ai, aq, bq, bj, ci, cj;
};

// hi + lo += x y, the Dot2 step (Ogita, Rump and Oishi 2005, as
// tests/gemm_reference_f64.hpp's DgemmReference takes it): x y = p + e exactly
// (TwoProduct: the FMA's one rounding gives e), p added into hi by TwoSum with its
// error, the errors and e summed apart into lo. Over k terms hi + lo is within
// gamma_k^2 sum |x y| of the exact sum, as if summed in twice FP64's precision: far
// below the error of an FP64 result, which is what it measures. p is __dmul_rn
// because nvcc fuses a plain product into the add that reads it (hi + x y as one
// FMA), and then hi's TwoSum would no longer be exact.
__device__ void dot2_step(double x, double y, double& hi, double& lo) {
  const double p = __dmul_rn(x, y), e = fma(x, y, -p);
  const double s = hi + p, p_part = s - hi, hi_part = s - p_part;
  lo += ((hi - hi_part) + (p - p_part)) + e;
  hi = s;
}

// Floats: the FP64 sum of the exact FP64 products (a float has 24 bits), in hi; lo is
// unused. Doubles: the double-double sum by dot2_step, normalised so that |lo| is at
// most half an ulp of hi.
template <class T>
__global__ void reference_kernel(const T* a, const T* b, double* hi, double* lo, int64_t m,
                                 int64_t n, int64_t k, Strides s) {
  constexpr int W = 16;  // tile edge
  __shared__ double as[W][W + 1], bs[W][W + 1];
  const int64_t i = blockIdx.y * int64_t(W) + threadIdx.y;
  const int64_t j = blockIdx.x * int64_t(W) + threadIdx.x;
  double acc = 0, acc_lo = 0;
  for (int64_t q0 = 0; q0 < k; q0 += W) {
    const int64_t qa = q0 + threadIdx.x, qb = q0 + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = (i < m && qa < k) ? double(a[i * s.ai + qa * s.aq]) : 0.0;
    bs[threadIdx.y][threadIdx.x] = (qb < k && j < n) ? double(b[qb * s.bq + j * s.bj]) : 0.0;
    __syncthreads();
    for (int q = 0; q < W; ++q) {
      if constexpr (std::is_same<T, double>::value)
        dot2_step(as[threadIdx.y][q], bs[q][threadIdx.x], acc, acc_lo);
      else
        acc += as[threadIdx.y][q] * bs[q][threadIdx.x];
    }
    __syncthreads();
  }
  if (i < m && j < n) {
    if constexpr (std::is_same<T, double>::value) {
      const double sum = acc + acc_lo, acc_part = sum - acc_lo, lo_part = sum - acc_part;
      hi[i * n + j] = sum;  // TwoSum(acc, acc_lo): hi + lo = acc + acc_lo exactly
      lo[i * n + j] = (acc - acc_part) + (acc_lo - lo_part);
    } else {
      hi[i * n + j] = acc;
    }
  }
}

// sums[0] += sum (c - ref)^2, sums[1] += sum ref^2, sums[2] += count of non-finite c.
// In double ref is hi + lo and c - ref is (c - hi) - lo: c - hi is exact wherever c is
// within a factor 2 of hi (Sterbenz), so the difference keeps lo's bits that a
// rounded reference would lose.
template <class T>
__global__ void error_kernel(const T* c, const double* hi, const double* lo, int64_t m, int64_t n,
                             int64_t ci, int64_t cj, double* sums) {
  double d2 = 0, r2 = 0, bad = 0;
  for (int64_t idx = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; idx < m * n;
       idx += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = idx / n, j = idx % n;
    const T v = c[i * ci + j * cj];
    const double r = hi[idx];
    if (!isfinite(v)) bad += 1;
    if constexpr (std::is_same<T, double>::value) {
      const double d = (v - r) - lo[idx];
      d2 += d * d;
    } else {
      d2 += (double(v) - r) * (double(v) - r);
    }
    r2 += r * r;
  }
  atomicAdd(&sums[0], d2);
  atomicAdd(&sums[1], r2);
  atomicAdd(&sums[2], bad);
}

// ---- one problem: buffers, reference, timing --------------------------------

// The matrices hold floats, or doubles under --precision double (fp64), behind void*
// so that one Problem and one timing path (time_in_turns) serve both; what depends on
// the element type (fill, reference, error, the two libraries' calls) picks it by fp64.
struct Problem {
  Shape s;
  bool fp64 = false;  // doubles: tmm_dgemm_device against cublasDgemm
  int64_t lda, ldb, ldc;
  int64_t a_elems, b_elems, c_elems;  // one product's; a batch's are s.batch of each
  std::vector<int64_t> checked;       // the products whose error is measured (all up to 8)
  int sets = 1;                       // rotating input sets
  std::vector<void*> a, b, c;
  double* ref = nullptr;     // the reference; in double the hi parts of double-double
  double* ref_lo = nullptr;  // in double its lo parts (single: none)
  Strides strides{};

  bool row() const { return s.layout == TMM_ROW_MAJOR; }
  double flops() const { return 2.0 * double(s.m) * double(s.n) * double(s.k) * double(s.batch); }
  size_t all_c_bytes() const { return size_t(c_elems * s.batch) * element_bytes(); }
  size_t element_bytes() const { return fp64 ? sizeof(double) : sizeof(float); }
};

// A matrix of a Problem as what it holds.
template <class T>
T* typed(void* x) {
  return static_cast<T*>(x);
}

// The buffers of p.s in T (float or double), their inputs and the reference.
template <class T>
void setup(Problem& p, size_t l2_bytes, bool spread, cudaStream_t stream) {
  const Shape& s = p.s;
  const int64_t a_rows = s.ta == TMM_TRANS ? s.k : s.m, a_cols = s.ta == TMM_TRANS ? s.m : s.k;
  const int64_t b_rows = s.tb == TMM_TRANS ? s.n : s.k, b_cols = s.tb == TMM_TRANS ? s.k : s.n;
  // Leading dimension = the stored matrix's contiguous extent (dense).
  p.lda = p.row() ? a_cols : a_rows;
  p.ldb = p.row() ? b_cols : b_rows;
  p.ldc = p.row() ? s.n : s.m;
  p.a_elems = a_rows * a_cols;
  p.b_elems = b_rows * b_cols;
  p.c_elems = s.m * s.n;
  p.fp64 = std::is_same<T, double>::value;
  const int64_t batch = s.batch;
  const double bytes = double(sizeof(T)) * double(p.a_elems + p.b_elems + p.c_elems) * batch;
  p.sets =
      bytes < 2.0 * double(l2_bytes) ? int(std::min(8.0, std::ceil(3.0 * l2_bytes / bytes))) : 1;
  for (int i = 0; i < p.sets; ++i) {
    T *a, *b, *c;
    CHECK_CUDA(cudaMalloc(&a, p.a_elems * batch * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&b, p.b_elems * batch * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&c, p.c_elems * batch * sizeof(T)));
    fill_kernel<<<1024, 256, 0, stream>>>(a, p.a_elems * batch, 1000 * i + 1, spread);
    fill_kernel<<<1024, 256, 0, stream>>>(b, p.b_elems * batch, 1000 * i + 2, spread);
    p.a.push_back(a);
    p.b.push_back(b);
    p.c.push_back(c);
  }
  // Element addressing of op(A), op(B), C in the caller's layout.
  auto st = [&](bool trans, int64_t ld, int64_t& first, int64_t& second) {
    // Stored (r, c) is at r*ld + c in row-major, c*ld + r in column-major.
    int64_t sr = p.row() ? ld : 1, sc = p.row() ? 1 : ld;
    first = trans ? sc : sr;
    second = trans ? sr : sc;
  };
  st(s.ta == TMM_TRANS, p.lda, p.strides.ai, p.strides.aq);
  st(s.tb == TMM_TRANS, p.ldb, p.strides.bq, p.strides.bj);
  st(false, p.ldc, p.strides.ci, p.strides.cj);
  // A batch's error is measured on up to 8 of its products, the first and the last
  // among them, evenly spread.
  const int64_t checked = std::min<int64_t>(batch, 8);
  for (int64_t i = 0; i < checked; ++i)
    p.checked.push_back(checked == 1 ? 0 : i * (batch - 1) / (checked - 1));
  const size_t ref_elems = size_t(p.c_elems) * p.checked.size();
  CHECK_CUDA(cudaMalloc(&p.ref, ref_elems * sizeof(double)));
  if (p.fp64) CHECK_CUDA(cudaMalloc(&p.ref_lo, ref_elems * sizeof(double)));
  const dim3 block(16, 16), grid(unsigned((s.n + 15) / 16), unsigned((s.m + 15) / 16));
  for (size_t i = 0; i < p.checked.size(); ++i) {
    const int64_t product = p.checked[i];
    reference_kernel<<<grid, block, 0, stream>>>(
        typed<T>(p.a[0]) + product * p.a_elems, typed<T>(p.b[0]) + product * p.b_elems,
        p.ref + i * p.c_elems, p.fp64 ? p.ref_lo + i * p.c_elems : nullptr, s.m, s.n, s.k,
        p.strides);
  }
  CHECK_CUDA(cudaGetLastError());
}

void release(Problem& p) {
  for (int i = 0; i < p.sets; ++i) {
    cudaFree(p.a[i]);
    cudaFree(p.b[i]);
    cudaFree(p.c[i]);
  }
  cudaFree(p.ref);
  cudaFree(p.ref_lo);
}

double relative_error(const Problem& p, cudaStream_t stream, double* nonfinite) {
  double* sums;
  CHECK_CUDA(cudaMalloc(&sums, 3 * sizeof(double)));
  CHECK_CUDA(cudaMemsetAsync(sums, 0, 3 * sizeof(double), stream));
  for (size_t i = 0; i < p.checked.size(); ++i) {  // over the checked products together
    const int64_t c_at = p.checked[i] * p.c_elems, ref_at = int64_t(i) * p.c_elems;
    if (p.fp64)
      error_kernel<<<1024, 256, 0, stream>>>(typed<double>(p.c[0]) + c_at, p.ref + ref_at,
                                             p.ref_lo + ref_at, p.s.m, p.s.n, p.strides.ci,
                                             p.strides.cj, sums);
    else
      error_kernel<<<1024, 256, 0, stream>>>(typed<float>(p.c[0]) + c_at, p.ref + ref_at, nullptr,
                                             p.s.m, p.s.n, p.strides.ci, p.strides.cj, sums);
  }
  double host[3];
  CHECK_CUDA(cudaMemcpyAsync(host, sums, sizeof(host), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  cudaFree(sums);
  *nonfinite = host[2];
  return std::sqrt(host[0] / host[1]);
}

// How long each side of a comparison is timed: by default repeats until ~0.3 s or 30
// runs; --seconds S times S seconds, however many runs that takes (sustained speed:
// long enough for the clock to settle under the power cap).
double g_budget_ms = 300.0;
int g_max_runs = 30;

// One run on input set 0 over NaN, finished: the result that relative_error checks.
void run_checked(Problem& p, cudaStream_t stream, const std::function<void(int)>& run) {
  CHECK_CUDA(cudaMemsetAsync(p.c[0], 0xff, p.all_c_bytes(), stream));
  run(0);
  CHECK_CUDA(cudaStreamSynchronize(stream));
}

// Times each of `runs` (run(set)) with events, in turns, one run of each per repeat:
// warm-up, then repeats within the budget above per side (at least 5); returns the
// median of each in milliseconds. Outputs are poisoned first, and the last run is the
// last of `runs` on input set 0 over NaN, so that its result can be checked.
std::vector<double> time_in_turns(Problem& p, cudaStream_t stream,
                                  const std::vector<std::function<void(int)>>& runs) {
  for (int i = 0; i < p.sets; ++i)
    CHECK_CUDA(cudaMemsetAsync(p.c[i], 0xff, p.all_c_bytes(), stream));  // NaN
  for (int w = 0; w < 2; ++w)
    for (const auto& run : runs) run(w % p.sets);
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  std::vector<std::vector<double>> times(runs.size());
  double spent = 0;
  for (int r = 0; r < g_max_runs && (r < 5 || spent < g_budget_ms * double(runs.size())); ++r) {
    const int set = (r + 1) % p.sets;
    for (size_t i = 0; i < runs.size(); ++i) {
      CHECK_CUDA(cudaEventRecord(e0, stream));
      runs[i](set);
      CHECK_CUDA(cudaEventRecord(e1, stream));
      CHECK_CUDA(cudaEventSynchronize(e1));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      times[i].push_back(ms);
      spent += ms;
    }
  }
  run_checked(p, stream, runs.back());
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::vector<double> medians;
  for (std::vector<double>& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t[t.size() / 2]);
  }
  return medians;
}

double time_median(Problem& p, cudaStream_t stream, std::function<void(int)> run) {
  return time_in_turns(p, stream, {std::move(run)})[0];
}

// --alternate: cuBLAS and tiledmm timed in turns (time_in_turns), so that both see the
// same clock and temperature under the power cap (timed one after the other, the side
// timed first can run at a higher clock).
bool g_alternate = false;

// c = op(a) op(b) + beta c with p's shape and leading dimensions: on floats
// cublasSgemm in the handle's math mode, or with tf32 cublasGemmEx on
// CUBLAS_COMPUTE_32F_FAST_TF32; on doubles cublasDgemm (tf32 does not apply).
template <class T>
void cublas_gemm(cublasHandle_t cb, const Problem& p, const T* a, const T* b, T* c, T beta,
                 bool tf32 = false) {
  const T alpha = 1;
  constexpr bool fp64 = std::is_same<T, double>::value;
  const Shape& s = p.s;
  auto op = [](tmm_transpose t) { return t == TMM_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N; };
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const bool row = p.row();
  const cublasOperation_t op1 = op(row ? s.tb : s.ta), op2 = op(row ? s.ta : s.tb);
  const int m = int(row ? s.n : s.m), n = int(row ? s.m : s.n);
  const T* x = row ? b : a;
  const T* y = row ? a : b;
  const int ldx = int(row ? p.ldb : p.lda), ldy = int(row ? p.lda : p.ldb);
  cublasStatus_t st;
  if (s.batch > 1) {  // a dense strided batch
    const long long sx = row ? p.b_elems : p.a_elems, sy = row ? p.a_elems : p.b_elems;
    const int count = int(s.batch);
    if constexpr (fp64) {
      st = cublasDgemmStridedBatched(cb, op1, op2, m, n, int(s.k), &alpha, x, ldx, sx, y, ldy, sy,
                                     &beta, c, int(p.ldc), p.c_elems, count);
    } else if (tf32) {
      st = cublasGemmStridedBatchedEx(cb, op1, op2, m, n, int(s.k), &alpha, x, CUDA_R_32F, ldx, sx,
                                      y, CUDA_R_32F, ldy, sy, &beta, c, CUDA_R_32F, int(p.ldc),
                                      p.c_elems, count, CUBLAS_COMPUTE_32F_FAST_TF32,
                                      CUBLAS_GEMM_DEFAULT);
    } else {
      st = cublasSgemmStridedBatched(cb, op1, op2, m, n, int(s.k), &alpha, x, ldx, sx, y, ldy, sy,
                                     &beta, c, int(p.ldc), p.c_elems, count);
    }
    check_cublas(st, "cublas?gemmStridedBatched");
    return;
  }
  if constexpr (fp64) {
    st = cublasDgemm(cb, op1, op2, m, n, int(s.k), &alpha, x, ldx, y, ldy, &beta, c, int(p.ldc));
  } else if (tf32) {
    st = cublasGemmEx(cb, op1, op2, m, n, int(s.k), &alpha, x, CUDA_R_32F, ldx, y, CUDA_R_32F, ldy,
                      &beta, c, CUDA_R_32F, int(p.ldc), CUBLAS_COMPUTE_32F_FAST_TF32,
                      CUBLAS_GEMM_DEFAULT);
  } else {
    st = cublasSgemm(cb, op1, op2, m, n, int(s.k), &alpha, x, ldx, y, ldy, &beta, c, int(p.ldc));
  }
  check_cublas(st, fp64 ? "cublasDgemm" : tf32 ? "cublasGemmEx (TF32)" : "cublasSgemm");
}

// cuBLAS's side of a comparison on input set `set`: cublasSgemm, or cublasDgemm on
// doubles.
void cublas_side(cublasHandle_t cb, const Problem& p, int set) {
  if (p.fp64)
    cublas_gemm(cb, p, typed<double>(p.a[set]), typed<double>(p.b[set]), typed<double>(p.c[set]),
                0.0);
  else
    cublas_gemm(cb, p, typed<float>(p.a[set]), typed<float>(p.b[set]), typed<float>(p.c[set]),
                0.0f);
}

// ---- 3xTF32 composed by hand from cuBLAS, for FP32_ACCURATE's comparison -------

// x = big + small: big is x rounded to TF32 (10 bits of mantissa, to nearest, ties
// away from zero), small = x - big (exact in FP32).
__global__ void split_kernel(const float* x, float* big, float* small, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const float v = x[i];
    const float b = __uint_as_float((__float_as_uint(v) + 0x1000u) & 0xFFFFE000u);
    big[i] = b;
    small[i] = v - b;
  }
}

// The issue's baseline: split A and B, then C = A_small B_big + A_big B_small + A_big
// B_big in three cuBLAS TF32 calls (small terms first). The split is timed with the
// calls, as tiledmm's FP32_ACCURATE times its own. Reads input set 0 only. Floats only
// (FP32_ACCURATE is a mode of single precision).
struct HandX3 {
  float *a_big = nullptr, *a_small = nullptr, *b_big = nullptr, *b_small = nullptr;

  explicit HandX3(const Problem& p) {
    CHECK_CUDA(cudaMalloc(&a_big, p.a_elems * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&a_small, p.a_elems * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&b_big, p.b_elems * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&b_small, p.b_elems * sizeof(float)));
  }
  ~HandX3() {
    for (float* x : {a_big, a_small, b_big, b_small}) cudaFree(x);
  }
  HandX3(const HandX3&) = delete;
  HandX3& operator=(const HandX3&) = delete;

  void run(cublasHandle_t cb, const Problem& p, int set, cudaStream_t stream) const {
    float* c = typed<float>(p.c[set]);
    split_kernel<<<1024, 256, 0, stream>>>(typed<float>(p.a[0]), a_big, a_small, p.a_elems);
    split_kernel<<<1024, 256, 0, stream>>>(typed<float>(p.b[0]), b_big, b_small, p.b_elems);
    cublas_gemm(cb, p, a_small, b_big, c, 0.0f, true);
    cublas_gemm(cb, p, a_big, b_small, c, 1.0f, true);
    cublas_gemm(cb, p, a_big, b_big, c, 1.0f, true);
  }
};

std::string shape_name(const Shape& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%lldx%lldx%lld %s %c%c", (long long)s.m, (long long)s.n,
                (long long)s.k, s.layout == TMM_ROW_MAJOR ? "row" : "col",
                s.ta == TMM_TRANS ? 'T' : 'N', s.tb == TMM_TRANS ? 'T' : 'N');
  if (s.batch > 1) return std::to_string(s.batch) + " x " + buf;
  return buf;
}

// "MxNxK,MxNxK,..." (or "n,n,..." for squares): row-major, untransposed shapes.
std::vector<Shape> parse_shapes(const std::string& list) {
  std::vector<Shape> out;
  for (const char* q = list.c_str(); *q;) {
    char* end = nullptr;
    int64_t dims[3];
    int count = 0;
    while (count < 3) {
      dims[count++] = std::strtoll(q, &end, 10);
      q = end;
      if (*q != 'x') break;
      ++q;
    }
    if (count == 1) dims[1] = dims[2] = dims[0];
    if ((count != 1 && count != 3) || dims[0] < 1 || dims[1] < 1 || dims[2] < 1 ||
        (*q != ',' && *q != '\0')) {
      std::fprintf(stderr,
                   "bad shape list: %s (want n,n,... or MxNxK,...; --suite FILE reads a file)\n",
                   list.c_str());
      std::exit(2);
    }
    out.push_back({dims[0], dims[1], dims[2], TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS});
    if (*q == ',') ++q;
  }
  return out;
}

std::vector<Shape> shapes(bool quick, const std::string& square, bool tensor_cores) {
  const tmm_layout R = TMM_ROW_MAJOR, C = TMM_COL_MAJOR;
  const tmm_transpose N = TMM_NO_TRANS, T = TMM_TRANS;
  if (!square.empty()) return parse_shapes(square);  // only these, row-major, untransposed
  if (tensor_cores) {  // issue 14's bar: the squares, and the unaligned shapes
    if (quick) return parse_shapes("4096,8192,4095");
    return parse_shapes("4096,8192,16384,4095,4097,12345x6789x2345");
  }
  std::vector<Shape> out = {{256, 256, 256, R, N, N},    {512, 512, 512, R, N, N},
                            {1024, 1024, 1024, R, N, N}, {2048, 2048, 2048, R, N, N},
                            {4096, 4096, 4096, R, N, N}, {8192, 8192, 8192, R, N, N}};
  if (quick) return out;
  out.push_back({16384, 16384, 16384, R, N, N});
  for (Shape s : std::vector<Shape>{{4095, 4095, 4095, R, N, N},
                                    {4097, 4097, 4097, R, N, N},
                                    {1000, 3000, 7000, R, N, N},
                                    {8192, 256, 8192, R, N, N},
                                    {12345, 6789, 2345, R, N, N}})
    out.push_back(s);
  for (tmm_layout l : {R, C})
    for (tmm_transpose ta : {N, T})
      for (tmm_transpose tb : {N, T})
        if (!(l == R && ta == N && tb == N)) out.push_back({4096, 4096, 4096, l, ta, tb});
  return out;
}

std::vector<Algo> parse_algos(const std::string& list) {
  const std::vector<Algo> all = {{"auto", TMM_ALGO_AUTO, 0, 0},
                                 {"blocked256", TMM_ALGO_BLOCKED, 256, 0},
                                 {"blocked128", TMM_ALGO_BLOCKED, 128, 0},
                                 {"blocked64", TMM_ALGO_BLOCKED, 64, 0},
                                 {"thin", TMM_ALGO_BLOCKED, 16, 0},
                                 {"small", TMM_ALGO_BLOCKED, 32, 0},
                                 {"coarsened", TMM_ALGO_COARSENED, 32, 4},
                                 {"tiled", TMM_ALGO_TILED, 32, 0},
                                 {"tiled16", TMM_ALGO_TILED, 16, 0},
                                 {"naive", TMM_ALGO_NAIVE, 16, 0}};
  std::vector<Algo> out;
  for (const Algo& a : all)
    if (("," + list + ",").find("," + a.name + ",") != std::string::npos) out.push_back(a);
  return out;
}

// The arithmetic of one run, on both sides: tiledmm's mode, cuBLAS's math mode, and
// the relative error a result may have (uniform inputs in [-1, 1): strict FP32 gives
// about 1e-7, TF32 inputs about 3e-4 whatever k).
struct MathSetting {
  const char* name;
  tmm_math_mode tmm;
  cublasMath_t cublas;
  const char* cublas_name;
  double max_error;
};

const MathSetting* parse_math(const std::string& name) {
  static const MathSetting all[] = {
      {"fp32", TMM_MATH_FP32, CUBLAS_DEFAULT_MATH, "CUBLAS_DEFAULT_MATH", 1e-5},
      {"tf32", TMM_MATH_TF32, CUBLAS_TF32_TENSOR_OP_MATH, "CUBLAS_TF32_TENSOR_OP_MATH", 2e-3},
      {"fp32_accurate", TMM_MATH_FP32_ACCURATE, CUBLAS_DEFAULT_MATH, "CUBLAS_DEFAULT_MATH", 1e-5},
  };
  for (const MathSetting& m : all)
    if (name == m.name) return &m;
  return nullptr;
}

// --precision double's one setting, not a --math name: a dgemm is strict FP64 whatever
// TMM_OPTION_MATH_MODE says (the handle keeps fp32, the default), against cublasDgemm
// in CUBLAS_DEFAULT_MATH. Its bound is FP32's at FP64's unit roundoff, 2^-29 times
// FP32's: 1e-5 2^-29 = 1.9e-14, so 2e-14 (not measured yet in this program).
const MathSetting fp64_math = {"fp64", TMM_MATH_FP32, CUBLAS_DEFAULT_MATH, "CUBLAS_DEFAULT_MATH",
                               2e-14};

// "fp32,tf32,..." or "all": each mode once, in the order given; empty if a name is
// unknown.
std::vector<const MathSetting*> parse_math_list(const std::string& list) {
  std::vector<const MathSetting*> modes;
  std::istringstream names(list == "all" ? "fp32,tf32,fp32_accurate" : list);
  for (std::string name; std::getline(names, name, ',');) {
    const MathSetting* m = parse_math(name);
    if (!m) return {};
    if (std::find(modes.begin(), modes.end(), m) == modes.end()) modes.push_back(m);
  }
  return modes;
}

// The mode's error bound at this k. Rounding errors in a sum of k terms of random sign
// grow as sqrt(k): strict FP32 measured 2.3e-6 at k = 16384 (BENCHMARKS.md), which at
// k = 2^23 (the suite's extreme shape) is about 5e-5, over a fixed 1e-5. So past
// k = 16384 the bound grows as sqrt(k / 16384); up to it, it is as before.
double error_bound(const MathSetting& math, int64_t k) {
  return math.max_error * std::sqrt(std::max(1.0, double(k) / 16384.0));
}

// One row of the run: a shape and, read from a suite file, its name and group.
struct Case {
  Shape s;
  std::string name, group;
};

// What one run of the benchmark shares across math modes and shapes.
struct Bench {
  tmm_handle h = nullptr;
  cublasHandle_t cb = nullptr;
  cudaStream_t stream = nullptr;
  tmm_device_info dev{};
  bool spread = false;
  bool suite = false;      // a --suite run: shapes carry names, and the table shows them
  bool fp64 = false;       // --precision double
  bool bandwidth = false;  // --bandwidth: the large operand's bytes per second, both sides
  FILE* csv = nullptr;
};

// tiledmm's TFLOP/s over cuBLAS's for one shape, kept for the summary.
struct Ratio {
  std::string math, algorithm, group, shape;
  double ratio;
};

void print_row(const Bench& b, const Case& c, const char* algorithm, int tile, double ms,
               double cublas_ms, double err, double cublas_err, const MathSetting& math,
               const char* kernel, const char* csv_kernel, bool good) {
  const Shape& s = c.s;
  const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k) * double(s.batch);
  const double tf = flops / ms / 1e9, cublas_tf = flops / cublas_ms / 1e9;
  if (b.suite) std::printf("%-24s ", c.name.c_str());
  std::printf("%-26s %-11s %5d %9.3f %9.3f %8.2f %8.2f %6.3fx %9.2e %9.2e  ", shape_name(s).c_str(),
              algorithm, tile, ms, cublas_ms, tf, cublas_tf, tf / cublas_tf, err, cublas_err);
  if (b.bandwidth) {  // the larger of A and B, read once: max(m, n) x k elements
    const double bytes =
        double(std::max(s.m, s.n)) * double(s.k) * double(s.batch) * (b.fp64 ? 8.0 : 4.0);
    std::printf("%7.2f %7.2f  ", bytes / ms / 1e9, bytes / cublas_ms / 1e9);
  }
  std::printf("%s%s\n", kernel, good ? "" : "  <-- ERROR");
  // Double's rows end with its precision column (see main's CSV header).
  if (b.csv)
    std::fprintf(
        b.csv, "%lld,%lld,%lld,%s,%c,%c,%s,%d,%.5f,%.3f,%.5f,%.3f,%.4f,%.3e,%.3e,%s,%s,%s,%s%s\n",
        (long long)s.m, (long long)s.n, (long long)s.k, s.layout == TMM_ROW_MAJOR ? "row" : "col",
        s.ta == TMM_TRANS ? 'T' : 'N', s.tb == TMM_TRANS ? 'T' : 'N', algorithm, tile, ms, tf,
        cublas_ms, cublas_tf, tf / cublas_tf, err, cublas_err, math.name, csv_kernel,
        c.name.c_str(), c.group.c_str(), b.fp64 ? ",double" : "");
}

// tiledmm's side of a comparison on input set `set`, through the device-pointer API:
// tmm_sgemm_device, or tmm_dgemm_device on doubles.
void tiledmm_side(const Bench& b, const Problem& p, int set) {
  const Shape& s = p.s;
  if (s.batch > 1 && p.fp64)
    check_tmm(tmm_dgemm_strided_batched_device(b.h, s.layout, s.ta, s.tb, s.m, s.n, s.k, 1.0,
                                               typed<double>(p.a[set]), p.lda, p.a_elems,
                                               typed<double>(p.b[set]), p.ldb, p.b_elems, 0.0,
                                               typed<double>(p.c[set]), p.ldc, p.c_elems, s.batch),
              b.h, "tmm_dgemm_strided_batched_device");
  else if (s.batch > 1)
    check_tmm(tmm_sgemm_strided_batched_device(b.h, s.layout, s.ta, s.tb, s.m, s.n, s.k, 1.0f,
                                               typed<float>(p.a[set]), p.lda, p.a_elems,
                                               typed<float>(p.b[set]), p.ldb, p.b_elems, 0.0f,
                                               typed<float>(p.c[set]), p.ldc, p.c_elems, s.batch),
              b.h, "tmm_sgemm_strided_batched_device");
  else if (p.fp64)
    check_tmm(tmm_dgemm_device(b.h, s.layout, s.ta, s.tb, s.m, s.n, s.k, 1.0,
                               typed<double>(p.a[set]), p.lda, typed<double>(p.b[set]), p.ldb, 0.0,
                               typed<double>(p.c[set]), p.ldc),
              b.h, "tmm_dgemm_device");
  else
    check_tmm(
        tmm_sgemm_device(b.h, s.layout, s.ta, s.tb, s.m, s.n, s.k, 1.0f, typed<float>(p.a[set]),
                         p.lda, typed<float>(p.b[set]), p.ldb, 0.0f, typed<float>(p.c[set]), p.ldc),
        b.h, "tmm_sgemm_device");
}

// One shape in one math mode: cuBLAS, then each algorithm (timed after cuBLAS, or in
// turns with it), then under FP32_ACCURATE the hand-composed 3xTF32. Returns false if
// a tiledmm result fails its error check.
bool run_case(Bench& b, const MathSetting& math, const Case& c, const std::vector<Algo>& algos,
              std::vector<Ratio>* ratios) {
  const Shape& s = c.s;
  Problem p;
  p.s = s;
  if (b.fp64)
    setup<double>(p, b.dev.l2_cache_bytes, b.spread, b.stream);
  else
    setup<float>(p, b.dev.l2_cache_bytes, b.spread, b.stream);
  auto cublas = [&](int set) { cublas_side(b.cb, p, set); };
  // cuBLAS's result, for its error; its time too unless each line times it in turns.
  const double cublas_alone_ms =
      g_alternate ? (run_checked(p, b.stream, cublas), 0.0) : time_median(p, b.stream, cublas);
  double nonfinite = 0;
  const double cublas_err = relative_error(p, b.stream, &nonfinite);
  const double bound = error_bound(math, s.k);
  // TF32 is a permission on both sides: cuBLAS may run a small or thin product in FP32,
  // and then its error says nothing about what TF32 gives; the mode's bound alone holds.
  const bool cublas_fp32_accuracy =
      math.tmm == TMM_MATH_TF32 && cublas_err < error_bound(*parse_math("fp32"), s.k);
  const std::string label = c.name.empty() ? shape_name(s) : c.name;
  bool ok = true;
  for (const Algo& a : algos) {
    // The classic ladder is far from cuBLAS; keep it to the moderate sizes.
    if (a.algorithm != TMM_ALGO_AUTO && a.algorithm != TMM_ALGO_BLOCKED && p.flops() > 2e12)
      continue;
    check_tmm(tmm_set_algorithm(b.h, a.algorithm), b.h, "set algorithm");
    check_tmm(tmm_set_tile_size(b.h, a.tile), b.h, "set tile");
    check_tmm(tmm_set_coarsening(b.h, a.coarsening), b.h, "set coarsening");
    auto ours = [&](int set) { tiledmm_side(b, p, set); };
    // cuBLAS's figure on this line: timed before (as above), or in turns with ours.
    double ms = 0, cublas_ms = cublas_alone_ms;
    if (g_alternate) {
      const std::vector<double> both = time_in_turns(p, b.stream, {cublas, ours});
      cublas_ms = both[0];
      ms = both[1];
    } else {
      ms = time_median(p, b.stream, ours);
    }
    tmm_report r{};
    r.struct_size = sizeof r;
    check_tmm(tmm_get_last_report(b.h, &r), b.h, "report");
    const double err = relative_error(p, b.stream, &nonfinite);
    // Within the mode's error, and not far worse than cuBLAS in the same mode.
    const bool good = nonfinite == 0 && err < bound &&
                      (cublas_fp32_accuracy || err <= 2 * cublas_err + 0.01 * bound);
    if (!good) ok = false;
    const std::string kernel =
        std::string(r.kernel) + (cublas_fp32_accuracy ? " (cuBLAS ran at FP32 accuracy)" : "");
    print_row(b, c, a.name.c_str(), r.tile_size, ms, cublas_ms, err, cublas_err, math,
              kernel.c_str(), r.kernel, good);
    ratios->push_back({math.name, a.name, c.group, label, cublas_ms / ms});
  }
  if (math.tmm == TMM_MATH_FP32_ACCURATE && s.batch == 1) {
    // The hand-composed 3xTF32 against cuBLAS SGEMM (informational: no error check,
    // and not in the summary; not for batches).
    HandX3 x3(p);
    auto hand = [&](int set) { x3.run(b.cb, p, set, b.stream); };
    double ms = 0, cublas_ms = cublas_alone_ms;
    if (g_alternate) {
      const std::vector<double> both = time_in_turns(p, b.stream, {cublas, hand});
      cublas_ms = both[0];
      ms = both[1];
    } else {
      ms = time_median(p, b.stream, hand);
    }
    const double err = relative_error(p, b.stream, &nonfinite);
    print_row(b, c, "cublas_3x", 0, ms, cublas_ms, err, cublas_err, math,
              "3xTF32 by hand: split + 3 cuBLAS TF32 calls", "cublas_3xtf32_by_hand", true);
  }
  std::fflush(stdout);
  release(p);
  return ok;
}

// Every shape in one math mode, under a heading that names both sides' arithmetic.
bool run_mode(Bench& b, const MathSetting& math, const std::vector<Case>& cases,
              const std::vector<Algo>& algos, std::vector<Ratio>* ratios) {
  check_tmm(tmm_set_option(b.h, TMM_OPTION_MATH_MODE, math.tmm), b.h, "set math mode");
  check_cublas(cublasSetMathMode(b.cb, math.cublas), "cublasSetMathMode");
  int cublas_version = 0;
  cublasGetVersion(b.cb, &cublas_version);
  if (b.fp64)
    std::printf(
        "tmm_bench: tiledmm %d (tmm_dgemm_device, strict FP64) vs cuBLAS %d (cublasDgemm, %s) "
        "on %s, %d SMs\n",
        tmm_version(), cublas_version, math.cublas_name, b.dev.name, b.dev.multiprocessors);
  else
    std::printf("tmm_bench: tiledmm %d (math mode %s) vs cuBLAS %d (%s) on %s, %d SMs\n",
                tmm_version(), math.name, cublas_version, math.cublas_name, b.dev.name,
                b.dev.multiprocessors);
  std::printf(
      "median of timed repeats after warm-up%s; device-pointer API; error = relative "
      "Frobenius norm vs %s (must be < %.0e, x sqrt(k/16384) past k = 16384); inputs %s\n\n",
      g_alternate ? ", tiledmm and cuBLAS in turns" : "", b.fp64 ? "double-double" : "FP64",
      math.max_error, b.spread ? "+-[1, 2) 2^(-16..16)" : "uniform [-1, 1)");
  if (b.suite) std::printf("%-24s ", "name");
  std::printf("%-26s %-11s %5s %9s %9s %8s %8s %7s %9s %9s  ", "shape", "algorithm", "tile", "ms",
              "cuBLAS ms", "TFLOP/s", "cuBLAS", "ratio", "error", "cuBLAS e");
  if (b.bandwidth) std::printf("%7s %7s  ", "TB/s", "cuBLAS");
  std::printf("%s\n", "kernel");
  bool ok = true;
  for (const Case& c : cases) ok = run_case(b, math, c, algos, ratios) && ok;
  std::printf("\n");
  return ok;
}

// Per math mode and algorithm, over all shapes and then per group (a suite's): the
// geometric mean of tiledmm's speed over cuBLAS's, and the lowest with its shape.
void print_summary(const std::vector<Ratio>& ratios) {
  struct Row {
    std::string math, algorithm, group;
    double log_sum = 0, min = 0;
    int count = 0;
    std::string at;
  };
  std::vector<Row> rows;  // in the order first seen
  auto add = [&rows](const Ratio& r, const std::string& group) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& x) {
      return x.math == r.math && x.algorithm == r.algorithm && x.group == group;
    });
    if (it == rows.end()) {
      it = rows.insert(rows.end(), Row());
      it->math = r.math;
      it->algorithm = r.algorithm;
      it->group = group;
    }
    it->log_sum += std::log(r.ratio);
    if (it->count++ == 0 || r.ratio < it->min) {
      it->min = r.ratio;
      it->at = r.shape;
    }
  };
  for (const Ratio& r : ratios) {
    add(r, "all");
    if (!r.group.empty()) add(r, r.group);
  }
  std::printf("summary: ratio = tiledmm's TFLOP/s / cuBLAS's (above 1: tiledmm faster)\n");
  std::printf("%-14s %-11s %-9s %6s %8s %8s  %s\n", "math", "algorithm", "group", "shapes",
              "geomean", "min", "min at");
  for (const Row& row : rows)
    std::printf("%-14s %-11s %-9s %6d %7.3fx %7.3fx  %s\n", row.math.c_str(), row.algorithm.c_str(),
                row.group.c_str(), row.count, std::exp(row.log_sum / row.count), row.min,
                row.at.c_str());
}

// The host-memory call on n x n row-major matrices, C = A B: tmm_sgemm on floats,
// tmm_dgemm on doubles.
tmm_status host_gemm(tmm_handle h, int64_t n, const float* a, const float* b, float* c) {
  return tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1.0f, a, n, b, n, 0.0f, c,
                   n);
}
tmm_status host_gemm(tmm_handle h, int64_t n, const double* a, const double* b, double* c) {
  return tmm_dgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1.0, a, n, b, n, 0.0, c,
                   n);
}

// The host-memory API against the device API at one large size, with the breakdown
// of where the time goes; T is float, or double under --precision double.
template <class T>
void run_host(const Bench& b, bool quick) {
  constexpr bool fp64 = std::is_same<T, double>::value;
  tmm_handle h = b.h;
  const int64_t n = quick ? 4096 : 8192;
  std::vector<T> a(size_t(n * n)), bm(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = T((i * 2654435761u) % 1000) / T(500) - T(1);
    bm[i] = T((i * 40503u) % 1000) / T(500) - T(1);
  }
  check_tmm(tmm_set_algorithm(h, TMM_ALGO_AUTO), h, "set algorithm");
  std::vector<tmm_timing> runs;
  std::vector<double> wall;
  for (int r = 0; r < 4; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    check_tmm(host_gemm(h, n, a.data(), bm.data(), c.data()), h, fp64 ? "tmm_dgemm" : "tmm_sgemm");
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    tmm_timing t{};
    check_tmm(tmm_get_last_timing(h, &t), h, "timing");
    if (r > 0) runs.push_back(t);  // the first run grows the buffers
  }
  std::sort(runs.begin(), runs.end(),
            [](const tmm_timing& x, const tmm_timing& y) { return x.total_ms < y.total_ms; });
  std::sort(wall.begin() + 1, wall.end());
  const tmm_timing& t = runs[runs.size() / 2];
  const double flops = 2.0 * double(n) * n * n;
  std::printf(
      "\nHost-memory API%s at %lldx%lldx%lld (pageable host buffers, median of 3 after one "
      "growing call):\n",
      fp64 ? " in double (tmm_dgemm)" : "", (long long)n, (long long)n, (long long)n);
  std::printf("  upload A, B    %9.3f ms  (%5.1f%%, %.1f GB/s)\n", t.upload_ms,
              100 * t.upload_ms / t.total_ms, double(2 * sizeof(T)) * n * n / t.upload_ms / 1e6);
  std::printf("  compute        %9.3f ms  (%5.1f%%, %.2f TFLOP/s)\n", t.compute_ms,
              100 * t.compute_ms / t.total_ms, flops / t.compute_ms / 1e9);
  std::printf("  download C     %9.3f ms  (%5.1f%%, %.1f GB/s)\n", t.download_ms,
              100 * t.download_ms / t.total_ms, double(sizeof(T)) * n * n / t.download_ms / 1e6);
  std::printf("  total (events) %9.3f ms  -> %.2f TFLOP/s end to end; wall clock %.3f ms\n",
              t.total_ms, flops / t.total_ms / 1e9, wall[2]);
  std::printf("  the device API skips both copies: %.2f TFLOP/s for the same product\n",
              flops / t.compute_ms / 1e9);
}

// Whether BLOCKED's tile 256 in double (the FP64 tensor cores' 128 x 128, 160 KiB of
// shared memory a block) runs on d: where DMMA pays (compute capability 8.0, 9.0 and
// later) and an SM holds such a block (the driver keeps 1 KiB of it). Elsewhere the
// library refuses that tile, so the default list leaves it out.
bool widest_f64_tile_runs(const tmm_device_info& d) {
  const int cc = 10 * d.compute_capability_major + d.compute_capability_minor;
  return (cc == 80 || cc >= 90) && d.shared_memory_per_multiprocessor_bytes >= (161u << 10);
}

// Whether the library has a CUDA kernel in double for a's settings (tmm_get_kernel_info),
// which a dgemm needs: AUTO always has one; a setting with none is refused by the
// library with TMM_ERROR_NOT_SUPPORTED.
bool has_double_kernel(const Algo& a) {
  if (a.algorithm == TMM_ALGO_AUTO) return true;
  for (int i = 0;; ++i) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) return false;
    if (info.backend == TMM_BACKEND_CUDA && info.precision == TMM_PRECISION_DOUBLE &&
        info.algorithm == a.algorithm && info.tile_size == a.tile &&
        (a.algorithm != TMM_ALGO_COARSENED || info.coarsening == a.coarsening))
      return true;
  }
}

// The shapes of a suite file that --groups picks (all without it); exits with the
// parser's message (file and line) if the file cannot be read.
std::vector<Case> read_suite(const std::string& path, const std::string& groups) {
  std::vector<tmm_suite::SuiteShape> all, picked;
  std::string error;
  if (!tmm_suite::read_shape_suite(path, &all, &error) ||
      !tmm_suite::select_groups(all, groups, &picked, &error)) {
    std::fprintf(stderr, "tmm_bench: %s\n", error.c_str());
    std::exit(2);
  }
  std::vector<Case> out;
  for (const tmm_suite::SuiteShape& s : picked)
    out.push_back({{s.m, s.n, s.k, s.layout, s.ta, s.tb, s.batch}, s.name, s.group});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, no_host = false, spread = false, fp64 = false, bandwidth = false;
  bool all_forms = false;
  std::string csv_path, square, algo_list, suite_path, groups, math_list = "fp32";
  std::vector<const MathSetting*> maths = parse_math_list("fp32");
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) {
      csv_path = argv[++i];
    } else if ((!std::strcmp(argv[i], "--square") || !std::strcmp(argv[i], "--shapes")) &&
               i + 1 < argc) {
      square = argv[++i];
    } else if (!std::strcmp(argv[i], "--suite") && i + 1 < argc) {
      suite_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--groups") && i + 1 < argc) {
      groups = argv[++i];
    } else if (!std::strcmp(argv[i], "--inputs") && i + 1 < argc &&
               (!std::strcmp(argv[i + 1], "uniform") || !std::strcmp(argv[i + 1], "spread"))) {
      spread = !std::strcmp(argv[++i], "spread");
    } else if (!std::strcmp(argv[i], "--precision") && i + 1 < argc &&
               (!std::strcmp(argv[i + 1], "single") || !std::strcmp(argv[i + 1], "double"))) {
      fp64 = !std::strcmp(argv[++i], "double");
    } else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc && std::atof(argv[i + 1]) > 0) {
      g_budget_ms = 1000.0 * std::atof(argv[++i]);
      g_max_runs = INT_MAX;
    } else if (!std::strcmp(argv[i], "--alternate")) {
      g_alternate = true;
    } else if (!std::strcmp(argv[i], "--no-host")) {
      no_host = true;
    } else if (!std::strcmp(argv[i], "--bandwidth")) {
      bandwidth = true;
    } else if (!std::strcmp(argv[i], "--forms") && i + 1 < argc &&
               !std::strcmp(argv[i + 1], "all")) {
      all_forms = true;
      ++i;
    } else if (!std::strcmp(argv[i], "--algos") && i + 1 < argc) {
      algo_list = argv[++i];
    } else if (!std::strcmp(argv[i], "--math") && i + 1 < argc &&
               !parse_math_list(argv[i + 1]).empty()) {
      math_list = argv[++i];
      maths = parse_math_list(math_list);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--quick] [--square n,n,...] [--shapes MxNxK,...] "
                   "[--suite FILE [--groups g,g,...]] [--precision single|double] "
                   "[--math fp32|tf32|fp32_accurate|all, or a list: fp32,tf32] "
                   "[--inputs uniform|spread] [--seconds S] [--alternate] [--no-host] "
                   "[--csv FILE] "
                   "[--algos auto,blocked256,blocked128,blocked64,thin,coarsened,tiled,naive] "
                   "[--forms all] [--bandwidth]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!suite_path.empty() && (quick || !square.empty())) {
    std::fprintf(stderr,
                 "tmm_bench: --suite takes its shapes from the file; leave out --quick, "
                 "--square and --shapes (--groups picks a subset)\n");
    return 2;
  }
  if (all_forms && square.empty()) {
    std::fprintf(stderr, "tmm_bench: --forms all expands --square and --shapes\n");
    return 2;
  }
  if (!groups.empty() && suite_path.empty()) {
    std::fprintf(stderr, "tmm_bench: --groups selects from a --suite file\n");
    return 2;
  }
  if (fp64) {
    if (maths.size() != 1 || maths[0]->tmm != TMM_MATH_FP32) {
      std::fprintf(stderr,
                   "tmm_bench: --math %s does not apply to --precision double: the math mode "
                   "concerns FP32 inputs and does not change a dgemm (tiledmm's dgemm is strict "
                   "FP64, against cublasDgemm in CUBLAS_DEFAULT_MATH); leave --math out or give "
                   "fp32\n",
                   math_list.c_str());
      return 2;
    }
    maths = {&fp64_math};
  }

  Bench b;
  b.spread = spread;
  b.suite = !suite_path.empty();
  b.fp64 = fp64;
  b.bandwidth = bandwidth;
  // Read before the GPU is touched, so that a malformed suite fails at once, anywhere.
  const std::vector<Case> suite = b.suite ? read_suite(suite_path, groups) : std::vector<Case>();
  if (b.suite) {
    g_alternate = true;  // the suite's ratios: both sides under the same clock
    no_host = true;      // and the device API only
  }
  // The algorithms of a mode: --algos, or under another mode than strict FP32 AUTO (what
  // the mode changes; the ladder stays strict FP32), and in a suite AUTO (what a caller
  // gets). Double: AUTO and the FP64 tensor-core rows' tiles (the ladder in double is a
  // correctness path, far slower: --algos coarsened names it).
  auto algos_for = [&](const MathSetting& math) {
    if (!algo_list.empty()) return parse_algos(algo_list);
    if (b.suite || math.tmm != TMM_MATH_FP32) return parse_algos("auto");
    if (b.fp64)
      return parse_algos(widest_f64_tile_runs(b.dev) ? "auto,blocked256,blocked128,blocked64"
                                                     : "auto,blocked128,blocked64");
    return parse_algos("auto,blocked256,blocked128,blocked64,coarsened");
  };
  // Like the suite, before the GPU: an algorithm that a dgemm would refuse.
  if (b.fp64) {
    for (const Algo& a : algos_for(fp64_math)) {
      if (has_double_kernel(a)) continue;
      std::fprintf(stderr,
                   "tmm_bench: --algos %s: tiledmm has no CUDA kernel in double for its "
                   "algorithm and tile (tmm_get_kernel_info); leave it out with --precision "
                   "double\n",
                   a.name.c_str());
      return 2;
    }
  }
  if (tmm_create_with_backend(&b.h, TMM_BACKEND_CUDA, 0) != TMM_SUCCESS) {
    std::printf("tmm_bench needs a CUDA GPU: %s\n", tmm_get_error_message(nullptr));
    return 1;
  }
  check_tmm(tmm_get_device_info(b.h, &b.dev), b.h, "device info");
  CHECK_CUDA(cudaStreamCreate(&b.stream));
  check_tmm(tmm_set_stream(b.h, b.stream), b.h, "tmm_set_stream");
  check_cublas(cublasCreate(&b.cb), "cublasCreate");
  check_cublas(cublasSetStream(b.cb, b.stream), "cublasSetStream");
  b.csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (!csv_path.empty() && !b.csv) {
    std::fprintf(stderr, "tmm_bench: cannot write %s\n", csv_path.c_str());
    return 2;
  }
  // Double adds a last column, precision; single's columns stay as they were.
  if (b.csv)
    std::fprintf(b.csv,
                 "m,n,k,layout,ta,tb,algorithm,tile,ms,tflops,cublas_ms,cublas_tflops,ratio,"
                 "error,cublas_error,math,kernel,name,group%s\n",
                 b.fp64 ? ",precision" : "");

  bool ok = true;
  std::vector<Ratio> ratios;
  for (const MathSetting* math : maths) {
    const bool fp32 = math->tmm == TMM_MATH_FP32;
    std::vector<Case> cases = suite;
    if (!b.suite)
      for (const Shape& s : shapes(quick, square, !fp32)) {
        if (!all_forms) {
          cases.push_back({s, "", ""});
          continue;
        }
        for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR})
          for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS})
            for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
              Shape form = s;
              form.layout = layout, form.ta = ta, form.tb = tb;
              cases.push_back({form, "", ""});
            }
      }
    ok = run_mode(b, *math, cases, algos_for(*math), &ratios) && ok;
  }
  print_summary(ratios);
  // The host-memory API runs in the last mode asked for, and in the run's precision.
  if (!no_host) {
    if (b.fp64)
      run_host<double>(b, quick);
    else
      run_host<float>(b, quick);
  }

  if (b.csv) std::fclose(b.csv);
  cublasDestroy(b.cb);
  tmm_destroy(b.h);
  cudaStreamDestroy(b.stream);
  if (!ok) {
    std::printf("\nERROR: some result failed its error check (see <-- ERROR)\n");
    return 1;
  }
  return 0;
}
