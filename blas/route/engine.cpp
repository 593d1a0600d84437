// The pool of tiledmm handles and its fork handlers (engine.hpp).
#include "route/engine.hpp"

#include <pthread.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "support/config.hpp"
#include "support/log.hpp"

namespace tiledmm::blas {
namespace {

constexpr const char* kLocalRankVariables[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                               "SLURM_LOCALID", "PALS_LOCAL_RANKID"};

tmm_backend to_tmm(BackendChoice b) {
  switch (b) {
    case BackendChoice::kCuda:
      return TMM_BACKEND_CUDA;
    case BackendChoice::kCpu:
      return TMM_BACKEND_CPU;
    case BackendChoice::kAuto:
      break;
  }
  return TMM_BACKEND_AUTO;
}

// The settings every handle of the library gets.
void apply_settings(tmm_handle h, const Config& cfg) {
  if (cfg.host_threads > 0) tmm_set_option(h, TMM_OPTION_HOST_THREADS, cfg.host_threads);
  // TILEDMM_BLAS_MATH; unset, the handle keeps the library's default (TMM_MATH_MODE).
  tmm_math_mode mode;
  if (math_mode_of(cfg.math, mode)) tmm_set_option(h, TMM_OPTION_MATH_MODE, mode);
}

Engine* g_engine = nullptr;

}  // namespace

bool launched_as_rank() {
  bool ranked = false;
  for (const char* name : kLocalRankVariables) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') ranked = true;
  }
  if (!ranked) return false;
  // A launcher that says this process is alone on its node (a batch script, srun of one
  // task): it may take every device.
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE",
                           "SLURM_STEP_NUM_TASKS", "PALS_LOCAL_SIZE"}) {
    if (const char* v = std::getenv(name); v != nullptr && std::strcmp(v, "1") == 0) return false;
  }
  return true;
}

// The launcher's rank of this process on its node, to spread ranks over devices.
int find_local_rank() {
  for (const char* name : kLocalRankVariables) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') {
      char* end = nullptr;
      const long rank = std::strtol(v, &end, 10);
      if (*end == '\0' && rank >= 0 && rank < (1L << 20)) return int(rank);
    }
  }
  return 0;
}

bool spans_devices(const Config& cfg, bool is_rank) {
  return !is_rank && cfg.devices.size() > 1 && cfg.backend != BackendChoice::kCpu;
}

std::string effective_math(const Config& cfg) {
  // A CPU handle: no device, no thread, nothing started; made and gone.
  tmm_handle h = nullptr;
  if (tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0) != TMM_SUCCESS) return "unknown";
  apply_settings(h, cfg);
  int64_t mode = -1;
  const tmm_status st = tmm_get_option(h, TMM_OPTION_MATH_MODE, &mode);
  tmm_destroy(h);
  const char* name = st == TMM_SUCCESS ? math_mode_name(mode) : nullptr;
  return name != nullptr ? name : "unknown";
}

Engine& Engine::instance() {
  // Never destroyed: calls may arrive from atexit handlers and other threads while
  // the process exits, and CUDA must not be torn down under them.
  static Engine* engine = [] {
    g_engine = new Engine();
    pthread_atfork(&Engine::prepare_fork, &Engine::parent_after_fork, &Engine::child_after_fork);
    return g_engine;
  }();
  return *engine;
}

Engine::Engine() : freed_(new std::condition_variable) {
  const Config& cfg = config();
  local_rank_ = find_local_rank();
  spans_ = spans_devices(cfg, launched_as_rank());
  // A handle of several devices holds staging and buffers on each: two of them.
  max_live_ = cfg.max_handles > 0 ? cfg.max_handles : spans_ ? 2 : 2 * int(cfg.devices.size());
}

tmm_status Engine::create(Slot& slot, int index) {
  const Config& cfg = config();
  const tmm_backend backend = to_tmm(cfg.backend);
  const int device =
      spans_ ? cfg.devices[0] : cfg.devices[size_t(local_rank_ + index) % cfg.devices.size()];
  tmm_handle h = nullptr;
  tmm_status s = TMM_SUCCESS;
  if (spans_) {
    s = tmm_create_with_devices(&h, cfg.devices.data(), int(cfg.devices.size()));
    if (s != TMM_SUCCESS) {
      Log::line("note: tmm_create_with_devices(TILEDMM_BLAS_DEVICE, %d devices) failed: %s: %s",
                int(cfg.devices.size()), tmm_status_string(s), tmm_get_error_message(nullptr));
    }
    // AUTO without CUDA: the CPU, as a handle of one device would have run; with CUDA, a
    // listed device that does not exist stays a failure (no handle on fewer devices).
    if (s == TMM_ERROR_NO_DEVICE && cfg.backend == BackendChoice::kAuto) {
      tmm_handle cpu = nullptr;
      if (tmm_create_with_backend(&cpu, TMM_BACKEND_AUTO, device) == TMM_SUCCESS) {
        tmm_backend got = TMM_BACKEND_CUDA;
        tmm_get_backend(cpu, &got);
        if (got == TMM_BACKEND_CPU) {
          h = cpu;
          s = TMM_SUCCESS;
        } else {
          tmm_destroy(cpu);
        }
      }
    }
    if (s != TMM_SUCCESS) return s;
  } else {
    s = tmm_create_with_backend(&h, backend, device);
    if (s != TMM_SUCCESS) {
      Log::line("note: tmm_create_with_backend(%s, device %d) failed: %s: %s",
                backend_name(cfg.backend), device, tmm_status_string(s),
                tmm_get_error_message(nullptr));
      return s;
    }
  }
  tmm_backend actual = TMM_BACKEND_CPU;
  tmm_get_backend(h, &actual);
  slot.handle = h;
  slot.cuda = actual == TMM_BACKEND_CUDA;
  slot.device = slot.cuda ? device : -1;
  slot.devices = 1;
  if (slot.cuda) tmm_get_device_count(h, &slot.devices);
  apply_settings(h, cfg);
  if (slot.cuda) {
    tmm_device_info info{};
    if (tmm_get_device_info(h, &info) == TMM_SUCCESS) {
      compute_capability_.store(10 * info.compute_capability_major + info.compute_capability_minor,
                                std::memory_order_relaxed);
      multiprocessors_.store(info.multiprocessors, std::memory_order_relaxed);
      int count = 1;
      tmm_get_device_count(h, &count);
      Log::line("note: tiledmm handle on CUDA device %d (%s, %d SMs)%s", device, info.name,
                info.multiprocessors,
                count > 1 ? ", spanning every device of TILEDMM_BLAS_DEVICE" : "");
    }
  } else {
    Log::line("note: tiledmm handle on the CPU backend");
  }
  return TMM_SUCCESS;
}

Slot* Engine::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (state_.load(std::memory_order_relaxed) == kDisabled) {
      if (fork_note_) {
        fork_note_ = false;
        Log::line("note: tiledmm is off in this child of fork(): %s", disabled_why_.c_str());
      }
      return nullptr;
    }
    if (!idle_.empty()) {
      Slot* s = idle_.back();
      idle_.pop_back();
      return s;
    }
    if (live_ < max_live_) break;
    freed_->wait(lock);
  }
  ++live_;
  const int index = made_++;
  if (config().backend != BackendChoice::kCpu) cuda_started_ = true;
  lock.unlock();

  // Made outside the lock: the first one starts CUDA, which takes a while.
  Slot* slot = nullptr;
  tmm_status s = TMM_ERROR_OUT_OF_MEMORY;
  try {
    slot = new Slot;
    s = create(*slot, index);
  } catch (...) {
    s = TMM_ERROR_OUT_OF_MEMORY;
  }
  lock.lock();
  if (s == TMM_SUCCESS) {
    try {
      every_.push_back(slot);
    } catch (...) {
      // Only bookkeeping for the child of a fork: the slot works without it.
    }
    started_.store(true, std::memory_order_release);
    return slot;
  }
  delete slot;
  --live_;
  freed_->notify_all();
  lock.unlock();
  if (s == TMM_ERROR_OUT_OF_MEMORY) return nullptr;  // perhaps later
  disable(s == TMM_ERROR_NO_DEVICE ? "no usable CUDA device (TMM_ERROR_NO_DEVICE)"
                                   : "tiledmm cannot make a handle");
  return nullptr;
}

void Engine::release(Slot* slot) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(slot);
  }
  freed_->notify_one();
}

void Engine::abandon(Slot* slot) {
  (void)slot;  // stays in every_, never used again
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --live_;
  }
  freed_->notify_all();
}

void Engine::disable(const char* why) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_.load(std::memory_order_relaxed) == kDisabled) return;
    try {
      disabled_why_ = why;
    } catch (...) {
    }
    state_.store(kDisabled, std::memory_order_release);
  }
  freed_->notify_all();
  Log::line(
      "note: tiledmm is off for the rest of this process: %s; every call goes to the "
      "fallback BLAS",
      why);
}

std::string Engine::describe() const {
  if (disabled()) return "off (" + disabled_why_ + ")";
  if (!started()) return "not started";
  const int sms = multiprocessors();
  return sms > 0 ? "started (CUDA, " + std::to_string(sms) + " SMs)" : "started (CPU)";
}

void Engine::prepare_fork() {
  if (g_engine != nullptr) g_engine->mutex_.lock();
}

void Engine::parent_after_fork() {
  if (g_engine != nullptr) g_engine->mutex_.unlock();
}

void Engine::child_after_fork() {
  Engine* e = g_engine;
  if (e == nullptr) return;
  // Every handle belongs to the parent: its CUDA context and its worker threads do
  // not exist here. They stay in every_ (reachable, never destroyed).
  e->idle_.clear();
  e->live_ = 0;
  if (auto* fresh = new (std::nothrow) std::condition_variable) e->freed_ = fresh;
  if (e->cuda_started_ && e->state_.load() != kDisabled) {
    e->state_.store(kDisabled);
    e->fork_note_ = true;
    try {
      e->disabled_why_ = "its parent had started CUDA, which a child of fork() cannot use";
    } catch (...) {
    }
  }
  e->started_.store(false);
  e->mutex_.unlock();
}

}  // namespace tiledmm::blas
