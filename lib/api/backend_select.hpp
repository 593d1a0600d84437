// Choosing and making the backend of a handle: CUDA when it was built in and a device
// is usable, otherwise the CPU. The one place that knows both backends, so it sits
// above them, beside the C boundary that calls it.
#pragma once

#include <memory>
#include <vector>

#include "core/backend.hpp"

namespace tiledmm {

// True when a CUDA device and a driver that can run it are present.
bool cuda_usable();

// Builds the backend; Auto picks CUDA device `device` when cuda_usable(), else the
// CPU. Throws Error(InvalidValue) for a negative device, Error(NoDevice) for CUDA
// without that device.
std::unique_ptr<Backend> make_backend(BackendKind kind, int device);

// The usable CUDA devices (0 without CUDA, a device or a driver).
int cuda_device_count_or_zero();

// A CUDA backend over `devices` (not empty): one device listed once is the single-device
// backend, else a handle of several (multi_device_backend.cu). Throws Error(NoDevice)
// without CUDA or for a device that does not exist.
std::unique_ptr<Backend> make_backend_over(const std::vector<int>& devices);

}  // namespace tiledmm
