// The CUDA kernels of tiledmm, one technique per file, and how one is chosen.
//
//   naive_kernel.cu      one thread per element of C, global memory only
//   tiled_kernel.cu      shared-memory tiles (the seeds' kernel, for any shape)
//   coarsened_kernel.cu  tiled, each thread computes several outputs (seed 001)
//   blocked_kernel.cu    register-blocked, warp-tiled, double-buffered (strict FP32)
//   scale_kernel.cu      C = beta * C, for k = 0 or alpha = 0
//
// Every launcher enqueues on `stream`, checks the launch and throws Error on failure.
#pragma once

#include <cuda_runtime.h>

#include "../backend.hpp"
#include "../error.hpp"
#include "../gemm_problem.hpp"

namespace tiledmm {

// How BLOCKED runs a shape: its square tile of C per block, and how many slices
// of k run as separate blocks (split-K; 1 = none).
struct BlockedPlan {
  int tile;
  int splits;
};

// A concrete kernel choice: never Algorithm::Auto, never a zero size.
struct KernelConfig {
  Algorithm algorithm;
  int tile_size;   // block edge of NAIVE, tile edge of TILED, COARSENED, BLOCKED
  int coarsening;  // outputs per thread of COARSENED, else 1
  int splits = 1;  // BLOCKED's split-K factor
};

// Resolves AUTO and the zero defaults for this shape on a GPU with
// `multiprocessors` SMs. Throws NotSupported for a tile size the algorithm lacks.
KernelConfig choose_config(const GemmProblem& p, const Settings& settings,
                           int multiprocessors);

// Floats of device workspace the configured kernel needs (0 for most).
size_t workspace_elements(const KernelConfig& config, const GemmProblem& p);

// Runs the configured kernel (or the scale kernel when A and B take no part).
// `workspace` holds at least workspace_elements() floats.
void launch_gemm(const KernelConfig& config, const GemmProblem& p, float* workspace,
                 cudaStream_t stream);

void launch_naive(const GemmProblem& p, int block_edge, cudaStream_t stream);
void launch_tiled(const GemmProblem& p, int tile, cudaStream_t stream);
void launch_coarsened(const GemmProblem& p, int tile, int coarsening,
                      cudaStream_t stream);
// BLOCKED's tile and split-K factor for a shape (forced_tile 0 = choose).
BlockedPlan plan_blocked(const GemmProblem& p, int multiprocessors, int forced_tile);
int64_t partial_ld(const GemmProblem& p);
int blocked_outputs_per_thread(int tile);
size_t blocked_workspace(const GemmProblem& p, const BlockedPlan& plan);
void launch_blocked(const GemmProblem& p, const BlockedPlan& plan, float* workspace,
                    cudaStream_t stream);
void launch_scale(const GemmProblem& p, cudaStream_t stream);

// Throws Error(Cuda) naming `what` if `err` is not cudaSuccess
// (Error(OutOfMemory) for allocation failures). A sticky error (one that destroys
// the context) is also remembered for the current device: see check_context().
void check_cuda(cudaError_t err, const char* what);

// Throws Error(Cuda) if an earlier sticky error destroyed `device`'s context in this
// process: every call on that device would fail anyway, with less clear messages.
void check_context(int device);

// The static name of the kernel `config` runs for `p` ("blocked_128x256", "scale").
const char* kernel_name(const KernelConfig& config, const GemmProblem& p);

}  // namespace tiledmm
