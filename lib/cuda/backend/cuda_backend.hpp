// The CUDA backend, seen from host C++ code that is not compiled by nvcc.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/backend.hpp"
#include "core/device_profile.hpp"
#include "core/gemm_problem.hpp"
#include "core/precision.hpp"
#include "core/settings.hpp"

namespace tiledmm {

class StreamedGemm;

// Number of usable CUDA devices; 0 when there is no device or no driver.
int cuda_device_count();

// Throws Error(NoDevice) when `device` is not a usable CUDA device.
std::unique_ptr<Backend> make_cuda_backend(int device);

// The same, with the host path on `engine` (made on `device`) instead of the process's
// shared engine of the device: one entry of a multi-device handle.
std::unique_ptr<Backend> make_cuda_backend_on(int device, std::shared_ptr<StreamedGemm> engine);

// A handle over `devices` (each a usable device; one may be listed twice): its host calls
// spread their tiles over every device listed (multi_device_backend.cu). Throws
// Error(NoDevice) for a device that does not exist.
std::unique_ptr<Backend> make_multi_device_backend(const std::vector<int>& devices);

// What the planner needs of `device`, read from its attributes, and its description.
DeviceProfile read_profile(int device);
DeviceInfo read_device_info(int device);

// Device memory the host path may use on the current device: the budget option, or what is
// free now less a margin (a sixteenth of it and 64 MiB) for the CUDA runtime and other users.
int64_t host_path_device_budget(const Settings& s);

// The rate at large sizes of what AUTO runs, for the host path's models
// (plan/measured_rates.hpp): in single precision BLOCKED's widest shape's share of the FP32
// peak, in double the FP64 tensor-core kernel's share of the FP64 peak. The rate only weighs
// the streamed path against the direct one (and sizes the streamed path's chunks).
double host_path_kernel_rate(const DeviceProfile& profile, Precision precision);

// Bytes the direct path copies to the device: dense A and B (when the call reads them)
// and C, rows padded to 16 bytes; saturated at 2^62.
int64_t direct_bytes(const GemmProblem& p);

}  // namespace tiledmm
