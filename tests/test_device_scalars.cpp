// The device calls with alpha and beta in device memory (tmm_sgemm_device_scalars,
// tmm_dgemm_device_scalars and their strided batched forms), by the contract above them in
// tiledmm.h: the value call's bits and kernel on every kernel family (the ladder, BLOCKED and
// its split of k, the thin kernel, TF32, FP32_ACCURATE, the FP64 tensor cores and their
// split of deep k); alpha holding 0 over NaN and Inf in A and B; beta holding 0 over NaN in
// C; k = 0; strided batches; the argument checks (NULL, host memory, scalars inside C); the
// scalars read in stream order; and, the point of these calls, CUDA graphs replayed with new
// scalars (and new inputs) at every replay, on one stream and on forked ones, each replay
// against FP64. Its own program, so that its first capture comes before the process has run
// any of the library's kernels. Skips without a GPU; fails instead when TMM_REQUIRE_GPU=1
// (DeviceScalarsCpu, the CPU backend, needs none).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "capture_fixtures.hpp"
#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

namespace {

using tmm_test::CaptureCloser;
using tmm_test::DgemmCase;
using tmm_test::GemmCase;
using tmm_test::HandleAndStream;

// The element type of a case (float for GemmCase, double for DgemmCase).
template <class Case>
using Elem = typename decltype(Case::a)::value_type;

// A device copy of a host vector, freed at scope exit (test_graph_capture.cpp's, with
// copies that wait for the device: the library's streams do not wait for the legacy
// stream's copies, and a copy from pageable memory may return before it lands).
template <class T>
struct DeviceVector {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceVector(const std::vector<T>& host) : n(host.size()) {
    EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
    upload(host);
  }
  ~DeviceVector() { cudaFree(p); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  void upload(const std::vector<T>& host) {
    EXPECT_EQ(cudaMemcpy(p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  // Enqueued on `s`: `host` must stay as it is until the stream has run the copy.
  void upload_async(const std::vector<T>& host, cudaStream_t s) {
    EXPECT_EQ(cudaMemcpyAsync(p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice, s),
              cudaSuccess);
  }
  // After all queued work (the library's streams included).
  std::vector<T> download() const {
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<T> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
};

// alpha and beta in device memory, each in an allocation of its own, with the host copy
// that set_async enqueues from.
template <class T>
struct ScalarsOnDevice {
  T* alpha = nullptr;
  T* beta = nullptr;
  T host[2] = {};
  ScalarsOnDevice(T a, T b) {
    EXPECT_EQ(cudaMalloc(&alpha, sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&beta, sizeof(T)), cudaSuccess);
    set(a, b);
  }
  ~ScalarsOnDevice() {
    cudaFree(alpha);
    cudaFree(beta);
  }
  ScalarsOnDevice(const ScalarsOnDevice&) = delete;
  ScalarsOnDevice& operator=(const ScalarsOnDevice&) = delete;
  void set(T a, T b) {
    host[0] = a, host[1] = b;
    EXPECT_EQ(cudaMemcpy(alpha, &host[0], sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(beta, &host[1], sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  // Enqueued on `s`, as between the replays of a graph.
  void set_async(T a, T b, cudaStream_t s) {
    host[0] = a, host[1] = b;
    EXPECT_EQ(cudaMemcpyAsync(alpha, &host[0], sizeof(T), cudaMemcpyHostToDevice, s), cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(beta, &host[1], sizeof(T), cudaMemcpyHostToDevice, s), cudaSuccess);
  }
};

// Device memory of `bytes`, freed at scope exit.
struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~DeviceMemory() { cudaFree(p); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
};

// A handle destroyed at scope exit.
struct Handle {
  tmm_handle h = nullptr;
  Handle() = default;
  ~Handle() { tmm_destroy(h); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

// A graph and its executable form, destroyed at scope exit.
struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  Graph() = default;
  ~Graph() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
};

tmm_report last_report(tmm_handle h) {
  tmm_report r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS) << tmm_get_error_message(h);
  return r;
}

// major * 10 + minor of device 0, asked of the CUDA runtime.
int compute_capability() {
  int major = 0, minor = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0), cudaSuccess);
  return major * 10 + minor;
}

// The handle settings a call runs with.
struct Setting {
  tmm_algorithm algorithm = TMM_ALGO_AUTO;
  int tile = 0;
  tmm_math_mode math = TMM_MATH_FP32;
};

tmm_status apply(tmm_handle h, const Setting& s) {
  tmm_status st = tmm_set_algorithm(h, s.algorithm);
  if (st == TMM_SUCCESS) st = tmm_set_tile_size(h, s.tile);
  if (st == TMM_SUCCESS) st = tmm_set_option(h, TMM_OPTION_MATH_MODE, s.math);
  return st;
}

// The calls of a case on device operands: by value (g.alpha, g.beta) and by pointer.
tmm_status value_call(tmm_handle h, const GemmCase& g, const float* a, const float* b, float* c) {
  return tmm_sgemm_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb,
                          g.beta, c, g.ldc);
}
tmm_status value_call(tmm_handle h, const DgemmCase& g, const double* a, const double* b,
                      double* c) {
  return tmm_dgemm_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb,
                          g.beta, c, g.ldc);
}
tmm_status scalars_call(tmm_handle h, const GemmCase& g, const float* alpha, const float* a,
                        const float* b, const float* beta, float* c) {
  return tmm_sgemm_device_scalars(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, alpha, a, g.lda, b, g.ldb,
                                  beta, c, g.ldc);
}
tmm_status scalars_call(tmm_handle h, const DgemmCase& g, const double* alpha, const double* a,
                        const double* b, const double* beta, double* c) {
  return tmm_dgemm_device_scalars(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, alpha, a, g.lda, b, g.ldb,
                                  beta, c, g.ldc);
}

// The strided batched forms: `g` one product's shape, its matrices' sizes the strides.
template <class Case>
struct Strides {
  int64_t a, b, c;
  explicit Strides(const Case& g)
      : a(int64_t(g.a.size())), b(int64_t(g.b.size())), c(int64_t(g.c.size())) {}
};
tmm_status value_batched(tmm_handle h, const GemmCase& g, const float* a, const float* b, float* c,
                         int64_t batch) {
  const Strides<GemmCase> s(g);
  return tmm_sgemm_strided_batched_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.lda,
                                          s.a, b, g.ldb, s.b, g.beta, c, g.ldc, s.c, batch);
}
tmm_status value_batched(tmm_handle h, const DgemmCase& g, const double* a, const double* b,
                         double* c, int64_t batch) {
  const Strides<DgemmCase> s(g);
  return tmm_dgemm_strided_batched_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a, g.lda,
                                          s.a, b, g.ldb, s.b, g.beta, c, g.ldc, s.c, batch);
}
tmm_status scalars_batched(tmm_handle h, const GemmCase& g, const float* alpha, const float* a,
                           const float* b, const float* beta, float* c, int64_t batch) {
  const Strides<GemmCase> s(g);
  return tmm_sgemm_strided_batched_device_scalars(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, alpha, a,
                                                  g.lda, s.a, b, g.ldb, s.b, beta, c, g.ldc, s.c,
                                                  batch);
}
tmm_status scalars_batched(tmm_handle h, const DgemmCase& g, const double* alpha, const double* a,
                           const double* b, const double* beta, double* c, int64_t batch) {
  const Strides<DgemmCase> s(g);
  return tmm_dgemm_strided_batched_device_scalars(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, alpha, a,
                                                  g.lda, s.a, b, g.ldb, s.b, beta, c, g.ldc, s.c,
                                                  batch);
}

// The reference check of a result: the bound of the arithmetic that ran (a dgemm: FP64's).
::testing::AssertionResult check(const GemmCase& g, tmm_math_mode ran) {
  return tmm_test::check_case(g, tmm_test::arithmetic_of(ran));
}
::testing::AssertionResult check(const DgemmCase& g, tmm_math_mode) {
  return tmm_test::check_case(g);
}

template <class T>
std::string show(T x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", double(x));
  return buf;
}

// "" where `got` has the bits of `want`, else how many elements differ and the first.
template <class T>
std::string first_difference(const std::vector<T>& want, const std::vector<T>& got) {
  if (want.size() != got.size()) return "the sizes differ";
  size_t count = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&want[i], &got[i], sizeof(T)) != 0 && count++ == 0) first = i;
  }
  if (count == 0) return "";
  return std::to_string(count) + " element(s) differ, the first at offset " +
         std::to_string(first) + ": " + show(want[first]) + " expected, " + show(got[first]);
}

// Whether offset `idx` of C is in its m x n part (else its leading dimension's padding).
template <class Case>
bool inside(const Case& g, size_t idx) {
  const int64_t outer = int64_t(idx) / g.ldc, inner = int64_t(idx) % g.ldc;
  return g.row() ? (outer < g.m && inner < g.n) : (outer < g.n && inner < g.m);
}

// g.c is beta * C as it was (g.c0) in its m x n part: the bits of T(beta) * c0, or 0
// (either sign) where beta is 0, whatever c0 holds; its padding untouched.
template <class Case>
::testing::AssertionResult is_beta_times_c(const Case& g) {
  using T = Elem<Case>;
  int64_t wrong = 0;
  size_t first = 0;
  T want_first = 0;
  for (size_t idx = 0; idx < g.c.size(); ++idx) {
    bool ok;
    T want = g.c0[idx];
    if (!inside(g, idx)) {
      ok = std::memcmp(&g.c[idx], &want, sizeof(T)) == 0;
    } else if (g.beta == 0) {
      want = T(0);
      ok = g.c[idx] == T(0);
    } else {
      want = T(g.beta) * g.c0[idx];
      ok = std::memcmp(&g.c[idx], &want, sizeof(T)) == 0;
    }
    if (!ok && wrong++ == 0) first = idx, want_first = want;
  }
  if (wrong == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << wrong << " element(s) of C are not beta * C (beta "
                                       << show(g.beta) << "); the first at offset " << first << ": "
                                       << show(g.c[first]) << ", expected " << show(want_first);
}

// Fills v with NaN, +Inf and -Inf: any product that reaches C shows.
template <class T>
void poison(std::vector<T>& v) {
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity()};
  for (size_t i = 0; i < v.size(); ++i) v[i] = specials[i % 3];
}

// C's m x n part anew: random, or NaN where beta is 0 (it must not be read); the padding
// keeps its sentinel. c0 = c.
template <class Case>
void reset_c(Case& g, std::mt19937& rng) {
  using T = Elem<Case>;
  std::uniform_real_distribution<T> dist(T(-1), T(1));
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j)
      g.c[size_t(g.at(i, j, g.ldc))] =
          g.beta == 0 ? std::numeric_limits<T>::quiet_NaN() : dist(rng);
  g.c0 = g.c;
}

// The same kernel ran, the same way: the report of the call by pointer against the value
// call's.
void expect_same_run(const tmm_report& value, const tmm_report& pointer) {
  EXPECT_STREQ(pointer.kernel, value.kernel);
  EXPECT_EQ(pointer.algorithm, value.algorithm) << value.kernel;
  EXPECT_EQ(pointer.tile_size, value.tile_size) << value.kernel;
  EXPECT_EQ(pointer.coarsening, value.coarsening) << value.kernel;
  EXPECT_EQ(pointer.splits, value.splits) << value.kernel;
  EXPECT_EQ(pointer.math_mode, value.math_mode) << value.kernel;
  EXPECT_EQ(pointer.precision, value.precision) << value.kernel;
  EXPECT_EQ(pointer.batch, value.batch) << value.kernel;
  EXPECT_EQ(pointer.workspace_bytes, value.workspace_bytes) << value.kernel;
}

// ---- The cases of the kernels --------------------------------------------------------

// What a case is there to reach (checked on the report, so that a planner change that
// moves a case off its kernel shows instead of silently covering less).
enum Covers : unsigned {
  kAny = 0,
  kSplit = 1u << 0,           // k split over several blocks (the reduction reads the scalars)
  kThin = 1u << 1,            // the thin kernel ("thin", "f64_thin")
  kTiled16 = 1u << 2,         // AUTO's TILED 16 x 16 for tiny products
  kTensorCores = 1u << 3,     // the math mode asked for (TF32, FP32_ACCURATE) where it runs
  kF64TensorCores = 1u << 4,  // "f64_mma_*" where DMMA runs (8.0, 9.0 and later)
};

struct Spec {
  const char* name;
  bool dbl;
  Setting setting;
  int64_t m, n, k;
  tmm_layout layout;
  tmm_transpose ta, tb;
  int64_t pad;
  unsigned covers;
  bool large;   // skipped under compute-sanitizer
  double beta;  // the call's beta (alpha is -0.5)
};

void PrintTo(const Spec& s, std::ostream* os) { *os << s.name; }

constexpr Setting kAuto{TMM_ALGO_AUTO, 0, TMM_MATH_FP32};
constexpr Setting kBlocked{TMM_ALGO_BLOCKED, 0, TMM_MATH_FP32};
constexpr Setting kTiled{TMM_ALGO_TILED, 0, TMM_MATH_FP32};
constexpr Setting kTiled8{TMM_ALGO_TILED, 8, TMM_MATH_FP32};
constexpr Setting kCoarsened{TMM_ALGO_COARSENED, 0, TMM_MATH_FP32};
constexpr Setting kNaive{TMM_ALGO_NAIVE, 0, TMM_MATH_FP32};
constexpr Setting kTf32{TMM_ALGO_AUTO, 0, TMM_MATH_TF32};
constexpr Setting kTf32Blocked{TMM_ALGO_BLOCKED, 0, TMM_MATH_TF32};
constexpr Setting kAccurate{TMM_ALGO_AUTO, 0, TMM_MATH_FP32_ACCURATE};

// Every kernel family in both precisions; shapes where the planner's golden file places
// them on the H100 (tests/data/planner_golden.txt): AutoTiny64 on TILED's 16 x 16,
// AutoSplitK on blocked_64x64 with k in 128, Tf32TailSplit and Fp32AccurateTailSplit on the
// Hopper kernels with the last wave split along k, BlockedLarge's 1000^3 split in 4.
std::vector<Spec> kernel_specs(double beta) {
  const tmm_layout R = TMM_ROW_MAJOR, C = TMM_COL_MAJOR;
  const tmm_transpose N = TMM_NO_TRANS, T = TMM_TRANS;
  const unsigned kTc = kTensorCores, kF64 = kF64TensorCores;
  // clang-format off
  std::vector<Spec> specs = {
      // name, double, setting, m, n, k, layout, ta, tb, pad, covers, large, beta (below)
      {"AutoTiny64", false, kAuto, 64, 64, 64, R, N, N, 0, kTiled16, false, 0},
      {"BlockedSplitK", false, kBlocked, 64, 80, 4096, C, T, N, 3, kSplit, false, 0},
      {"AutoSplitK", false, kAuto, 31, 33, 8191, R, N, T, 1, kSplit, false, 0},
      {"BlockedLarge", false, kBlocked, 1000, 1000, 1000, R, N, N, 5, kAny, true, 0},
      {"Tiled", false, kTiled, 300, 200, 500, C, N, T, 2, kAny, false, 0},
      {"TiledTile8", false, kTiled8, 129, 65, 77, R, T, T, 1, kAny, false, 0},
      {"Coarsened", false, kCoarsened, 257, 130, 200, C, T, T, 0, kAny, false, 0},
      {"Naive", false, kNaive, 100, 120, 300, R, T, N, 1, kAny, false, 0},
      {"ThinRows", false, kAuto, 8, 2000, 3000, R, N, N, 0, kThin, false, 0},
      {"ThinColumns", false, kAuto, 2000, 5, 3000, C, T, N, 2, kThin, false, 0},
      {"Tf32", false, kTf32, 256, 192, 512, R, N, T, 2, kTc, false, 0},
      {"Tf32Large", false, kTf32, 1024, 1024, 1024, C, N, N, 0, kTc, true, 0},
      {"Tf32TailSplit", false, kTf32, 65, 67, 8191, R, N, N, 0, kTc, false, 0},
      {"Tf32Blocked", false, kTf32Blocked, 384, 256, 320, C, T, N, 1, kTc, false, 0},
      {"Fp32Accurate", false, kAccurate, 384, 512, 1100, R, T, N, 0, kTc, false, 0},
      {"Fp32AccurateTailSplit", false, kAccurate, 65, 67, 8191, C, N, T, 1, kTc, false, 0},
      {"Dgemm", true, kAuto, 300, 200, 500, C, T, N, 2, kF64, false, 0},
      {"DgemmWide", true, kAuto, 2048, 2048, 64, R, N, N, 0, kF64, true, 0},
      {"DgemmDeepK", true, kAuto, 64, 64, 65536, R, N, T, 1, kF64 | kSplit, true, 0},
      {"DgemmThin", true, kAuto, 4, 3000, 2000, R, N, N, 0, kThin, false, 0},
      {"DgemmTiled", true, kTiled, 200, 150, 100, C, N, T, 3, kAny, false, 0},
      {"DgemmNaive", true, kNaive, 100, 90, 80, R, T, T, 0, kAny, false, 0},
  };
  // clang-format on
  for (Spec& s : specs) s.beta = beta;
  return specs;
}

std::vector<Spec> pick(const std::vector<Spec>& from, const std::vector<std::string>& names) {
  std::vector<Spec> out;
  for (const std::string& name : names)
    for (const Spec& s : from)
      if (name == s.name) out.push_back(s);
  return out;
}

// Beta 0 over NaN in C: one case of each family (the value call does not read C there).
std::vector<Spec> beta_zero_specs() {
  return pick(kernel_specs(0.0), {"AutoTiny64", "BlockedSplitK", "AutoSplitK", "Tiled", "Naive",
                                  "ThinRows", "Tf32", "Tf32TailSplit", "Fp32Accurate",
                                  "Fp32AccurateTailSplit", "Dgemm", "DgemmDeepK", "DgemmThin"});
}

// Alpha holding 0 (beta 0.5): the families whose kernels sum A and B before alpha.
std::vector<Spec> alpha_zero_specs() {
  std::vector<Spec> specs =
      pick(kernel_specs(0.5),
           {"AutoTiny64", "BlockedSplitK", "AutoSplitK", "ThinRows", "Tf32TailSplit",
            "Fp32AccurateTailSplit", "Coarsened", "Dgemm", "DgemmDeepK", "DgemmThin"});
  Spec cube = kernel_specs(0.5)[0];
  cube.name = "Tf32Cube256";
  cube.setting = kTf32;
  cube.m = cube.n = cube.k = 256;
  cube.covers = kTensorCores;
  specs.push_back(cube);
  return specs;
}

std::string spec_name(const ::testing::TestParamInfo<Spec>& info) { return info.param.name; }

template <class Case>
Case make_case(const Spec& s, double alpha) {
  Case g;
  g.layout = s.layout;
  g.ta = s.ta;
  g.tb = s.tb;
  g.m = s.m;
  g.n = s.n;
  g.k = s.k;
  g.alpha = decltype(g.alpha)(alpha);
  g.beta = decltype(g.beta)(s.beta);
  g.pad = s.pad;
  tmm_test::fill_case(g, tmm_test::fresh_seed());  // beta 0: NaN in C
  return g;
}

void expect_coverage(const Spec& s, const tmm_report& r) {
  const int cc = compute_capability();
  if (s.covers & kSplit) {
    EXPECT_GT(r.splits, 1) << r.kernel << ": the case should split k";
  }
  if (s.covers & kThin) {
    EXPECT_STREQ(r.kernel, s.dbl ? "f64_thin" : "thin");
  }
  if (s.covers & kTiled16) {
    EXPECT_EQ(r.algorithm, TMM_ALGO_TILED) << r.kernel;
    EXPECT_EQ(r.tile_size, 16) << r.kernel;
  }
  const bool dmma = cc == 80 || cc >= 90;  // also FP32_ACCURATE's devices
  if ((s.covers & kTensorCores) && (s.setting.math == TMM_MATH_TF32 ? cc >= 80 : dmma)) {
    EXPECT_EQ(r.math_mode, s.setting.math) << r.kernel << ": the case should run tensor cores";
  }
  if ((s.covers & kF64TensorCores) && dmma) {
    EXPECT_EQ(std::string(r.kernel).rfind("f64_mma_", 0), 0u) << r.kernel;
  }
}

class DeviceScalars : public ::testing::Test {
 protected:
  void SetUp() override {
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }
  std::string message() const { return tmm_get_error_message(h_); }
  tmm_handle h_ = nullptr;
};

// ---- 1 and 3: the value call's bits ---------------------------------------------------

// The value call and the call by pointer, same handle and settings (and so the same
// workspace and kernel), on two copies of C: the same report, the same bits, and within
// the bound of the arithmetic that ran. Alpha -0.5; beta 0.75 over random C, or 0 over
// NaN (which must not show).
template <class Case>
void expect_the_value_calls_bits(tmm_handle h, const Spec& s) {
  using T = Elem<Case>;
  Case g = make_case<Case>(s, -0.5);
  SCOPED_TRACE(tmm_test::describe(g));
  ASSERT_EQ(apply(h, s.setting), TMM_SUCCESS) << tmm_get_error_message(h);
  DeviceVector<T> a(g.a), b(g.b), by_value(g.c), by_pointer(g.c);
  ScalarsOnDevice<T> scalars(T(g.alpha), T(g.beta));
  ASSERT_EQ(value_call(h, g, a.p, b.p, by_value.p), TMM_SUCCESS) << tmm_get_error_message(h);
  const tmm_report value = last_report(h);
  ASSERT_EQ(scalars_call(h, g, scalars.alpha, a.p, b.p, scalars.beta, by_pointer.p), TMM_SUCCESS)
      << tmm_get_error_message(h);
  const tmm_report pointer = last_report(h);
  expect_same_run(value, pointer);
  expect_coverage(s, pointer);
  const std::vector<T> want = by_value.download();
  g.c = by_pointer.download();
  EXPECT_EQ(first_difference(want, g.c), "")
      << pointer.kernel << ": the call by pointer differs from the value call";
  EXPECT_TRUE(check(g, pointer.math_mode)) << pointer.kernel;
}

class DeviceScalarsBits : public DeviceScalars, public ::testing::WithParamInterface<Spec> {};

TEST_P(DeviceScalarsBits, MatchTheValueCall) {
  const Spec& s = GetParam();
  if (s.large && tmm_test::under_sanitizer()) GTEST_SKIP() << "too large under compute-sanitizer";
  if (s.dbl) {
    expect_the_value_calls_bits<DgemmCase>(h_, s);
  } else {
    expect_the_value_calls_bits<GemmCase>(h_, s);
  }
}

INSTANTIATE_TEST_SUITE_P(BetaNonZero, DeviceScalarsBits, ::testing::ValuesIn(kernel_specs(0.75)),
                         spec_name);
INSTANTIATE_TEST_SUITE_P(BetaZeroNanInC, DeviceScalarsBits, ::testing::ValuesIn(beta_zero_specs()),
                         spec_name);

// ---- 2: alpha holding 0 ---------------------------------------------------------------

// A and B all NaN and Inf, alpha holding 0: C becomes beta * C exactly (beta 0.5), and 0
// where beta holds 0 too (over NaN in C). The kernels read A and B: their values must not
// reach C.
template <class Case>
void expect_alpha_zero_hides_a_and_b(tmm_handle h, const Spec& s) {
  using T = Elem<Case>;
  Case g = make_case<Case>(s, 0.0);
  SCOPED_TRACE(tmm_test::describe(g));
  poison(g.a);
  poison(g.b);
  ASSERT_EQ(apply(h, s.setting), TMM_SUCCESS) << tmm_get_error_message(h);
  DeviceVector<T> a(g.a), b(g.b), c(g.c);
  ScalarsOnDevice<T> scalars(T(0), T(g.beta));
  ASSERT_EQ(scalars_call(h, g, scalars.alpha, a.p, b.p, scalars.beta, c.p), TMM_SUCCESS)
      << tmm_get_error_message(h);
  const std::string kernel = last_report(h).kernel;
  g.c = c.download();
  EXPECT_TRUE(is_beta_times_c(g)) << kernel;

  g.beta = 0;
  std::mt19937 rng(tmm_test::fresh_seed());
  reset_c(g, rng);  // NaN
  c.upload(g.c);
  scalars.set(T(0), T(0));
  ASSERT_EQ(scalars_call(h, g, scalars.alpha, a.p, b.p, scalars.beta, c.p), TMM_SUCCESS)
      << tmm_get_error_message(h);
  g.c = c.download();
  EXPECT_TRUE(is_beta_times_c(g)) << last_report(h).kernel << " (alpha and beta 0)";
}

class DeviceScalarsAlphaZero : public DeviceScalars, public ::testing::WithParamInterface<Spec> {};

TEST_P(DeviceScalarsAlphaZero, GivesBetaTimesCOverNanAndInfInAAndB) {
  const Spec& s = GetParam();
  if (s.large && tmm_test::under_sanitizer()) GTEST_SKIP() << "too large under compute-sanitizer";
  if (s.dbl) {
    expect_alpha_zero_hides_a_and_b<DgemmCase>(h_, s);
  } else {
    expect_alpha_zero_hides_a_and_b<GemmCase>(h_, s);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, DeviceScalarsAlphaZero, ::testing::ValuesIn(alpha_zero_specs()),
                         spec_name);

// ---- 4: k = 0 -------------------------------------------------------------------------

// k = 0 writes beta * C, alpha unread (NaN here), A and B NULL (no element needed): the bits
// of beta * C with beta 2, and 0 over NaN with beta 0; the value call's kernel ("scale").
template <class Case>
void expect_k_zero_scales_c(tmm_handle h) {
  using T = Elem<Case>;
  for (const double beta : {2.0, 0.0}) {
    Case g;
    g.layout = beta == 0 ? TMM_COL_MAJOR : TMM_ROW_MAJOR;
    g.m = 70, g.n = 45, g.k = 0, g.pad = 3;
    g.alpha = decltype(g.alpha)(1.5);
    g.beta = decltype(g.beta)(beta);
    tmm_test::fill_case(g, tmm_test::fresh_seed());
    SCOPED_TRACE(tmm_test::describe(g));
    DeviceVector<T> by_value(g.c), by_pointer(g.c);
    ScalarsOnDevice<T> scalars(std::numeric_limits<T>::quiet_NaN(), T(g.beta));
    ASSERT_EQ(value_call(h, g, nullptr, nullptr, by_value.p), TMM_SUCCESS)
        << tmm_get_error_message(h);
    const tmm_report value = last_report(h);
    ASSERT_EQ(scalars_call(h, g, scalars.alpha, nullptr, nullptr, scalars.beta, by_pointer.p),
              TMM_SUCCESS)
        << tmm_get_error_message(h);
    const tmm_report pointer = last_report(h);
    EXPECT_STREQ(pointer.kernel, value.kernel);
    g.c = by_pointer.download();
    EXPECT_TRUE(is_beta_times_c(g)) << pointer.kernel;
    EXPECT_EQ(first_difference(by_value.download(), g.c), "");
  }
}

TEST_F(DeviceScalars, KZeroWritesBetaTimesC) {
  expect_k_zero_scales_c<GemmCase>(h_);
  expect_k_zero_scales_c<DgemmCase>(h_);
}

// ---- 5: strided batches ---------------------------------------------------------------

// `batch` products of one shape, each with its own random operands, in the layout of a
// strided batch (product i at i times a case's sizes).
template <class Case>
struct Batch {
  std::vector<Case> parts;
  std::vector<Elem<Case>> a, b, c;
  Batch(const Case& shape, int64_t batch) {
    for (int64_t i = 0; i < batch; ++i) {
      Case g = shape;
      tmm_test::fill_case(g, tmm_test::fresh_seed());
      a.insert(a.end(), g.a.begin(), g.a.end());
      b.insert(b.end(), g.b.begin(), g.b.end());
      c.insert(c.end(), g.c.begin(), g.c.end());
      parts.push_back(std::move(g));
    }
  }
  // Product i, its C taken from `all_c` (a C of the whole batch), and C as it was from
  // `all_c0` where given.
  Case part(size_t i, const std::vector<Elem<Case>>& all_c,
            const std::vector<Elem<Case>>* all_c0 = nullptr) const {
    Case g = parts[i];
    const std::ptrdiff_t size = std::ptrdiff_t(g.c.size()), at = std::ptrdiff_t(i) * size;
    g.c.assign(all_c.begin() + at, all_c.begin() + at + size);
    if (all_c0 != nullptr) g.c0.assign(all_c0->begin() + at, all_c0->begin() + at + size);
    return g;
  }
};

template <class Case>
Case batch_shape(int64_t m, int64_t n, int64_t k, tmm_layout layout, tmm_transpose ta,
                 tmm_transpose tb, double alpha, double beta) {
  Case g;
  g.layout = layout, g.ta = ta, g.tb = tb;
  g.m = m, g.n = n, g.k = k, g.pad = 1;
  g.alpha = decltype(g.alpha)(alpha);
  g.beta = decltype(g.beta)(beta);
  tmm_test::fill_case(g, 1);  // the sizes (the parts have their own data)
  return g;
}

// The strided batched call by pointer against the value form: the same report and bits,
// every product within its bound. Then alpha holding 0 over NaN and Inf in A and B: every
// product beta * C.
template <class Case>
void expect_batched_bits(tmm_handle h, const Case& shape, int64_t batch, bool splits) {
  using T = Elem<Case>;
  SCOPED_TRACE(tmm_test::describe(shape) + " batch " + std::to_string(batch));
  Batch<Case> all(shape, batch);
  DeviceVector<T> a(all.a), b(all.b), by_value(all.c), by_pointer(all.c);
  ScalarsOnDevice<T> scalars(T(shape.alpha), T(shape.beta));
  ASSERT_EQ(value_batched(h, shape, a.p, b.p, by_value.p, batch), TMM_SUCCESS)
      << tmm_get_error_message(h);
  const tmm_report value = last_report(h);
  ASSERT_EQ(scalars_batched(h, shape, scalars.alpha, a.p, b.p, scalars.beta, by_pointer.p, batch),
            TMM_SUCCESS)
      << tmm_get_error_message(h);
  const tmm_report pointer = last_report(h);
  expect_same_run(value, pointer);
  EXPECT_EQ(pointer.batch, batch);
  if (splits) {
    EXPECT_GT(pointer.splits, 1) << pointer.kernel << ": the products should split k";
  }
  const std::vector<T> got = by_pointer.download();
  EXPECT_EQ(first_difference(by_value.download(), got), "")
      << pointer.kernel << ": the call by pointer differs from the value call";
  for (size_t i = 0; i < size_t(batch); ++i) {
    EXPECT_TRUE(check(all.part(i, got), pointer.math_mode)) << pointer.kernel << " product " << i;
  }

  // Alpha holding 0 over NaN and Inf: C = beta * C in every product (C finite here: the
  // GPU's NaN need not have the host's bits).
  std::vector<T> bad_a = all.a, bad_b = all.b, c0 = all.c;
  poison(bad_a);
  poison(bad_b);
  for (T& x : c0) x = std::isnan(x) ? T(0.375) : x;
  a.upload(bad_a);
  b.upload(bad_b);
  by_pointer.upload(c0);
  scalars.set(T(0), T(0.5));
  ASSERT_EQ(scalars_batched(h, shape, scalars.alpha, a.p, b.p, scalars.beta, by_pointer.p, batch),
            TMM_SUCCESS)
      << tmm_get_error_message(h);
  const std::vector<T> scaled = by_pointer.download();
  for (size_t i = 0; i < size_t(batch); ++i) {
    Case g = all.part(i, scaled, &c0);
    g.beta = decltype(g.beta)(0.5);
    EXPECT_TRUE(is_beta_times_c(g)) << last_report(h).kernel << " product " << i;
  }
}

TEST_F(DeviceScalars, StridedBatchesMatchTheValueCall) {
  const tmm_layout R = TMM_ROW_MAJOR, C = TMM_COL_MAJOR;
  const tmm_transpose N = TMM_NO_TRANS, T = TMM_TRANS;
  // The small kernel (m, n <= 32, k <= 128), BLOCKED side by side, and a batch too small to
  // fill the GPU whose products split k one launch each; double likewise.
  expect_batched_bits(h_, batch_shape<GemmCase>(24, 20, 100, R, N, N, -0.5, 0.75), 5, false);
  expect_batched_bits(h_, batch_shape<GemmCase>(40, 48, 56, C, T, N, -0.5, 0.75), 5, false);
  expect_batched_bits(h_, batch_shape<GemmCase>(31, 33, 8191, R, N, T, -0.5, 0.75), 3, true);
  expect_batched_bits(h_, batch_shape<DgemmCase>(24, 20, 100, C, N, T, -0.5, 0.75), 5, false);
  expect_batched_bits(h_, batch_shape<DgemmCase>(31, 33, 8191, R, T, N, -0.5, 0.75), 3, true);
  // Beta 0 over NaN in every C.
  expect_batched_bits(h_, batch_shape<GemmCase>(40, 48, 56, R, N, N, 1.25, 0.0), 5, false);
}

// ---- 6: argument checks ---------------------------------------------------------------

// A small float product on the device, its scalars, and C as it was.
struct Small {
  GemmCase g;
  DeviceVector<float> a, b, c;
  ScalarsOnDevice<float> scalars;
  explicit Small(GemmCase gc)
      : g(std::move(gc)), a(g.a), b(g.b), c(g.c), scalars(g.alpha, g.beta) {}
};

GemmCase small_case(int64_t m, int64_t n, int64_t k) {
  GemmCase g;
  g.layout = TMM_ROW_MAJOR;
  g.m = m, g.n = n, g.k = k, g.pad = 2;
  g.alpha = -0.5f, g.beta = 0.75f;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  return g;
}

// A refused call: `want`, a message, and C as it was.
template <class T>
void expect_refused(tmm_status st, tmm_handle h, const DeviceVector<T>& c,
                    const std::vector<T>& before, tmm_status want = TMM_ERROR_INVALID_VALUE) {
  EXPECT_EQ(st, want);
  EXPECT_STRNE(tmm_get_error_message(h), "") << "a refused call should say why";
  EXPECT_EQ(first_difference(before, c.download()), "") << "a refused call wrote C";
}

TEST_F(DeviceScalars, NullScalarsAreRefusedEvenWhereNothingRuns) {
  Small s(small_case(20, 30, 40));
  const GemmCase& g = s.g;
  for (const int64_t m : {g.m, int64_t(0)}) {
    SCOPED_TRACE("m " + std::to_string(m));
    GemmCase shape = g;
    shape.m = m;
    expect_refused(scalars_call(h_, shape, nullptr, s.a.p, s.b.p, s.scalars.beta, s.c.p), h_, s.c,
                   g.c);
    expect_refused(scalars_call(h_, shape, s.scalars.alpha, s.a.p, s.b.p, nullptr, s.c.p), h_, s.c,
                   g.c);
    expect_refused(scalars_batched(h_, shape, nullptr, s.a.p, s.b.p, s.scalars.beta, s.c.p, 1), h_,
                   s.c, g.c);
    expect_refused(scalars_batched(h_, shape, s.scalars.alpha, s.a.p, s.b.p, nullptr, s.c.p, 1), h_,
                   s.c, g.c);
  }
  expect_refused(scalars_batched(h_, g, nullptr, s.a.p, s.b.p, s.scalars.beta, s.c.p, 0), h_, s.c,
                 g.c);
  // Double.
  DgemmCase d;
  d.m = 12, d.n = 9, d.k = 7, d.alpha = 2, d.beta = 0.5;
  tmm_test::fill_case(d, tmm_test::fresh_seed());
  DeviceVector<double> da(d.a), db(d.b), dc(d.c);
  ScalarsOnDevice<double> ds(d.alpha, d.beta);
  expect_refused(scalars_call(h_, d, nullptr, da.p, db.p, ds.beta, dc.p), h_, dc, d.c);
  expect_refused(scalars_call(h_, d, ds.alpha, da.p, db.p, nullptr, dc.p), h_, dc, d.c);
  expect_refused(scalars_batched(h_, d, nullptr, da.p, db.p, ds.beta, dc.p, 2), h_, dc, d.c);
  expect_refused(scalars_batched(h_, d, ds.alpha, da.p, db.p, nullptr, dc.p, 2), h_, dc, d.c);
}

// Scalars in host memory the device cannot read (the stack, the heap) where a kernel would
// run. (Pinned host memory it can: ScalarsInsideTheInputsManagedOrPinnedMemoryAreRead.)
TEST_F(DeviceScalars, ScalarsOutsideDeviceMemoryAreRefused) {
  Small s(small_case(20, 30, 40));
  const GemmCase& g = s.g;
  float on_stack[2] = {g.alpha, g.beta};
  std::vector<float> on_heap = {g.alpha, g.beta};
  for (const float* host :
       {static_cast<const float*>(on_stack), static_cast<const float*>(on_heap.data())}) {
    expect_refused(scalars_call(h_, g, host, s.a.p, s.b.p, s.scalars.beta, s.c.p), h_, s.c, g.c);
    expect_refused(scalars_call(h_, g, s.scalars.alpha, s.a.p, s.b.p, host + 1, s.c.p), h_, s.c,
                   g.c);
    expect_refused(scalars_batched(h_, g, host, s.a.p, s.b.p, s.scalars.beta, s.c.p, 1), h_, s.c,
                   g.c);
  }
  // Misaligned device memory.
  const float* odd =
      reinterpret_cast<const float*>(reinterpret_cast<const char*>(s.scalars.alpha) + 1);
  expect_refused(scalars_call(h_, g, odd, s.a.p, s.b.p, s.scalars.beta, s.c.p), h_, s.c, g.c);
  // k = 0 launches a kernel too (C = beta * C).
  GemmCase scale = g;
  scale.k = 0;
  expect_refused(scalars_call(h_, scale, s.scalars.alpha, nullptr, nullptr, on_stack + 1, s.c.p),
                 h_, s.c, g.c);
  DgemmCase d;
  d.m = 12, d.n = 9, d.k = 7, d.alpha = 2, d.beta = 0.5;
  tmm_test::fill_case(d, tmm_test::fresh_seed());
  DeviceVector<double> da(d.a), db(d.b), dc(d.c);
  ScalarsOnDevice<double> ds(d.alpha, d.beta);
  const double host_alpha = d.alpha;
  expect_refused(scalars_call(h_, d, &host_alpha, da.p, db.p, ds.beta, dc.p), h_, dc, d.c);
}

// A scalar sharing bytes with C (the kernels write C while others read the scalars): an
// element of C, of the first product's or a later product's C in a strided batch.
TEST_F(DeviceScalars, ScalarsInsideCAreRefused) {
  Small s(small_case(20, 30, 40));
  const GemmCase& g = s.g;
  const float* first = s.c.p;
  const float* middle = s.c.p + g.at(7, 11, g.ldc);
  const float* last = s.c.p + g.at(g.m - 1, g.n - 1, g.ldc);
  for (const float* in_c : {first, middle, last}) {
    expect_refused(scalars_call(h_, g, in_c, s.a.p, s.b.p, s.scalars.beta, s.c.p), h_, s.c, g.c);
    expect_refused(scalars_call(h_, g, s.scalars.alpha, s.a.p, s.b.p, in_c, s.c.p), h_, s.c, g.c);
  }
  // Double: alpha on C's element (3, 2).
  DgemmCase d;
  d.layout = TMM_COL_MAJOR;
  d.m = 12, d.n = 9, d.k = 7, d.alpha = 2, d.beta = 0.5, d.pad = 1;
  tmm_test::fill_case(d, tmm_test::fresh_seed());
  DeviceVector<double> da(d.a), db(d.b), dc(d.c);
  ScalarsOnDevice<double> ds(d.alpha, d.beta);
  expect_refused(scalars_call(h_, d, dc.p + d.at(3, 2, d.ldc), da.p, db.p, ds.beta, dc.p), h_, dc,
                 d.c);

  // A strided batch of three: beta in product 2's C, alpha in product 1's.
  const int64_t batch = 3;
  const GemmCase shape = small_case(16, 24, 32);
  Batch<GemmCase> all(shape, batch);
  DeviceVector<float> ba(all.a), bb(all.b), bc(all.c);
  ScalarsOnDevice<float> bs(shape.alpha, shape.beta);
  const int64_t stride_c = int64_t(shape.c.size());
  const int64_t element = shape.at(5, 6, shape.ldc);
  expect_refused(
      scalars_batched(h_, shape, bs.alpha, ba.p, bb.p, bc.p + 2 * stride_c + element, bc.p, batch),
      h_, bc, all.c);
  expect_refused(
      scalars_batched(h_, shape, bc.p + stride_c + element, ba.p, bb.p, bs.beta, bc.p, batch), h_,
      bc, all.c);
  // The same beta outside the batch's products (one product fewer): fine.
  ASSERT_EQ(scalars_batched(h_, shape, bs.alpha, ba.p, bb.p, bc.p + 2 * stride_c + element, bc.p,
                            batch - 1),
            TMM_SUCCESS)
      << message();
  const std::vector<float> got = bc.download();
  for (size_t i = 0; i < size_t(batch - 1); ++i) {
    GemmCase part = all.part(i, got);
    part.beta = all.c[size_t(2 * stride_c + element)];
    EXPECT_TRUE(tmm_test::check_case(part)) << "product " << i;
  }
}

// Scalars inside A and B (only read), both on one element, and in managed memory: the
// call runs with what they hold, with the value call's bits.
TEST_F(DeviceScalars, ScalarsInsideTheInputsManagedOrPinnedMemoryAreRead) {
  Small s(small_case(50, 40, 60));
  GemmCase g = s.g;
  const int64_t ia = g.at(3, 4, g.lda), ib = g.at(5, 6, g.ldb);
  float* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 2 * sizeof(float)), cudaSuccess);
  managed[0] = -1.25f, managed[1] = 0.375f;
  float* pinned = nullptr;  // pinned host memory: the device reads it (as the matrices')
  ASSERT_EQ(cudaMallocHost(&pinned, 2 * sizeof(float)), cudaSuccess);
  pinned[0] = 1.5f, pinned[1] = -0.625f;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  struct Where {
    const char* what;
    const float *alpha, *beta;
    float alpha_value, beta_value;
  };
  const Where cases[] = {
      {"alpha in A, beta in B", s.a.p + ia, s.b.p + ib, g.a[size_t(ia)], g.b[size_t(ib)]},
      {"alpha and beta on one element of A", s.a.p + ia, s.a.p + ia, g.a[size_t(ia)],
       g.a[size_t(ia)]},
      {"managed memory", managed, managed + 1, -1.25f, 0.375f},
      {"pinned host memory", pinned, pinned + 1, 1.5f, -0.625f},
  };
  for (const Where& w : cases) {
    SCOPED_TRACE(w.what);
    g.alpha = w.alpha_value, g.beta = w.beta_value;
    DeviceVector<float> by_value(g.c0), by_pointer(g.c0);
    ASSERT_EQ(value_call(h_, g, s.a.p, s.b.p, by_value.p), TMM_SUCCESS) << message();
    ASSERT_EQ(scalars_call(h_, g, w.alpha, s.a.p, s.b.p, w.beta, by_pointer.p), TMM_SUCCESS)
        << message();
    g.c = by_pointer.download();
    EXPECT_EQ(first_difference(by_value.download(), g.c), "");
    EXPECT_TRUE(tmm_test::check_case(g));
  }
  EXPECT_EQ(cudaFree(managed), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

// The memory given by tmm_set_workspace is written by the kernels: a scalar or a matrix
// in it is refused (it would be overwritten while read), in a value call too; memory
// apart from it is fine.
TEST_F(DeviceScalars, OperandsInsideAGivenWorkspaceAreRefused) {
  Small s(small_case(64, 80, 4096));  // BLOCKED splits it where a workspace is given
  const GemmCase& g = s.g;
  float* given = nullptr;
  const size_t bytes = size_t(8) << 20;
  ASSERT_EQ(cudaMalloc(&given, bytes), cudaSuccess);
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_workspace(h_, given, bytes), TMM_SUCCESS) << message();
  float* inside = given + (bytes / sizeof(float)) / 2;
  ASSERT_EQ(cudaMemcpy(inside, &g.alpha, sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  expect_refused(scalars_call(h_, g, inside, s.a.p, s.b.p, s.scalars.beta, s.c.p), h_, s.c, g.c);
  EXPECT_NE(message().find("alpha shares bytes with the workspace"), std::string::npos)
      << message();
  expect_refused(scalars_call(h_, g, s.scalars.alpha, s.a.p, s.b.p, inside, s.c.p), h_, s.c, g.c);
  expect_refused(value_call(h_, g, s.a.p, inside, s.c.p), h_, s.c, g.c);  // B in it
  EXPECT_NE(message().find("B shares bytes with the workspace"), std::string::npos) << message();
  // Apart from it: split as before, and right.
  ASSERT_EQ(scalars_call(h_, g, s.scalars.alpha, s.a.p, s.b.p, s.scalars.beta, s.c.p), TMM_SUCCESS)
      << message();
  GemmCase got = g;
  got.c = s.c.download();
  EXPECT_TRUE(tmm_test::check_case(got));
  ASSERT_EQ(tmm_set_workspace(h_, nullptr, 0), TMM_SUCCESS);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaFree(given), cudaSuccess);
}

// Nothing to run (m, n or batch 0): success, C untouched, with valid scalars and with
// scalars in host memory (checked only where a kernel would run).
TEST_F(DeviceScalars, EmptyProductsSucceedWithoutTouchingC) {
  Small s(small_case(20, 30, 40));
  const GemmCase& g = s.g;
  const float host[2] = {1.0f, 2.0f};
  for (const bool device : {true, false}) {
    SCOPED_TRACE(device ? "device scalars" : "host scalars");
    const float* alpha = device ? s.scalars.alpha : host;
    const float* beta = device ? s.scalars.beta : host + 1;
    GemmCase empty = g;
    empty.m = 0;
    EXPECT_EQ(scalars_call(h_, empty, alpha, s.a.p, s.b.p, beta, s.c.p), TMM_SUCCESS) << message();
    empty = g;
    empty.n = 0;
    EXPECT_EQ(scalars_call(h_, empty, alpha, s.a.p, s.b.p, beta, s.c.p), TMM_SUCCESS) << message();
    EXPECT_EQ(scalars_batched(h_, g, alpha, s.a.p, s.b.p, beta, s.c.p, 0), TMM_SUCCESS)
        << message();
    EXPECT_EQ(first_difference(g.c, s.c.download()), "");
  }
  DgemmCase d;
  d.m = 12, d.n = 9, d.k = 7, d.alpha = 2, d.beta = 0.5;
  tmm_test::fill_case(d, tmm_test::fresh_seed());
  DeviceVector<double> da(d.a), db(d.b), dc(d.c);
  ScalarsOnDevice<double> ds(d.alpha, d.beta);
  d.m = 0;
  EXPECT_EQ(scalars_call(h_, d, ds.alpha, da.p, db.p, ds.beta, dc.p), TMM_SUCCESS) << message();
  EXPECT_STREQ(last_report(h_).kernel, "none");
  EXPECT_EQ(scalars_batched(h_, d, ds.alpha, da.p, db.p, ds.beta, dc.p, 0), TMM_SUCCESS)
      << message();
  EXPECT_EQ(first_difference(d.c, dc.download()), "");
}

// A and B are read whatever alpha holds, C whatever beta holds: NULL where k > 0 (m, n > 0)
// is refused with alpha (beta) holding 0.
TEST_F(DeviceScalars, OperandsAreNeededWhateverTheScalarsHold) {
  Small s(small_case(20, 30, 40));
  const GemmCase& g = s.g;
  s.scalars.set(0.0f, 0.0f);
  expect_refused(scalars_call(h_, g, s.scalars.alpha, nullptr, s.b.p, s.scalars.beta, s.c.p), h_,
                 s.c, g.c);
  expect_refused(scalars_call(h_, g, s.scalars.alpha, s.a.p, nullptr, s.scalars.beta, s.c.p), h_,
                 s.c, g.c);
  EXPECT_EQ(scalars_call(h_, g, s.scalars.alpha, s.a.p, s.b.p, s.scalars.beta, nullptr),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_STRNE(tmm_get_error_message(h_), "");
}

// A handle of several devices has no device calls.
TEST_F(DeviceScalars, AHandleOfSeveralDevicesIsNotSupported) {
  Small s(small_case(20, 30, 40));
  const GemmCase& g = s.g;
  const int twice[] = {0, 0};
  Handle lanes;
  ASSERT_EQ(tmm_create_with_devices(&lanes.h, twice, 2), TMM_SUCCESS);
  expect_refused(scalars_call(lanes.h, g, s.scalars.alpha, s.a.p, s.b.p, s.scalars.beta, s.c.p),
                 lanes.h, s.c, g.c, TMM_ERROR_NOT_SUPPORTED);
  expect_refused(
      scalars_batched(lanes.h, g, s.scalars.alpha, s.a.p, s.b.p, s.scalars.beta, s.c.p, 1), lanes.h,
      s.c, g.c, TMM_ERROR_NOT_SUPPORTED);
}

// The CPU backend has no device calls (no GPU needed: its pointers are host memory, as
// test_dgemm's DevicePointersNeedCuda passes them).
TEST(DeviceScalarsCpu, TheCpuBackendIsNotSupported) {
  Handle cpu;
  ASSERT_EQ(tmm_create_with_backend(&cpu.h, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  const tmm_handle h = cpu.h;
  std::vector<float> a(16, 1.0f), b(16, 1.0f), c(16, 3.0f);
  std::vector<double> da(16, 1.0), db(16, 1.0), dc(16, 3.0);
  const float alpha = 1.0f, beta = 0.5f;
  const double dalpha = 1.0, dbeta = 0.5;
  const tmm_layout R = TMM_ROW_MAJOR;
  const tmm_transpose N = TMM_NO_TRANS;
  EXPECT_EQ(tmm_sgemm_device_scalars(h, R, N, N, 4, 4, 4, &alpha, a.data(), 4, b.data(), 4, &beta,
                                     c.data(), 4),
            TMM_ERROR_NOT_SUPPORTED);
  EXPECT_STRNE(tmm_get_error_message(h), "");
  EXPECT_EQ(tmm_dgemm_device_scalars(h, R, N, N, 4, 4, 4, &dalpha, da.data(), 4, db.data(), 4,
                                     &dbeta, dc.data(), 4),
            TMM_ERROR_NOT_SUPPORTED);
  EXPECT_STRNE(tmm_get_error_message(h), "");
  EXPECT_EQ(tmm_sgemm_strided_batched_device_scalars(h, R, N, N, 2, 2, 2, &alpha, a.data(), 2, 4,
                                                     b.data(), 2, 4, &beta, c.data(), 2, 4, 2),
            TMM_ERROR_NOT_SUPPORTED);
  EXPECT_STRNE(tmm_get_error_message(h), "");
  EXPECT_EQ(tmm_dgemm_strided_batched_device_scalars(h, R, N, N, 2, 2, 2, &dalpha, da.data(), 2, 4,
                                                     db.data(), 2, 4, &dbeta, dc.data(), 2, 4, 2),
            TMM_ERROR_NOT_SUPPORTED);
  EXPECT_STRNE(tmm_get_error_message(h), "");
  EXPECT_EQ(c, std::vector<float>(16, 3.0f));
  EXPECT_EQ(dc, std::vector<double>(16, 3.0));
}

// ---- Stream order ----------------------------------------------------------------------

// The scalars are read when the kernels run, in the order of the handle's stream: written
// there (cudaMemcpyAsync) behind a slow product, just before the call, they are the ones
// the call uses; written there just after it, they are not.
TEST(DeviceScalarsStream, ScalarsAreReadInTheOrderOfTheStream) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  HandleAndStream owned;
  ASSERT_EQ(tmm_create_with_backend(&owned.h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(cudaStreamCreateWithFlags(&owned.s, cudaStreamNonBlocking), cudaSuccess);
  const tmm_handle h = owned.h;
  const auto message = [h] { return std::string(tmm_get_error_message(h)); };
  ASSERT_EQ(tmm_set_stream(h, owned.s), TMM_SUCCESS) << message();
  GemmCase slow = small_case(1024, 1024, 1024);
  DeviceVector<float> sa(slow.a), sb(slow.b), sc(slow.c);
  GemmCase g = small_case(128, 96, 200);
  g.alpha = 2.0f, g.beta = 0.75f;  // what the stream writes before the call
  DeviceVector<float> a(g.a), b(g.b), c(g.c), by_value(g.c);
  ScalarsOnDevice<float> scalars(1.0f, 0.25f);  // what the memory holds when the call is made
  float* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 4 * sizeof(float)), cudaSuccess);
  pinned[0] = g.alpha, pinned[1] = g.beta;
  pinned[2] = pinned[3] = std::numeric_limits<float>::quiet_NaN();  // written after the call

  ASSERT_EQ(tmm_set_algorithm(h, TMM_ALGO_NAIVE), TMM_SUCCESS);
  ASSERT_EQ(value_call(h, slow, sa.p, sb.p, sc.p), TMM_SUCCESS) << message();
  ASSERT_EQ(tmm_set_algorithm(h, TMM_ALGO_AUTO), TMM_SUCCESS);
  const cudaMemcpyKind up = cudaMemcpyHostToDevice;
  ASSERT_EQ(cudaMemcpyAsync(scalars.alpha, pinned, sizeof(float), up, owned.s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(scalars.beta, pinned + 1, sizeof(float), up, owned.s), cudaSuccess);
  ASSERT_EQ(scalars_call(h, g, scalars.alpha, a.p, b.p, scalars.beta, c.p), TMM_SUCCESS)
      << message();
  ASSERT_EQ(cudaMemcpyAsync(scalars.alpha, pinned + 2, sizeof(float), up, owned.s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(scalars.beta, pinned + 3, sizeof(float), up, owned.s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(owned.s), cudaSuccess);
  g.c = c.download();
  ASSERT_EQ(value_call(h, g, a.p, b.p, by_value.p), TMM_SUCCESS) << message();
  EXPECT_EQ(first_difference(by_value.download(), g.c), "")
      << "the call did not use the scalars its stream wrote before it";
  EXPECT_TRUE(tmm_test::check_case(g));
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

// ---- 7: CUDA graphs -------------------------------------------------------------------

// One product of a captured graph: its case (inputs, scalars, C before the replay), its
// operands and scalars on the device, the handle, setting and stream its call runs with,
// and what the captured call reported.
class Replayed {
 public:
  virtual ~Replayed() = default;
  // The call by pointer (its setting, and its stream where it has one, set first).
  virtual tmm_status call() = 0;
  // New scalars (C anew: NaN where beta is 0) and, if asked, new A and B, enqueued on `s`,
  // or copied and waited for where `s` is NULL.
  virtual void prepare(double alpha, double beta, bool new_inputs, cudaStream_t s) = 0;
  // C after a replay: beta * C exactly where alpha is 0, and within the bound of the
  // arithmetic the captured call reported.
  virtual ::testing::AssertionResult check_replay() = 0;
  // The value call now, outside the capture, on C as it was before the replay: its kernel
  // and bits against the replay's (a workspace given: the same kernel runs).
  virtual ::testing::AssertionResult same_as_uncaptured() = 0;
  // The value call outside a capture on a copy of C, for its report.
  virtual tmm_report uncaptured_report() = 0;
  virtual std::string describe() const = 0;
  tmm_handle handle = nullptr;
  tmm_report captured{};
};

template <class Case>
class Product final : public Replayed {
 public:
  using T = Elem<Case>;
  Product(Case g, tmm_handle h, Setting setting, cudaStream_t stream)
      : g_(std::move(g)),
        setting_(setting),
        stream_(stream),
        a_(g_.a),
        b_(g_.b),
        c_(g_.c),
        scalars_(T(g_.alpha), T(g_.beta)),
        rng_(tmm_test::fresh_seed()) {
    handle = h;
  }

  tmm_status call() override {
    tmm_status st = stream_ != nullptr ? tmm_set_stream(handle, stream_) : TMM_SUCCESS;
    if (st == TMM_SUCCESS) st = apply(handle, setting_);
    if (st != TMM_SUCCESS) return st;
    return scalars_call(handle, g_, scalars_.alpha, a_.p, b_.p, scalars_.beta, c_.p);
  }

  void prepare(double alpha, double beta, bool new_inputs, cudaStream_t s) override {
    if (new_inputs) tmm_test::fill_case(g_, tmm_test::fresh_seed());
    g_.alpha = decltype(g_.alpha)(alpha);
    g_.beta = decltype(g_.beta)(beta);
    reset_c(g_, rng_);
    if (s != nullptr) {
      if (new_inputs) {
        a_.upload_async(g_.a, s);
        b_.upload_async(g_.b, s);
      }
      c_.upload_async(g_.c, s);
      scalars_.set_async(T(g_.alpha), T(g_.beta), s);
    } else {
      if (new_inputs) {
        a_.upload(g_.a);
        b_.upload(g_.b);
      }
      c_.upload(g_.c);
      scalars_.set(T(g_.alpha), T(g_.beta));
    }
  }

  ::testing::AssertionResult check_replay() override {
    g_.c = c_.download();
    if (g_.alpha == 0) {
      ::testing::AssertionResult exact = is_beta_times_c(g_);
      if (!exact) return exact;
    }
    return check(g_, captured.math_mode);
  }

  ::testing::AssertionResult same_as_uncaptured() override {
    const std::vector<T> replayed = c_.download();
    DeviceVector<T> fresh(g_.c0);
    tmm_status st = apply(handle, setting_);
    if (st == TMM_SUCCESS) st = value_call(handle, g_, a_.p, b_.p, fresh.p);
    if (st != TMM_SUCCESS) {
      return ::testing::AssertionFailure()
             << "the value call failed: " << tmm_get_error_message(handle);
    }
    const tmm_report r = last_report(handle);
    if (std::strcmp(r.kernel, captured.kernel) != 0 || r.splits != captured.splits) {
      return ::testing::AssertionFailure()
             << "captured " << captured.kernel << " (" << captured.splits << " splits), outside "
             << r.kernel << " (" << r.splits << ")";
    }
    const std::string diff = first_difference(fresh.download(), replayed);
    if (!diff.empty()) return ::testing::AssertionFailure() << r.kernel << ": " << diff;
    return ::testing::AssertionSuccess();
  }

  tmm_report uncaptured_report() override {
    DeviceVector<T> scratch(g_.c0);
    EXPECT_EQ(apply(handle, setting_), TMM_SUCCESS);
    EXPECT_EQ(value_call(handle, g_, a_.p, b_.p, scratch.p), TMM_SUCCESS)
        << tmm_get_error_message(handle);
    const tmm_report r = last_report(handle);
    EXPECT_EQ(tmm_synchronize(handle), TMM_SUCCESS);
    return r;
  }

  std::string describe() const override { return tmm_test::describe(g_); }

 private:
  Case g_;
  Setting setting_;
  cudaStream_t stream_;
  DeviceVector<T> a_, b_, c_;
  ScalarsOnDevice<T> scalars_;
  std::mt19937 rng_;
};

template <class Case>
std::unique_ptr<Replayed> product(int64_t m, int64_t n, int64_t k, tmm_layout layout,
                                  tmm_transpose ta, tmm_transpose tb, tmm_handle h, Setting setting,
                                  cudaStream_t stream = nullptr) {
  Case g;
  g.layout = layout, g.ta = ta, g.tb = tb;
  g.m = m, g.n = n, g.k = k, g.pad = 2;
  g.alpha = decltype(g.alpha)(-0.5);
  g.beta = decltype(g.beta)(0.75);
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  return std::make_unique<Product<Case>>(std::move(g), h, setting, stream);
}

// The (alpha, beta) pairs the replays cycle through: identity, both, alpha 0, beta 0 over
// NaN, negative beta, both 0.
constexpr double kPairs[][2] = {{1, 0},     {-0.5, 0.75}, {0, 2},     {2, 0},
                                {0.25, -1}, {0, 0},       {-1.5, 1.0}};
constexpr int kPairCount = int(sizeof kPairs / sizeof kPairs[0]);

// Replays `exec` on `s` `replays` times, each with the next scalars for every product
// (each product its own pair) and, every `every` replays, new A and B: each replay's C
// against FP64. Even replays copy on `s`, odd ones by a host copy and a wait.
void replay_and_check(cudaGraphExec_t exec, cudaStream_t s,
                      const std::vector<std::unique_ptr<Replayed>>& products, int replays,
                      int every) {
  for (int replay = 0; replay < replays; ++replay) {
    SCOPED_TRACE("replay " + std::to_string(replay));
    for (size_t i = 0; i < products.size(); ++i) {
      const double* pair = kPairs[(replay + 3 * int(i)) % kPairCount];
      products[i]->prepare(pair[0], pair[1], replay % every == every - 1,
                           replay % 2 == 0 ? s : nullptr);
    }
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    for (const auto& p : products) {
      EXPECT_TRUE(p->check_replay()) << p->describe() << " " << p->captured.kernel;
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// The graph of a split-K product with a workspace given (tmm_set_workspace: the captured
// call splits as outside a capture) and without (unsplit), TF32 with and without it (on
// Hopper: the wgmma kernel and its split of the last wave, or the mma.sync kernel), and
// dgemm with and without it, captured in global mode on the handles' stream and replayed
// 100 times, the scalars changed before every replay and A and B every fourth: every
// replay's C against FP64. Then the products with the workspace against their value calls
// outside the capture: the same kernel, the same bits.
TEST(DeviceScalarsGraph, ReplaysReadTheScalarsOfEachReplay) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  HandleAndStream owned;  // the handle without a workspace of the caller's, and the stream
  ASSERT_EQ(tmm_create_with_backend(&owned.h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(cudaStreamCreateWithFlags(&owned.s, cudaStreamNonBlocking), cudaSuccess);
  const cudaStream_t s = owned.s;
  const tmm_handle bare = owned.h;
  std::unique_ptr<DeviceMemory> workspace;  // freed after `given` is destroyed
  Handle given;
  ASSERT_EQ(tmm_create_with_backend(&given.h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_stream(bare, s), TMM_SUCCESS) << tmm_get_error_message(bare);
  ASSERT_EQ(tmm_set_stream(given.h, s), TMM_SUCCESS) << tmm_get_error_message(given.h);

  const tmm_layout R = TMM_ROW_MAJOR, C = TMM_COL_MAJOR;
  const tmm_transpose N = TMM_NO_TRANS, T = TMM_TRANS;
  std::vector<std::unique_ptr<Replayed>> products;
  products.push_back(product<GemmCase>(31, 33, 8191, R, N, T, given.h, kAuto));  // split-K
  products.push_back(product<GemmCase>(31, 33, 8191, C, N, N, bare, kAuto));
  products.push_back(product<GemmCase>(31, 33, 8191, R, N, N, given.h, kTf32));
  products.push_back(product<GemmCase>(128, 96, 256, C, T, N, bare, kTf32));
  products.push_back(product<DgemmCase>(32, 24, 4096, R, N, T, given.h, kAuto));
  products.push_back(product<DgemmCase>(96, 80, 200, C, T, N, bare, kAuto));

  // Outside a capture: what the products on `given` need, and the split of the first.
  std::vector<tmm_report> outside(products.size());
  size_t bytes = 0;
  for (size_t i = 0; i < products.size(); ++i) {
    if (products[i]->handle != given.h) continue;
    outside[i] = products[i]->uncaptured_report();
    bytes = std::max(bytes, size_t(outside[i].workspace_bytes));
  }
  ASSERT_GT(outside[0].splits, 1) << outside[0].kernel << ": the shape must split k";
  ASSERT_GT(bytes, 0u);
  workspace = std::make_unique<DeviceMemory>(bytes);
  ASSERT_EQ(tmm_set_workspace(given.h, workspace->p, bytes), TMM_SUCCESS)
      << tmm_get_error_message(given.h);

  Graph graph;
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  {
    const CaptureCloser closer{s};
    for (const auto& p : products) {
      ASSERT_EQ(p->call(), TMM_SUCCESS) << tmm_get_error_message(p->handle) << " " << p->describe();
      p->captured = last_report(p->handle);
    }
    ASSERT_EQ(cudaStreamEndCapture(s, &graph.graph), cudaSuccess)
        << "a call of the library spoiled the capture";
  }
  ASSERT_EQ(cudaGraphInstantiate(&graph.exec, graph.graph, 0), cudaSuccess);
  for (size_t i = 0; i < products.size(); ++i) {
    const tmm_report& r = products[i]->captured;
    SCOPED_TRACE(products[i]->describe() + " " + r.kernel);
    EXPECT_EQ(r.compute_ms, 0.0);
    if (products[i]->handle == given.h) {  // the kernel of the call outside a capture
      EXPECT_STREQ(r.kernel, outside[i].kernel);
      EXPECT_EQ(r.splits, outside[i].splits);
      EXPECT_EQ(r.workspace_bytes, outside[i].workspace_bytes);
    } else {  // no workspace: k not split, nothing packed
      EXPECT_EQ(r.splits, 1);
      EXPECT_EQ(r.workspace_bytes, 0);
    }
  }

  const int replays = tmm_test::under_sanitizer() ? 5 : 100;
  replay_and_check(graph.exec, s, products, replays, 4);

  // The products with the workspace, replayed with alpha -0.5 and beta 0.75, against the
  // value call outside the capture.
  for (const auto& p : products) p->prepare(-0.5, 0.75, true, nullptr);
  ASSERT_EQ(cudaGraphLaunch(graph.exec, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  for (const auto& p : products) {
    if (p->handle == given.h) {
      EXPECT_TRUE(p->same_as_uncaptured()) << p->describe();
    }
  }
  EXPECT_EQ(tmm_synchronize(given.h), TMM_SUCCESS);
}

// Two calls by pointer on forked streams of one capture (the handle's stream switched
// between them, as test_graph_capture's GraphCaptureFork does): a split-K shape (unsplit
// here: no workspace) and a TF32 one, replayed with new scalars each time and new inputs
// every third replay, each replay against FP64.
TEST(DeviceScalarsGraph, ForkedStreamsReplayWithNewScalars) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  HandleAndStream owned;
  ASSERT_EQ(tmm_create_with_backend(&owned.h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(cudaStreamCreateWithFlags(&owned.s, cudaStreamNonBlocking), cudaSuccess);
  cudaStream_t fork = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&fork, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t forked = nullptr, joined = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming), cudaSuccess);
  const tmm_handle h = owned.h;

  std::vector<std::unique_ptr<Replayed>> products;
  products.push_back(product<GemmCase>(64, 80, 4096, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, h,
                                       kBlocked, owned.s));
  products.push_back(
      product<GemmCase>(128, 96, 256, TMM_COL_MAJOR, TMM_TRANS, TMM_NO_TRANS, h, kTf32, fork));

  Graph graph;
  ASSERT_EQ(cudaStreamBeginCapture(owned.s, cudaStreamCaptureModeGlobal), cudaSuccess);
  {
    const CaptureCloser closer{owned.s};
    ASSERT_EQ(cudaEventRecord(forked, owned.s), cudaSuccess);
    ASSERT_EQ(cudaStreamWaitEvent(fork, forked, 0), cudaSuccess);  // `fork` joins the capture
    for (const auto& p : products) {
      ASSERT_EQ(p->call(), TMM_SUCCESS) << tmm_get_error_message(h) << " " << p->describe();
      p->captured = last_report(h);
    }
    ASSERT_EQ(cudaEventRecord(joined, fork), cudaSuccess);
    ASSERT_EQ(cudaStreamWaitEvent(owned.s, joined, 0), cudaSuccess);
    ASSERT_EQ(cudaStreamEndCapture(owned.s, &graph.graph), cudaSuccess)
        << "a call of the library spoiled the capture";
  }
  ASSERT_EQ(cudaGraphInstantiate(&graph.exec, graph.graph, 0), cudaSuccess);
  ASSERT_EQ(tmm_set_stream(h, nullptr), TMM_SUCCESS);

  replay_and_check(graph.exec, owned.s, products, tmm_test::under_sanitizer() ? 5 : 100, 3);
  EXPECT_EQ(cudaEventDestroy(forked), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(joined), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(fork), cudaSuccess);
}

}  // namespace
