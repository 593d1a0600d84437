// A grow-only set of host worker threads that runs one parallel loop at a time.
//
// The CPU backend keeps one per handle, so threads are started once (on the first
// call that wants them) and a warm call creates no thread and allocates nothing.
// Starting a thread can fail (no memory, a thread limit): run() then does the tasks
// of the missing threads on the calling thread. It never throws, so a loop that has
// begun writing the caller's memory always finishes.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace tiledmm {

// The threads a call may use: the host_threads setting, or 0 for one per core the
// system reports.
inline int host_thread_count(int setting) {
  return setting > 0 ? setting : int(std::max(1u, std::thread::hardware_concurrency()));
}

class WorkerPool {
 public:
  WorkerPool() = default;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool();

  // Runs task(i) for every i in [0, count), in parallel, and returns when all are
  // done. Task 0, and the tasks of threads that could not be started, run on the
  // calling thread. Tasks must not throw (one that does is stopped there and run()
  // returns false). Calls must not overlap (the handle serialises them).
  template <class Task>
  bool run(int count, Task& task) noexcept {
    return run_erased(
        count, [](void* t, int i) { (*static_cast<Task*>(t))(i); }, &task);
  }

  // Starts threads until there are `helpers` (run(helpers + 1, ...) then runs every task
  // on a thread of its own); whether there are. Never throws. Not during a run().
  bool reserve(int helpers) noexcept {
    grow(helpers);
    return int(threads_.size()) >= helpers;
  }

  // Threads started so far (for tests and the timing report).
  int threads() const { return int(threads_.size()); }

 private:
  using Fn = void (*)(void*, int);
  bool run_erased(int count, Fn fn, void* ctx) noexcept;
  void grow(int wanted) noexcept;
  void loop(int index, uint64_t seen);
  static bool call(Fn fn, void* ctx, int i) noexcept;

  std::mutex mutex_;
  std::condition_variable work_;  // a new generation of tasks, or stop
  std::condition_variable done_;  // the last participating worker finished
  std::vector<std::thread> threads_;
  uint64_t generation_ = 0;
  int count_ = 0;    // tasks of the current generation
  int pending_ = 0;  // workers still running a task of it
  bool failed_ = false;
  bool stop_ = false;
  Fn fn_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace tiledmm
