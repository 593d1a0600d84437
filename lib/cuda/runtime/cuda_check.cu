// The CUDA error rules (cuda_check.hpp): a failed call becomes an Error, and the first
// sticky error of each device is remembered for check_context().
#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/error.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace tiledmm {
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
  const char* lost = device >= 0 && device < kMaxDevices ? g_lost[device].load() : nullptr;
  if (lost == nullptr) return;
  fail(Status::Cuda, "the CUDA context of device ", device, " was lost to an earlier error (", lost,
       "); no call can use that device again in this process: start a new process");
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

namespace {

struct OptIn {
  const void* kernel;
  int device, bytes;
  bool carveout;
};

// Never destroyed (a static destructor would run after the CUDA runtime's); a few dozen
// kernels at most, each per device.
std::mutex& opt_in_mutex() {
  static std::mutex* mutex = new std::mutex;
  return *mutex;
}
std::vector<OptIn>& opt_ins() {
  static auto* done = new std::vector<OptIn>;
  return *done;
}

}  // namespace

void forget_shared_memory_opt_ins(int device) {
  std::lock_guard<std::mutex> lock(opt_in_mutex());
  std::vector<OptIn>& done = opt_ins();
  done.erase(
      std::remove_if(done.begin(), done.end(), [&](const OptIn& d) { return d.device == device; }),
      done.end());
}

void opt_in_shared_memory(const void* kernel, int bytes, bool max_carveout, const char* what) {
  std::vector<OptIn>* done = &opt_ins();
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> lock(opt_in_mutex());
  OptIn* entry = nullptr;
  for (OptIn& d : *done)
    if (d.kernel == kernel && d.device == device) entry = &d;
  if (entry != nullptr && entry->bytes >= bytes && (entry->carveout || !max_carveout)) return;
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
             what);
  if (max_carveout) {
    check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared),
               what);
  }
  if (entry == nullptr) {
    done->push_back(OptIn{kernel, device, bytes, max_carveout});
  } else {
    entry->bytes = std::max(entry->bytes, bytes);
    entry->carveout = entry->carveout || max_carveout;
  }
}

}  // namespace tiledmm
