// The host copies of the streamed path (lib/core/host_copy.hpp), linked from the
// library's own objects, against an element-by-element (or byte-by-byte) expectation.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

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
