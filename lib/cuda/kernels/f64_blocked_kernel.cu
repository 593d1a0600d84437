// BLOCKED in double on the CUDA cores: register-blocked DGEMM in strict FP64 (plain
// fused multiply-adds in double, no tensor cores), for devices where DMMA is absent
// (before compute capability 8.0) or slow (sm_86, sm_89: FP64 tensor math at 1/64 of the
// FP32 rate). The FP32 kernel's technique (blocked_core.cuh) over doubles.
//
// A thread's outputs come in groups of 2 x 2 (one double2 of A by one double2 of B) that
// sit 8 rows and 16 columns apart; with 4 x 4 groups a thread owns 8 x 8 outputs and
// reads four double2 of A and four of B per step of k, and a warp's reads are broadcasts
// or 128 contiguous bytes (a double2 is 16 bytes, eight lanes of a row read one line).
//
// A transposed tile's rows are padded by 4 doubles: a warp's 8-byte stores (8 rows at
// 4 depths at depth 8, 16 rows at 2 depths at depth 4) then fall on 16 bank pairs twice
// each (two wavefronts, the least 256 bytes take); unpadded, depth 8's would fall four
// times on 8 of them.
//
// This file holds the shapes and the registry's entry points.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/kernels/blocked_core.cuh"
#include "cuda/kernels/kernels.hpp"
#include "plan/f64_shapes.hpp"

namespace tiledmm {
namespace {

// The configurations: 8 x 8 doubles of accumulators per thread (128 registers), the
// FP32 kernel's warp tile of 32 x 64. The 128 x 128 tile takes depth 8: its two buffers
// take 33 KiB (66 KiB, over the 48 KiB of static shared memory, at 16). The 64 x 64
// tile, 64 threads, takes depth 4: at depth 8 each thread holds 16 doubles of the next
// tile per operand beside the accumulators, and ptxas (CUDA 13.0) spilled up to 92 bytes
// in 5 of its 16 variants for sm_90 at 255 registers; at depth 4, none spill. On the
// H100: 22.1 and 21.6 TFLOP/s at 8192^3 (lib/plan/measured_rates.hpp).
using Shape128 = BlockShape<double, 4, 2, 4, 4, 8, 1>;  // 128 x 128, 256 threads
using Shape64 = BlockShape<double, 2, 1, 4, 4, 4, 4>;   //  64 x  64,  64 threads, 4 blocks per SM

// The split-K reduction's kernel, instantiated here, ahead of the main kernel's: the
// order in which the PTX lists them (scripts/ptx-identity.sh compares it).
template __global__ void reduce_splits<double>(GemmView<double>, const double*, int64_t, int);

}  // namespace

// The shapes as the planner knows them (f64_shapes.hpp) are these shapes (and so fit the
// 48 KiB of static shared memory: BlockShape checks).
static_assert(matches<Shape128>(kF64BlockedShapes[0]), "planner row 0 is the 128 x 128 shape");
static_assert(matches<Shape64>(kF64BlockedShapes[1]), "planner row 1 is the 64 x 64 shape");

// Bytes of the split-K partial sums: `splits` doubles per element of C.
size_t f64_blocked_workspace(const GemmProblem& p, const KernelPlan& plan) {
  return split_workspace<double>(p, plan);
}

void launch_f64_blocked(const GemmProblem& p, const KernelPlan& plan, void* workspace,
                        void* stream) {
  launch_by_tile<Shape128, Shape64>(kF64BlockedShapes, p, plan, workspace, stream);
}

}  // namespace tiledmm
