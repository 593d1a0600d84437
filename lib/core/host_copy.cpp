#include "core/host_copy.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

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

void populate_for_write(void* p, int64_t bytes) noexcept {
#if defined(__linux__)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14's value; older C libraries lack the name
#endif
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0 || bytes <= 0) return;
  const uintptr_t page = uintptr_t(page_size);
  // Whole pages inside the range only: a page partly outside it holds bytes that are
  // not the range's (the padding between a matrix's rows, another object).
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + uintptr_t(bytes)) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)bytes;
#endif
}

BackgroundPopulate::BackgroundPopulate(void* p, int64_t rows, int64_t row_bytes, int64_t stride,
                                       int threads) noexcept {
  if (rows <= 0 || row_bytes <= 0 || threads <= 0) return;
  if (rows * row_bytes < kMinPopulateBytes) return;  // C's own bytes: below 2^63
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  try {
    if (stride == row_bytes) {
      // One run: split on 2 MiB boundaries (a multiple of the usual page sizes, 2 MiB
      // huge pages included), so that no page straddles two threads' ranges.
      const uintptr_t end = begin + uintptr_t(rows * row_bytes);
      auto cut = [&](int t) {
        if (t == 0) return begin;
        if (t == threads) return end;
        const uintptr_t at = begin + uintptr_t((end - begin) / uintptr_t(threads) * uintptr_t(t));
        return std::max(begin, at >> 21 << 21);
      };
      for (int t = 0; t < threads; ++t) {
        const uintptr_t b0 = cut(t), b1 = cut(t + 1);
        threads_.emplace_back(
            [=] { populate_for_write(reinterpret_cast<void*>(b0), int64_t(b1 - b0)); });
      }
    } else {
      // Row by row (the whole pages inside each row), each thread a range of rows.
      for (int t = 0; t < threads; ++t) {
        const int64_t r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
        threads_.emplace_back([=] {
          for (int64_t r = r0; r < r1; ++r)
            populate_for_write(reinterpret_cast<void*>(begin + uintptr_t(r * stride)), row_bytes);
        });
      }
    }
  } catch (...) {  // no thread to be had: those started run on, the rest is skipped
  }
}

BackgroundPopulate::~BackgroundPopulate() {
  for (std::thread& t : threads_) t.join();
}

int default_packing_threads() noexcept {
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, cores * 3 / 4);
}

}  // namespace tiledmm
