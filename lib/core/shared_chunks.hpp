// Chunks of an operand packed once for every lane of one call (a multi-device handle's
// lanes each walk their own column tiles of C down the same row tiles, so each packs the
// same chunks of op(A) within a few tiles of the others): a board of slots in memory the
// caller owns (pinned, for the lanes' uploads). A lane that needs chunk `key` takes it:
// packed already (by another lane), it uploads from the board; not there, it packs it
// into a free slot itself (packed() tells the others, abandon() if packing failed) or,
// with no slot free, into the slot of the least recently used chunk that is packed and
// that no lane is reading (its later uses pack it again); being packed by another lane,
// it waits for that. No slot to be had: it packs into its own staging as without a
// board. Each chunk is used `uses` times in all (one per column tile of C), every take
// counting one; a lane releases a use from the board once the upload that read the slot
// has completed: a slot is never given to another chunk while a lane reads it. Host C++,
// no CUDA: unit-tested in tests/core/test_shared_chunks.cpp.
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
  // Chunk `key` (any integer the lanes agree on) for one use, at most `uses` times in all.
  // Blocks while another lane packs it. A lease with data must be released (release)
  // once its use is over, or abandoned (abandon, a lease to pack only); a lease without
  // data needs nothing more.
  Lease take(int64_t key);
  // The chunk the caller was leased to pack is in its slot: the waiting lanes use it.
  void packed(int64_t key);
  // Packing it failed: the slot is free again and the next taker packs it (this lease's
  // use counts as not made).
  void abandon(int64_t key);
  // One use of the chunk from the board is over (its slot is no longer read).
  void release(int64_t key);

  // What the board did, for tests and reports: chunks packed into it, uses that found
  // the chunk there, takes that found no slot, chunks evicted for another; and the slots
  // free now.
  struct Counts {
    int64_t packed = 0, reused = 0, full = 0, evicted = 0;
    int free_slots = 0;
  };
  Counts counts() const;

 private:
  struct Chunk {
    int64_t taken = 0;    // uses handed out (from the board or not)
    int slot = -1;        // its slot, or -1
    bool ready = false;   // packed (slot >= 0); else being packed by a lane
    int64_t readers = 0;  // uses from its slot not yet released
    int64_t last = 0;     // when it was last taken or released (a tick)
  };
  void* slot_data(int slot) const;
  int slot_for_new_chunk();          // a free slot, or an evicted one, or -1; mutex_ held
  void forget_if_done(int64_t key);  // every use made and released: the slot freed

  char* memory_;
  int64_t slot_bytes_, uses_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::unordered_map<int64_t, Chunk> chunks_;  // the chunks with uses left to make
  std::vector<int> free_;
  int64_t tick_ = 0;
  Counts counts_;
};

}  // namespace tiledmm
