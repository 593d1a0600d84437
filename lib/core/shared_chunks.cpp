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
  entries_.reserve(size_t(slots));
}

void* SharedChunks::slot_data(int slot) const { return memory_ + int64_t(slot) * slot_bytes_; }

SharedChunks::Lease SharedChunks::take(int64_t key) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (free_.empty()) {
        ++counts_.full;
        return Lease{};
      }
      const int slot = free_.back();
      free_.pop_back();
      entries_.emplace(key, Entry{slot, false, uses_});
      return Lease{slot_data(slot), true};
    }
    if (it->second.ready) {
      ++counts_.reused;
      return Lease{slot_data(it->second.slot), false};
    }
    changed_.wait(lock);  // another lane packs it: packed() or abandon() wakes us
  }
}

void SharedChunks::packed(int64_t key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(key);
    require(it != entries_.end() && !it->second.ready, Status::Internal, "shared chunks: chunk ",
            key, " was not leased to pack");
    it->second.ready = true;
    ++counts_.packed;
  }
  changed_.notify_all();
}

void SharedChunks::abandon(int64_t key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = entries_.find(key);
    if (it == entries_.end() || it->second.ready) return;
    free_.push_back(it->second.slot);
    entries_.erase(it);
  }
  changed_.notify_all();
}

void SharedChunks::release(int64_t key) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(key);
  require(it != entries_.end() && it->second.ready && it->second.uses_left > 0, Status::Internal,
          "shared chunks: chunk ", key, " released but not in use");
  if (--it->second.uses_left > 0) return;
  free_.push_back(it->second.slot);
  entries_.erase(it);
}

SharedChunks::Counts SharedChunks::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace tiledmm
