// tmm_experiments: the seed reports' experiments, run on this machine, written as
// CSV files for make_report.py (scripts/report.sh runs both).
//
//   E1  seeds 000 and 004: basic (naive) against tiled at 100, 5000, 10000, 6400,
//       14400, at the block sizes the seeds used where a GPU can run them;
//   E2  seed 001: tiled 16 against tiled 32 against coarsened at 8000, 10000, 12000;
//   E3  seed 001: a matrix sum with one thread per element, per row and per column
//       at 2000, 6000, 11000 (memory coalescing; these kernels are in this file);
//   E4  seed 002: sequential CPU, naive and tiled at 100, 500, 700, 1000, 2000, and
//       the speedup over the CPU.
// Every experiment also runs BLOCKED (tiledmm's fast kernel) and, when linked in,
// cuBLAS. Times are CUDA-event kernel times (median of repeats after a warm-up) and,
// for the library, the whole call with copies too. Progress goes to stderr with an
// estimate of the time left. Without a GPU, only the CPU rows run, and it says so.
//
//   tmm_experiments OUTDIR [--quick]
#include <cuda_runtime.h>
#if TMM_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

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
#include <vector>

#include "tiledmm/tiledmm.h"

namespace {

bool g_gpu = false;
double g_start = 0;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Progress: which step of how many, and a time-left estimate from the work done.
struct Progress {
  double total_work = 0, done_work = 0;
  int step = 0, steps = 0;
  void report(const char* what, double work) {
    ++step;
    const double elapsed = now_s() - g_start;
    const double left = done_work > 0 ? elapsed * (total_work - done_work) / done_work : 0;
    std::fprintf(stderr, "[%3d/%d] %-52s elapsed %6.1f s, about %6.1f s left\n", step, steps, what,
                 elapsed, left);
    done_work += work;
  }
} g_progress;

void fill(std::vector<float>& v, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (float& x : v) x = d(rng);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Relative error over 256 sampled elements of C = A B (n x n) against FP64.
double sampled_error(const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c, int n) {
  std::mt19937 rng(3);
  double num = 0, den = 0;
  for (int s = 0; s < 256; ++s) {
    const int i = int(rng() % n), j = int(rng() % n);
    double ref = 0;
    for (int q = 0; q < n; ++q) ref += double(a[size_t(i) * n + q]) * b[size_t(q) * n + j];
    num += (c[size_t(i) * n + j] - ref) * (c[size_t(i) * n + j] - ref);
    den += ref * ref;
  }
  return std::sqrt(num / den);
}

struct Row {
  std::string experiment, algorithm;
  int n, tile;
  double kernel_ms, total_ms, error;
};

// One square product through the library's host API: the median kernel time and
// whole-call time of `repeats` runs after a warm-up, and the sampled error.
Row run_library(tmm_handle h, const char* exp, const char* label, tmm_algorithm algo, int tile,
                int coarsening, int n, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(a.size());
  tmm_set_algorithm(h, algo);
  tmm_set_tile_size(h, tile);
  tmm_set_coarsening(h, coarsening);
  const double flops = 2.0 * n * double(n) * n;
  const int repeats = flops < 1e10 ? 5 : flops < 1e12 ? 3 : 1;
  std::vector<double> kernel, total;
  tmm_timing t{};
  for (int r = 0; r <= repeats; ++r) {
    std::fill(c.begin(), c.end(), std::nanf(""));
    const tmm_status s = tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1.0f,
                                   a.data(), n, b.data(), n, 0.0f, c.data(), n);
    if (s != TMM_SUCCESS) {
      std::fprintf(stderr, "%s: %s\n", label, tmm_get_error_message(h));
      std::exit(1);
    }
    tmm_get_last_timing(h, &t);
    if (r > 0 || repeats == 1) {
      kernel.push_back(t.compute_ms);
      total.push_back(t.total_ms);
    }
    if (repeats == 1 && r == 0) break;  // a single long run is its own measurement
  }
  return {exp, label, n, t.tile_size, median(kernel), median(total), sampled_error(a, b, c, n)};
}

#if TMM_HAVE_CUBLAS
Row run_cublas(const char* exp, int n, const std::vector<float>& a, const std::vector<float>& b) {
  static cublasHandle_t cb = [] {
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    return h;
  }();
  const size_t bytes = a.size() * sizeof(float);
  float *da, *db, *dc;
  cudaMalloc(&da, bytes);
  cudaMalloc(&db, bytes);
  cudaMalloc(&dc, bytes);
  cudaEvent_t e0, e1, e2, e3;
  cudaEventCreate(&e0), cudaEventCreate(&e1), cudaEventCreate(&e2), cudaEventCreate(&e3);
  const float one = 1, zero = 0;
  std::vector<double> kernel, total;
  std::vector<float> c(a.size());
  for (int r = 0; r < 4; ++r) {
    cudaEventRecord(e0);
    cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
    cudaEventRecord(e1);
    // Row-major C = A B is column-major C^T = B^T A^T.
    cublasSgemm(cb, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, db, n, da, n, &zero, dc, n);
    cudaEventRecord(e2);
    cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
    cudaEventRecord(e3);
    cudaEventSynchronize(e3);
    float k = 0, t = 0;
    cudaEventElapsedTime(&k, e1, e2);
    cudaEventElapsedTime(&t, e0, e3);
    if (r > 0) kernel.push_back(k), total.push_back(t);
  }
  cudaFree(da), cudaFree(db), cudaFree(dc);
  return {exp, "cublas", n, 0, median(kernel), median(total), sampled_error(a, b, c, n)};
}
#endif

// ---- E3: the matrix sum of seed 001 ----------------------------------------------
__global__ void sum_per_element(const float* a, const float* b, float* c, int n) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < int64_t(n) * n) c[i] = a[i] + b[i];
}
// Thread r walks row r: in each step the warp's threads are n floats apart.
__global__ void sum_per_row(const float* a, const float* b, float* c, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  for (int j = 0; j < n; ++j) c[int64_t(r) * n + j] = a[int64_t(r) * n + j] + b[int64_t(r) * n + j];
}
// Thread j walks column j: in each step the warp's threads read adjacent floats.
__global__ void sum_per_column(const float* a, const float* b, float* c, int n) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  for (int r = 0; r < n; ++r) c[int64_t(r) * n + j] = a[int64_t(r) * n + j] + b[int64_t(r) * n + j];
}

std::vector<Row> experiment_coalescing(bool quick) {
  std::vector<Row> rows;
  for (int n : quick ? std::vector<int>{2000} : std::vector<int>{2000, 6000, 11000}) {
    const size_t count = size_t(n) * n, bytes = count * sizeof(float);
    std::vector<float> ha(count), hb(count), hc(count);
    fill(ha, 1), fill(hb, 2);
    float *a, *b, *c;
    cudaMalloc(&a, bytes), cudaMalloc(&b, bytes), cudaMalloc(&c, bytes);
    cudaMemcpy(a, ha.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(b, hb.data(), bytes, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    const struct {
      const char* name;
      std::function<void()> launch;
    } variants[] = {
        {"one thread per element",
         [&] { sum_per_element<<<unsigned((count + 255) / 256), 256>>>(a, b, c, n); }},
        {"one thread per row", [&] { sum_per_row<<<(n + 255) / 256, 256>>>(a, b, c, n); }},
        {"one thread per column", [&] { sum_per_column<<<(n + 255) / 256, 256>>>(a, b, c, n); }},
    };
    for (const auto& v : variants) {
      g_progress.report((std::string("E3 sum n=") + std::to_string(n) + " " + v.name).c_str(), 1.0);
      std::vector<double> times;
      for (int r = 0; r < 6; ++r) {
        cudaMemset(c, 0xff, bytes);
        cudaEventRecord(e0);
        v.launch();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r > 0) times.push_back(ms);
      }
      cudaMemcpy(hc.data(), c, bytes, cudaMemcpyDeviceToHost);
      double err = 0;
      for (size_t i = 0; i < count; i += 9973)
        err = std::max(err, double(std::fabs(hc[i] - (ha[i] + hb[i]))));
      rows.push_back({"E3", v.name, n, 256, median(times), median(times), err});
    }
    cudaFree(a), cudaFree(b), cudaFree(c);
  }
  return rows;
}

// ---- the sequential CPU loop: measured where quick, n^3 beyond ------------------
double sequential_seconds(tmm_handle cpu, int n, bool* measured) {
  static double per_fma = 0;
  if (n <= 2000 || per_fma == 0) {  // the seeds measured up to 2000
    std::vector<float> a(size_t(n) * n), b(a.size()), c(a.size());
    fill(a, 5), fill(b, 6);
    tmm_set_algorithm(cpu, TMM_ALGO_NAIVE);
    tmm_sgemm(cpu, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1, a.data(), n, b.data(), n,
              0, c.data(), n);
    double ms = 0;
    tmm_get_last_time(cpu, &ms);
    per_fma = ms / 1e3 / (double(n) * n * n);
    *measured = true;
    return ms / 1e3;
  }
  *measured = false;
  return per_fma * double(n) * n * n;
}

void write_csv(const std::string& path, const std::vector<Row>& rows) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::fprintf(f, "experiment,algorithm,n,tile,kernel_ms,total_ms,error\n");
  for (const Row& r : rows)
    std::fprintf(f, "%s,%s,%d,%d,%.5f,%.5f,%.3e\n", r.experiment.c_str(), r.algorithm.c_str(), r.n,
                 r.tile, r.kernel_ms, r.total_ms, r.error);
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUTDIR [--quick]\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  const bool quick = argc > 2 && !std::strcmp(argv[2], "--quick");
  g_start = now_s();
  tmm_handle gpu = nullptr, cpu = nullptr;
  g_gpu = tmm_create_with_backend(&gpu, TMM_BACKEND_CUDA, 0) == TMM_SUCCESS;
  if (tmm_create_with_backend(&cpu, TMM_BACKEND_CPU, 0) != TMM_SUCCESS) return 1;

  FILE* machine = std::fopen((out + "/machine.txt").c_str(), "w");
  if (!machine) {
    std::perror(out.c_str());
    return 1;
  }
  if (g_gpu) {
    tmm_device_info d{};
    tmm_get_device_info(gpu, &d);
    std::fprintf(machine, "gpu=%s (compute capability %d.%d, %d SMs, %.0f GiB)\n", d.name,
                 d.compute_capability_major, d.compute_capability_minor, d.multiprocessors,
                 double(d.global_memory_bytes) / (1 << 30));
  } else {
    std::fprintf(machine, "gpu=none\n");
    std::fprintf(stderr, "NO GPU: only the CPU rows run (sequential loop, blocked CPU kernel).\n");
  }
  std::fprintf(machine, "cpu_threads=%u\n", std::thread::hardware_concurrency());
  std::fprintf(machine, "version=%d.%d.%d\n", tmm_version() / 10000, tmm_version() / 100 % 100,
               tmm_version() % 100);
#if TMM_HAVE_CUBLAS
  std::fprintf(machine, "cublas=yes\n");
#endif
  std::fclose(machine);

  // The work, for the estimate: products' flops, plus the sums at unit weight.
  const std::vector<int> e1 =
      quick ? std::vector<int>{100, 1000} : std::vector<int>{100, 5000, 6400, 10000, 14400};
  const std::vector<int> e2 = quick ? std::vector<int>{2000} : std::vector<int>{8000, 10000, 12000};
  const std::vector<int> e4 = {100, 500, 700, 1000, 2000};
  struct Algo {
    const char* label;
    tmm_algorithm algo;
    int tile, coarsening;
  };
  const std::vector<Algo> e1_algos = {
      {"naive t16", TMM_ALGO_NAIVE, 16, 0}, {"naive t8", TMM_ALGO_NAIVE, 8, 0},
      {"tiled t8", TMM_ALGO_TILED, 8, 0},   {"tiled t16", TMM_ALGO_TILED, 16, 0},
      {"tiled t32", TMM_ALGO_TILED, 32, 0}, {"blocked", TMM_ALGO_AUTO, 0, 0}};
  const std::vector<Algo> e2_algos = {{"tiled t16", TMM_ALGO_TILED, 16, 0},
                                      {"tiled t32", TMM_ALGO_TILED, 32, 0},
                                      {"coarsened t32 x2", TMM_ALGO_COARSENED, 32, 2},
                                      {"blocked", TMM_ALGO_AUTO, 0, 0}};
  const std::vector<Algo> e4_algos = {{"naive t16", TMM_ALGO_NAIVE, 16, 0},
                                      {"tiled t32", TMM_ALGO_TILED, 32, 0},
                                      {"blocked", TMM_ALGO_AUTO, 0, 0}};
  const int extra = TMM_HAVE_CUBLAS ? 1 : 0;
  auto cube = [](int n) { return 2.0 * n * double(n) * n / 1e9; };
  if (g_gpu) {
    for (int n : e1)
      g_progress.total_work += cube(n) * double(e1_algos.size() + extra),
          g_progress.steps += int(e1_algos.size()) + extra;
    for (int n : e2)
      g_progress.total_work += cube(n) * double(e2_algos.size() + extra),
          g_progress.steps += int(e2_algos.size()) + extra;
    for (int n : e4)
      g_progress.total_work += cube(n) * double(e4_algos.size() + extra),
          g_progress.steps += int(e4_algos.size()) + extra;
    g_progress.total_work += quick ? 3 : 9;
    g_progress.steps += quick ? 3 : 9;
  }
  for (int n : e4) g_progress.total_work += cube(n) * 2, g_progress.steps += 2;

  std::vector<Row> rows;
  auto products = [&](const char* exp, const std::vector<int>& sizes,
                      const std::vector<Algo>& algos) {
    for (int n : sizes) {
      std::vector<float> a(size_t(n) * n), b(a.size());
      fill(a, uint32_t(n)), fill(b, uint32_t(n) + 7);
      for (const Algo& al : algos) {
        g_progress.report((std::string(exp) + " n=" + std::to_string(n) + " " + al.label).c_str(),
                          cube(n));
        Row r = run_library(gpu, exp, al.label, al.algo, al.tile, al.coarsening, n, a, b);
        rows.push_back(r);
      }
#if TMM_HAVE_CUBLAS
      g_progress.report((std::string(exp) + " n=" + std::to_string(n) + " cublas").c_str(),
                        cube(n));
      rows.push_back(run_cublas(exp, n, a, b));
#endif
    }
  };
  if (g_gpu) {
    products("E1", e1, e1_algos);
    products("E2", e2, e2_algos);
    for (const Row& r : experiment_coalescing(quick)) rows.push_back(r);
    products("E4", e4, e4_algos);
  }
  // The CPU rows of E4: the seeds' sequential loop and the blocked CPU kernel.
  for (int n : e4) {
    g_progress.report(("E4 n=" + std::to_string(n) + " sequential CPU").c_str(), cube(n));
    bool measured = false;
    const double s = sequential_seconds(cpu, n, &measured);
    rows.push_back({"E4", measured ? "sequential CPU" : "sequential CPU (extrapolated)", n, 0,
                    s * 1e3, s * 1e3, 0});
    g_progress.report(("E4 n=" + std::to_string(n) + " blocked CPU").c_str(), cube(n));
    std::vector<float> a(size_t(n) * n), b(a.size());
    fill(a, uint32_t(n)), fill(b, uint32_t(n) + 7);
    rows.push_back(run_library(cpu, "E4", "blocked CPU", TMM_ALGO_BLOCKED, 0, 0, n, a, b));
  }
  write_csv(out + "/experiments.csv", rows);
  std::fprintf(stderr, "done in %.1f s: %s/experiments.csv\n", now_s() - g_start, out.c_str());
  tmm_destroy(gpu);
  tmm_destroy(cpu);
  return 0;
}
