// Choosing a kernel for a call from the registry's CUDA rows (lib/cuda/kernels/
// kernel_table.cu), with the planner's tile and split (lib/plan/planner.hpp), and
// launching it. The backend and the streamed engine call these; definitions in
// dispatch.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/device_profile.hpp"
#include "core/gemm_problem.hpp"
#include "core/settings.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {

// A concrete kernel choice: the registry row and its plan. Never AUTO.
struct KernelChoice {
  const KernelEntry* kernel;
  KernelPlan plan;
  // A strided batch that runs product by product anyway, each with the single call's
  // kernel and plan, which may be a row that is not batched (batch_leaves_sms_idle: few
  // products over deep k).
  bool by_product = false;
};

// Resolves AUTO and the zero defaults for this shape on `device` through the kernel
// registry and, for BLOCKED, the planner. Throws NotSupported for a tile size the
// algorithm lacks or a kernel the device cannot run.
// For a batch, the choice holds for every product (the least aligned one included).
// With with_workspace false (the streamed path's chunks, which get none), rows that
// would need a workspace for p are passed over. Every input it reads is in
// KernelChoiceCache's key (below): a new one must be added there.
KernelChoice choose_kernel(const GemmProblem& p, const Settings& settings,
                           const DeviceProfile& device, bool with_workspace = true);

// choose_kernel's answers for the last few calls of one handle, most recent first, so
// that a call like a recent one (a loop of small products, deep k over a small C, where
// the planner weighs many splits) skips the planner. A hit is exact: the key holds every
// input choose_kernel reads (keep it so when the planner reads more): the shape,
// transposes, precision, leading dimensions, batch and strides, each pointer's low 8 bits (the
// alignment the rows' rules read), the algorithm settings, the math mode, max_splits,
// the workspace flag and which device profile. A choice that throws is not kept. Not
// thread-safe: one per handle, used under its lock. Allocates nothing.
class KernelChoiceCache {
 public:
  KernelChoice get(const GemmProblem& p, const Settings& settings, const DeviceProfile& device,
                   bool with_workspace = true);
  int64_t hits() const { return hits_; }

 private:
  struct Key {
    const DeviceProfile* device;
    int64_t m, n, k, lda, ldb, ldc, batch, stride_a, stride_b, stride_c;
    uintptr_t a_low, b_low, c_low;
    Precision precision;
    bool trans_a, trans_b, with_workspace;
    Algorithm algorithm;
    int tile_size, coarsening, max_splits;
    MathMode math_mode;
    bool operator==(const Key& o) const;
  };
  static constexpr int kEntries = 4;
  Key keys_[kEntries] = {};
  KernelChoice choices_[kEntries] = {};
  int size_ = 0;
  int64_t hits_ = 0;
};

// The same kernel with k not split (BLOCKED's split-K, a row's last-wave split): what
// runs where the partial sums do not fit.
KernelChoice without_splits(KernelChoice choice);

// Bytes of device workspace the chosen kernel needs (0 for most).
size_t workspace_bytes(const KernelChoice& choice, const GemmProblem& p);

// Runs the chosen kernel (or the scale kernel when A and B take no part); a batch in
// one launch where the row is batched (KernelEntry::batched), else its products one
// after another on `stream`. `workspace` holds at least workspace_bytes() bytes (one
// product's).
void launch_gemm(const KernelChoice& choice, const GemmProblem& p, void* workspace,
                 cudaStream_t stream);

// The name of what `choice` runs for `p`: its kernel, "scale" or "none".
const char* kernel_name(const KernelChoice& choice, const GemmProblem& p);

// The arithmetic of what `choice` runs for `p`: its kernel's mode; Fp32 for "scale"
// and "none".
MathMode math_mode_of(const KernelChoice& choice, const GemmProblem& p);

}  // namespace tiledmm
