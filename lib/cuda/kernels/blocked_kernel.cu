// BLOCKED: register-blocked SGEMM in strict FP32 (plain fused multiply-adds; no
// tensor cores, no TF32), the step past the classic ladder that races cuBLAS.
//
// The technique (blocked_core.cuh, shared with the FP64 kernel, f64_blocked_kernel.cu)
// over floats: a thread's outputs come in groups of 4 x 4 (one float4 of A by one float4
// of B) that sit 16 rows and 32 columns apart, and a transposed tile's rows are padded by
// 4 floats so that the transposing stores spread over the banks. This file holds the
// shapes and the registry's entry points.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/kernels/blocked_core.cuh"
#include "cuda/kernels/kernels.hpp"
#include "plan/blocked_shapes.hpp"

namespace tiledmm {
namespace {

// The configurations, measured on the H100 (BENCHMARKS.md). The widest is the
// workhorse: 16 x 8 outputs per thread give 128 multiply-adds per 6 shared-memory
// loads, which is what it takes to keep the FP32 pipes issuing (ncu: issue slots
// 74% busy with 8 x 8 per thread, as cuBLAS's 256 x 128 x 8 kernel does it).
using Shape256 = BlockShape<float, 2, 4, 4, 2, 8, 1>;   // 128 x 256, 256 threads, 1 block per SM
using Shape128 = BlockShape<float, 4, 2, 2, 2, 16, 1>;  // 128 x 128, 256 threads
using Shape64 = BlockShape<float, 2, 1, 2, 2, 16, 4>;   //  64 x  64,  64 threads, 4 blocks per SM

// The split-K reduction's kernel, instantiated here, ahead of the main kernel's: the
// order in which the PTX lists them (scripts/ptx-identity.sh compares it).
template __global__ void reduce_splits<float>(GemmView<float>, const float*, int64_t, int);

}  // namespace

int64_t partial_ld(const GemmProblem& p) { return partial_ld_of<float>(p); }

// The shapes as the planner knows them (blocked_shapes.hpp) are these shapes (and so fit
// the 48 KiB of static shared memory: BlockShape checks).
static_assert(matches<Shape256>(kBlockedShapes[0]), "planner row 0 is the 128 x 256 shape");
static_assert(matches<Shape128>(kBlockedShapes[1]), "planner row 1 is the 128 x 128 shape");
static_assert(matches<Shape64>(kBlockedShapes[2]), "planner row 2 is the 64 x 64 shape");

// Bytes of the split-K partial sums: `splits` floats per element of C.
size_t blocked_workspace(const GemmProblem& p, const KernelPlan& plan) {
  return split_workspace<float>(p, plan);
}

void launch_blocked(const GemmProblem& p, const KernelPlan& plan, void* workspace, void* stream) {
  launch_by_tile<Shape256, Shape128, Shape64>(kBlockedShapes, p, plan, workspace, stream);
}

}  // namespace tiledmm
