// Host copies between the caller's memory and pinned staging, the streamed path's
// packing step (host C++, no CUDA; unit-tested in tests/core/test_host_copy.cpp).
//
// A block of `rows` runs of `cols` floats is copied by the pool's threads, each taking
// whole rows. The stores are non-temporal on x86-64 (SSE2, in every x86-64 CPU): the
// destination is either staging that the DMA engine reads next, or the caller's C that
// the caller reads later, so bringing its lines into the cache first (what a plain
// store does) only costs memory bandwidth. On the H100's host, 16 threads with the
// link busy: 43 GB/s against memcpy's 33 (BENCHMARKS.md, "Host copies").
#pragma once

#include <cstdint>

#include "core/worker_pool.hpp"

namespace tiledmm {

// One row: n floats from src to dst, non-temporal stores where the CPU has them. The
// stores are ordered (a store fence) before it returns.
void copy_floats(float* dst, const float* src, int64_t n) noexcept;

// rows x cols floats from (src, src_ld) to (dst, dst_ld), with at most `threads`
// threads of `pool` (and the calling thread). Never throws.
void copy_block(WorkerPool& pool, int threads, float* dst, int64_t dst_ld, const float* src,
                int64_t src_ld, int64_t rows, int64_t cols) noexcept;

// The threads that pack by default: three quarters of the cores, at least one. With
// the link busy, 12 of the H100 host's 16 cores copy faster than 16 (the DMA engines
// and the driver's own threads share the memory bus and cores).
int default_packing_threads() noexcept;

// The packing threads of a call: the host_threads setting, or the default for 0.
inline int packing_thread_count(int setting) noexcept {
  return setting > 0 ? setting : default_packing_threads();
}

}  // namespace tiledmm
