// A value made once per process, on first use, that a child of fork() can always
// make too. std::call_once (and a function-local static) cannot promise that: a
// child forked while another thread of its parent was inside the one-time
// initialisation inherits the "in progress" state without the thread that would end
// it, and waits for ever at its first call. Here the thread making the value leaves
// its process and thread ids; a thread that finds the value unmade and its maker
// gone (another process: the child of a fork; or no such thread in this process)
// makes it itself, and the others of its process wait for it.
//
// Constant-initialised (no constructor runs at load time, no guard): use it as a
// namespace-scope or function-local static.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace tiledmm::blas {

template <class T>
class ForkSafeOnce {
 public:
  // The value, made by make() (noexcept, never nullptr; the value is never freed)
  // on the first call of this process, or of its parent when that call ended there
  // before the fork.
  template <class Make>
  const T& get(Make make) {
    if (const T* v = value_.load(std::memory_order_acquire)) return *v;
    return slow(make);
  }

 private:
  static uint64_t me() {
    return uint64_t(uint32_t(getpid())) << 32 | uint32_t(pid_t(syscall(SYS_gettid)));
  }

  // The maker left `maker`, and is not making the value in this process: it ran in
  // the parent of this child, or its thread is this one or no longer exists (a
  // child of a child whose ids were reused).
  static bool gone(uint64_t maker, uint64_t self) {
    const pid_t pid = pid_t(maker >> 32), tid = pid_t(uint32_t(maker));
    if (pid != pid_t(self >> 32) || maker == self) return true;
    const int saved = errno;
    const bool none = syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH;
    errno = saved;
    return none;
  }

  template <class Make>
  __attribute__((noinline, cold)) const T& slow(Make make) {
    const uint64_t self = me();
    for (unsigned round = 0;; ++round) {
      if (const T* v = value_.load(std::memory_order_acquire)) return *v;
      uint64_t maker = maker_.load(std::memory_order_acquire);
      if ((maker == 0 || gone(maker, self)) &&
          maker_.compare_exchange_strong(maker, self, std::memory_order_acq_rel)) {
        const T* v = make();
        value_.store(v, std::memory_order_release);
        return *v;
      }
      // Another thread of this process makes it: wait (briefly spinning, then
      // sleeping 50 us at a time).
      if (round < 64) {
        sched_yield();
      } else {
        const timespec pause{0, 50000};
        nanosleep(&pause, nullptr);
      }
    }
  }

  std::atomic<const T*> value_{nullptr};
  std::atomic<uint64_t> maker_{0};  // pid << 32 | tid of the thread making it; 0: none
};

}  // namespace tiledmm::blas
