#include "core/worker_pool.hpp"

namespace tiledmm {

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkerPool::call(Fn fn, void* ctx, int i) noexcept {
  try {
    fn(ctx, i);
    return true;
  } catch (...) {
    return false;
  }
}

void WorkerPool::grow(int wanted) noexcept {
  if (int(threads_.size()) >= wanted) return;
  try {
    threads_.reserve(size_t(wanted));  // so that emplace_back below never reallocates
  } catch (...) {
    return;  // run with the threads there are
  }
  while (int(threads_.size()) < wanted) {
    try {
      // The new thread starts from the current generation, so it waits for the next
      // one even if it first takes the lock after run() has begun it.
      threads_.emplace_back(&WorkerPool::loop, this, int(threads_.size()), generation_);
    } catch (...) {
      return;  // std::system_error or std::bad_alloc: the caller does its share
    }
  }
}

bool WorkerPool::run_erased(int count, Fn fn, void* ctx) noexcept {
  if (count <= 0) return true;
  grow(count - 1);
  const int helpers = std::min(count - 1, int(threads_.size()));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    ctx_ = ctx;
    count_ = count;
    pending_ = helpers;
    failed_ = false;
    ++generation_;
  }
  if (helpers > 0) work_.notify_all();
  bool ok = call(fn, ctx, 0);
  for (int i = helpers + 1; i < count; ++i) ok = call(fn, ctx, i) && ok;
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return pending_ == 0; });
  return ok && !failed_;
}

void WorkerPool::loop(int index, uint64_t seen) {
  const int task = index + 1;  // task 0 is the caller's
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    if (task >= count_) continue;  // this loop needs fewer threads
    const Fn fn = fn_;
    void* const ctx = ctx_;
    lock.unlock();
    const bool ok = call(fn, ctx, task);
    lock.lock();
    if (!ok) failed_ = true;
    if (--pending_ == 0) done_.notify_one();
  }
}

}  // namespace tiledmm
