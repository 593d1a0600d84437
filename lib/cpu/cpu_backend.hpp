// The CPU backend: the seeds' sequential loop (NAIVE) and a cache-blocked,
// multi-threaded implementation (BLOCKED), timed with a steady clock. AUTO runs the
// system's optimized BLAS when one is found at run time (system_blas.hpp), else BLOCKED.
#pragma once

#include <type_traits>
#include <vector>

#include "core/backend.hpp"
#include "core/worker_pool.hpp"
#include "cpu/cpu_kernels.hpp"

namespace tiledmm {

class CpuBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::Cpu; }
  void check_algorithm(Algorithm algorithm) const override;
  void gemm_host(const GemmProblem& problem, const Settings& settings) override;
  void gemm_device(const GemmProblem& problem, const Settings& settings) override;
  Timing last_timing() override;
  void set_stream(void* stream) override;
  void* stream() const override;
  void synchronize() override {}
  DeviceInfo device_info() const override;
  int device() const override { return -1; }

 private:
  template <class T>
  void gemm_as(const GemmProblem& problem, const Settings& settings);
  // One product (batch 1): what ran, without the times.
  template <class T>
  Timing product_as(const GemmProblem& problem, const Settings& settings);
  // BLOCKED's packing buffers of each precision, kept across calls.
  template <class T>
  std::vector<BlockedWorkspace<T>>& workspaces() {
    if constexpr (std::is_same_v<T, double>) {
      return workspaces_f64_;
    } else {
      return workspaces_f32_;
    }
  }

  Timing timing_;
  bool has_timing_ = false;
  std::vector<BlockedWorkspace<float>> workspaces_f32_;
  std::vector<BlockedWorkspace<double>> workspaces_f64_;
  WorkerPool pool_;  // started once, kept across calls
};

}  // namespace tiledmm
