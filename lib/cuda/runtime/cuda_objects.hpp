// RAII wrappers of the CUDA runtime's objects that the backend and the streamed
// engine share: the current device, streams, events and pinned host memory. Each
// checks its creation and never throws from its destructor.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <exception>

#include "core/error.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace tiledmm {

// Makes `device` current for the lifetime of the guard, so that handles on
// different devices can be used from one thread. Where it was current already, the
// guard sets nothing, then or after (a runtime call saved on every entry point, and a
// caller's own context, made current with the driver API, is left as it was).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    changed_ = previous_ != device;
    if (changed_) check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceGuard() {
    if (changed_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

// Sets this thread's stream capture mode to relaxed for the lifetime of the guard, and
// then back to what it was. A CUDA graph capture in global mode, on any thread, makes
// the runtime refuse "unsafe" calls (cudaMalloc, cudaFree, cudaHostAlloc, host waits)
// from every thread, and invalidates that capture. The library makes such calls only
// on work it does not capture (growing its buffers, host-memory calls on its own
// streams, reading a report), so they may run while another stream is being captured
// without touching that capture.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() noexcept
      : swapped_(cudaThreadExchangeStreamCaptureMode(&mode_) == cudaSuccess) {}
  ~RelaxedCaptureMode() {
    if (swapped_) cudaThreadExchangeStreamCaptureMode(&mode_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;  // the other one, swapped
  bool swapped_;                                               // restored only if it was swapped
};

class Stream {
 public:
  // Default: a blocking stream: like the legacy default stream, it is ordered with
  // it, so a plain cudaMemcpy after tmm_sgemm_device sees the result; it still
  // overlaps with other handles' streams. The streamed engine's are non-blocking.
  explicit Stream(unsigned flags = cudaStreamDefault) {
    check_cuda(cudaStreamCreateWithFlags(&s_, flags), "cudaStreamCreate");
  }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { check_cuda(cudaEventCreate(&e_), "cudaEventCreate"); }
  explicit Event(unsigned flags) {
    check_cuda(cudaEventCreateWithFlags(&e_, flags), "cudaEventCreate");
  }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Leaves no work of a failing call in flight: when the scope is left by an
// exception, waits on the host for everything enqueued on the streams so far
// (errors ignored: the call is failing already, and a sticky error has ended the
// work anyway). So a failed call neither writes the caller's memory after it
// returns nor lets its copies run into buffers the next call reuses.
class DrainOnThrow {
 public:
  explicit DrainOnThrow(cudaStream_t stream) : stream_(stream) {}
  ~DrainOnThrow() {
    if (std::uncaught_exceptions() > exceptions_) cudaStreamSynchronize(stream_);
  }
  DrainOnThrow(const DrainOnThrow&) = delete;
  DrainOnThrow& operator=(const DrainOnThrow&) = delete;

 private:
  cudaStream_t stream_;
  int exceptions_ = std::uncaught_exceptions();
};

// A grow-only pinned (page-locked) host buffer, for copies the DMA engines run at
// full speed. Contents are undefined after growth.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { release(); }

  // At least `n` elements of T. It holds bytes, so one buffer serves both precisions:
  // it grows only when n T's are more bytes than it holds.
  template <class T>
  T* reserve(size_t n) {
    return static_cast<T*>(reserve_bytes(n * sizeof(T)));
  }
  size_t capacity() const { return capacity_; }  // in bytes

 private:
  void* reserve_bytes(size_t bytes) {
    if (bytes <= capacity_) return ptr_;
    release();
    void* p = nullptr;
    const RelaxedCaptureMode relaxed;
    const LastErrorScope scope;
    const cudaError_t err = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (err != cudaSuccess) {
      scope.clear_if_ours();
      fail(Status::OutOfMemory, "cannot allocate ", uint64_t(bytes >> 20),
           " MiB of pinned host memory: ", cudaGetErrorString(err));
    }
    ptr_ = p;
    capacity_ = bytes;
    return ptr_;
  }
  void release() noexcept {
    const RelaxedCaptureMode relaxed;
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    capacity_ = 0;
  }
  void* ptr_ = nullptr;
  size_t capacity_ = 0;  // bytes
};

}  // namespace tiledmm
