#include "core/host_copy.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tiledmm {

void copy_floats(float* dst, const float* src, int64_t n) noexcept {
#if defined(__SSE2__)
  int64_t i = 0;
  // Scalar up to the first 16-byte boundary of dst (streaming stores need it).
  while (i < n && (reinterpret_cast<uintptr_t>(dst + i) & 15) != 0) {
    dst[i] = src[i];
    ++i;
  }
  if (n - i >= 64) {
    for (; i + 16 <= n; i += 16) {
      const __m128 a = _mm_loadu_ps(src + i), b = _mm_loadu_ps(src + i + 4);
      const __m128 c = _mm_loadu_ps(src + i + 8), d = _mm_loadu_ps(src + i + 12);
      _mm_stream_ps(dst + i, a);
      _mm_stream_ps(dst + i + 4, b);
      _mm_stream_ps(dst + i + 8, c);
      _mm_stream_ps(dst + i + 12, d);
    }
    _mm_sfence();  // streaming stores are weakly ordered: visible before the DMA starts
  }
  if (i < n) std::memcpy(dst + i, src + i, size_t(n - i) * sizeof(float));
#else
  std::memcpy(dst, src, size_t(n) * sizeof(float));
#endif
}

void copy_block(WorkerPool& pool, int threads, float* dst, int64_t dst_ld, const float* src,
                int64_t src_ld, int64_t rows, int64_t cols) noexcept {
  if (rows <= 0 || cols <= 0) return;
  if (dst_ld == cols && src_ld == cols) {  // one run: split it evenly, whatever the rows
    cols *= rows;
    rows = 1;
  }
  const int64_t floats = rows * cols;
  // At least 64 KiB a task (handing out less costs more than it saves).
  const int tasks = int(std::max<int64_t>(1, std::min<int64_t>(threads, floats >> 14)));
  auto task = [&](int t) {
    if (rows == 1) {  // a slice of the one run, on 64-byte boundaries
      const int64_t c0 = cols * t / tasks / 16 * 16;
      const int64_t c1 = t + 1 == tasks ? cols : cols * (t + 1) / tasks / 16 * 16;
      copy_floats(dst + c0, src + c0, c1 - c0);
      return;
    }
    const int64_t r0 = rows * t / tasks, r1 = rows * (t + 1) / tasks;
    for (int64_t r = r0; r < r1; ++r) copy_floats(dst + r * dst_ld, src + r * src_ld, cols);
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
