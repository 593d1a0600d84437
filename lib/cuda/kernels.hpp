// The CUDA kernels of tiledmm, one technique per file, and how one is chosen.
//
//   naive_kernel.cu      one thread per element of C, global memory only
//   tiled_kernel.cu      shared-memory tiles (the seeds' kernel, for any shape)
//   coarsened_kernel.cu  tiled, each thread computes several outputs (seed 001)
//   blocked_kernel.cu    register-blocked, warp-tiled, double-buffered (strict FP32)
//   tf32_mma_kernel.cu   TF32 tensor cores (mma.sync), cp.async pipeline (TF32 mode)
//   tf32x3_mma_kernel.cu 3xTF32 on tensor cores with FP32 accuracy (FP32_ACCURATE mode)
//   mma_common.cuh       what the two mma.sync kernels share (copier, fragments, epilogue)
//   tf32_wgmma_kernel.cu   TF32 on Hopper (sm_90a: wgmma, TMA, warp-specialised)
//   tf32x3_wgmma_kernel.cu 3xTF32 on Hopper (FP32_ACCURATE), same pipeline
//   sm90_common.cuh      mbarrier, TMA and wgmma wrappers; tensor_map.hpp: TMA maps
//   tail_split.cuh       the partly full last wave's tiles split along k, and summed
//   pack_kernel.cu       operands copied K-major (and split for 3xTF32) into a workspace
//   scale_kernel.cu      C = beta * C, for k = 0 or alpha = 0
//   kernel_table.cu      the registry's CUDA rows: which kernel is which setting
//   dispatch.cu          choosing a row for a call, and launching it
//
// Every launcher enqueues on `stream`, checks the launch and throws Error on failure.
#pragma once

#include <cuda_runtime.h>

#include "../backend.hpp"
#include "../device_profile.hpp"
#include "../error.hpp"
#include "../gemm_problem.hpp"
#include "../kernel_registry.hpp"

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

// Floats of device workspace the chosen kernel needs (0 for most).
size_t workspace_elements(const KernelChoice& choice, const GemmProblem& p);

// Runs the chosen kernel (or the scale kernel when A and B take no part).
// `workspace` holds at least workspace_elements() floats.
void launch_gemm(const KernelChoice& choice, const GemmProblem& p, float* workspace,
                 cudaStream_t stream);

// C = beta * C: the only kernel outside the registry, run when A and B take no part.
void launch_scale(const GemmProblem& p, cudaStream_t stream);

// out = alpha * acc + beta * c over an m x n tile (c not read when beta is 0): the
// streamed host path's last step per tile. `out` may be `c`.
void launch_epilogue(int64_t m, int64_t n, float alpha, const float* acc, int64_t ld_acc,
                     float beta, const float* c, int64_t ldc, float* out, int64_t ld_out,
                     cudaStream_t stream);

// BLOCKED's split-K partial sums: their leading dimension.
int64_t partial_ld(const GemmProblem& p);

// Throws Error(Cuda) naming `what` if `err` is not cudaSuccess
// (Error(OutOfMemory) for allocation failures). A sticky error (one that destroys
// the context) is also remembered for the current device: see check_context().
void check_cuda(cudaError_t err, const char* what);

// The calling thread's CUDA error state around a runtime call of ours that may fail.
// Made before the call: it notes whether the caller had left an error pending
// (cudaPeekAtLastError, which clears nothing). After our call failed,
// clear_if_ours() takes our error out of the thread's state, so that it does not
// show in the caller's next cudaGetLastError; an error the caller had left pending
// is never cleared by a call that succeeds, nor taken for ours. (Launches use
// launch_kernel, which gets its own error from the launch itself.)
class LastErrorScope {
 public:
  LastErrorScope() noexcept : caller_pending_(cudaPeekAtLastError() != cudaSuccess) {}
  void clear_if_ours() const noexcept {
    if (!caller_pending_) (void)cudaGetLastError();
  }

 private:
  bool caller_pending_;
};

// Throws Error(Cuda) if an earlier sticky error destroyed `device`'s context in this
// process: every call on that device would fail anyway, with less clear messages.
void check_context(int device);

// The name of what `choice` runs for `p`: its kernel, "scale" or "none".
const char* kernel_name(const KernelChoice& choice, const GemmProblem& p);

// The arithmetic of what `choice` runs for `p`: its kernel's mode; Fp32 for "scale"
// and "none".
MathMode math_mode_of(const KernelChoice& choice, const GemmProblem& p);

}  // namespace tiledmm
