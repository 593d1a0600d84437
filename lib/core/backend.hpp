// The interface every backend implements (lib/cpu/, lib/cuda/backend/); the settings
// and timing records it takes and gives are in settings.hpp. Plain C++: nothing here
// knows about the C API.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/settings.hpp"

namespace tiledmm {

class Backend {
 public:
  virtual ~Backend() = default;

  virtual BackendKind kind() const = 0;

  // Throws Error(NotSupported) if this backend cannot run `algorithm`.
  virtual void check_algorithm(Algorithm algorithm) const = 0;

  // Host pointers; returns when C holds the result. Records the timing.
  virtual void gemm_host(const GemmProblem& problem, const Settings& settings) = 0;

  // Device pointers, enqueued on the backend's stream.
  virtual void gemm_device(const GemmProblem& problem, const Settings& settings) = 0;

  // Timing of the last successful gemm; may wait for it to finish. Throws
  // Error(InvalidValue) if none has succeeded.
  virtual Timing last_timing() = 0;

  // Allocates `bytes` of the host path's pinned staging now (CUDA); a no-op where
  // there is none (the CPU).
  virtual void reserve_host_staging(int64_t bytes) { (void)bytes; }

  // Device memory of the caller's for the device calls' workspace (tmm_set_workspace);
  // nullptr and 0: the backend's own. Throws NotSupported where there is none (the CPU,
  // several devices).
  virtual void set_workspace(void* workspace, size_t bytes) {
    (void)workspace;
    (void)bytes;
    throw Error(Status::NotSupported, "a device workspace needs the CUDA backend of one device");
  }

  virtual void set_stream(void* stream) = 0;
  virtual void* stream() const = 0;
  virtual void synchronize() = 0;
  virtual DeviceInfo device_info() const = 0;
  // The CUDA device index, -1 for the CPU; a handle of several devices: the first listed.
  virtual int device() const = 0;

  // The devices a handle computes on (a CUDA handle of several: as many as it lists); 1
  // for one device and for the CPU.
  virtual int device_count() const { return 1; }
  // Device `index` (0 <= index < device_count()): its description, and its share of the
  // last successful call (a Timing of what that device did; one device: the call's).
  virtual DeviceInfo device_info_at(int index) const {
    (void)index;
    return device_info();
  }
  virtual Timing last_share(int index) {
    (void)index;
    return last_timing();
  }
};

}  // namespace tiledmm
