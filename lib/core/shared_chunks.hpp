// Chunks of an operand packed once for every lane of one call (a multi-device handle's
// lanes each walk their own column tiles of C down the same row tiles, so each packs the
// same chunks of op(A) within a few tiles of the others): a board of slots in memory the
// caller owns (pinned, for the lanes' uploads). A lane that needs chunk `key` takes it:
// packed already (by another lane), it uploads from the board; not there and a slot free,
// it packs it into the board itself (packed() tells the others, abandon() if packing
// failed); being packed by another lane, it waits for that. No slot free: it packs into
// its own staging as without a board. Each chunk is used `uses` times in all (one per
// column tile of C); a lane releases its use once the upload that read the slot has
// completed, and the slot is free again after the last use. Host C++, no CUDA:
// unit-tested in tests/core/test_shared_chunks.cpp.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tiledmm {

class SharedChunks {
 public:
  // `slots` slots of `slot_bytes` bytes each, from `memory` on (at least slots x
  // slot_bytes bytes, the caller's, alive while the board is); each chunk used `uses`
  // times. Throws Error(InvalidValue) for a negative count or size, uses < 1, or a null
  // memory with slots.
  SharedChunks(void* memory, int64_t slot_bytes, int slots, int64_t uses);
  SharedChunks(const SharedChunks&) = delete;
  SharedChunks& operator=(const SharedChunks&) = delete;

  struct Lease {
    void* data = nullptr;  // the chunk's slot; null: no slot free, pack it yourself
    bool pack = false;     // the taker packs it into `data`, then packed() or abandon()
  };
  // Chunk `key` (any integer the lanes agree on) for one use. Blocks while another lane
  // packs it. A lease with data must be released (release) once its use is over, or
  // abandoned (abandon, a lease to pack only).
  Lease take(int64_t key);
  // The chunk the caller was leased to pack is in its slot: the waiting lanes use it.
  void packed(int64_t key);
  // Packing it failed: the slot is free again and the next taker packs it (this lease's
  // use counts as not made).
  void abandon(int64_t key);
  // One use of the chunk is over (its slot is no longer read); after the last, the slot
  // is free.
  void release(int64_t key);

  // What the board did, for tests and reports: chunks packed into it, uses that found
  // the chunk there, and takes that found no free slot.
  struct Counts {
    int64_t packed = 0, reused = 0, full = 0;
  };
  Counts counts() const;

 private:
  struct Entry {
    int slot;
    bool ready;         // packed; else being packed by the lane it was leased to
    int64_t uses_left;  // uses not yet released
  };
  void* slot_data(int slot) const;

  char* memory_;
  int64_t slot_bytes_, uses_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<int64_t, Entry> entries_;
  std::vector<int> free_;
  Counts counts_;
};

}  // namespace tiledmm
