// The CUDA kernels of tiledmm, one technique per file, each with its launcher; the
// optimisation ladder reads top to bottom:
//
//   naive_kernel.cu           one thread per element of C, global memory only
//   tiled_kernel.cu           shared-memory tiles (the seeds' kernel, for any shape)
//   coarsened_kernel.cu       tiled, each thread computes several outputs (seed 001)
//   blocked_kernel.cu         register-blocked, warp-tiled, double-buffered (strict FP32)
//   f64_blocked_kernel.cu     the same technique over doubles on the CUDA cores (strict FP64)
//   blocked_core.cuh          what the two share: the technique over the element type
//   thin_kernel.cu            m or n at most 16: the large operand read once (both precisions)
//   small_kernel.cu           batches of products up to 32 x 32, a block each (both precisions)
//   mma/tf32_mma_kernel.cu    TF32 tensor cores (mma.sync), cp.async pipeline (TF32 mode)
//   mma/tf32x3_mma_kernel.cu  3xTF32 on tensor cores with FP32 accuracy (FP32_ACCURATE)
//   mma/mma_common.cuh        what the two mma.sync kernels share (copier, fragments, epilogue)
//   sm90/tf32_wgmma_kernel.cu   TF32 on Hopper (sm_90a: wgmma, TMA, warp-specialised)
//   sm90/tf32x3_wgmma_kernel.cu 3xTF32 on Hopper (FP32_ACCURATE), same pipeline
//   sm90/sm90_common.cuh      mbarrier, TMA and wgmma wrappers (TMA maps:
//                             lib/cuda/runtime/tensor_map.hpp)
//   tail_split.cuh            the partly full last wave's tiles split along k, and summed
//   pack_kernel.cu            operands copied K-major (and split for 3xTF32) into a workspace
//   scale_kernel.cu           C = beta * C, for k = 0 or alpha = 0
//   epilogue_kernel.cu        C = alpha * D + beta * C over a tile (the streamed path)
//   kernel_table.cu           the registry's CUDA rows: which kernel is which setting
//
// Choosing a row for a call and launching it is the layer above (lib/cuda/launch/).
// Every launcher enqueues on `stream`, checks the launch and throws Error on failure.
#pragma once

#include <cuda_runtime.h>

#include "core/device_profile.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/settings.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {

// C = beta * C: the only kernel outside the registry, run when A and B take no part;
// in the problem's precision.
void launch_scale(const GemmProblem& p, cudaStream_t stream);

// out = alpha * acc + beta * c over an m x n tile (c not read when beta is 0): the
// streamed host path's last step per tile. `out` may be `c`. T is float or double
// (both instantiated in epilogue_kernel.cu).
template <class T>
void launch_epilogue(int64_t m, int64_t n, T alpha, const T* acc, int64_t ld_acc, T beta,
                     const T* c, int64_t ldc, T* out, int64_t ld_out, cudaStream_t stream);

// BLOCKED's split-K partial sums: their leading dimension.
int64_t partial_ld(const GemmProblem& p);

}  // namespace tiledmm
