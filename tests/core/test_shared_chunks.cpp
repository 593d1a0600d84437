// The board of chunks packed once for every lane (lib/core/shared_chunks.hpp), host C++:
// a chunk is packed by its first taker and reused by the others, its slot free again
// after its last use, a full board sends the taker to its own staging, an abandoned
// packing passes to the next taker, and lanes on threads each see every chunk's bytes
// as its packer wrote them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/shared_chunks.hpp"

namespace tiledmm {
namespace {

TEST(SharedChunks, PackedOnceReusedAndFreedAfterTheLastUse) {
  std::vector<char> memory(2 * 64);
  SharedChunks board(memory.data(), 64, 2, 3);  // two slots, each chunk used three times
  const SharedChunks::Lease first = board.take(7);
  ASSERT_NE(first.data, nullptr);
  EXPECT_TRUE(first.pack);
  board.packed(7);
  const SharedChunks::Lease second = board.take(7);
  EXPECT_EQ(second.data, first.data);
  EXPECT_FALSE(second.pack);
  const SharedChunks::Lease other = board.take(8);
  ASSERT_NE(other.data, nullptr);
  EXPECT_NE(other.data, first.data);
  EXPECT_TRUE(other.pack);
  board.packed(8);
  // Both slots held: a third chunk finds none, and packs into its own staging.
  EXPECT_EQ(board.take(9).data, nullptr);
  board.release(7);
  board.release(7);
  EXPECT_EQ(board.take(9).data, nullptr) << "chunk 7 has one use left";
  EXPECT_FALSE(board.take(7).pack);
  board.release(7);  // its third and last use
  const SharedChunks::Lease freed = board.take(9);
  EXPECT_EQ(freed.data, first.data) << "chunk 7's slot";
  EXPECT_TRUE(freed.pack);
  const SharedChunks::Counts c = board.counts();
  EXPECT_EQ(c.packed, 2);
  EXPECT_EQ(c.reused, 2);
  EXPECT_EQ(c.full, 2);
}

TEST(SharedChunks, AnAbandonedPackingPassesToTheNextTaker) {
  std::vector<char> memory(64);
  SharedChunks board(memory.data(), 64, 1, 2);
  ASSERT_TRUE(board.take(1).pack);
  std::atomic<bool> got{false};
  SharedChunks::Lease waited;
  std::thread waiter([&] {
    waited = board.take(1);  // blocks: chunk 1 is being packed
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got) << "took a chunk still being packed";
  board.abandon(1);
  waiter.join();
  EXPECT_TRUE(waited.pack) << "the waiter packs it now";
  EXPECT_EQ(waited.data, memory.data());
  board.packed(1);
  EXPECT_FALSE(board.take(1).pack);
}

TEST(SharedChunks, MisuseIsAnError) {
  std::vector<char> memory(64);
  EXPECT_THROW(SharedChunks(memory.data(), 64, 1, 0), Error);
  EXPECT_THROW(SharedChunks(nullptr, 64, 1, 1), Error);
  EXPECT_THROW(SharedChunks(memory.data(), -1, 1, 1), Error);
  SharedChunks none(nullptr, 64, 0, 1);
  EXPECT_EQ(none.take(3).data, nullptr);
  SharedChunks board(memory.data(), 64, 1, 1);
  EXPECT_THROW(board.release(5), Error) << "not taken";
  EXPECT_THROW(board.packed(5), Error) << "not leased";
  ASSERT_TRUE(board.take(5).pack);
  EXPECT_THROW(board.release(5), Error) << "not packed yet";
  board.packed(5);
  board.release(5);
  EXPECT_THROW(board.release(5), Error) << "its one use is over";
}

// Lanes on threads, each taking every chunk of a sequence in order (as lanes walking
// their columns down the same row tiles), at their own pace: whoever packs writes the
// chunk's pattern, every use reads it back intact before releasing; a lane that finds
// no slot packs its own copy. Each chunk is packed into the board at most once while
// it is there, every use is accounted for, and nothing deadlocks.
TEST(SharedChunks, LanesOnThreadsSeeEveryChunkAsPacked) {
  const int lanes = 4, chunks = 400, slots = 6;
  const int64_t bytes = 256;
  std::vector<char> memory(size_t(slots * bytes));
  SharedChunks board(memory.data(), bytes, slots, lanes);
  std::atomic<int64_t> bad{0}, own{0}, packs{0};
  auto pattern = [](int64_t key, int64_t i) { return char((key * 31 + i * 7) & 0x7f); };
  std::vector<std::thread> threads;
  for (int lane = 0; lane < lanes; ++lane) {
    threads.emplace_back([&, lane] {
      std::mt19937 rng(uint32_t(lane + 1));
      for (int64_t key = 0; key < chunks; ++key) {
        const SharedChunks::Lease l = board.take(key);
        if (l.data == nullptr) {
          ++own;
          continue;
        }
        char* p = static_cast<char*>(l.data);
        if (l.pack) {
          for (int64_t i = 0; i < bytes; ++i) p[i] = pattern(key, i);
          ++packs;
          board.packed(key);
        }
        if (rng() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
        for (int64_t i = 0; i < bytes; ++i) bad += p[i] != pattern(key, i);
        board.release(key);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad, 0);
  const SharedChunks::Counts c = board.counts();
  EXPECT_EQ(c.packed, packs.load());
  EXPECT_EQ(c.full, own.load());
  EXPECT_EQ(c.packed + c.reused + c.full, int64_t(lanes) * chunks);
  EXPECT_GT(c.reused, 0) << "lanes side by side share chunks";
}

}  // namespace
}  // namespace tiledmm
