// The host copies of the streamed path (lib/core/host_copy.hpp), linked from the
// library's own objects, against an element-by-element (or byte-by-byte) expectation.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "core/host_copy.hpp"
#include "core/worker_pool.hpp"

namespace tiledmm {
namespace {

// Every element of the block lands where it belongs, and nothing around it is
// written, for every alignment of source and destination (the streaming stores need
// 16-byte alignment and take a scalar head and tail), run lengths around the vector
// width, strided and dense (one run split across threads) blocks, 1 to 9 threads.
TEST(HostCopy, CopiesExactlyTheBlockForEveryAlignmentAndThreadCount) {
  WorkerPool pool;
  std::mt19937 rng(7);
  const float guard = -12345.0f;
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rows = 1 + int64_t(rng() % 40), cols = 1 + int64_t(rng() % 300);
    const bool dense = trial % 3 == 0;
    const int64_t src_ld = dense ? cols : cols + int64_t(rng() % 9);
    const int64_t dst_ld = dense ? cols : cols + int64_t(rng() % 9);
    const int64_t src_off = int64_t(rng() % 4), dst_off = int64_t(rng() % 4);
    const int threads = 1 + int(rng() % 9);
    std::vector<float> src(size_t(src_off + rows * src_ld));
    for (float& x : src) x = float(rng() % 100000);
    std::vector<float> dst(size_t(dst_off + rows * dst_ld + 8), guard);
    copy_block(pool, threads, dst.data() + dst_off, dst_ld, src.data() + src_off, src_ld, rows,
               cols);
    for (int64_t i = 0; i < int64_t(dst.size()); ++i) {
      const int64_t at = i - dst_off, r = at / dst_ld, c = at % dst_ld;
      const bool inside = at >= 0 && r < rows && c < cols;
      const float want = inside ? src[size_t(src_off + r * src_ld + c)] : guard;
      ASSERT_EQ(dst[size_t(i)], want) << "trial " << trial << ", element " << i << " (" << rows
                                      << "x" << cols << ", threads " << threads << ")";
    }
  }
  // A dense block of 2^20 floats is shared by the threads, on 64-byte boundaries.
  std::vector<float> big(size_t(1) << 20), out(big.size() + 1, guard);
  for (size_t i = 0; i < big.size(); ++i) big[i] = float(i);
  copy_block(pool, 7, out.data() + 1, 1 << 10, big.data(), 1 << 10, 1 << 10, 1 << 10);
  EXPECT_EQ(out[0], guard);
  for (size_t i = 0; i < big.size(); ++i) ASSERT_EQ(out[i + 1], big[i]) << i;
  EXPECT_GE(default_packing_threads(), 1);
}

// The byte core for 4- and 8-byte elements at any byte offset (odd ones included, so
// the head before the first 16-byte boundary is not a whole number of elements), byte
// for byte against the expectation, and nothing around the block written.
TEST(HostCopy, ByteCoreCopiesElementsOfFourAndEightBytesAtOddOffsets) {
  WorkerPool pool;
  std::mt19937 rng(11);
  const unsigned char guard = 0xA5;
  for (int bytes : {4, 8}) {
    for (int trial = 0; trial < 200; ++trial) {
      const int64_t rows = 1 + int64_t(rng() % 20), cols = 1 + int64_t(rng() % 200);
      const bool dense = trial % 3 == 0;
      const int64_t src_ld = dense ? cols : cols + int64_t(rng() % 9);
      const int64_t dst_ld = dense ? cols : cols + int64_t(rng() % 9);
      const int64_t src_off = int64_t(rng() % 16), dst_off = int64_t(rng() % 16);  // in bytes
      const int threads = 1 + int(rng() % 9);
      std::vector<unsigned char> src(size_t(src_off + rows * src_ld * bytes));
      for (unsigned char& x : src) x = static_cast<unsigned char>(rng());
      std::vector<unsigned char> dst(size_t(dst_off + rows * dst_ld * bytes + 64), guard);
      copy_block(pool, threads, dst.data() + dst_off, dst_ld, src.data() + src_off, src_ld, rows,
                 cols, bytes);
      const int64_t pitch = dst_ld * bytes;
      for (int64_t i = 0; i < int64_t(dst.size()); ++i) {
        const int64_t at = i - dst_off, r = at / pitch, c = at % pitch;
        const bool inside = at >= 0 && r < rows && c < cols * bytes;
        const unsigned char want = inside ? src[size_t(src_off + r * src_ld * bytes + c)] : guard;
        ASSERT_EQ(dst[size_t(i)], want) << bytes << "-byte elements, trial " << trial << ", byte "
                                        << i << " (" << rows << "x" << cols << ")";
      }
    }
  }
}

}  // namespace
}  // namespace tiledmm

// Populating changes no byte: of memory already written (at odd offsets and lengths,
// whole pages and parts of pages), and of memory never written before (it reads zero).
// On Linux, where the kernel has MADV_POPULATE_WRITE (5.14 on), the pages of a fresh
// mapping are resident afterwards (mincore); where it has not, nothing happens, which
// the test shows by a probe of its own.
TEST(HostCopy, PopulatingForWriteChangesNoByteAndMakesPagesResident) {
  std::vector<unsigned char> data(size_t(3) << 20);
  std::mt19937 rng(3);
  for (unsigned char& x : data) x = static_cast<unsigned char>(rng());
  const std::vector<unsigned char> before = data;
  for (int64_t offset : {int64_t(0), int64_t(1), int64_t(4095), int64_t(4097)}) {
    for (int64_t bytes :
         {int64_t(0), int64_t(1), int64_t(4096), int64_t(100000), int64_t(2) << 20}) {
      tiledmm::populate_for_write(data.data() + offset, bytes);
    }
  }
  EXPECT_EQ(data, before);
#if defined(__linux__)
  const long page = sysconf(_SC_PAGESIZE);
  ASSERT_GT(page, 0);
  const size_t pages = 64, bytes = pages * size_t(page);
  void* fresh = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(fresh, MAP_FAILED);
  std::vector<unsigned char> resident(pages);
  ASSERT_EQ(mincore(fresh, bytes, resident.data()), 0);
  for (unsigned char r : resident) EXPECT_EQ(r & 1, 0) << "a fresh mapping has no page yet";
  tiledmm::populate_for_write(fresh, int64_t(bytes));
  ASSERT_EQ(mincore(fresh, bytes, resident.data()), 0);
  // The probe: does this kernel populate at all?
  void* probe =
      mmap(nullptr, size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  const bool kernel_populates = madvise(probe, size_t(page), 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(probe, size_t(page));
  for (size_t i = 0; i < pages; ++i) {
    EXPECT_EQ(resident[i] & 1, kernel_populates ? 1 : 0) << "page " << i;
  }
  for (size_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(static_cast<unsigned char*>(fresh)[i], 0) << "byte " << i;
  }
  munmap(fresh, bytes);
#endif
}

#if defined(__linux__)
// BackgroundPopulate on fresh anonymous memory: a dense run split among threads makes
// every whole page of the run resident; rows with padding between them make the rows'
// pages resident and never the padding's (the caller's memory between C's rows); below
// the threshold, or with no threads, nothing. Where the kernel does not populate
// (before 5.14), no page is resident in any case.
TEST(HostCopy, BackgroundPopulateTouchesTheRowsAndNeverThePadding) {
  const long page_size = sysconf(_SC_PAGESIZE);
  ASSERT_GT(page_size, 0);
  const size_t page = size_t(page_size);
  void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  const bool kernel_populates = madvise(probe, page, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(probe, page);

  const int64_t min_bytes = tiledmm::BackgroundPopulate::kMinPopulateBytes;
  // Rows of 3 pages with 1 page of padding after each: enough rows for the threshold.
  const int64_t row = int64_t(3 * page), stride = int64_t(4 * page);
  const int64_t rows = (min_bytes + row - 1) / row;
  const size_t bytes = size_t(rows * stride);
  for (int mode = 0; mode < 4; ++mode) {  // dense, rows, below the threshold, no threads
    SCOPED_TRACE("mode " + std::to_string(mode));
    void* fresh = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(fresh, MAP_FAILED);
    unsigned char* base = static_cast<unsigned char*>(fresh);
    if (mode == 0) {
      tiledmm::BackgroundPopulate(base, 1, int64_t(bytes), int64_t(bytes), 3);
    } else if (mode == 1) {
      tiledmm::BackgroundPopulate(base, rows, row, stride, 3);
    } else if (mode == 2) {
      tiledmm::BackgroundPopulate(base, rows / 2, row, stride, 3);  // half the threshold
    } else {
      tiledmm::BackgroundPopulate(base, rows, row, stride, 0);
    }
    std::vector<unsigned char> resident(bytes / page);
    ASSERT_EQ(mincore(fresh, bytes, resident.data()), 0);
    for (size_t i = 0; i < resident.size(); ++i) {
      const bool in_row = i % 4 != 3;
      const bool want = kernel_populates && (mode == 0 || (mode == 1 && in_row));
      ASSERT_EQ(resident[i] & 1, want ? 1 : 0) << "page " << i;
    }
    for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(base[i], 0) << "byte " << i;
    munmap(fresh, bytes);
  }
}
#endif
