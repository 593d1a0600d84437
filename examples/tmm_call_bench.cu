// tmm_call_bench: what one device call costs the host, against cuBLAS on the same stream
// (docs/design/per-call-cost.md, step 0).
//
// For each shape (--shapes, default 64x64x64), column-major NN, alpha 1, beta 0, A, B and
// C in three cudaMalloc buffers (--one-allocation: one buffer) of random data: N calls
// (--calls, default 10000) of tmm_sgemm_device (tmm_dgemm_device with --precision
// double) back to back on one stream, and N calls of cublasSgemm (cublasDgemm) on the
// same stream, after 500 calls of each as warm-up. Per round (--rounds, default 7; the
// side that goes first alternates): the host's time to enqueue the N calls and to the
// final cudaStreamSynchronize, per call. Printed: the medians of both, per side, and
// the ratio tiledmm / cuBLAS of the time to the final synchronisation (the issue's bar:
// at most 1.00). Enqueue close to the time to synchronise: the loop is host-bound;
// far below: the GPU bounds it. Outside the timed loops, tiledmm's C is checked
// against cuBLAS's (relative difference), so the loop cannot pass by doing nothing.
//
// --primitives: the CUDA runtime calls a device call may make, in ns per call (median of
// 5 runs of 100,000): cudaGetDevice, cudaSetDevice (same device), cudaPeekAtLastError,
// cudaPointerGetAttributes (device and host pointer), cudaEventRecord (timing and
// cudaEventDisableTiming events), cudaStreamWaitEvent, cudaStreamIsCapturing,
// cudaLaunchKernelEx of an empty kernel, std::mutex lock and unlock.
//
// --algorithm naive|tiled|coarsened|blocked and --tile N: tiledmm's handle runs that
// algorithm (TMM_OPTION_ALGORITHM) and tile size (TMM_OPTION_TILE_SIZE) instead of AUTO's
// choice, to tell a loop bound by the kernel's own time from one bound by the host.
// --math fp32|tf32|fp32_accurate (single precision): the handle's TMM_OPTION_MATH_MODE;
// cuBLAS runs CUBLAS_TF32_TENSOR_OP_MATH under tf32, its default (strict) math otherwise,
// as tmm_bench compares them.
//
//   tmm_call_bench [--shapes MxNxK,...] [--calls N] [--rounds R] [--precision single|double]
//                  [--one-allocation] [--algorithm A] [--tile N] [--math M] [--primitives]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "tiledmm/tiledmm.h"

namespace {

#define CHECK_CUDA(x) check_cuda((x), #x, __LINE__)
void check_cuda(cudaError_t e, const char* what, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "line %d: %s: %s\n", line, what, cudaGetErrorString(e));
  std::exit(1);
}

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Shape {
  int64_t m, n, k;
};

std::vector<Shape> parse_shapes(const std::string& list) {
  std::vector<Shape> out;
  size_t at = 0;
  while (at < list.size()) {
    const size_t end = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, end - at);
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(item.c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
      std::fprintf(stderr, "bad shape '%s' (want MxNxK)\n", item.c_str());
      std::exit(2);
    }
    out.push_back({m, n, k});
    at = end + 1;
  }
  return out;
}

__global__ void fill(double* x, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x) {
    uint64_t z = (uint64_t(i) + seed) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    x[i] = double(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;  // [-1, 1)
  }
}

template <class T>
__global__ void convert(const double* in, T* out, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = T(in[i]);
}

// Random values of T in [-1, 1) at x.
template <class T>
void random_fill(T* x, int64_t count, uint64_t seed) {
  double* tmp = nullptr;
  CHECK_CUDA(cudaMalloc(&tmp, size_t(count) * sizeof(double)));
  fill<<<256, 256>>>(tmp, count, seed);
  convert<<<256, 256>>>(tmp, x, count);
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaFree(tmp));
}

template <class T>
void run_shape(const Shape& s, int calls, int rounds, bool one_allocation, cudaStream_t stream,
               tmm_handle h, cublasHandle_t cb) {
  constexpr bool fp64 = sizeof(T) == 8;
  const int64_t a_elems = s.m * s.k, b_elems = s.k * s.n, c_elems = s.m * s.n;
  T *a = nullptr, *b = nullptr, *c = nullptr, *c_ref = nullptr;
  void* block = nullptr;
  if (one_allocation) {  // 256-byte aligned pieces of one buffer
    const auto up = [](int64_t e) { return (e * int64_t(sizeof(T)) + 255) / 256 * 256; };
    CHECK_CUDA(cudaMalloc(&block, size_t(up(a_elems) + up(b_elems) + up(c_elems))));
    a = static_cast<T*>(block);
    b = reinterpret_cast<T*>(static_cast<char*>(block) + up(a_elems));
    c = reinterpret_cast<T*>(static_cast<char*>(block) + up(a_elems) + up(b_elems));
  } else {
    CHECK_CUDA(cudaMalloc(&a, size_t(a_elems) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&b, size_t(b_elems) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&c, size_t(c_elems) * sizeof(T)));
  }
  CHECK_CUDA(cudaMalloc(&c_ref, size_t(c_elems) * sizeof(T)));
  random_fill(a, a_elems, 1);
  random_fill(b, b_elems, 2);
  const T one = 1, zero = 0;
  const int m = int(s.m), n = int(s.n), k = int(s.k);
  auto ours = [&]() {
    const tmm_status st = fp64 ? tmm_dgemm_device(h, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, s.m,
                                                  s.n, s.k, 1.0, reinterpret_cast<const double*>(a),
                                                  s.m, reinterpret_cast<const double*>(b), s.k, 0.0,
                                                  reinterpret_cast<double*>(c), s.m)
                               : tmm_sgemm_device(h, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, s.m,
                                                  s.n, s.k, 1.0f, reinterpret_cast<const float*>(a),
                                                  s.m, reinterpret_cast<const float*>(b), s.k, 0.0f,
                                                  reinterpret_cast<float*>(c), s.m);
    if (st != TMM_SUCCESS) {
      std::fprintf(stderr, "tiledmm: %s (%s)\n", tmm_status_string(st), tmm_get_error_message(h));
      std::exit(1);
    }
  };
  auto theirs = [&](T* out) {
    cublasStatus_t st;
    if constexpr (fp64) {
      st = cublasDgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, out, m);
    } else {
      st = cublasSgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, out, m);
    }
    if (st != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cuBLAS failed: %d\n", int(st));
      std::exit(1);
    }
  };
  // The results, once, outside the timing.
  ours();
  theirs(c_ref);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<T> got(static_cast<size_t>(c_elems)), want(static_cast<size_t>(c_elems));
  CHECK_CUDA(cudaMemcpy(got.data(), c, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(want.data(), c_ref, want.size() * sizeof(T), cudaMemcpyDeviceToHost));
  double diff = 0, norm = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    diff += (double(got[i]) - double(want[i])) * (double(got[i]) - double(want[i]));
    norm += double(want[i]) * double(want[i]);
  }
  tmm_report report{};
  report.struct_size = sizeof report;
  if (tmm_get_last_report(h, &report) != TMM_SUCCESS) std::exit(1);

  for (int i = 0; i < 500; ++i) ours(), theirs(c_ref);  // warm-up
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> enq[2], sync[2];  // [0] tiledmm, [1] cuBLAS; us per call
  for (int r = 0; r < rounds; ++r) {
    for (int turn = 0; turn < 2; ++turn) {
      const int side = (r + turn) % 2;
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const auto t0 = Clock::now();
      if (side == 0) {
        for (int i = 0; i < calls; ++i) ours();
      } else {
        for (int i = 0; i < calls; ++i) theirs(c_ref);
      }
      const auto t1 = Clock::now();
      CHECK_CUDA(cudaStreamSynchronize(stream));
      const auto t2 = Clock::now();
      enq[side].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
      sync[side].push_back(std::chrono::duration<double, std::micro>(t2 - t0).count() / calls);
    }
  }
  const double ratio = median(sync[0]) / median(sync[1]);
  std::printf(
      "%lldx%lldx%lld %s %s: tiledmm %.2f us/call to sync (enqueue %.2f), cuBLAS %.2f (enqueue "
      "%.2f); ratio %.3f %s; kernel %s, splits %d; |C - cuBLAS C| / |cuBLAS C| = %.1e\n",
      (long long)s.m, (long long)s.n, (long long)s.k, fp64 ? "double" : "single",
      one_allocation ? "one allocation" : "three allocations", median(sync[0]), median(enq[0]),
      median(sync[1]), median(enq[1]), ratio, ratio <= 1.0 ? "PASS" : "over", report.kernel,
      report.splits, std::sqrt(diff / std::max(norm, 1e-300)));
  if (one_allocation) {
    CHECK_CUDA(cudaFree(block));
  } else {
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
    CHECK_CUDA(cudaFree(c));
  }
  CHECK_CUDA(cudaFree(c_ref));
}

__global__ void empty_kernel() {}

// ns per call of f, median of 5 runs of `count`.
double ns_per_call(int count, const std::function<void()>& f) {
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < count; ++i) f();
    runs.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / count);
  }
  return median(runs);
}

void primitives(cudaStream_t stream) {
  const int count = 100000;
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  float* d = nullptr;
  CHECK_CUDA(cudaMalloc(&d, 1024));
  std::vector<float> host(256);
  cudaEvent_t timed, untimed;
  CHECK_CUDA(cudaEventCreate(&timed));
  CHECK_CUDA(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  std::mutex mutex;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(32);
  config.stream = stream;
  struct Row {
    const char* name;
    std::function<void()> f;
  };
  const Row rows[] = {
      {"cudaGetDevice", [&] { cudaGetDevice(&device); }},
      {"cudaSetDevice (same device)", [&] { cudaSetDevice(device); }},
      {"cudaPeekAtLastError", [&] { (void)cudaPeekAtLastError(); }},
      {"cudaPointerGetAttributes (device)",
       [&] {
         cudaPointerAttributes at{};
         cudaPointerGetAttributes(&at, d);
       }},
      {"cudaPointerGetAttributes (host)",
       [&] {
         cudaPointerAttributes at{};
         cudaPointerGetAttributes(&at, host.data());
       }},
      {"cudaEventRecord (timing event)", [&] { cudaEventRecord(timed, stream); }},
      {"cudaEventRecord (cudaEventDisableTiming)", [&] { cudaEventRecord(untimed, stream); }},
      {"cudaStreamWaitEvent", [&] { cudaStreamWaitEvent(stream, untimed, 0); }},
      {"cudaStreamIsCapturing",
       [&] {
         cudaStreamCaptureStatus status;
         cudaStreamIsCapturing(stream, &status);
       }},
      {"cudaLaunchKernelEx (empty kernel)", [&] { cudaLaunchKernelEx(&config, empty_kernel); }},
      {"std::mutex lock + unlock",
       [&] {
         mutex.lock();
         mutex.unlock();
       }},
  };
  std::printf("CUDA runtime calls, ns per call (median of 5 runs of %d):\n", count);
  for (const Row& row : rows) {
    const double ns = ns_per_call(count, row.f);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::printf("  %-44s %8.1f\n", row.name, ns);
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventDestroy(timed));
  CHECK_CUDA(cudaEventDestroy(untimed));
  CHECK_CUDA(cudaFree(d));
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes = "64x64x64", precision = "single";
  int calls = 10000, rounds = 7;
  bool one_allocation = false, only_primitives = false;
  std::string algorithm = "auto", math = "fp32";
  int tile = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--shapes") {
      shapes = value();
    } else if (arg == "--calls") {
      calls = std::atoi(value().c_str());
    } else if (arg == "--rounds") {
      rounds = std::atoi(value().c_str());
    } else if (arg == "--precision") {
      precision = value();
    } else if (arg == "--one-allocation") {
      one_allocation = true;
    } else if (arg == "--algorithm") {
      algorithm = value();
    } else if (arg == "--tile") {
      tile = std::atoi(value().c_str());
    } else if (arg == "--math") {
      math = value();
    } else if (arg == "--primitives") {
      only_primitives = true;
    } else {
      std::fprintf(stderr,
                   "usage: tmm_call_bench [--shapes MxNxK,...] [--calls N] [--rounds R] "
                   "[--precision single|double] [--one-allocation] [--algorithm A] [--tile N] "
                   "[--math fp32|tf32|fp32_accurate] [--primitives]\n");
      return 2;
    }
  }
  const std::vector<std::string> algorithms = {"auto", "naive", "tiled", "coarsened", "blocked"};
  const auto named = std::find(algorithms.begin(), algorithms.end(), algorithm);
  // The enum's values follow the list's order (TMM_MATH_FP32 0, TF32 1, FP32_ACCURATE 2).
  const std::vector<std::string> maths = {"fp32", "tf32", "fp32_accurate"};
  const auto math_named = std::find(maths.begin(), maths.end(), math);
  if (calls < 1 || rounds < 1 || (precision != "single" && precision != "double") ||
      named == algorithms.end() || tile < 0 || math_named == maths.end() ||
      (precision == "double" && math != "fp32")) {
    std::fprintf(stderr,
                 "tmm_call_bench: --calls and --rounds at least 1, --precision single or "
                 "double, --algorithm auto, naive, tiled, coarsened or blocked, --tile at "
                 "least 0, --math fp32, tf32 or fp32_accurate (single precision only)\n");
    return 2;
  }
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  if (only_primitives) {
    primitives(stream);
    return 0;
  }
  tmm_handle h = nullptr;
  // The enum's values follow the list's order (TMM_ALGO_AUTO 0 ... TMM_ALGO_BLOCKED 4).
  if (tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0) != TMM_SUCCESS ||
      tmm_set_stream(h, stream) != TMM_SUCCESS ||
      tmm_set_option(h, TMM_OPTION_ALGORITHM, int64_t(named - algorithms.begin())) != TMM_SUCCESS ||
      tmm_set_option(h, TMM_OPTION_TILE_SIZE, tile) != TMM_SUCCESS ||
      tmm_set_option(h, TMM_OPTION_MATH_MODE, int64_t(math_named - maths.begin())) != TMM_SUCCESS) {
    std::fprintf(stderr, "tiledmm: no CUDA handle (%s)\n", tmm_get_error_message(h));
    return 1;
  }
  cublasHandle_t cb;
  if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS || cublasSetStream(cb, stream) != 0 ||
      cublasSetMathMode(cb, math == "tf32" ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH) !=
          0) {
    std::fprintf(stderr, "cuBLAS: no handle\n");
    return 1;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "tmm_call_bench: tiledmm %d (algorithm %s, tile %d, math %s) against cuBLAS on %s; %d "
      "calls a side, median of %d rounds, one stream, column-major NN\n",
      tmm_version(), algorithm.c_str(), tile, math.c_str(), prop.name, calls, rounds);
  for (const Shape& s : parse_shapes(shapes)) {
    if (precision == "double") {
      run_shape<double>(s, calls, rounds, one_allocation, stream, h, cb);
    } else {
      run_shape<float>(s, calls, rounds, one_allocation, stream, h, cb);
    }
  }
  cublasDestroy(cb);
  tmm_destroy(h);
  CHECK_CUDA(cudaStreamDestroy(stream));
  return 0;
}
