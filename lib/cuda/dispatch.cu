// Choosing a kernel for a shape, and running it.
//
// AUTO's table comes from the H100 measurements in BENCHMARKS.md: the coarsened
// kernel with 32 x 32 tiles is the fastest of the classic ladder once C has enough
// tiles to fill the GPU; for small C, smaller tiles give more blocks and win.
#include "kernels.hpp"

namespace tiledmm {
namespace {

KernelConfig auto_config(const GemmProblem& p) {
  const double outputs = double(p.m) * double(p.n);
  if (outputs < 512.0 * 512.0) return {Algorithm::Tiled, 16, 1};
  return {Algorithm::Coarsened, 32, 2};
}

}  // namespace

KernelConfig choose_config(const GemmProblem& p, const Settings& s) {
  switch (s.algorithm) {
    case Algorithm::Auto:
      return auto_config(p);
    case Algorithm::Naive:
      return {Algorithm::Naive, s.tile_size ? s.tile_size : 16, 1};
    case Algorithm::Tiled:
      return {Algorithm::Tiled, s.tile_size ? s.tile_size : 32, 1};
    case Algorithm::Coarsened:
      return {Algorithm::Coarsened, s.tile_size ? s.tile_size : 32,
              s.coarsening ? s.coarsening : 2};
    case Algorithm::Blocked:
      break;
  }
  throw Error(Status::NotSupported, "this algorithm has no CUDA kernel in this build");
}

void launch_gemm(const KernelConfig& config, const GemmProblem& p, cudaStream_t stream) {
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
