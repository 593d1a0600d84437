// tmm_demo: the seed reports' experiment on this machine.
//
// Square matrices from 100 up to 14400 (as the time budget allows) times the
// algorithms of the classic ladder (naive, tiled 16 and 32, coarsened, and AUTO),
// with kernel time, GFLOP/s, speedup over the sequential CPU loop, and the error
// against a double-precision reference. The sequential CPU time is measured at
// small sizes and extrapolated as n^3 beyond them; such rows say "extrap.".
// Where a seed report published a time for the same size and kernel, it is printed
// beside ours. Without a GPU the CPU backend runs, and the output says so.
//
//   tmm_demo [--sizes 100,500,...] [--budget SECONDS] [--cpu] [--csv FILE]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tiledmm/tiledmm.h"

namespace {

struct Algo {
  const char* label;
  tmm_algorithm algorithm;
  int tile;
  int coarsening;
};

// A time a seed report published, in seconds, for an n x n product.
struct SeedFigure {
  int n;
  const char* algo_label;  // which of our rows it compares with
  double seconds;
  const char* source;
};

const SeedFigure kSeedFigures[] = {
    {5000, "naive", 1.371606, "seed 000, basic, block 10 (GPU not named)"},
    {5000, "tiled16", 1.098069, "seed 000, tiled, block 10 (GPU not named)"},
    {10000, "naive", 11.914652, "seed 000, basic, block 10 (GPU not named)"},
    {10000, "tiled16", 7.853413, "seed 000, tiled, block 10 (GPU not named)"},
    {8000, "naive", 42.584, "seed 001, global memory 16x16, GeForce 930MX"},
    {8000, "tiled16", 13.756, "seed 001, shared memory 16x16, GeForce 930MX"},
    {8000, "tiled32", 11.612, "seed 001, shared memory 32x32, GeForce 930MX"},
    {8000, "coarsened", 8.89, "seed 001, granularity 32x32 x2, GeForce 930MX"},
    {10000, "tiled16", 25.683, "seed 001, shared memory 16x16, GeForce 930MX"},
    {10000, "coarsened", 17.361, "seed 001, granularity 32x32 x2, GeForce 930MX"},
    {12000, "naive", 113.883, "seed 001, global memory 16x16, GeForce 930MX"},
    {12000, "tiled16", 44.429, "seed 001, shared memory 16x16, GeForce 930MX"},
    {12000, "tiled32", 39.569, "seed 001, shared memory 32x32, GeForce 930MX"},
    {12000, "coarsened", 30.236, "seed 001, granularity 32x32 x2, GeForce 930MX"},
    {6400, "tiled32", 1.385, "seed 004, shared memory (2.77 s faster than global; GPU not named)"},
    {14400, "naive", 57.4, "seed 004, global memory (\"almost a minute\"; GPU not named)"},
    {14400, "tiled32", 12.75, "seed 004, shared memory (GPU not named)"},
};

struct Options {
  std::vector<int> sizes;
  double budget_s = 600;
  bool force_cpu = false;
  std::string csv;
};

std::vector<int> parse_sizes(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--sizes") && has_value) {
      o.sizes = parse_sizes(argv[++i]);
    } else if (!std::strcmp(argv[i], "--budget") && has_value) {
      o.budget_s = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--csv") && has_value) {
      o.csv = argv[++i];
    } else if (!std::strcmp(argv[i], "--cpu")) {
      o.force_cpu = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--sizes 100,500,...] [--budget SECONDS] [--cpu] [--csv FILE]\n",
                   argv[0]);
      return false;
    }
  }
  return true;
}

bool check(tmm_status s, tmm_handle h, const char* what) {
  if (s == TMM_SUCCESS) return true;
  std::fprintf(stderr, "%s: %s (%s)\n", what, tmm_status_string(s), tmm_get_error_message(h));
  return false;
}

void fill_random(std::vector<float>& v, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& x : v) x = dist(rng);
}

// Relative Frobenius error of C against an FP64 reference, over all elements for
// small n and over 512 random elements otherwise.
double sampled_error(const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c, int n, bool* full) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> pick(0, n - 1);
  *full = int64_t(n) * n <= 512 * 512;
  const int64_t count = *full ? int64_t(n) * n : 512;
  double num = 0, den = 0;
  for (int64_t s = 0; s < count; ++s) {
    const int i = *full ? int(s / n) : pick(rng);
    const int j = *full ? int(s % n) : pick(rng);
    double ref = 0;
    for (int q = 0; q < n; ++q) ref += double(a[size_t(i) * n + q]) * b[size_t(q) * n + j];
    const double d = c[size_t(i) * n + j] - ref;
    num += d * d;
    den += ref * ref;
  }
  return std::sqrt(num / den);
}

// Sequential CPU time: measured up to `limit` elements of work, then n^3 scaling.
struct SequentialModel {
  double seconds_per_fma = 0;  // from the largest measured size
  int largest_measured = 0;
};

double measure_sequential(tmm_handle cpu, int n) {
  std::vector<float> a(size_t(n) * n), b(a.size()), c(a.size());
  fill_random(a, 1);
  fill_random(b, 2);
  tmm_set_algorithm(cpu, TMM_ALGO_NAIVE);
  if (!check(tmm_sgemm(cpu, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1, a.data(), n,
                       b.data(), n, 0, c.data(), n),
             cpu, "sequential sgemm"))
    return -1;
  double ms = 0;
  tmm_get_last_time(cpu, &ms);
  return ms / 1000.0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const SeedFigure* seed_figure(int n, const char* label) {
  for (const SeedFigure& f : kSeedFigures)
    if (f.n == n && !std::strcmp(f.algo_label, label)) return &f;
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (!parse(argc, argv, opt)) return 2;

  tmm_handle h = nullptr;
  const tmm_backend want = opt.force_cpu ? TMM_BACKEND_CPU : TMM_BACKEND_AUTO;
  if (!check(tmm_create_with_backend(&h, want, 0), nullptr, "tmm_create")) return 1;
  tmm_backend backend = TMM_BACKEND_CPU;
  tmm_get_backend(h, &backend);
  const bool gpu = backend == TMM_BACKEND_CUDA;

  std::printf("tiledmm %d.%d.%d demo: the seed reports' experiment on this machine\n",
              TILEDMM_VERSION_MAJOR, TILEDMM_VERSION_MINOR, TILEDMM_VERSION_PATCH);
  if (gpu) {
    tmm_device_info d{};
    tmm_get_device_info(h, &d);
    std::printf(
        "device: %s, compute capability %d.%d, %d multiprocessors, %.1f GiB, "
        "%llu KiB shared memory per block, %llu MiB L2\n",
        d.name, d.compute_capability_major, d.compute_capability_minor, d.multiprocessors,
        double(d.global_memory_bytes) / (1 << 30),
        (unsigned long long)(d.shared_memory_per_block_bytes >> 10),
        (unsigned long long)(d.l2_cache_bytes >> 20));
  } else {
    std::printf(
        "NO GPU: %s. Running the CPU backend (sequential loop and the blocked,\n"
        "multi-threaded CPU kernel); no GPU numbers are shown.\n",
        opt.force_cpu ? "--cpu was given" : "no usable CUDA device or driver");
  }

  const std::vector<Algo> gpu_algos = {
      {"naive", TMM_ALGO_NAIVE, 16, 0},          {"tiled16", TMM_ALGO_TILED, 16, 0},
      {"tiled32", TMM_ALGO_TILED, 32, 0},        {"coarsened", TMM_ALGO_COARSENED, 32, 2},
      {"coarsened4", TMM_ALGO_COARSENED, 32, 4}, {"auto", TMM_ALGO_AUTO, 0, 0}};
  const std::vector<Algo> cpu_algos = {{"cpu-naive", TMM_ALGO_NAIVE, 0, 0},
                                       {"cpu-blocked", TMM_ALGO_BLOCKED, 0, 0}};
  const std::vector<Algo>& algos = gpu ? gpu_algos : cpu_algos;
  if (opt.sizes.empty() && gpu)
    opt.sizes = parse_sizes("100,500,1000,2000,5000,6400,8000,10000,12000,14400");
  if (opt.sizes.empty() && !gpu) opt.sizes = parse_sizes("100,200,500,1000");

  // The sequential baseline, measured where it is quick.
  tmm_handle cpu = nullptr;
  if (!check(tmm_create_with_backend(&cpu, TMM_BACKEND_CPU, 0), nullptr, "tmm_create(CPU)"))
    return 1;
  SequentialModel seq;
  for (int n : {100, 200, 300, 500, 700}) {
    const double s = measure_sequential(cpu, n);
    if (s < 0) return 1;
    seq.seconds_per_fma = s / (double(n) * n * n);
    seq.largest_measured = n;
    if (s > 1.0) break;
  }
  std::printf(
      "sequential CPU loop: measured up to n = %d (%.2f GFLOP/s), extrapolated as n^3 "
      "beyond\n\n",
      seq.largest_measured, 2e-9 / seq.seconds_per_fma);

  FILE* csv = opt.csv.empty() ? nullptr : std::fopen(opt.csv.c_str(), "w");
  if (csv)
    std::fprintf(
        csv,
        "n,algorithm,tile,coarsening,kernel_ms,total_ms,gflops,seq_s,seq_kind,speedup,rel_error\n");

  std::printf("%6s  %-11s %4s %3s %11s %11s %9s %12s %9s %9s\n", "n", "algorithm", "tile", "x",
              "kernel ms", "+copies ms", "GFLOP/s", "seq CPU s", "speedup", "error");
  const auto start = std::chrono::steady_clock::now();
  double last_time_per_flop = 0;
  struct Comparison {
    const SeedFigure* seed;
    double ours_s;
  };
  std::vector<Comparison> comparisons;
  bool ok = true;

  for (int n : opt.sizes) {
    const double flops = 2.0 * double(n) * n * n;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double estimate = last_time_per_flop * flops * double(algos.size()) * 2;
    if (elapsed + estimate > opt.budget_s) {
      std::printf("%6d  skipped: about %.0f s more would pass the %.0f s budget (--budget)\n", n,
                  estimate, opt.budget_s);
      continue;
    }
    // The estimate above scales the slowest algorithm of the previous size.
    last_time_per_flop = 0;
    std::vector<float> a(size_t(n) * n), b(a.size()), c(a.size());
    fill_random(a, uint32_t(n));
    fill_random(b, uint32_t(n) + 1);
    bool measured = false;
    const double seq_s = (n <= seq.largest_measured) ? (measured = true, measure_sequential(cpu, n))
                                                     : seq.seconds_per_fma * double(n) * n * n;

    for (const Algo& al : algos) {
      if (!check(tmm_set_algorithm(h, al.algorithm), h, "tmm_set_algorithm") ||
          !check(tmm_set_tile_size(h, al.tile), h, "tmm_set_tile_size") ||
          !check(tmm_set_coarsening(h, al.coarsening), h, "tmm_set_coarsening"))
        return 1;
      const int repeats = flops < 1e10 ? 5 : (flops < 1e12 ? 3 : 1);
      std::vector<double> kernel, total;
      for (int r = 0; r < repeats + 1; ++r) {  // the first run is a warm-up
        std::fill(c.begin(), c.end(), std::nanf(""));
        if (!check(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n, n, n, 1.0f, a.data(),
                             n, b.data(), n, 0.0f, c.data(), n),
                   h, "tmm_sgemm"))
          return 1;
        tmm_timing t{};
        tmm_get_last_timing(h, &t);
        if (r > 0 || repeats == 1) {
          kernel.push_back(t.compute_ms);
          total.push_back(t.total_ms);
        }
        if (repeats == 1) break;  // big sizes: one run, it is long enough to be stable
      }
      tmm_timing t{};
      tmm_get_last_timing(h, &t);
      const double k_ms = median(kernel), t_ms = median(total);
      last_time_per_flop = std::max(last_time_per_flop, t_ms / 1000.0 / flops);
      bool full = false;
      const double err = sampled_error(a, b, c, n, &full);
      if (!(err < 1e-4)) ok = false;
      const double speedup = seq_s / (k_ms / 1000.0);
      std::printf("%6d  %-11s %4d %3d %11.3f %11.3f %9.1f %9.3f%-3s %8.1fx %9.2e%s\n", n, al.label,
                  t.tile_size, t.coarsening, k_ms, t_ms, flops / (k_ms * 1e6), seq_s,
                  measured ? "" : "*", speedup, err, full ? "" : "~");
      if (csv)
        std::fprintf(csv, "%d,%s,%d,%d,%.4f,%.4f,%.2f,%.4f,%s,%.2f,%.3e\n", n, al.label,
                     t.tile_size, t.coarsening, k_ms, t_ms, flops / (k_ms * 1e6), seq_s,
                     measured ? "measured" : "extrapolated", speedup, err);
      if (const SeedFigure* f = seed_figure(n, al.label)) comparisons.push_back({f, t_ms / 1000.0});
    }
    std::fflush(stdout);
  }
  std::printf(
      "\n* sequential CPU time extrapolated as n^3 from n = %d.  ~ error over 512 sampled\n"
      "  elements (relative Frobenius norm vs FP64); otherwise over all elements.\n"
      "  speedup = sequential CPU time / kernel time.\n",
      seq.largest_measured);

  if (!comparisons.empty()) {
    std::printf(
        "\nAgainst the seed reports (their time includes whatever their program timed; "
        "ours is the whole call, copies included):\n");
    std::printf("%6s  %-11s %10s %10s %8s  %s\n", "n", "algorithm", "seed s", "ours s", "ratio",
                "seed");
    for (const Comparison& cmp : comparisons)
      std::printf("%6d  %-11s %10.3f %10.3f %7.0fx  %s\n", cmp.seed->n, cmp.seed->algo_label,
                  cmp.seed->seconds, cmp.ours_s, cmp.seed->seconds / cmp.ours_s, cmp.seed->source);
  }
  if (csv) std::fclose(csv);
  tmm_destroy(cpu);
  tmm_destroy(h);
  if (!ok) {
    std::fprintf(stderr, "ERROR: a result exceeded the error tolerance (1e-4)\n");
    return 1;
  }
  return 0;
}
