// tmm_host_bench: tiledmm's host-memory call (tmm_sgemm, what C, Java and C# users
// call) against cuBLAS-XT on the same host arrays, in one run.
//
// Per shape (row-major C = A * B, FP32, uniform [-1, 1) inputs, filled by several
// threads): tmm_sgemm with the AUTO path and with the DIRECT path; cublasXtSgemm on
// pageable memory and on memory pinned with cudaHostRegister (registration not
// timed), at its best block dimension of those tried; tmm_sgemm_device with the
// data already on the GPU (CUDA events). Each is warmed up once, then the median
// of --reps runs (wall clock for host calls). Every result is checked against an
// FP64 reference on 256 sampled elements (relative error printed; a failed check
// fails the program). --ooc adds 150000 x 150000 x 256 (C is 84 GiB: the GPU cannot
// hold it; in double 105000 x 105000 x 256, 82 GiB), tiledmm only, checked the same way.
//
// --budget-check multiplies 8192^3 exact integers in core and through a 256 MiB device
// budget and compares the results bit for bit.
//
// `tiledmm host io (Java)` is tmm_sgemm_io with memcpy functions, the Java binding's
// path for float[] without the JVM's own cost of each call.
//
// --threads N sets TMM_OPTION_HOST_THREADS (the streamed path's packing threads), and
// --staging MIB the squares' TMM_OPTION_HOST_STAGING_BYTES (default 0: the library's).
//
// --deep-k M,N,K[,MIB] runs one M x N x K product (FP32, uniform [-1, 1)) on the streamed
// path with MIB MiB of device memory and of staging (default 1, the stated minimum),
// tiledmm only, once after no warm-up (a deep product is its own warm-up): time, tiles,
// chunks of k, and the error on 256 sampled elements against FP64.
//
// --precision double runs the squares, --thin, --ooc and --deep-k in double instead:
// tmm_dgemm, tmm_dgemm_io, tmm_dgemm_device against cublasXtDgemm, each result's sampled
// error against a long double reference (x86's 64-bit significand), bound 1e-12.
//
// --devices 0,1 [--scaling 1,2] [--shape M,N,K]... [--xt-dims 4096,8192]: the scaling run
// (run_scaling below) over the --square sizes (if given) and shapes, nothing else.
//
//   tmm_host_bench [--square n,n,...] [--thin] [--budget-check] [--ooc] [--reps N] [--no-xt]
//                  [--threads N] [--staging MIB] [--deep-k M,N,K[,MIB]]...
//                  [--precision single|double]
//                  [--devices LIST [--scaling COUNTS] [--shape M,N,K]... [--xt-dims LIST]]
#include <cublasXt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "tiledmm/tiledmm.h"

namespace {

void die(const char* what, const char* detail) {
  std::fprintf(stderr, "%s: %s\n", what, detail);
  std::exit(1);
}
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(what, cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) die(what, std::to_string(int(s)).c_str());
}
void check(tmm_status s, tmm_handle h, const char* what) {
  if (s != TMM_SUCCESS) die(what, tmm_get_error_message(h));
}

// The calls of one precision: tiledmm's three entry points, its io struct, cuBLAS-XT's,
// and the bound of a sampled check.
template <class T>
struct Api;
template <>
struct Api<float> {
  using Io = tmm_host_io;
  static constexpr const char* kName = "FP32";
  static constexpr double kBound = 1e-4;
  template <class... A>
  static tmm_status host(A... a) {
    return tmm_sgemm(a...);
  }
  template <class... A>
  static tmm_status io(A... a) {
    return tmm_sgemm_io(a...);
  }
  template <class... A>
  static tmm_status device(A... a) {
    return tmm_sgemm_device(a...);
  }
  template <class... A>
  static cublasStatus_t xt(A... a) {
    return cublasXtSgemm(a...);
  }
};
template <>
struct Api<double> {
  using Io = tmm_host_io_double;
  static constexpr const char* kName = "FP64";
  static constexpr double kBound = 1e-12;
  template <class... A>
  static tmm_status host(A... a) {
    return tmm_dgemm(a...);
  }
  template <class... A>
  static tmm_status io(A... a) {
    return tmm_dgemm_io(a...);
  }
  template <class... A>
  static tmm_status device(A... a) {
    return tmm_dgemm_device(a...);
  }
  template <class... A>
  static cublasStatus_t xt(A... a) {
    return cublasXtDgemm(a...);
  }
};

// Fills [0, n) with uniform [-1, 1) from per-thread generators (fast for 84 GiB).
template <class T>
void fill(T* p, size_t n, uint32_t seed) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([=] {
      std::mt19937 rng(seed * 977 + t);
      std::uniform_real_distribution<T> d(T(-1), T(1));
      for (size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) p[i] = d(rng);
    });
  }
  for (auto& th : pool) th.join();
}

// A host matrix from malloc (pageable), never touched before fill().
template <class T = float>
struct Host {
  T* p = nullptr;
  size_t n = 0;
  explicit Host(size_t elements) : n(elements) {
    p = static_cast<T*>(std::malloc(elements * sizeof(T)));
    if (!p) die("malloc", "out of host memory");
  }
  ~Host() { std::free(p); }
};

// The median, the fastest and the slowest of `reps` timed runs of f after one untimed.
struct Times {
  double median, low, high;
};

Times times_of(const std::function<void()>& f, int reps) {
  f();  // warm-up: buffers, threads, staging
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

double seconds_of(const std::function<void()>& f, int reps) { return times_of(f, reps).median; }

// tiledmm's rows: the spread of the timed runs after the last call's report.
std::string with_spread(const std::string& detail, const Times& t) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "; runs %.1f-%.1f ms", t.low * 1e3, t.high * 1e3);
  return detail + buf;
}

// Relative error of C (row-major) on 256 sampled elements against a wider reference:
// FP64 sums for floats, long double (x86's 64-bit significand) for doubles.
template <class T>
double sampled_error(const T* a, const T* b, const T* c, int64_t m, int64_t n, int64_t k) {
  using Wide = std::conditional_t<std::is_same_v<T, float>, double, long double>;
  std::mt19937_64 rng(7);
  Wide num = 0, den = 0;
  for (int s = 0; s < 256; ++s) {
    const int64_t i = int64_t(rng() % uint64_t(m)), j = int64_t(rng() % uint64_t(n));
    Wide ref = 0;
    for (int64_t q = 0; q < k; ++q) ref += Wide(a[i * k + q]) * Wide(b[q * n + j]);
    num += (c[i * n + j] - ref) * (c[i * n + j] - ref);
    den += ref * ref;
  }
  return double(std::sqrt(num / den));
}

double g_bound = 1e-4;  // the sampled check's bound: Api<T>::kBound of the run

int g_threads = 0;      // --threads: TMM_OPTION_HOST_THREADS of every handle
int64_t g_staging = 0;  // --staging: TMM_OPTION_HOST_STAGING_BYTES of the squares' handle

void report_line(const char* what, int64_t m, int64_t n, int64_t k, double s, double err,
                 double base_s, const char* extra) {
  const double tf = 2.0 * double(m) * double(n) * double(k) / s / 1e12;
  std::printf("%6lldx%6lldx%6lld  %-22s %10.2f ms %7.2f TFLOP/s  %6.2fx  err %.1e  %s\n",
              (long long)m, (long long)n, (long long)k, what, s * 1e3, tf, base_s / s, err, extra);
  std::fflush(stdout);
  if (!(err < g_bound)) die(what, "result does not match the reference");
}

std::string tmm_detail(tmm_handle h) {
  tmm_report r{};
  r.struct_size = sizeof r;
  if (tmm_get_last_report(h, &r) != TMM_SUCCESS) return "";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s, %lld tiles x %lld chunks; last call: total %.1f, pack %.1f, link %.1f, "
                "compute %.1f ms; packed %.1f GB at %.1f GB/s",
                r.host_path == TMM_HOST_PATH_STREAMED ? "streamed" : "direct", (long long)r.tiles,
                (long long)r.k_chunks, r.total_ms, r.pack_ms, r.link_ms, r.compute_ms,
                r.host_bytes / 1e9, r.pack_ms > 0 ? r.host_bytes / (r.pack_ms * 1e6) : 0.0);
  return buf;
}

template <class T>
void run_shape(int64_t m, int64_t n, int64_t k, int reps, bool xt) {
  Host<T> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
  fill(a.p, a.n, 1);
  fill(b.p, b.n, 2);
  fill(c.p, c.n, 3);
  tmm_handle h = nullptr;
  check(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), h, "tmm_create");
  check(tmm_set_option(h, TMM_OPTION_HOST_THREADS, g_threads), h, "host threads");
  check(tmm_set_option(h, TMM_OPTION_HOST_STAGING_BYTES, g_staging), h, "staging");
  auto tmm_call = [&] {
    check(Api<T>::host(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, T(1), a.p, k, b.p, n,
                       T(0), c.p, n),
          h, "tmm_?gemm");
  };
  // The baseline of the ratios: cuBLAS-XT on pinned memory, when it runs.
  double xt_pinned = 0;
  std::vector<std::pair<std::string, double>> xt_rows;
  if (xt) {
    cublasXtHandle_t x;
    check(cublasXtCreate(&x), "cublasXtCreate");
    int dev = 0;
    check(cublasXtDeviceSelect(x, 1, &dev), "cublasXtDeviceSelect");
    const T one = T(1), zero = T(0);
    // Row-major C = A * B is column-major C^T = B^T * A^T.
    auto xt_call = [&] {
      check(Api<T>::xt(x, CUBLAS_OP_N, CUBLAS_OP_N, size_t(n), size_t(m), size_t(k), &one, b.p,
                       size_t(n), a.p, size_t(k), &zero, c.p, size_t(n)),
            "cublasXt?gemm");
    };
    for (bool pinned : {false, true}) {
      if (pinned) {
        check(cudaHostRegister(a.p, a.n * sizeof(T), cudaHostRegisterDefault), "register A");
        check(cudaHostRegister(b.p, b.n * sizeof(T), cudaHostRegisterDefault), "register B");
        check(cudaHostRegister(c.p, c.n * sizeof(T), cudaHostRegisterDefault), "register C");
      }
      double best = 1e30;
      int best_dim = 0;
      for (int dim : {2048, 4096, 8192}) {
        check(cublasXtSetBlockDim(x, dim), "cublasXtSetBlockDim");
        const double s = seconds_of(xt_call, reps);
        if (s < best) best = s, best_dim = dim;
      }
      const double err = sampled_error(a.p, b.p, c.p, m, n, k);
      char name[64];
      std::snprintf(name, sizeof name, "cuBLAS-XT %s (%d)", pinned ? "pinned" : "pageable",
                    best_dim);
      xt_rows.push_back({name, best});
      if (pinned) {
        xt_pinned = best;
        cudaHostUnregister(a.p);
        cudaHostUnregister(b.p);
        cudaHostUnregister(c.p);
      }
      if (!(err < g_bound)) die(name, "result does not match the reference");
    }
    cublasXtDestroy(x);
  }
  const Times auto_t = times_of(tmm_call, reps);
  const double auto_s = auto_t.median;
  const double base = xt_pinned > 0 ? xt_pinned : auto_s;
  for (auto& row : xt_rows) report_line(row.first.c_str(), m, n, k, row.second, 0.0, base, "");
  std::fill(c.p, c.p + c.n, T(std::nan("")));
  tmm_call();
  report_line("tiledmm host AUTO", m, n, k, auto_s, sampled_error(a.p, b.p, c.p, m, n, k), base,
              with_spread(tmm_detail(h), auto_t).c_str());
  // tmm_sgemm_io with memcpy functions: what the Java binding does with its arrays
  // (Get/SetFloatArrayRegion, a memcpy behind a JNI call), without the JVM.
  {
    struct Span {
      T* p;
    };
    auto read = [](void* user, int64_t offset, int64_t count, T* dst) {
      std::memcpy(dst, static_cast<Span*>(user)->p + offset, size_t(count) * sizeof(T));
      return 0;
    };
    auto write = [](void* user, int64_t offset, int64_t count, const T* src) {
      std::memcpy(static_cast<Span*>(user)->p + offset, src, size_t(count) * sizeof(T));
      return 0;
    };
    using Io = typename Api<T>::Io;
    Span sa{a.p}, sb{b.p}, sc{c.p};
    const Io ia{sizeof(Io), read, nullptr, &sa};
    const Io ib{sizeof(Io), read, nullptr, &sb};
    const Io ic{sizeof(Io), read, write, &sc};
    std::fill(c.p, c.p + c.n, T(std::nan("")));
    auto io_call = [&] {
      check(Api<T>::io(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, T(1), &ia, k, &ib, n,
                       T(0), &ic, n),
            h, "tmm_?gemm_io");
    };
    const Times io_t = times_of(io_call, reps);
    report_line("tiledmm host io (Java)", m, n, k, io_t.median,
                sampled_error(a.p, b.p, c.p, m, n, k), base,
                with_spread(tmm_detail(h), io_t).c_str());
  }
  // The caller's memory pinned, as cuBLAS-XT's pinned row has it: no staging.
  check(cudaHostRegister(a.p, a.n * sizeof(T), cudaHostRegisterDefault), "register A");
  check(cudaHostRegister(b.p, b.n * sizeof(T), cudaHostRegisterDefault), "register B");
  check(cudaHostRegister(c.p, c.n * sizeof(T), cudaHostRegisterDefault), "register C");
  const double pinned_s = seconds_of(tmm_call, reps);
  report_line("tiledmm host pinned", m, n, k, pinned_s, sampled_error(a.p, b.p, c.p, m, n, k), base,
              tmm_detail(h).c_str());
  cudaHostUnregister(a.p);
  cudaHostUnregister(b.p);
  cudaHostUnregister(c.p);
  check(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), h, "option");
  const double direct_s = seconds_of(tmm_call, reps);
  report_line("tiledmm host DIRECT", m, n, k, direct_s, sampled_error(a.p, b.p, c.p, m, n, k), base,
              tmm_detail(h).c_str());
  // The device API, data already on the GPU.
  T *da, *db, *dc;
  check(cudaMalloc(&da, a.n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&db, b.n * sizeof(T)), "cudaMalloc");
  check(cudaMalloc(&dc, c.n * sizeof(T)), "cudaMalloc");
  check(cudaMemcpy(da, a.p, a.n * sizeof(T), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(db, b.p, b.n * sizeof(T), cudaMemcpyHostToDevice), "copy");
  auto device_call = [&] {
    check(Api<T>::device(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, T(1), da, k, db, n,
                         T(0), dc, n),
          h, "tmm_?gemm_device");
    check(tmm_synchronize(h), h, "sync");
  };
  const double device_s = seconds_of(device_call, reps);
  check(cudaMemcpy(c.p, dc, c.n * sizeof(T), cudaMemcpyDeviceToHost), "copy");
  report_line("tiledmm device API", m, n, k, device_s, sampled_error(a.p, b.p, c.p, m, n, k), base,
              "");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  tmm_destroy(h);
}

// 8192^3 on exact integers, in core (AUTO) and through a 256 MiB device budget: the
// results must be equal bit for bit, and the report must show several tiles.
void run_budget_check(int reps) {
  const int64_t n = 8192;
  Host<> a(size_t(n * n)), b(size_t(n * n)), c(size_t(n * n)), c2(size_t(n * n));
  std::mt19937 rng(9);
  for (size_t i = 0; i < a.n; ++i) a.p[i] = float(int(rng() % 5) - 2);
  for (size_t i = 0; i < b.n; ++i) b.p[i] = float(int(rng() % 5) - 2);
  tmm_handle h = nullptr;
  check(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), h, "tmm_create");
  check(tmm_set_option(h, TMM_OPTION_HOST_THREADS, g_threads), h, "host threads");
  auto call = [&](float* out) {
    check(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1.0f, a.p, n, b.p, n,
                    0.0f, out, n),
          h, "tmm_sgemm");
  };
  const double in_core = seconds_of([&] { call(c.p); }, reps);
  const std::string in_core_detail = tmm_detail(h);
  check(tmm_set_option(h, TMM_OPTION_DEVICE_MEMORY_BUDGET, int64_t(256) << 20), h, "budget");
  check(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), h, "path");
  const double budget = seconds_of([&] { call(c2.p); }, reps);
  const bool equal = std::memcmp(c.p, c2.p, c.n * sizeof(float)) == 0;
  std::printf(
      "8192^3 exact integers: in core %.2f ms (%s); 256 MiB budget %.2f ms (%s): %.2fx, "
      "results %s\n",
      in_core * 1e3, in_core_detail.c_str(), budget * 1e3, tmm_detail(h).c_str(), budget / in_core,
      equal ? "bit-identical" : "DIFFERENT");
  if (!equal) die("budget check", "results differ");
  tmm_destroy(h);
}

// C larger than the GPU's memory: 150000^2 floats (84 GiB) or 105000^2 doubles (82 GiB),
// against the H100's 80 GB.
template <class T>
void run_out_of_core() {
  const int64_t m = sizeof(T) == 8 ? 105000 : 150000, n = m, k = 256;
  Host<T> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
  fill(a.p, a.n, 4);
  fill(b.p, b.n, 5);
  tmm_handle h = nullptr;
  check(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), h, "tmm_create");
  check(tmm_set_option(h, TMM_OPTION_HOST_THREADS, g_threads), h, "host threads");
  const auto t0 = std::chrono::steady_clock::now();
  check(Api<T>::host(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, T(1), a.p, k, b.p, n,
                     T(0), c.p, n),
        h, "tmm_?gemm out of core");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report_line("tiledmm host (out of core)", m, n, k, s, sampled_error(a.p, b.p, c.p, m, n, k), s,
              tmm_detail(h).c_str());
  tmm_destroy(h);
}

// One deep product at a small budget: B's chunks stream where its panel cannot fit.
template <class T>
void run_deep_k(int64_t m, int64_t n, int64_t k, int64_t mib) {
  Host<T> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
  fill(a.p, a.n, 6);
  fill(b.p, b.n, 7);
  tmm_handle h = nullptr;
  check(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), h, "tmm_create");
  check(tmm_set_option(h, TMM_OPTION_HOST_THREADS, g_threads), h, "host threads");
  check(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), h, "path");
  check(tmm_set_option(h, TMM_OPTION_DEVICE_MEMORY_BUDGET, mib << 20), h, "budget");
  check(tmm_set_option(h, TMM_OPTION_HOST_STAGING_BYTES, mib << 20), h, "staging");
  const auto t0 = std::chrono::steady_clock::now();
  check(Api<T>::host(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, T(1), a.p, k, b.p, n,
                     T(0), c.p, n),
        h, "tmm_?gemm deep k");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string what = "tiledmm host " + std::to_string(mib) + " MiB";
  report_line(what.c_str(), m, n, k, s, sampled_error(a.p, b.p, c.p, m, n, k), s,
              tmm_detail(h).c_str());
  tmm_destroy(h);
}

// --devices LIST --scaling COUNTS --shape M,N,K...: one product over several devices.
// Per shape, in one process: the single-device handle at default settings (the
// baseline, pageable), a handle of tmm_create_with_devices over the first D devices of
// the list for each D (pageable), and cuBLAS-XT over the same D devices on pageable and
// pinned memory (best of --xt-dims). Per line: median time, TFLOP/s, speedup over the
// baseline, ratio to cuBLAS-XT pinned on the same D devices, the sampled error, and the
// host's packing rate (bytes the packing threads moved over the wall time of the call);
// per entry its tiles, span and bytes.
std::vector<int> g_xt_dims = {2048, 4096, 8192};

template <class T>
double xt_seconds(const std::vector<int>& devices, int d, bool pinned, Host<T>& a, Host<T>& b,
                  Host<T>& c, int64_t m, int64_t n, int64_t k, int reps, int* best_dim) {
  cublasXtHandle_t x;
  check(cublasXtCreate(&x), "cublasXtCreate");
  std::vector<int> devs(devices.begin(), devices.begin() + d);
  check(cublasXtDeviceSelect(x, d, devs.data()), "cublasXtDeviceSelect");
  const T one = T(1), zero = T(0);
  auto xt_call = [&] {
    check(Api<T>::xt(x, CUBLAS_OP_N, CUBLAS_OP_N, size_t(n), size_t(m), size_t(k), &one, b.p,
                     size_t(n), a.p, size_t(k), &zero, c.p, size_t(n)),
          "cublasXt?gemm");
  };
  if (pinned) {
    check(cudaHostRegister(a.p, a.n * sizeof(T), cudaHostRegisterPortable), "register A");
    check(cudaHostRegister(b.p, b.n * sizeof(T), cudaHostRegisterPortable), "register B");
    check(cudaHostRegister(c.p, c.n * sizeof(T), cudaHostRegisterPortable), "register C");
  }
  double best = 1e30;
  for (int dim : g_xt_dims) {
    check(cublasXtSetBlockDim(x, dim), "cublasXtSetBlockDim");
    const double s = seconds_of(xt_call, reps);
    if (s < best) best = s, *best_dim = dim;
  }
  if (pinned) {
    cudaHostUnregister(a.p);
    cudaHostUnregister(b.p);
    cudaHostUnregister(c.p);
  }
  cublasXtDestroy(x);
  return best;
}

template <class T>
void run_scaling(int64_t m, int64_t n, int64_t k, int reps, bool xt,
                 const std::vector<int>& devices, const std::vector<int>& counts) {
  Host<T> a(size_t(m * k)), b(size_t(k * n)), c(size_t(m * n));
  fill(a.p, a.n, 1);
  fill(b.p, b.n, 2);
  fill(c.p, c.n, 3);
  auto timed = [&](tmm_handle h, const char* what) {
    auto call = [&] {
      check(Api<T>::host(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, T(1), a.p, k, b.p,
                         n, T(0), c.p, n),
            h, what);
    };
    const Times t = times_of(call, reps);
    std::fill(c.p, c.p + c.n, T(std::nan("")));
    call();  // the result checked, the report of this call printed
    return t;
  };
  tmm_handle one = nullptr;
  check(tmm_create_with_backend(&one, TMM_BACKEND_CUDA, devices[0]), one, "tmm_create");
  check(tmm_set_option(one, TMM_OPTION_HOST_THREADS, g_threads), one, "host threads");
  const Times base = timed(one, "single-device handle");
  const double base_err = sampled_error(a.p, b.p, c.p, m, n, k);
  const std::string base_detail = with_spread(tmm_detail(one), base);
  tmm_destroy(one);
  for (int d : counts) {
    if (d < 1 || d > int(devices.size())) die("--scaling", "a count past the --devices list");
    double xt_pinned = 0;
    if (xt) {
      for (bool pinned : {false, true}) {
        int dim = 0;
        const double s = xt_seconds<T>(devices, d, pinned, a, b, c, m, n, k, reps, &dim);
        const double err = sampled_error(a.p, b.p, c.p, m, n, k);
        char name[64];
        std::snprintf(name, sizeof name, "cuBLAS-XT %d GPU %s (%d)", d,
                      pinned ? "pinned" : "pageable", dim);
        report_line(name, m, n, k, s, err, base.median, "speedup over the single handle");
        if (pinned) xt_pinned = s;
      }
    }
    if (d == 1) {
      report_line("tiledmm 1 GPU (single)", m, n, k, base.median, base_err, base.median,
                  base_detail.c_str());
      continue;
    }
    tmm_handle h = nullptr;
    check(tmm_create_with_devices(&h, devices.data(), d), h, "tmm_create_with_devices");
    check(tmm_set_option(h, TMM_OPTION_HOST_THREADS, g_threads), h, "host threads");
    char name[64];
    std::snprintf(name, sizeof name, "tiledmm %d GPUs", d);
    const Times t = timed(h, name);
    tmm_report r{};
    r.struct_size = sizeof r;
    check(tmm_get_last_report(h, &r), h, "report");
    char extra[192];
    std::snprintf(extra, sizeof extra,
                  "; %lld devices computed; host packing %.1f GB/s of the call; %.2fx cuBLAS-XT "
                  "pinned on %d",
                  (long long)r.device_count, double(r.host_bytes) / (r.total_ms * 1e6),
                  xt_pinned > 0 ? xt_pinned / t.median : 0.0, d);
    report_line(name, m, n, k, t.median, sampled_error(a.p, b.p, c.p, m, n, k), base.median,
                (with_spread(tmm_detail(h), t) + extra).c_str());
    for (int i = 0; i < d; ++i) {
      tmm_device_report e{};
      e.struct_size = sizeof e;
      check(tmm_get_last_device_report(h, i, &e), h, "device report");
      std::printf(
          "    entry %d (GPU %d): %lld tiles, %lld panels, %d threads, %.1f-%.1f ms, up %.2f GB, "
          "down %.2f GB, packed %.2f GB, compute %.1f, link %.1f, pack %.1f ms\n",
          i, e.device, (long long)e.tiles, (long long)e.panel_uploads, e.host_threads, e.start_ms,
          e.end_ms, e.upload_bytes / 1e9, e.download_bytes / 1e9, e.host_bytes / 1e9, e.compute_ms,
          e.link_ms, e.pack_ms);
    }
    tmm_destroy(h);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> squares = {4096, 8192, 16384};
  bool thin = false, ooc = false, xt = true, budget = false;
  int reps = 3;
  std::vector<std::vector<int64_t>> deep;    // --deep-k M,N,K[,MIB]
  std::vector<std::vector<int64_t>> shapes;  // --shape M,N,K (with --devices)
  std::vector<int> devices, counts;          // --devices, --scaling
  bool squares_given = false, fp64 = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--square") && i + 1 < argc) {
      squares_given = true;
      squares.clear();
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ","))
        squares.push_back(std::atoll(t));
    } else if (!std::strcmp(argv[i], "--precision") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (v != "single" && v != "double") die("--precision", "takes single or double");
      fp64 = v == "double";
    } else if (!std::strcmp(argv[i], "--thin")) {
      thin = true;
    } else if (!std::strcmp(argv[i], "--ooc")) {
      ooc = true;
    } else if (!std::strcmp(argv[i], "--budget-check")) {
      budget = true;
    } else if (!std::strcmp(argv[i], "--no-xt")) {
      xt = false;
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      g_threads = std::max(0, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--staging") && i + 1 < argc) {
      g_staging = std::max<int64_t>(0, std::atoll(argv[++i])) << 20;
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--devices") && i + 1 < argc) {
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ","))
        devices.push_back(std::atoi(t));
    } else if (!std::strcmp(argv[i], "--scaling") && i + 1 < argc) {
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ","))
        counts.push_back(std::atoi(t));
    } else if (!std::strcmp(argv[i], "--xt-dims") && i + 1 < argc) {
      g_xt_dims.clear();
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ","))
        g_xt_dims.push_back(std::atoi(t));
    } else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc) {
      std::vector<int64_t> v;
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ","))
        v.push_back(std::atoll(t));
      if (v.size() != 3 || v[0] < 1 || v[1] < 1 || v[2] < 1) die("--shape", "takes M,N,K");
      shapes.push_back(v);
    } else if (!std::strcmp(argv[i], "--deep-k") && i + 1 < argc) {
      std::vector<int64_t> v;
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ","))
        v.push_back(std::atoll(t));
      if (v.size() == 3) v.push_back(1);
      if (v.size() != 4 || v[0] < 1 || v[1] < 1 || v[2] < 1 || v[3] < 1)
        die("--deep-k", "takes M,N,K or M,N,K,MIB, each at least 1");
      deep.push_back(v);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--square n,n,...] [--thin] [--budget-check] [--ooc] [--reps N] "
                   "[--no-xt] [--threads N] [--staging MIB] [--deep-k M,N,K[,MIB]]... "
                   "[--precision single|double] [--devices LIST --scaling COUNTS "
                   "[--shape M,N,K]... [--xt-dims LIST]]\n",
                   argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf(
      "%s; %s; host arrays from malloc; ratios against cuBLAS-XT on pinned memory; median of "
      "%d\n",
      prop.name, fp64 ? Api<double>::kName : Api<float>::kName, reps);
  if (!deep.empty() && !squares_given) squares.clear();  // --deep-k alone runs only those
  if (!devices.empty()) {  // the scaling run: its squares and shapes only
    if (counts.empty()) counts = {1, int(devices.size())};
    if (g_xt_dims.empty()) die("--xt-dims", "takes at least one block dimension");
    for (int64_t s : squares_given ? squares : std::vector<int64_t>{})
      if (s > 0) shapes.push_back({s, s, s});
    std::printf("devices:");
    for (int d : devices) std::printf(" %d", d);
    std::printf("; speedups over the single-device handle on device %d\n", devices[0]);
    auto scale = [&](auto element) {
      using T = decltype(element);
      g_bound = Api<T>::kBound;
      for (const auto& v : shapes) run_scaling<T>(v[0], v[1], v[2], reps, xt, devices, counts);
    };
    if (fp64) {
      scale(double{});
    } else {
      scale(float{});
    }
    return 0;
  }
  auto run = [&](auto element) {
    using T = decltype(element);
    g_bound = Api<T>::kBound;
    for (int64_t s : squares)
      if (s > 0) run_shape<T>(s, s, s, reps, xt);  // --square 0: none
    for (const auto& d : deep) run_deep_k<T>(d[0], d[1], d[2], d[3]);
    if (thin) run_shape<T>(16384, 16384, 256, reps, xt);
    if (ooc) run_out_of_core<T>();
  };
  if (fp64) {
    run(double{});
  } else {
    run(float{});
  }
  g_bound = Api<float>::kBound;
  if (budget) run_budget_check(reps);  // FP32 exact integers, whatever --precision says
  return 0;
}
