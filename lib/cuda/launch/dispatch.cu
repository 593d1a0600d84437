// Choosing a kernel for a call from the registry's CUDA rows, and running it.
//
// AUTO runs BLOCKED, the fastest kernel at every shape measured on the H100 (see
// BENCHMARKS.md), with its tile and split-K factor chosen by plan_blocked() from
// the shape and the device's profile.
//
// The math mode is a permission, as cuBLAS's is: with TF32 allowed, AUTO and
// BLOCKED (tile 0, or a tile a TF32 row has) run a TF32 tensor-core row where the
// device can (plan_tf32() picks the tile); with FP32_ACCURATE, likewise a 3xTF32
// row (plan_tf32x3(): tiles 128 and 64); everything else runs the strict FP32 rows,
// always an allowed answer.
//
// A double problem meets only double rows (the registry's precision field), never a
// tensor-core row: the math mode is a permission about FP32 inputs, so it changes
// nothing in a dgemm. Until the FP64 blocked and DMMA kernels land (steps 6 and 7 of
// docs/design/double-precision.md), double has no BLOCKED row: AUTO and BLOCKED run
// the ladder's best row instead (ladder_row_for_f64).
#include <string>

#include "core/error.hpp"
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "cuda/launch/dispatch.hpp"
#include "plan/planner.hpp"

namespace tiledmm {
namespace {

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Naive:
      return "NAIVE";
    case Algorithm::Tiled:
      return "TILED";
    case Algorithm::Coarsened:
      return "COARSENED";
    case Algorithm::Blocked:
      return "BLOCKED";
    default:
      return "AUTO";
  }
}

[[noreturn]] void no_such_tile(Precision precision, Algorithm a, int tile) {
  fail(Status::NotSupported, "tile size ", tile, " is not available for ", algorithm_name(a), " (",
       tiles_of(BackendKind::Cuda, precision, a), ")");
}

// AUTO and BLOCKED in double while double has no BLOCKED row: coarsened, 32 x 32 tiles,
// 4 outputs per thread. It is the fastest of the ladder in float on the H100
// (docs/benchmarks/device-kernels.md), and the reason carries over to double: each
// element of A read from shared memory feeds 4 multiply-adds, and each block loads one
// tile of A for four of B, so it does the most work per load of the ladder's rows. In
// double its 42,240 bytes of shared memory still fit the 48 KiB of a static block. Not
// measured in double yet; the FP64 blocked kernel (step 6) replaces it.
const KernelEntry* ladder_row_for_f64() {
  return find_kernel(BackendKind::Cuda, Precision::F64, Algorithm::Coarsened, 32, 4);
}

// BLOCKED with a tile setting in double: no row of double has one yet.
[[noreturn]] void no_blocked_tile_in_double(int tile) {
  fail(Status::NotSupported, "tile size ", tile,
       " is not available for BLOCKED in double precision (no BLOCKED row in double yet: "
       "BLOCKED with tile 0 and AUTO run f64_coarsened_32_x4; the tiles of double are ",
       tiles_of(BackendKind::Cuda, Precision::F64, Algorithm::Tiled), " for TILED and ",
       tiles_of(BackendKind::Cuda, Precision::F64, Algorithm::Coarsened), " for COARSENED)");
}

// Whether a Hopper row of `mode` (a wgmma kernel, cc 9.0 only) runs here: then the
// planner gives TF32 its wide tile at every size, and FP32_ACCURATE its wgmma tile
// where k is deep (those kernels split k).
bool hopper_row_runs(MathMode mode, const DeviceProfile& device) {
  for (const KernelEntry& k : cuda_kernel_table())
    if (k.math_mode == mode && k.min_cc >= 90 && runs_here(k, device.compute_capability()))
      return true;
  return false;
}

// The tensor-core row the settings allow for BLOCKED (the planner's tile for tile 0),
// if the device runs it; nullptr sends the call to the strict rows. No split-K over
// every tile: a row with a plan_tail hook may split its last wave's tiles (choose_kernel).
const KernelEntry* tensor_core_row(const GemmProblem& p, const Settings& s, int tile,
                                   const DeviceProfile& device, bool with_workspace) {
  // The tensor-core rows take floats; the math mode does not apply to double.
  if (p.precision != Precision::F32 || s.math_mode == MathMode::Fp32) return nullptr;
  // TF32: the TF32 rows; FP32_ACCURATE: the 3xTF32 rows (tf32x3_mma_kernel.cu).
  const int chosen =
      s.math_mode == MathMode::Tf32
          ? plan_tf32(p, device, tile, hopper_row_runs(MathMode::Tf32, device))
          : plan_tf32x3(p, device, tile, with_workspace && hopper_row_runs(s.math_mode, device));
  if (chosen == 0) return nullptr;  // no such tile, or the device cannot hold it
  // The first row of that tile whose code runs here (the Hopper row before mma.sync).
  for (const KernelEntry& k : cuda_kernel_table()) {
    if (k.algorithm != Algorithm::Blocked || k.math_mode != s.math_mode || k.tile != chosen ||
        !runs_here(k, device.compute_capability()))
      continue;
    if (!with_workspace && k.workspace != nullptr && k.workspace(p, KernelPlan{k.tile, 0, 1}) > 0)
      continue;  // the next row of the tile (mma.sync) needs none
    return &k;
  }
  return nullptr;
}

}  // namespace

KernelChoice choose_kernel(const GemmProblem& p, const Settings& s, const DeviceProfile& device,
                           bool with_workspace) {
  // AUTO runs BLOCKED with the planner's tile; the tile and coarsening settings are
  // ignored.
  const Algorithm algorithm = s.algorithm == Algorithm::Auto ? Algorithm::Blocked : s.algorithm;
  const int tile = s.algorithm == Algorithm::Auto ? 0 : s.tile_size;
  KernelChoice choice{nullptr, KernelPlan{}};
  const KernelEntry* tensor_cores = algorithm == Algorithm::Blocked
                                        ? tensor_core_row(p, s, tile, device, with_workspace)
                                        : nullptr;
  if (algorithm == Algorithm::Blocked && p.precision == Precision::F64 &&
      find_kernel(BackendKind::Cuda, p.precision, algorithm, tile, 0) == nullptr) {
    if (tile != 0) no_blocked_tile_in_double(tile);
    choice.kernel = ladder_row_for_f64();
  } else if (tensor_cores != nullptr) {
    choice.kernel = tensor_cores;
    if (with_workspace && tensor_cores->plan_tail != nullptr)
      tensor_cores->plan_tail(p, device, choice.plan);
  } else if (algorithm == Algorithm::Blocked) {
    if (tile != 0 && find_kernel(BackendKind::Cuda, p.precision, algorithm, tile, 0) == nullptr)
      no_such_tile(p.precision, algorithm, tile);
    const BlockedPlan plan = plan_blocked(p, device, tile, s.max_splits > 0 ? s.max_splits : 32);
    choice.kernel = find_kernel(BackendKind::Cuda, p.precision, algorithm, plan.tile, 0);
    choice.plan.splits = plan.splits;
  } else {
    const int coarsening = algorithm == Algorithm::Coarsened ? s.coarsening : 0;
    choice.kernel = find_kernel(BackendKind::Cuda, p.precision, algorithm, tile, coarsening);
    if (choice.kernel == nullptr) no_such_tile(p.precision, algorithm, tile);
  }
  require(choice.kernel != nullptr, Status::Internal, "planner chose a kernel not in the registry");
  require(runs_on(*choice.kernel, device.compute_capability()), Status::NotSupported, "kernel ",
          choice.kernel->name, " does not run on compute capability ", device.cc_major, ".",
          device.cc_minor);
  choice.plan.tile = choice.kernel->tile;
  choice.plan.coarsening = choice.kernel->coarsening;
  return choice;
}

KernelChoice without_splits(KernelChoice choice) {
  choice.plan.splits = 1;
  choice.plan.tail_tiles = 0;
  return choice;
}

size_t workspace_bytes(const KernelChoice& c, const GemmProblem& p) {
  if (is_empty(p) || is_scale_only(p) || c.kernel->workspace == nullptr) return 0;
  return c.kernel->workspace(p, c.plan);
}

void launch_gemm(const KernelChoice& c, const GemmProblem& p, void* workspace,
                 cudaStream_t stream) {
  if (is_scale_only(p)) {
    launch_scale(p, stream);
    return;
  }
  c.kernel->launch(p, c.plan, workspace, stream);
}

const char* kernel_name(const KernelChoice& c, const GemmProblem& p) {
  if (is_empty(p)) return "none";
  if (is_scale_only(p)) return "scale";
  return c.kernel->name;
}

MathMode math_mode_of(const KernelChoice& c, const GemmProblem& p) {
  return is_empty(p) || is_scale_only(p) ? MathMode::Fp32 : c.kernel->math_mode;
}

}  // namespace tiledmm
