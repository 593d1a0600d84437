// The CUDA error rules of the library: every runtime call and launch is checked, and a
// failure becomes an Error (core/error.hpp) with the runtime's name for it; a sticky
// error (one that destroys the device's context) is remembered, so that later calls on
// that device fail at once with a clear message. Definitions: cuda_check.cu.
#pragma once

#include <cuda_runtime.h>

namespace tiledmm {

// Throws Error(Cuda) naming `what` if `err` is not cudaSuccess
// (Error(OutOfMemory) for allocation failures). A sticky error (one that destroys
// the context) is also remembered for the current device: see check_context().
void check_cuda(cudaError_t err, const char* what);

// The calling thread's CUDA error state around a runtime call of ours that may fail.
// Made before the call: it notes whether the caller had left an error pending
// (cudaPeekAtLastError, which clears nothing). After our call failed,
// clear_if_ours() takes our error out of the thread's state, so that it does not
// show in the caller's next cudaGetLastError; an error the caller had left pending
// is never cleared by a call that succeeds, nor taken for ours. (Launches use
// launch_kernel, which gets its own error from the launch itself.)
class LastErrorScope {
 public:
  LastErrorScope() noexcept : caller_pending_(cudaPeekAtLastError() != cudaSuccess) {}
  void clear_if_ours() const noexcept {
    if (!caller_pending_) (void)cudaGetLastError();
  }

 private:
  bool caller_pending_;
};

// Throws Error(Cuda) if an earlier sticky error destroyed `device`'s context in this
// process: every call on that device would fail anyway, with less clear messages.
void check_context(int device);

// Lets `kernel` (a __global__ function) use `bytes` of dynamic shared memory on the
// current device (cudaFuncAttributeMaxDynamicSharedMemorySize), and with max_carveout
// the largest shared memory carveout, once per kernel and device: a later call for the
// same kernel, device and no more bytes makes no runtime call but cudaGetDevice. A
// kernel's attributes belong to its device's context: a handle created after a
// cudaDeviceReset sets them again (forget_shared_memory_opt_ins); a handle used across a
// reset fails anyway. Throws Error(Cuda) naming `what` where the runtime refuses.
void opt_in_shared_memory(const void* kernel, int bytes, bool max_carveout, const char* what);

// Forgets what opt_in_shared_memory set on `device`, so that the next launch of each
// kernel sets it again: a new handle calls it, since its device may have been reset
// (cudaDeviceReset, with no handle alive) since the last one set them.
void forget_shared_memory_opt_ins(int device);

}  // namespace tiledmm
