#include "core/shared_chunks.hpp"

#include "core/error.hpp"

namespace tiledmm {

SharedChunks::SharedChunks(void* memory, int64_t slot_bytes, int slots, int64_t uses)
    : memory_(static_cast<char*>(memory)), slot_bytes_(slot_bytes), uses_(uses) {
  require(slot_bytes >= 0 && slots >= 0 && uses >= 1 && (memory != nullptr || slots == 0),
          Status::InvalidValue, "shared chunks: ", slots, " slots of ", slot_bytes,
          " bytes, each chunk used ", uses, " times");
  free_.reserve(size_t(slots));
  for (int s = slots - 1; s >= 0; --s) free_.push_back(s);
}

void* SharedChunks::slot_data(int slot) const { return memory_ + int64_t(slot) * slot_bytes_; }

int SharedChunks::slot_for_new_chunk() {
  if (!free_.empty()) {
    const int slot = free_.back();
    free_.pop_back();
    return slot;
  }
  // The least recently used chunk that is packed and unread gives up its slot.
  Chunk* oldest = nullptr;
  for (auto& entry : chunks_) {
    Chunk& c = entry.second;
    if (c.slot >= 0 && c.ready && c.readers == 0 && (oldest == nullptr || c.last < oldest->last))
      oldest = &c;
  }
  if (oldest == nullptr) return -1;
  const int slot = oldest->slot;
  oldest->slot = -1;
  oldest->ready = false;
  ++counts_.evicted;
  return slot;
}

void SharedChunks::forget_if_done(int64_t key) {
  const auto it = chunks_.find(key);
  if (it == chunks_.end() || it->second.taken < uses_ || it->second.readers > 0) return;
  if (it->second.slot >= 0) free_.push_back(it->second.slot);
  chunks_.erase(it);
}

SharedChunks::Lease SharedChunks::take(int64_t key) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    Chunk& c = chunks_[key];
    require(c.taken < uses_, Status::Internal, "shared chunks: chunk ", key, " taken more than ",
            uses_, " times");
    if (c.slot >= 0 && !c.ready) {
      changed_.wait(lock);  // another lane packs it: packed() or abandon() wakes us
      continue;             // (the map may have changed: look it up again)
    }
    ++c.taken;
    c.last = ++tick_;
    if (c.slot >= 0) {
      ++c.readers;
      ++counts_.reused;
      return Lease{slot_data(c.slot), false};
    }
    const int slot = slot_for_new_chunk();
    if (slot < 0) {
      ++counts_.full;
      forget_if_done(key);
      return Lease{};
    }
    c.slot = slot;
    c.ready = false;
    ++c.readers;
    return Lease{slot_data(slot), true};
  }
}

void SharedChunks::packed(int64_t key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = chunks_.find(key);
    require(it != chunks_.end() && it->second.slot >= 0 && !it->second.ready, Status::Internal,
            "shared chunks: chunk ", key, " was not leased to pack");
    it->second.ready = true;
    ++counts_.packed;
  }
  changed_.notify_all();
}

void SharedChunks::abandon(int64_t key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = chunks_.find(key);
    if (it == chunks_.end() || it->second.slot < 0 || it->second.ready) return;
    Chunk& c = it->second;
    free_.push_back(c.slot);
    c.slot = -1;
    --c.taken;
    --c.readers;
    if (c.taken == 0 && c.readers == 0) chunks_.erase(it);
  }
  changed_.notify_all();
}

void SharedChunks::release(int64_t key) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = chunks_.find(key);
  require(it != chunks_.end() && it->second.ready && it->second.readers > 0, Status::Internal,
          "shared chunks: chunk ", key, " released but not in use");
  --it->second.readers;
  it->second.last = ++tick_;
  forget_if_done(key);
}

SharedChunks::Counts SharedChunks::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Counts c = counts_;
  c.free_slots = int(free_.size());
  return c;
}

}  // namespace tiledmm
