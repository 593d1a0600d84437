// The CUDA backend, seen from host C++ code that is not compiled by nvcc.
#pragma once

#include <memory>

#include "core/backend.hpp"

namespace tiledmm {

// Number of usable CUDA devices; 0 when there is no device or no driver.
int cuda_device_count();

// Throws Error(NoDevice) when `device` is not a usable CUDA device.
std::unique_ptr<Backend> make_cuda_backend(int device);

}  // namespace tiledmm
