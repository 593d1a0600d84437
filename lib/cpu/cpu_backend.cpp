#include "cpu_backend.hpp"

#include <chrono>

#include "../error.hpp"
#include "cpu_kernels.hpp"

namespace tiledmm {

void CpuBackend::check_algorithm(Algorithm algorithm) const {
  require(algorithm == Algorithm::Auto || algorithm == Algorithm::Naive ||
              algorithm == Algorithm::Blocked,
          Status::NotSupported,
          "the CPU backend has only the NAIVE, BLOCKED and AUTO algorithms");
}

void CpuBackend::gemm_host(const GemmProblem& problem, const Settings& settings) {
  const auto start = std::chrono::steady_clock::now();
  const bool naive = settings.algorithm == Algorithm::Naive;
  if (is_empty(problem)) {
    // Nothing to compute, and nothing may be read.
  } else if (naive && !is_scale_only(problem)) {
    cpu_naive_gemm(problem);
  } else if (naive) {
    cpu_scale_c(problem);
  } else {
    cpu_blocked_gemm(problem, workspaces_);
  }
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  timing_ = Timing{};
  timing_.compute_ms = elapsed.count();
  timing_.total_ms = elapsed.count();
  timing_.algorithm = naive ? Algorithm::Naive : Algorithm::Blocked;
  has_timing_ = true;
}

void CpuBackend::gemm_device(const GemmProblem&, const Settings&) {
  throw Error(Status::NotSupported, "device pointers need the CUDA backend");
}

Timing CpuBackend::last_timing() {
  require(has_timing_, Status::InvalidValue, "no sgemm has succeeded on this handle yet");
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
