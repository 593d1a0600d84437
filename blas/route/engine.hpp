// The tiledmm side of the library: a small pool of tiledmm handles, made on demand
// (the first one at the first routed call, which is when CUDA starts), shared by the
// process's threads, at most TILEDMM_BLAS_HANDLES at once (a thread that finds them
// all busy waits for one). Each handle keeps the scratch copy of C its calls need.
//
// fork(): a child cannot use the CUDA context its parent made, nor the parent's
// worker threads (the CPU backend's). The pthread_atfork child handler therefore
// drops every handle (leaks it, never destroys it: destroying would touch CUDA) and
// the child makes its own handles, unless the parent had started CUDA: then the
// child sends every call to the fallback.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "tiledmm/tiledmm.h"

namespace tiledmm::blas {

struct Config;

// The math mode a handle of the library runs with these settings (a name of
// kMathModes), asked of a handle made for the question: TILEDMM_BLAS_MATH, else the
// library's default, which tmm_create reads from TMM_MATH_MODE (the library alone
// parses that variable), else fp32. "unknown" when no handle can be made.
std::string effective_math(const Config& cfg);

// Whether a launcher's variables make this process one of several MPI ranks (or Slurm
// tasks) on its node (a rank variable set, and no size variable saying it is alone),
// and the rank on its node they give (0 when none is set).
bool launched_as_rank();
int find_local_rank();

// Whether the pool's handles span every device TILEDMM_BLAS_DEVICE lists
// (tmm_create_with_devices): the list has several and the process is not a rank of a
// launcher (ranks take one device each, by their local rank) and may use CUDA.
bool spans_devices(const Config& cfg, bool is_rank);

struct Slot {
  tmm_handle handle = nullptr;
  bool cuda = false;
  int device = -1;  // the first device it computes on; -1 on the CPU
  int devices = 1;  // devices it spans (tmm_create_with_devices)
  // C before a beta != 0 call, to recompute after a fault: its bytes, in either
  // precision (route/recovery.cpp).
  std::vector<unsigned char> saved_c;
};

class Engine {
 public:
  static Engine& instance();

  // A handle for one call; nullptr when tiledmm cannot run in this process (the
  // reason is logged once). Blocks while every handle allowed is busy.
  Slot* acquire();
  // Gives the handle back for the next call.
  void release(Slot* slot);
  // After a CUDA fault: the handle is never used again (nor destroyed).
  void abandon(Slot* slot);
  // Stops using tiledmm in this process; `why` goes to the log once.
  void disable(const char* why);
  bool disabled() const { return state_.load(std::memory_order_acquire) == kDisabled; }
  bool started() const { return started_.load(std::memory_order_acquire); }
  // Multiprocessors of the GPU of the last CUDA handle made (0: none yet).
  int multiprocessors() const { return multiprocessors_.load(std::memory_order_relaxed); }
  // Its compute capability, major * 10 + minor (0: none yet).
  int compute_capability() const { return compute_capability_.load(std::memory_order_relaxed); }
  std::string describe() const;

 private:
  enum State { kReady = 0, kDisabled = 1 };
  Engine();
  tmm_status create(Slot& slot, int index);
  static void prepare_fork();
  static void parent_after_fork();
  static void child_after_fork();

  std::mutex mutex_;
  // A pointer, so that the child of a fork can start from a fresh one: waiters of the
  // parent's threads do not exist there.
  std::condition_variable* freed_;
  std::vector<Slot*> idle_;
  std::vector<Slot*> every_;  // every slot ever made, dropped ones too (kept reachable)
  int live_ = 0;              // slots of this process: busy + idle
  int made_ = 0;              // handles made by this process (device choice)
  int max_live_ = 2;
  int local_rank_ = 0;
  bool spans_ = false;         // every handle spans every listed device (spans_devices)
  bool cuda_started_ = false;  // a handle other than CPU was asked for
  bool fork_note_ = false;     // a child disabled at fork, not yet logged
  std::atomic<int> state_{kReady};
  std::atomic<bool> started_{false};
  std::atomic<int> multiprocessors_{0};
  std::atomic<int> compute_capability_{0};
  std::string disabled_why_;
};

}  // namespace tiledmm::blas
