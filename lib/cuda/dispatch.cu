// Choosing a kernel for a shape, and running it.
//
// AUTO runs BLOCKED, the fastest kernel at every shape measured on the H100 (see
// BENCHMARKS.md), with its tile and split-K factor chosen by plan_blocked() from
// the shape and the number of SMs.
#include <initializer_list>
#include <string>

#include "kernel_common.cuh"
#include "kernels.hpp"

namespace tiledmm {
namespace {

bool one_of(int v, std::initializer_list<int> allowed) {
  for (int a : allowed)
    if (v == a) return true;
  return false;
}

void require_tile(bool ok, const char* algorithm, const char* allowed, int tile) {
  require(ok, Status::NotSupported,
          std::string("tile size ") + std::to_string(tile) + " is not available for " +
              algorithm + " (" + allowed + ")");
}

KernelConfig blocked_config(const GemmProblem& p, int multiprocessors, int forced_tile) {
  const BlockedPlan plan = plan_blocked(p, multiprocessors, forced_tile);
  return {Algorithm::Blocked, plan.tile, 1, plan.splits};
}

}  // namespace

KernelConfig choose_config(const GemmProblem& p, const Settings& s, int multiprocessors) {
  const int tile = s.tile_size;
  switch (s.algorithm) {
    case Algorithm::Auto:  // the fastest kernel; the tile and coarsening settings are ignored
      return blocked_config(p, multiprocessors, 0);
    case Algorithm::Naive:
      require_tile(one_of(tile, {0, 8, 16, 32}), "NAIVE", "8, 16, 32", tile);
      return {Algorithm::Naive, tile ? tile : 16, 1};
    case Algorithm::Tiled:
      require_tile(one_of(tile, {0, 8, 16, 32}), "TILED", "8, 16, 32", tile);
      return {Algorithm::Tiled, tile ? tile : 32, 1};
    case Algorithm::Coarsened:
      require_tile(one_of(tile, {0, 8, 16, 32}), "COARSENED", "8, 16, 32", tile);
      return {Algorithm::Coarsened, tile ? tile : 32, s.coarsening ? s.coarsening : 2};
    case Algorithm::Blocked:
      require_tile(one_of(tile, {0, 64, 128, 256}), "BLOCKED", "64, 128, 256", tile);
      return blocked_config(p, multiprocessors, tile);
  }
  throw Error(Status::InvalidValue, "unknown algorithm");
}

size_t workspace_elements(const KernelConfig& config, const GemmProblem& p) {
  if (config.algorithm != Algorithm::Blocked || is_scale_only(p)) return 0;
  return blocked_workspace(p, {config.tile_size, config.splits});
}

void launch_gemm(const KernelConfig& config, const GemmProblem& p, float* workspace,
                 cudaStream_t stream) {
  if (is_scale_only(p)) {
    launch_scale(p, stream);
    return;
  }
  switch (config.algorithm) {
    case Algorithm::Naive: launch_naive(p, config.tile_size, stream); return;
    case Algorithm::Tiled: launch_tiled(p, config.tile_size, stream); return;
    case Algorithm::Coarsened:
      launch_coarsened(p, config.tile_size, config.coarsening, stream);
      return;
    case Algorithm::Blocked:
      launch_blocked(p, {config.tile_size, config.splits}, workspace, stream);
      return;
    default: break;
  }
  throw Error(Status::Internal, "launch_gemm: unresolved algorithm");
}

void check_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  const Status status =
      err == cudaErrorMemoryAllocation ? Status::OutOfMemory : Status::Cuda;
  throw Error(status, std::string(what) + ": " + cudaGetErrorName(err) + ": " +
                          cudaGetErrorString(err));
}

}  // namespace tiledmm
