// The CPU backend: the seeds' sequential loop (NAIVE) and a cache-blocked,
// multi-threaded implementation (BLOCKED, the AUTO choice), timed with a steady clock.
#pragma once

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
  Timing timing_;
  bool has_timing_ = false;
  std::vector<BlockedWorkspace<float>> workspaces_;  // kept across calls
  WorkerPool pool_;                                  // started once, kept across calls
};

}  // namespace tiledmm
