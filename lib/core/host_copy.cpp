#include "core/host_copy.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tiledmm {

void copy_bytes(void* dst_ptr, const void* src_ptr, int64_t n) noexcept {
  char* const dst = static_cast<char*>(dst_ptr);
  const char* const src = static_cast<const char*>(src_ptr);
#if defined(__SSE2__)
  // Plain copies up to the first 16-byte boundary of dst (streaming stores need it).
  int64_t i = std::min<int64_t>(n, int64_t(-reinterpret_cast<uintptr_t>(dst) & 15));
  std::memcpy(dst, src, size_t(i));
  if (n - i >= 256) {
    for (; i + 64 <= n; i += 64) {
      const auto at = [&](int64_t offset) {
        return reinterpret_cast<const __m128i*>(src + offset);
      };
      const __m128i a = _mm_loadu_si128(at(i)), b = _mm_loadu_si128(at(i + 16));
      const __m128i c = _mm_loadu_si128(at(i + 32)), d = _mm_loadu_si128(at(i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
    }
    _mm_sfence();  // streaming stores are weakly ordered: visible before the DMA starts
  }
  if (i < n) std::memcpy(dst + i, src + i, size_t(n - i));
#else
  std::memcpy(dst, src, size_t(n));
#endif
}

void copy_block(WorkerPool& pool, int threads, void* dst_ptr, int64_t dst_ld, const void* src_ptr,
                int64_t src_ld, int64_t rows, int64_t cols, int bytes) noexcept {
  if (rows <= 0 || cols <= 0) return;
  char* const dst = static_cast<char*>(dst_ptr);
  const char* const src = static_cast<const char*>(src_ptr);
  if (dst_ld == cols && src_ld == cols) {  // one run: split it evenly, whatever the rows
    cols *= rows;
    rows = 1;
  }
  // At least 64 KiB a task (handing out less costs more than it saves).
  const int64_t total = rows * cols * bytes;
  const int tasks = int(std::max<int64_t>(1, std::min<int64_t>(threads, total >> 16)));
  const int64_t slice = 64 / bytes;  // elements of 64 bytes
  auto task = [&](int t) {
    if (rows == 1) {  // a slice of the one run, on 64-byte boundaries
      const int64_t c0 = cols * t / tasks / slice * slice;
      const int64_t c1 = t + 1 == tasks ? cols : cols * (t + 1) / tasks / slice * slice;
      copy_bytes(dst + c0 * bytes, src + c0 * bytes, (c1 - c0) * bytes);
      return;
    }
    const int64_t r0 = rows * t / tasks, r1 = rows * (t + 1) / tasks;
    for (int64_t r = r0; r < r1; ++r)
      copy_bytes(dst + r * dst_ld * bytes, src + r * src_ld * bytes, cols * bytes);
  };
  if (tasks == 1) {
    task(0);
    return;
  }
  pool.run(tasks, task);
}

int default_packing_threads() noexcept {
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores * 3 / 4);
}

}  // namespace tiledmm
