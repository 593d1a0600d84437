// Choosing a kernel for a call from the registry's CUDA rows (lib/cuda/kernels/
// kernel_table.cu), with the planner's tile and split (lib/plan/planner.hpp), and
// launching it. The backend and the streamed engine call these; definitions in
// dispatch.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "core/device_profile.hpp"
#include "core/gemm_problem.hpp"
#include "core/settings.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {

// A concrete kernel choice: the registry row and its plan. Never AUTO.
struct KernelChoice {
  const KernelEntry* kernel;
  KernelPlan plan;
};

// Resolves AUTO and the zero defaults for this shape on `device` through the kernel
// registry and, for BLOCKED, the planner. Throws NotSupported for a tile size the
// algorithm lacks or a kernel the device cannot run.
// With with_workspace false (the streamed path's chunks, which get none), rows that
// would need a workspace for p are passed over.
KernelChoice choose_kernel(const GemmProblem& p, const Settings& settings,
                           const DeviceProfile& device, bool with_workspace = true);

// The same kernel with k not split (BLOCKED's split-K, a row's last-wave split): what
// runs where the partial sums do not fit.
KernelChoice without_splits(KernelChoice choice);

// Bytes of device workspace the chosen kernel needs (0 for most).
size_t workspace_bytes(const KernelChoice& choice, const GemmProblem& p);

// Runs the chosen kernel (or the scale kernel when A and B take no part).
// `workspace` holds at least workspace_bytes() bytes.
void launch_gemm(const KernelChoice& choice, const GemmProblem& p, void* workspace,
                 cudaStream_t stream);

// The name of what `choice` runs for `p`: its kernel, "scale" or "none".
const char* kernel_name(const KernelChoice& choice, const GemmProblem& p);

// The arithmetic of what `choice` runs for `p`: its kernel's mode; Fp32 for "scale"
// and "none".
MathMode math_mode_of(const KernelChoice& choice, const GemmProblem& p);

}  // namespace tiledmm
