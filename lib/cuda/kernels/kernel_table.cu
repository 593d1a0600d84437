// The CUDA rows of the kernel registry (lib/registry/kernel_registry.hpp): every CUDA kernel,
// what selects it, the compute capabilities it runs on and its launcher. A new
// kernel is its own file, its launcher's declaration and one row here.
#include "cuda/kernels/kernels.hpp"
#include "plan/blocked_shapes.hpp"
#include "plan/f64_shapes.hpp"
#include "plan/tf32_shapes.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {

// Launchers, each defined in its kernel's file.
void launch_naive(const GemmProblem&, const KernelPlan&, void*, void*);
void launch_tiled(const GemmProblem&, const KernelPlan&, void*, void*);
void launch_coarsened(const GemmProblem&, const KernelPlan&, void*, void*);
void launch_blocked(const GemmProblem&, const KernelPlan&, void*, void*);
size_t blocked_workspace(const GemmProblem&, const KernelPlan&);
void launch_tf32_mma(const GemmProblem&, const KernelPlan&, void*, void*);
void launch_tf32x3_mma(const GemmProblem&, const KernelPlan&, void*, void*);
void launch_f64_blocked(const GemmProblem&, const KernelPlan&, void*, void*);
size_t f64_blocked_workspace(const GemmProblem&, const KernelPlan&);
void launch_thin(const GemmProblem&, const KernelPlan&, void*, void*);
size_t thin_workspace(const GemmProblem&, const KernelPlan&);
void launch_small(const GemmProblem&, const KernelPlan&, void*, void*);
void launch_f64_mma(const GemmProblem&, const KernelPlan&, void*, void*);
size_t f64_mma_workspace(const GemmProblem&, const KernelPlan&);
void plan_f64_mma_tail(const GemmProblem&, const DeviceProfile&, KernelPlan&);
#if TILEDMM_WITH_SM90A
void launch_tf32_wgmma(const GemmProblem&, const KernelPlan&, void*, void*);
size_t tf32_wgmma_workspace(const GemmProblem&, const KernelPlan&);
void plan_tf32_wgmma_tail(const GemmProblem&, const DeviceProfile&, KernelPlan&);
bool tf32_wgmma_available();
bool tf32_wgmma_batches(const GemmProblem&);
void launch_tf32x3_wgmma(const GemmProblem&, const KernelPlan&, void*, void*);
size_t tf32x3_wgmma_workspace(const GemmProblem&, const KernelPlan&);
void plan_tf32x3_wgmma_tail(const GemmProblem&, const DeviceProfile&, KernelPlan&);
#endif

namespace {

constexpr int kAnyCc = 999;  // no upper bound

// A CUDA row: strict FP32 from compute capability 5.0 up unless it says otherwise.
constexpr KernelRow cuda_row(const char* name, const char* description) {
  return kernel_row(BackendKind::Cuda, name, description).min_cc(50).max_cc(kAnyCc);
}

constexpr KernelEntry kCudaKernels[] = {
    cuda_row("naive_8", "one thread per element of C, 8 x 8 blocks")
        .algorithm(Algorithm::Naive)
        .tile(8)
        .launch(launch_naive),
    cuda_row("naive_16", "one thread per element of C, 16 x 16 blocks")
        .algorithm(Algorithm::Naive)
        .tile(16)
        .is_default()
        .launch(launch_naive),
    cuda_row("naive_32", "one thread per element of C, 32 x 32 blocks")
        .algorithm(Algorithm::Naive)
        .tile(32)
        .launch(launch_naive),
    cuda_row("tiled_8", "shared-memory tiles of 8 x 8")
        .algorithm(Algorithm::Tiled)
        .tile(8)
        .launch(launch_tiled)
        .batched(),
    cuda_row("tiled_16", "shared-memory tiles of 16 x 16")
        .algorithm(Algorithm::Tiled)
        .tile(16)
        .launch(launch_tiled)
        .batched(),
    cuda_row("tiled_32", "shared-memory tiles of 32 x 32")
        .algorithm(Algorithm::Tiled)
        .tile(32)
        .is_default()
        .launch(launch_tiled)
        .batched(),
    cuda_row("coarsened_8_x1", "8 x 8 tiles, 1 output per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(8)
        .coarsening(1)
        .outputs_per_thread(1)
        .launch(launch_coarsened),
    cuda_row("coarsened_8_x2", "8 x 8 tiles, 2 outputs per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(8)
        .coarsening(2)
        .outputs_per_thread(2)
        .launch(launch_coarsened),
    cuda_row("coarsened_8_x4", "8 x 8 tiles, 4 outputs per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(8)
        .coarsening(4)
        .outputs_per_thread(4)
        .launch(launch_coarsened),
    cuda_row("coarsened_16_x1", "16 x 16 tiles, 1 output per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(16)
        .coarsening(1)
        .outputs_per_thread(1)
        .launch(launch_coarsened),
    cuda_row("coarsened_16_x2", "16 x 16 tiles, 2 outputs per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(16)
        .coarsening(2)
        .outputs_per_thread(2)
        .launch(launch_coarsened),
    cuda_row("coarsened_16_x4", "16 x 16 tiles, 4 outputs per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(16)
        .coarsening(4)
        .outputs_per_thread(4)
        .launch(launch_coarsened),
    cuda_row("coarsened_32_x1", "32 x 32 tiles, 1 output per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(32)
        .coarsening(1)
        .outputs_per_thread(1)
        .launch(launch_coarsened),
    cuda_row("coarsened_32_x2", "32 x 32 tiles, 2 outputs per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(32)
        .coarsening(2)
        .outputs_per_thread(2)
        .is_default()
        .launch(launch_coarsened),
    cuda_row("coarsened_32_x4", "32 x 32 tiles, 4 outputs per thread")
        .algorithm(Algorithm::Coarsened)
        .tile(32)
        .coarsening(4)
        .outputs_per_thread(4)
        .launch(launch_coarsened),
    cuda_row("blocked_64x64",
             "register-blocked strict FP32, 64 x 64 tile, 8 x 8 per thread, split-K")
        .algorithm(Algorithm::Blocked)
        .shape(kBlocked64x64)
        .launch(launch_blocked)
        .workspace(blocked_workspace)
        .batched(),
    cuda_row("blocked_128x128",
             "register-blocked strict FP32, 128 x 128 tile, 8 x 8 per thread, split-K")
        .algorithm(Algorithm::Blocked)
        .shape(kBlocked128x128)
        .launch(launch_blocked)
        .workspace(blocked_workspace)
        .batched(),
    cuda_row("blocked_128x256",
             "register-blocked strict FP32, 128 x 256 tile, 16 x 8 per thread, split-K")
        .algorithm(Algorithm::Blocked)
        .shape(kBlocked128x256)
        .launch(launch_blocked)
        .workspace(blocked_workspace)
        .batched(),
// Tensor cores: AUTO and BLOCKED (tile 0: plan_tf32's choice, or the row's tile) when
// the math mode allows TF32. Hopper first: where its sm_90a code loaded, it runs
// instead of the mma.sync row of its tile, a strided batch too where the copy engine
// reads its products as they lie (tf32_wgmma_batches; other batches take the batched
// mma.sync row).
#if TILEDMM_WITH_SM90A
    cuda_row("tf32_wgmma_128x256",
             "TF32 tensor cores on Hopper (wgmma m64n256k8), FP32 accumulation, 128 x 256 tile, "
             "TMA 4-stage pipeline, warp-specialised, 197 KiB shared memory")
        .algorithm(Algorithm::Blocked)
        .math_mode(MathMode::Tf32)
        .shape(kTf32Wgmma128x256)
        .min_cc(90)
        .max_cc(90)
        .launch(launch_tf32_wgmma)
        .workspace(tf32_wgmma_workspace)
        .available(tf32_wgmma_available)
        .plan_tail(plan_tf32_wgmma_tail)
        .batched(tf32_wgmma_batches),
#endif
    cuda_row("tf32_mma_128x256",
             "TF32 tensor cores (mma.sync m16n8k8), FP32 accumulation, 128 x 256 tile, "
             "3-stage cp.async, 162 KiB shared memory, no split-K")
        .algorithm(Algorithm::Blocked)
        .math_mode(MathMode::Tf32)
        .shape(kTf32Mma128x256)
        .min_cc(80)
        .launch(launch_tf32_mma)
        .batched(),
    cuda_row("tf32_mma_128x128",
             "TF32 tensor cores (mma.sync m16n8k8), FP32 accumulation, 128 x 128 tile, "
             "4-stage cp.async, 80 KiB shared memory, no split-K")
        .algorithm(Algorithm::Blocked)
        .math_mode(MathMode::Tf32)
        .shape(kTf32Mma128x128)
        .min_cc(80)
        .launch(launch_tf32_mma)
        .batched(),
    cuda_row("tf32_mma_64x64",
             "TF32 tensor cores (mma.sync m16n8k8), FP32 accumulation, 64 x 64 tile for small "
             "products, 4-stage cp.async, 72 KiB shared memory, no split-K")
        .algorithm(Algorithm::Blocked)
        .math_mode(MathMode::Tf32)
        .shape(kTf32Mma64x64)
        .min_cc(80)
        .launch(launch_tf32_mma)
        .batched(),
// FP32 accuracy on tensor cores: AUTO and BLOCKED (tile 0: plan_tf32x3's choice, or the
// row's tile) when the math mode is FP32_ACCURATE. The Hopper row runs a strided batch
// in groups of products packed side by side (tf32x3_batch_group).
#if TILEDMM_WITH_SM90A
    cuda_row("tf32x3_wgmma_128x128",
             "FP32-accurate 3xTF32 on Hopper (wgmma m64n128k8: A and B split into big and "
             "2^11-scaled small parts in the workspace, per-tile sums added in FP32 with "
             "Fast2Sum), 128 x 128 tile, TMA 3-stage pipeline, warp-specialised, 193 KiB "
             "shared memory")
        .algorithm(Algorithm::Blocked)
        .math_mode(MathMode::Fp32Accurate)
        .shape(kTf32x3Wgmma128x128)
        .min_cc(90)
        .max_cc(90)
        .launch(launch_tf32x3_wgmma)
        .workspace(tf32x3_wgmma_workspace)
        .available(tf32_wgmma_available)
        .plan_tail(plan_tf32x3_wgmma_tail)
        .batched(),
#endif
    cuda_row("tf32x3_mma_128x64",
             "FP32-accurate 3xTF32 on tensor cores (mma.sync m16n8k8: big and 2^11-scaled small "
             "parts, per-tile sums added in FP32 with Fast2Sum), 128 x 64 tile, 3-stage "
             "cp.async, 81 KiB shared memory, no split-K")
        .algorithm(Algorithm::Blocked)
        .math_mode(MathMode::Fp32Accurate)
        .shape(kTf32x3Mma128x64)
        .min_cc(80)
        .launch(launch_tf32x3_mma)
        .batched(),
    cuda_row("tf32x3_mma_64x64",
             "FP32-accurate 3xTF32 on tensor cores (mma.sync m16n8k8: big and 2^11-scaled small "
             "parts, per-tile sums added in FP32 with Fast2Sum), 64 x 64 tile, 4-stage "
             "cp.async, 72 KiB shared memory, no split-K")
        .algorithm(Algorithm::Blocked)
        .math_mode(MathMode::Fp32Accurate)
        .shape(kTf32x3Mma64x64)
        .min_cc(80)
        .launch(launch_tf32x3_mma)
        .batched(),
    // Double precision: the ladder's kernels over double (the same templates as the float
    // rows above), with their twins' defaults. After every float row, so that a float row's
    // index does not move (a 1.1-sized tmm_kernel_info lists the float rows alone).
    // Strict in the call's precision (MathMode::Fp32): TF32 and FP32_ACCURATE never pick
    // a double row's arithmetic.
    cuda_row("f64_naive_8", "one thread per element of C, 8 x 8 blocks, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Naive)
        .tile(8)
        .launch(launch_naive),
    cuda_row("f64_naive_16", "one thread per element of C, 16 x 16 blocks, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Naive)
        .tile(16)
        .is_default()
        .launch(launch_naive),
    cuda_row("f64_naive_32", "one thread per element of C, 32 x 32 blocks, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Naive)
        .tile(32)
        .launch(launch_naive),
    cuda_row("f64_tiled_8", "shared-memory tiles of 8 x 8, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Tiled)
        .tile(8)
        .launch(launch_tiled)
        .batched(),
    cuda_row("f64_tiled_16", "shared-memory tiles of 16 x 16, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Tiled)
        .tile(16)
        .launch(launch_tiled)
        .batched(),
    cuda_row("f64_tiled_32", "shared-memory tiles of 32 x 32, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Tiled)
        .tile(32)
        .is_default()
        .launch(launch_tiled)
        .batched(),
    cuda_row("f64_coarsened_8_x1", "8 x 8 tiles, 1 output per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(8)
        .coarsening(1)
        .outputs_per_thread(1)
        .launch(launch_coarsened),
    cuda_row("f64_coarsened_8_x2", "8 x 8 tiles, 2 outputs per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(8)
        .coarsening(2)
        .outputs_per_thread(2)
        .launch(launch_coarsened),
    cuda_row("f64_coarsened_8_x4", "8 x 8 tiles, 4 outputs per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(8)
        .coarsening(4)
        .outputs_per_thread(4)
        .launch(launch_coarsened),
    cuda_row("f64_coarsened_16_x1", "16 x 16 tiles, 1 output per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(16)
        .coarsening(1)
        .outputs_per_thread(1)
        .launch(launch_coarsened),
    cuda_row("f64_coarsened_16_x2", "16 x 16 tiles, 2 outputs per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(16)
        .coarsening(2)
        .outputs_per_thread(2)
        .launch(launch_coarsened),
    cuda_row("f64_coarsened_16_x4", "16 x 16 tiles, 4 outputs per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(16)
        .coarsening(4)
        .outputs_per_thread(4)
        .launch(launch_coarsened),
    cuda_row("f64_coarsened_32_x1", "32 x 32 tiles, 1 output per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(32)
        .coarsening(1)
        .outputs_per_thread(1)
        .launch(launch_coarsened),
    cuda_row("f64_coarsened_32_x2", "32 x 32 tiles, 2 outputs per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(32)
        .coarsening(2)
        .outputs_per_thread(2)
        .is_default()
        .launch(launch_coarsened),
    cuda_row("f64_coarsened_32_x4", "32 x 32 tiles, 4 outputs per thread, in double")
        .precision(Precision::F64)
        .algorithm(Algorithm::Coarsened)
        .tile(32)
        .coarsening(4)
        .outputs_per_thread(4)
        .launch(launch_coarsened),
    // FP64 tensor cores: AUTO and BLOCKED in double (tile 0: plan_f64's choice) where DMMA
    // pays (DeviceProfile::dmma_pays: cc 8.0, 9.0 and later). They share tiles 128 and 64
    // with the CUDA-core rows below: dispatch picks by device, never find_kernel's first.
    cuda_row("f64_mma_128x128",
             "FP64 tensor cores (mma.sync m16n8k8 .f64; two m8n8k4 per 16 x 8 x 4 before "
             "sm_90), strict FP64, 128 x 128 tile, 8 warps, one block per SM, 4-stage "
             "cp.async, 160 KiB shared memory, split-K of a partial last wave or of one wave "
             "over deep k")
        .precision(Precision::F64)
        .algorithm(Algorithm::Blocked)
        .shape(kF64Mma128x128)
        .min_cc(80)
        .launch(launch_f64_mma)
        .workspace(f64_mma_workspace)
        .plan_tail(plan_f64_mma_tail)
        .batched(),
    cuda_row("f64_mma_128x64",
             "FP64 tensor cores (mma.sync m16n8k8 .f64; two m8n8k4 per 16 x 8 x 4 before "
             "sm_90), strict FP64, 128 x 64 tile, 3-stage cp.async, 90 KiB shared memory, "
             "split-K of a partial last wave or of one wave over deep k")
        .precision(Precision::F64)
        .algorithm(Algorithm::Blocked)
        .shape(kF64Mma128x64)
        .min_cc(80)
        .is_default()
        .launch(launch_f64_mma)
        .workspace(f64_mma_workspace)
        .plan_tail(plan_f64_mma_tail)
        .batched(),
    cuda_row("f64_mma_64x64",
             "FP64 tensor cores (mma.sync m16n8k8 .f64; two m8n8k4 per 16 x 8 x 4 before "
             "sm_90), strict FP64, 64 x 64 tile, 3-stage cp.async, 60 KiB shared memory, "
             "split-K of a partial last wave or of one wave over deep k")
        .precision(Precision::F64)
        .algorithm(Algorithm::Blocked)
        .shape(kF64Mma64x64)
        .min_cc(80)
        .launch(launch_f64_mma)
        .workspace(f64_mma_workspace)
        .plan_tail(plan_f64_mma_tail)
        .batched(),
    // FP64 on the CUDA cores: AUTO and BLOCKED in double (tile 0: plan_f64_blocked's
    // choice) where DMMA does not pay (before cc 8.0; 8.6 and 8.9, where it runs at 1/64
    // of the FP32 rate). No max_cc: they run, and are tested, on every device.
    cuda_row("f64_blocked_128x128",
             "register-blocked strict FP64 on the CUDA cores (fma in double, no tensor cores), "
             "128 x 128 tile, 8 x 8 per thread, depth 8, 33 KiB shared memory, split-K")
        .precision(Precision::F64)
        .algorithm(Algorithm::Blocked)
        .shape(kF64Blocked128x128)
        .launch(launch_f64_blocked)
        .workspace(f64_blocked_workspace)
        .batched(),
    cuda_row("f64_blocked_64x64",
             "register-blocked strict FP64 on the CUDA cores (fma in double, no tensor cores), "
             "64 x 64 tile, 8 x 8 per thread, depth 4, 8.5 KiB shared memory, split-K")
        .precision(Precision::F64)
        .algorithm(Algorithm::Blocked)
        .shape(kF64Blocked64x64)
        .launch(launch_f64_blocked)
        .workspace(f64_blocked_workspace)
        .batched(),
    // Thin products (m or n at most 16): BLOCKED with tile 16, and AUTO and BLOCKED (tile
    // 0) where the planner's thin_pays, in every math mode. Last, so that no row's index
    // moves.
    cuda_row("thin",
             "thin products (m or n <= 16, passes of 16 beyond): strict FP32, the large "
             "operand read once with 16-byte loads along its contiguous direction, split-K "
             "where its tiles are too few for the SMs")
        .algorithm(Algorithm::Blocked)
        .tile(16)
        .launch(launch_thin)
        .workspace(thin_workspace),
    cuda_row("f64_thin",
             "thin products (m or n <= 16, passes of 16 beyond): strict FP64, the large "
             "operand read once with 16-byte loads along its contiguous direction, split-K "
             "where its tiles are too few for the SMs")
        .precision(Precision::F64)
        .algorithm(Algorithm::Blocked)
        .tile(16)
        .launch(launch_thin)
        .workspace(thin_workspace),
    // Strided batches of small products (m and n up to 32): BLOCKED with tile 32, and
    // AUTO where the planner's small_batch_pays. Last, so that no row's index moves.
    cuda_row("small",
             "strided batches of small products (m, n <= 32): strict FP32, a 32 x 32 tile "
             "of C per block of 32 x 4 threads, 8 outputs each, the products side by side")
        .algorithm(Algorithm::Blocked)
        .tile(32)
        .launch(launch_small)
        .batched(),
    cuda_row("f64_small",
             "strided batches of small products (m, n <= 32): strict FP64, a 32 x 32 tile "
             "of C per block of 32 x 4 threads, 8 outputs each, the products side by side")
        .precision(Precision::F64)
        .algorithm(Algorithm::Blocked)
        .tile(32)
        .launch(launch_small)
        .batched(),
};

}  // namespace

KernelTable cuda_kernel_table() {
  return {kCudaKernels, sizeof kCudaKernels / sizeof kCudaKernels[0]};
}

}  // namespace tiledmm
