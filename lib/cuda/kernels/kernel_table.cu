// The CUDA rows of the kernel registry (lib/registry/kernel_registry.hpp): every CUDA kernel,
// what selects it, the compute capabilities it runs on and its launcher. A new
// kernel is its own file, its launcher's declaration and one row here.
#include "cuda/kernels/kernels.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {

// Launchers, each defined in its kernel's file.
void launch_naive(const GemmProblem&, const KernelPlan&, float*, void*);
void launch_tiled(const GemmProblem&, const KernelPlan&, float*, void*);
void launch_coarsened(const GemmProblem&, const KernelPlan&, float*, void*);
void launch_blocked(const GemmProblem&, const KernelPlan&, float*, void*);
size_t blocked_workspace(const GemmProblem&, const KernelPlan&);
void launch_tf32_mma(const GemmProblem&, const KernelPlan&, float*, void*);
void launch_tf32x3_mma(const GemmProblem&, const KernelPlan&, float*, void*);
#if TILEDMM_WITH_SM90A
void launch_tf32_wgmma(const GemmProblem&, const KernelPlan&, float*, void*);
size_t tf32_wgmma_workspace(const GemmProblem&, const KernelPlan&);
void plan_tf32_wgmma_tail(const GemmProblem&, const DeviceProfile&, KernelPlan&);
bool tf32_wgmma_available();
void launch_tf32x3_wgmma(const GemmProblem&, const KernelPlan&, float*, void*);
size_t tf32x3_wgmma_workspace(const GemmProblem&, const KernelPlan&);
void plan_tf32x3_wgmma_tail(const GemmProblem&, const DeviceProfile&, KernelPlan&);
#endif

namespace {

constexpr int kAnyCc = 999;  // no upper bound
constexpr BackendKind kCuda = BackendKind::Cuda;
constexpr MathMode kFp32 = MathMode::Fp32;  // strict: runs under every math mode

// clang-format off
const KernelEntry kCudaKernels[] = {
  // name, description, backend, algorithm, math mode, tile, coarsening, outputs/thread, cc range, default, launcher, workspace[, available, last-wave split]
  {"naive_8", "one thread per element of C, 8 x 8 blocks", kCuda, Algorithm::Naive, kFp32, 8, 0, 0, 50, kAnyCc, false, launch_naive, nullptr},
  {"naive_16", "one thread per element of C, 16 x 16 blocks", kCuda, Algorithm::Naive, kFp32, 16, 0, 0, 50, kAnyCc, true, launch_naive, nullptr},
  {"naive_32", "one thread per element of C, 32 x 32 blocks", kCuda, Algorithm::Naive, kFp32, 32, 0, 0, 50, kAnyCc, false, launch_naive, nullptr},
  {"tiled_8", "shared-memory tiles of 8 x 8", kCuda, Algorithm::Tiled, kFp32, 8, 0, 0, 50, kAnyCc, false, launch_tiled, nullptr},
  {"tiled_16", "shared-memory tiles of 16 x 16", kCuda, Algorithm::Tiled, kFp32, 16, 0, 0, 50, kAnyCc, false, launch_tiled, nullptr},
  {"tiled_32", "shared-memory tiles of 32 x 32", kCuda, Algorithm::Tiled, kFp32, 32, 0, 0, 50, kAnyCc, true, launch_tiled, nullptr},
  {"coarsened_8_x1", "8 x 8 tiles, 1 output per thread", kCuda, Algorithm::Coarsened, kFp32, 8, 1, 1, 50, kAnyCc, false, launch_coarsened, nullptr},
  {"coarsened_8_x2", "8 x 8 tiles, 2 outputs per thread", kCuda, Algorithm::Coarsened, kFp32, 8, 2, 2, 50, kAnyCc, false, launch_coarsened, nullptr},
  {"coarsened_8_x4", "8 x 8 tiles, 4 outputs per thread", kCuda, Algorithm::Coarsened, kFp32, 8, 4, 4, 50, kAnyCc, false, launch_coarsened, nullptr},
  {"coarsened_16_x1", "16 x 16 tiles, 1 output per thread", kCuda, Algorithm::Coarsened, kFp32, 16, 1, 1, 50, kAnyCc, false, launch_coarsened, nullptr},
  {"coarsened_16_x2", "16 x 16 tiles, 2 outputs per thread", kCuda, Algorithm::Coarsened, kFp32, 16, 2, 2, 50, kAnyCc, false, launch_coarsened, nullptr},
  {"coarsened_16_x4", "16 x 16 tiles, 4 outputs per thread", kCuda, Algorithm::Coarsened, kFp32, 16, 4, 4, 50, kAnyCc, false, launch_coarsened, nullptr},
  {"coarsened_32_x1", "32 x 32 tiles, 1 output per thread", kCuda, Algorithm::Coarsened, kFp32, 32, 1, 1, 50, kAnyCc, false, launch_coarsened, nullptr},
  {"coarsened_32_x2", "32 x 32 tiles, 2 outputs per thread", kCuda, Algorithm::Coarsened, kFp32, 32, 2, 2, 50, kAnyCc, true, launch_coarsened, nullptr},
  {"coarsened_32_x4", "32 x 32 tiles, 4 outputs per thread", kCuda, Algorithm::Coarsened, kFp32, 32, 4, 4, 50, kAnyCc, false, launch_coarsened, nullptr},
  {"blocked_64x64", "register-blocked strict FP32, 64 x 64 tile, 8 x 8 per thread, split-K", kCuda, Algorithm::Blocked, kFp32, 64, 0, 64, 50, kAnyCc, false, launch_blocked, blocked_workspace},
  {"blocked_128x128", "register-blocked strict FP32, 128 x 128 tile, 8 x 8 per thread, split-K", kCuda, Algorithm::Blocked, kFp32, 128, 0, 64, 50, kAnyCc, false, launch_blocked, blocked_workspace},
  {"blocked_128x256", "register-blocked strict FP32, 128 x 256 tile, 16 x 8 per thread, split-K", kCuda, Algorithm::Blocked, kFp32, 256, 0, 128, 50, kAnyCc, false, launch_blocked, blocked_workspace},
  // Tensor cores: AUTO and BLOCKED (tile 0: plan_tf32's choice, or the row's tile) when the math mode allows TF32.
  // Hopper first: where its sm_90a code loaded, it runs instead of the mma.sync row of its tile.
#if TILEDMM_WITH_SM90A
  {"tf32_wgmma_128x256", "TF32 tensor cores on Hopper (wgmma m64n256k8), FP32 accumulation, 128 x 256 tile, TMA 4-stage pipeline, warp-specialised, 197 KiB shared memory", kCuda, Algorithm::Blocked, MathMode::Tf32, 256, 0, 128, 90, 90, false, launch_tf32_wgmma, tf32_wgmma_workspace, tf32_wgmma_available, plan_tf32_wgmma_tail},
#endif
  {"tf32_mma_128x256", "TF32 tensor cores (mma.sync m16n8k8), FP32 accumulation, 128 x 256 tile, 3-stage cp.async, 162 KiB shared memory, no split-K", kCuda, Algorithm::Blocked, MathMode::Tf32, 256, 0, 128, 80, kAnyCc, false, launch_tf32_mma, nullptr},
  {"tf32_mma_128x128", "TF32 tensor cores (mma.sync m16n8k8), FP32 accumulation, 128 x 128 tile, 4-stage cp.async, 80 KiB shared memory, no split-K", kCuda, Algorithm::Blocked, MathMode::Tf32, 128, 0, 128, 80, kAnyCc, false, launch_tf32_mma, nullptr},
  // FP32 accuracy on tensor cores: AUTO and BLOCKED (tile 0: plan_tf32x3's choice, or the row's tile) when the math mode is FP32_ACCURATE.
#if TILEDMM_WITH_SM90A
  {"tf32x3_wgmma_128x128", "FP32-accurate 3xTF32 on Hopper (wgmma m64n128k8: A and B split into big and 2^11-scaled small parts in the workspace, per-tile sums added in FP32 with Fast2Sum), 128 x 128 tile, TMA 3-stage pipeline, warp-specialised, 193 KiB shared memory", kCuda, Algorithm::Blocked, MathMode::Fp32Accurate, 128, 0, 64, 90, 90, false, launch_tf32x3_wgmma, tf32x3_wgmma_workspace, tf32_wgmma_available, plan_tf32x3_wgmma_tail},
#endif
  {"tf32x3_mma_128x64", "FP32-accurate 3xTF32 on tensor cores (mma.sync m16n8k8: big and 2^11-scaled small parts, per-tile sums added in FP32 with Fast2Sum), 128 x 64 tile, 3-stage cp.async, 81 KiB shared memory, no split-K", kCuda, Algorithm::Blocked, MathMode::Fp32Accurate, 128, 0, 32, 80, kAnyCc, false, launch_tf32x3_mma, nullptr},
  {"tf32x3_mma_64x64", "FP32-accurate 3xTF32 on tensor cores (mma.sync m16n8k8: big and 2^11-scaled small parts, per-tile sums added in FP32 with Fast2Sum), 64 x 64 tile, 4-stage cp.async, 72 KiB shared memory, no split-K", kCuda, Algorithm::Blocked, MathMode::Fp32Accurate, 64, 0, 32, 80, kAnyCc, false, launch_tf32x3_mma, nullptr},
};
// clang-format on

}  // namespace

KernelTable cuda_kernel_table() {
  return {kCudaKernels, sizeof kCudaKernels / sizeof kCudaKernels[0]};
}

}  // namespace tiledmm
