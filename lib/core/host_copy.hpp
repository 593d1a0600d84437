// Host copies between the caller's memory and pinned staging, the streamed path's
// packing step (host C++, no CUDA; unit-tested in tests/core/test_host_copy.cpp).
//
// A block of `rows` runs of `cols` elements is copied by the pool's threads, each taking
// whole rows; the copy itself sees only bytes, so one core serves every element type. The stores
// are non-temporal on x86-64 (SSE2, in every x86-64 CPU): the destination is either staging that
// the DMA engine reads next, or the caller's C that the caller reads later, so bringing its lines
// into the cache first (what a plain store does) only costs memory bandwidth. On the H100's host,
// 16 threads with the link busy: 43 GB/s against memcpy's 33 (BENCHMARKS.md, "Host copies").
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "core/worker_pool.hpp"

namespace tiledmm {

// One row: n bytes from src to dst, non-temporal stores where the CPU has them. The
// stores are ordered (a store fence) before it returns.
void copy_bytes(void* dst, const void* src, int64_t n) noexcept;

// rows x cols elements of `bytes` bytes (a divisor of 64) from (src, src_ld) to
// (dst, dst_ld), leading dimensions in elements, with at most `threads` threads of
// `pool` (and the calling thread). Never throws.
void copy_block(WorkerPool& pool, int threads, void* dst, int64_t dst_ld, const void* src,
                int64_t src_ld, int64_t rows, int64_t cols, int bytes) noexcept;

// The same for elements of T.
template <class T>
void copy_block(WorkerPool& pool, int threads, T* dst, int64_t dst_ld, const T* src, int64_t src_ld,
                int64_t rows, int64_t cols) noexcept {
  copy_block(pool, threads, static_cast<void*>(dst), dst_ld, static_cast<const void*>(src), src_ld,
             rows, cols, int(sizeof(T)));
}

// Faults in, writable, every whole page of [p, p + bytes) without changing a byte
// (Linux's MADV_POPULATE_WRITE, 5.14 and later; elsewhere, or where the kernel refuses,
// nothing). Memory never written before (a fresh result array) otherwise faults a page
// at a time under the unpacking threads' first stores, each fault zeroing its page: done
// ahead, on threads of its own, while the device computes. Never throws.
void populate_for_write(void* p, int64_t bytes) noexcept;

// populate_for_write over `rows` runs of `row_bytes` bytes, `stride` bytes apart from
// p on (a matrix's rows: only the rows, never the padding between them, which may be
// the caller's memory the library does not write), split among `threads` threads of
// its own, started at construction and joined at destruction. Below kMinPopulateBytes
// of rows, or with no threads, it does nothing.
class BackgroundPopulate {
 public:
  static constexpr int64_t kMinPopulateBytes = int64_t(64) << 20;
  BackgroundPopulate(void* p, int64_t rows, int64_t row_bytes, int64_t stride,
                     int threads) noexcept;
  ~BackgroundPopulate();
  BackgroundPopulate(const BackgroundPopulate&) = delete;
  BackgroundPopulate& operator=(const BackgroundPopulate&) = delete;

 private:
  std::vector<std::thread> threads_;
};

// The threads that pack by default: three quarters of the cores, at least one. With
// the link busy, 12 of the H100 host's 16 cores copy faster than 16 (the DMA engines
// and the driver's own threads share the memory bus and cores).
int default_packing_threads() noexcept;

// The packing threads of a call: the host_threads setting, or the default for 0.
inline int packing_thread_count(int setting) noexcept {
  return setting > 0 ? setting : default_packing_threads();
}

}  // namespace tiledmm
