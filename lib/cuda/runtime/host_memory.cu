#include <cuda.h>  // the driver's types only: the entry point comes through the runtime

#include <atomic>
#include <climits>
#include <mutex>

#include "core/error.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/host_memory.hpp"

namespace tiledmm {
namespace {

using PointerGetAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);

// cuPointerGetAttribute, found once through the runtime (the library does not link
// the driver library itself); null when the driver lacks it.
PointerGetAttribute pointer_get_attribute() noexcept {
  static PointerGetAttribute fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const LastErrorScope scope;
    if (cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &f, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      scope.clear_if_ours();
      f = nullptr;
    }
    return reinterpret_cast<PointerGetAttribute>(f);
  }();
  return fn;
}

}  // namespace

bool within_one_allocation(const void* p, size_t bytes) noexcept {
  const PointerGetAttribute get = pointer_get_attribute();
  if (get == nullptr || p == nullptr) return true;
  CUdeviceptr start = 0;
  size_t size = 0;
  const CUdeviceptr at = reinterpret_cast<CUdeviceptr>(p);
  if (get(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, at) != CUDA_SUCCESS ||
      get(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, at) != CUDA_SUCCESS)
    return true;
  return at >= start && bytes <= size - (at - start);
}

namespace {

std::atomic<int64_t> g_copies_to_failure{0};
std::atomic<int> g_injected_error{cudaSuccess};

// Throws the injected error when the armed countdown reaches this copy.
void injected_failure_point() {
  if (g_copies_to_failure.load(std::memory_order_relaxed) <= 0) return;
  if (g_copies_to_failure.fetch_sub(1) == 1)
    check_cuda(cudaError_t(g_injected_error.load()), "cudaMemcpy2DAsync (injected)");
}

}  // namespace

int64_t inject_copy_failure(int64_t nth, cudaError_t error) noexcept {
  g_injected_error.store(error);
  return g_copies_to_failure.exchange(nth);
}

bool is_pinned_range(const void* p, size_t bytes) noexcept {
  if (p == nullptr || bytes == 0) return false;
  const PointerGetAttribute get = pointer_get_attribute();
  if (get == nullptr) return false;
  // Walk the driver's ranges from p: each must be host memory and the next must start
  // where the previous ended, until the end of the range is covered.
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = at + bytes;
  while (at < end) {
    unsigned type = 0;
    uintptr_t start = 0;
    size_t size = 0;
    if (get(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CUdeviceptr(at)) != CUDA_SUCCESS ||
        type != CU_MEMORYTYPE_HOST ||
        get(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CUdeviceptr(at)) != CUDA_SUCCESS ||
        get(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, CUdeviceptr(at)) != CUDA_SUCCESS ||
        start > at || start + size <= at) {
      return false;
    }
    at = start + size;
  }
  return true;
}

void copy_2d(void* dst, int64_t dst_ld, const void* src, int64_t src_ld, int64_t rows, int64_t cols,
             int bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  injected_failure_point();
  const size_t width = size_t(cols) * size_t(bytes);
  const int64_t dst_pitch = dst_ld * bytes, src_pitch = src_ld * bytes;
  const int64_t max_pitch = INT_MAX;  // cudaMemcpy2D's pitch limit
  if (dst_pitch <= max_pitch && src_pitch <= max_pitch) {
    check_cuda(cudaMemcpy2DAsync(dst, size_t(dst_pitch), src, size_t(src_pitch), width,
                                 size_t(rows), kind, stream),
               "cudaMemcpy2DAsync");
    return;
  }
  auto* to = static_cast<char*>(dst);
  const auto* from = static_cast<const char*>(src);
  for (int64_t r = 0; r < rows; ++r) {  // pitches beyond the 2D copy's reach
    check_cuda(cudaMemcpyAsync(to + r * dst_pitch, from + r * src_pitch, width, kind, stream),
               "cudaMemcpyAsync");
  }
}

}  // namespace tiledmm
