// Host memory as the CUDA runtime sees it: whether a range of the caller's memory
// is pinned (so the DMA engines can read or write it directly, with no staging),
// and 2D copies between host and device that never touch the rows' padding.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace tiledmm {

// True when every byte of [p, p + bytes) is page-locked memory the CUDA driver knows
// (cudaHostAlloc, cudaMallocHost or cudaHostRegister), possibly over several
// adjacent allocations or registrations. False for pageable memory, for a range that
// is only partly pinned, and when the driver cannot tell. Never throws.
bool is_pinned_range(const void* p, size_t bytes) noexcept;

// True when [p, p + bytes) lies inside one allocation the driver knows (its range: the
// allocation's start and size); true as well when the driver cannot tell. Never throws.
bool within_one_allocation(const void* p, size_t bytes) noexcept;

// rows x cols elements of `bytes` each from (src, src_ld) to (dst, dst_ld), leading
// dimensions in elements, on `stream`; pitches beyond cudaMemcpy2D's reach go row by
// row. In bytes, so that one copy serves both precisions.
void copy_2d(void* dst, int64_t dst_ld, const void* src, int64_t src_ld, int64_t rows, int64_t cols,
             int bytes, cudaMemcpyKind kind, cudaStream_t stream);

// The same for callers that know the element type.
template <class T>
void copy_2d(T* dst, int64_t dst_ld, const T* src, int64_t src_ld, int64_t rows, int64_t cols,
             cudaMemcpyKind kind, cudaStream_t stream) {
  copy_2d(static_cast<void*>(dst), dst_ld, static_cast<const void*>(src), src_ld, rows, cols,
          int(sizeof(T)), kind, stream);
}

// Fault injection for the test of the streamed engine
// (tests/cuda/streamed/test_streamed_gemm.cpp links these objects; nothing exports
// it): the `nth` copy_2d from now on (1: the next) fails as if the CUDA runtime had
// returned `error` (cudaErrorMemoryAllocation gives OUT_OF_MEMORY, as a real late
// failure would), before it enqueues anything. 0 disarms. Returns the countdown it
// replaced, so arming a large one, running, and disarming counts the copies of a
// call. The library never arms it; an unarmed copy pays one relaxed atomic load.
int64_t inject_copy_failure(int64_t nth, cudaError_t error) noexcept;

}  // namespace tiledmm
