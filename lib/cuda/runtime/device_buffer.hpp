// A grow-only device buffer managed by Thrust. The host API keeps one per operand
// in the handle, so once sizes stop growing a call allocates nothing and runs no
// fill kernel (thrust::device_vector would value-initialise on every growth).
#pragma once

#include <thrust/device_free.h>
#include <thrust/device_malloc.h>
#include <thrust/device_ptr.h>

#include <cstddef>
#include <new>
#include <string>

#include "core/error.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_objects.hpp"

namespace tiledmm {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }

  // A buffer of at least `n` elements of T; contents are undefined after growth. It
  // holds bytes, so one buffer serves both precisions: it grows only when n T's are
  // more bytes than it holds.
  template <class T>
  T* reserve(size_t n) {
    return static_cast<T*>(reserve_bytes(n * sizeof(T)));
  }
  size_t capacity() const { return capacity_; }  // in bytes

 private:
  void* reserve_bytes(size_t bytes) {
    if (bytes <= capacity_) return ptr_.get();
    release();
    const RelaxedCaptureMode relaxed;  // another thread may be capturing a graph
    const LastErrorScope scope;
    try {
      ptr_ = thrust::device_malloc(bytes);
    } catch (const std::bad_alloc&) {
      scope.clear_if_ours();  // the failed cudaMalloc must not poison later calls
      throw Error(Status::OutOfMemory,
                  "cannot allocate " + std::to_string(bytes >> 20) + " MiB of device memory");
    } catch (const std::exception& e) {
      scope.clear_if_ours();
      throw Error(Status::Cuda, std::string("device allocation failed: ") + e.what());
    }
    capacity_ = bytes;
    return ptr_.get();
  }

  void release() noexcept {
    if (capacity_ == 0) return;
    const RelaxedCaptureMode relaxed;
    try {
      thrust::device_free(ptr_);
    } catch (...) {
      // Freeing after a sticky CUDA error can throw; the memory is gone with the
      // context anyway.
    }
    ptr_ = thrust::device_ptr<void>();
    capacity_ = 0;
  }

  thrust::device_ptr<void> ptr_;
  size_t capacity_ = 0;  // bytes
};

}  // namespace tiledmm
