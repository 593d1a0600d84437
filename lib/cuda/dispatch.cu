// Choosing a kernel for a shape, and running it.
//
// AUTO runs BLOCKED, the fastest kernel at every shape measured on the H100 (see
// BENCHMARKS.md), with its tile and split-K factor chosen by plan_blocked() from
// the shape and the number of SMs.
#include <atomic>
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
  require(ok, Status::NotSupported, "tile size ", tile, " is not available for ", algorithm,
          " (", allowed, ")");
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

const char* kernel_name(const KernelConfig& c, const GemmProblem& p) {
  if (is_empty(p)) return "none";
  if (is_scale_only(p)) return "scale";
  const int t = c.tile_size;
  const int i = t == 8 ? 0 : t == 16 ? 1 : 2;
  switch (c.algorithm) {
    case Algorithm::Naive: {
      static const char* const names[3] = {"naive_8", "naive_16", "naive_32"};
      return names[i];
    }
    case Algorithm::Tiled: {
      static const char* const names[3] = {"tiled_8", "tiled_16", "tiled_32"};
      return names[i];
    }
    case Algorithm::Coarsened: {
      static const char* const names[3][3] = {
          {"coarsened_8_x1", "coarsened_8_x2", "coarsened_8_x4"},
          {"coarsened_16_x1", "coarsened_16_x2", "coarsened_16_x4"},
          {"coarsened_32_x1", "coarsened_32_x2", "coarsened_32_x4"}};
      return names[i][c.coarsening == 1 ? 0 : c.coarsening == 2 ? 1 : 2];
    }
    case Algorithm::Blocked:
      return t == 64 ? "blocked_64x64" : t == 128 ? "blocked_128x128" : "blocked_128x256";
    default: break;
  }
  return "unknown";
}

namespace {

// Errors after which the CUDA context of the current device is unusable for the rest
// of the process (CUDA's "sticky" errors), and the first one seen per device.
bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

constexpr int kMaxDevices = 64;
std::atomic<const char*> g_lost[kMaxDevices];  // cudaGetErrorName of the first sticky error

}  // namespace

void check_context(int device) {
  const char* lost =
      device >= 0 && device < kMaxDevices ? g_lost[device].load() : nullptr;
  if (lost == nullptr) return;
  fail(Status::Cuda, "the CUDA context of device ", device, " was lost to an earlier error (",
       lost, "); no call can use that device again in this process: start a new process");
}

void check_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  if (is_sticky(err)) {
    int device = -1;
    if (cudaGetDevice(&device) == cudaSuccess && device >= 0 && device < kMaxDevices) {
      const char* expected = nullptr;
      g_lost[device].compare_exchange_strong(expected, cudaGetErrorName(err));
    }
    fail(Status::Cuda, what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err),
         " (the CUDA context of this device is lost: every later call on it fails; start a "
         "new process)");
  }
  const Status status = err == cudaErrorMemoryAllocation ? Status::OutOfMemory : Status::Cuda;
  fail(status, what, ": ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

}  // namespace tiledmm
