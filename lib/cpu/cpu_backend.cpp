#include "cpu/cpu_backend.hpp"

#include <chrono>
#include <cmath>
#include <type_traits>

#include "core/error.hpp"
#include "core/host_io.hpp"
#include "cpu/cpu_kernels.hpp"
#include "cpu/system_blas.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {

namespace {

// The CPU rows of the kernel registry (lib/registry/kernel_registry.hpp). The CPU backend
// calls its two kernels directly; the rows name them for the report, the tests and
// tmm_get_kernel_info. All are strict in their precision: the CPU accepts every math
// mode and runs these.
constexpr KernelEntry kCpuKernels[] = {
    kernel_row(BackendKind::Cpu, "cpu_naive", "the seeds' sequential triple loop")
        .algorithm(Algorithm::Naive)
        .is_default(),
    kernel_row(BackendKind::Cpu, "cpu_blocked",
               "cache-blocked, packed, multi-threaded (host_threads)")
        .algorithm(Algorithm::Blocked)
        .is_default(),
    kernel_row(BackendKind::Cpu, "cpu_f64_naive", "the seeds' sequential triple loop, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Naive)
        .is_default(),
    kernel_row(BackendKind::Cpu, "cpu_f64_blocked",
               "cache-blocked, packed, multi-threaded (host_threads), in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Blocked)
        .is_default(),
};

// The names the report gives, by precision: the rows above.
template <class T>
constexpr const char* kNaiveName = std::is_same_v<T, double> ? "cpu_f64_naive" : "cpu_naive";
template <class T>
constexpr const char* kBlockedName = std::is_same_v<T, double> ? "cpu_f64_blocked" : "cpu_blocked";

}  // namespace

KernelTable cpu_kernel_table() { return {kCpuKernels, sizeof kCpuKernels / sizeof kCpuKernels[0]}; }

void CpuBackend::check_algorithm(Algorithm algorithm) const {
  // Every algorithm has rows in both precisions (test_kernel_registry), so float's answer
  // holds for double.
  require(algorithm == Algorithm::Auto ||
              find_kernel(BackendKind::Cpu, Precision::F32, algorithm, 0, 0),
          Status::NotSupported, "the CPU backend has only the NAIVE, BLOCKED and AUTO algorithms");
}

void CpuBackend::gemm_host(const GemmProblem& problem, const Settings& settings) {
  if (has_io(problem)) {  // tmm_sgemm_io: on whole operands read first
    run_materialized(problem, [&](const GemmProblem& q) { gemm_host(q, settings); });
    return;
  }
  visit_precision(problem.precision,
                  [&](auto zero) { gemm_as<decltype(zero)>(problem, settings); });
}

namespace {

// The system BLAS when AUTO may run it on `p` (system_blas.hpp), else nullptr. NAIVE
// and BLOCKED never use it.
template <class T>
const SystemBlas* auto_system_blas(const GemmView<T>& p, const Settings& settings) {
  if (settings.algorithm != Algorithm::Auto) return nullptr;
  const SystemBlas* blas = system_blas();
  return blas != nullptr && system_blas_can_run(*blas, p, settings.host_threads) ? blas : nullptr;
}

// Whether a strided batch runs on the own BLOCKED kernel with whole products to a thread
// (cpu_blocked_gemm_batch): where each product would take that kernel (not NAIVE, a
// finite alpha, A and B taking part, no system BLAS) and either runs on one thread alone
// (under 4 MFLOP) or the products are at least as many as the threads.
template <class T>
bool blocked_batch_pays(const GemmProblem& problem, const Settings& settings) {
  if (problem.batch <= 1 || is_empty(problem) || is_scale_only(problem) ||
      settings.algorithm == Algorithm::Naive || !std::isfinite(problem.alpha))
    return false;
  const GemmView<T> first = view_of<T>(product_of(problem, 0));
  if (auto_system_blas(first, settings) != nullptr) return false;
  return cpu_blocked_threads(first, settings.host_threads) == 1 ||
         problem.batch >= host_thread_count(settings.host_threads);
}

}  // namespace

template <class T>
void CpuBackend::gemm_as(const GemmProblem& problem, const Settings& settings) {
  const auto start = std::chrono::steady_clock::now();
  // A strided batch: its products one after another, each as a single call (the same
  // path: they are one shape); none for a batch of 0.
  Timing t;
  t.precision = problem.precision;
  t.algorithm = settings.algorithm == Algorithm::Naive ? Algorithm::Naive : Algorithm::Blocked;
  if (blocked_batch_pays<T>(problem, settings)) {
    // Whole products to a thread: the same bits as the loop below, in one parallel loop.
    t.kernel = kBlockedName<T>;
    t.host_threads = cpu_blocked_gemm_batch(view_of<T>(problem), problem.batch,
                                            settings.host_threads, workspaces<T>(), pool_);
  } else if (is_empty(problem)) {  // nothing to compute (or read), however many products
    t = product_as<T>(problem, settings);
  } else {
    for (int64_t b = 0; b < problem.batch; ++b) {
      const Timing one =
          product_as<T>(problem.batch == 1 ? problem : product_of(problem, b), settings);
      if (b == 0) t = one;
    }
  }
  t.batch = problem.batch;
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  t.compute_ms = elapsed.count();
  t.total_ms = elapsed.count();
  timing_ = t;
  has_timing_ = true;
}

template <class T>
Timing CpuBackend::product_as(const GemmProblem& problem, const Settings& settings) {
  const GemmView<T> p = view_of<T>(problem);
  // BLOCKED (and an optimized BLAS) adds alpha * (partial sums over slices of k) into
  // C; with alpha = +-Inf or NaN the slices would give NaN where the whole sum gives
  // +-Inf, so such calls run the single-sum loop (see "Arithmetic" at tmm_sgemm). The
  // quick returns (m or n = 0; k = 0 or alpha = 0: C = beta * C) are the library's own
  // on every path, so the system BLAS sees only products that read A and B.
  const bool naive = settings.algorithm == Algorithm::Naive || !std::isfinite(problem.alpha);
  Timing t;
  t.algorithm = naive ? Algorithm::Naive : Algorithm::Blocked;
  t.precision = problem.precision;
  if (is_empty(problem)) {
    // Nothing to compute, and nothing may be read.
  } else if (is_scale_only(problem)) {
    cpu_scale_c(p);
    t.kernel = "cpu_scale";
    t.host_threads = 1;
  } else if (naive) {
    cpu_naive_gemm(p);
    t.kernel = kNaiveName<T>;
    t.host_threads = 1;
  } else if (const SystemBlas* blas = auto_system_blas(p, settings)) {
    t.host_threads = system_blas_gemm(*blas, p, settings.host_threads);
    t.kernel = blas->kernel_name;
  } else {
    t.host_threads = cpu_blocked_gemm(p, settings.host_threads, workspaces<T>(), pool_);
    t.kernel = kBlockedName<T>;
  }
  return t;
}

void CpuBackend::gemm_device(const GemmProblem&, const Settings&) {
  throw Error(Status::NotSupported, "device pointers need the CUDA backend");
}

Timing CpuBackend::last_timing() {
  require(has_timing_, Status::InvalidValue, "no sgemm or dgemm has succeeded on this handle yet");
  return timing_;
}

void CpuBackend::set_stream(void*) {
  throw Error(Status::NotSupported, "streams need the CUDA backend");
}

void* CpuBackend::stream() const {
  throw Error(Status::NotSupported, "streams need the CUDA backend");
}

DeviceInfo CpuBackend::device_info() const {
  throw Error(Status::NotSupported, "device info needs the CUDA backend");
}

}  // namespace tiledmm
