// The board of chunks packed once for every lane (lib/core/shared_chunks.hpp), host C++:
// a chunk is packed by its first taker and reused by the others, an unread chunk gives
// its slot to a new one, a slot is free again after its chunk's last use (the board's or
// not), a board with no slot to give sends the taker to its own staging, an abandoned
// packing passes to the next taker, and lanes on threads each see every chunk's bytes
// as its packer wrote them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/shared_chunks.hpp"

namespace tiledmm {
namespace {

TEST(SharedChunks, PackedOnceReusedEvictedAndFreedAfterTheLastUse) {
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
  // Both slots read: a third chunk finds none, and packs into its own staging.
  EXPECT_EQ(board.take(9).data, nullptr);
  board.release(7);
  board.release(7);
  // Chunk 7 is packed and unread (one use left): chunk 9 takes its slot.
  const SharedChunks::Lease evicting = board.take(9);
  EXPECT_EQ(evicting.data, first.data) << "chunk 7's slot";
  EXPECT_TRUE(evicting.pack);
  board.packed(9);
  // Chunk 7's last use finds no slot it may take (8 and 9 are read): its own staging.
  EXPECT_EQ(board.take(7).data, nullptr);
  board.release(8);
  board.release(9);
  const SharedChunks::Counts c = board.counts();
  EXPECT_EQ(c.packed, 3);
  EXPECT_EQ(c.reused, 1);
  EXPECT_EQ(c.full, 2);
  EXPECT_EQ(c.evicted, 1);
  EXPECT_EQ(c.free_slots, 0) << "8 and 9 have uses left";
  // Their last uses (8: two, 9: one, its first take having found no slot) free both.
  for (const auto& [key, uses] : {std::pair<int64_t, int>{8, 2}, {9, 1}}) {
    for (int use = 0; use < uses; ++use) {
      const SharedChunks::Lease l = board.take(key);
      ASSERT_NE(l.data, nullptr);
      EXPECT_FALSE(l.pack);
      board.release(key);
    }
  }
  EXPECT_EQ(board.counts().free_slots, 2) << "every use made: every slot free";
}

// A slot is not held to the call's end by a chunk whose early uses found no slot: every
// use counts, the board's or not, and a chunk packed again after an eviction frees its
// slot at its last use.
TEST(SharedChunks, EveryUseMadeFreesEverySlot) {
  std::vector<char> memory(2 * 16);
  SharedChunks board(memory.data(), 16, 2, 3);
  std::mt19937 rng(5);
  std::vector<int> left(10, 3);
  std::vector<std::pair<int64_t, bool>> held;  // leases still read
  int64_t remaining = 30;
  while (remaining > 0 || !held.empty()) {
    if (!held.empty() && (remaining == 0 || rng() % 2 == 0)) {
      const size_t i = rng() % held.size();
      board.release(held[i].first);
      held.erase(held.begin() + std::ptrdiff_t(i));
      continue;
    }
    int64_t key = int64_t(rng() % 10);
    while (left[size_t(key)] == 0) key = (key + 1) % 10;
    --left[size_t(key)];
    --remaining;
    const SharedChunks::Lease l = board.take(key);
    if (l.data == nullptr) continue;
    if (l.pack) board.packed(key);
    held.emplace_back(key, true);
  }
  const SharedChunks::Counts c = board.counts();
  EXPECT_EQ(c.packed + c.reused + c.full, 30);
  EXPECT_EQ(c.free_slots, 2);
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
  SharedChunks twice(memory.data(), 64, 1, 2);
  ASSERT_TRUE(twice.take(6).pack);
  twice.packed(6);
  EXPECT_FALSE(twice.take(6).pack);
  EXPECT_THROW(twice.take(6), Error) << "a third use of a chunk used twice";
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
  EXPECT_EQ(c.free_slots, slots) << "every use made: every slot free";
}

}  // namespace
}  // namespace tiledmm
