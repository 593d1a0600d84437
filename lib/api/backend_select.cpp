// Backend selection: CUDA when it was built in and a device is usable, otherwise the
// CPU. A build without CUDA (TILEDMM_ENABLE_CUDA=OFF) has only the CPU backend.
#include "api/backend_select.hpp"

#include "core/error.hpp"
#include "cpu/cpu_backend.hpp"
#if TILEDMM_WITH_CUDA
#include "cuda/backend/cuda_backend.hpp"
#endif

namespace tiledmm {

bool cuda_usable() {
#if TILEDMM_WITH_CUDA
  return cuda_device_count() > 0;
#else
  return false;
#endif
}

std::unique_ptr<Backend> make_backend(BackendKind kind, int device) {
  if (kind == BackendKind::Auto) kind = cuda_usable() ? BackendKind::Cuda : BackendKind::Cpu;
  if (kind == BackendKind::Cpu) return std::make_unique<CpuBackend>();
#if TILEDMM_WITH_CUDA
  return make_cuda_backend(device);
#else
  (void)device;
  throw Error(Status::NoDevice, "this build of tiledmm has no CUDA backend");
#endif
}

int cuda_device_count_or_zero() {
#if TILEDMM_WITH_CUDA
  return cuda_device_count();
#else
  return 0;
#endif
}

std::unique_ptr<Backend> make_backend_over(const std::vector<int>& devices) {
#if TILEDMM_WITH_CUDA
  if (devices.size() == 1) return make_cuda_backend(devices.front());
  return make_multi_device_backend(devices);
#else
  (void)devices;
  throw Error(Status::NoDevice, "this build of tiledmm has no CUDA backend");
#endif
}

}  // namespace tiledmm
