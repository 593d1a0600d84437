// The per-thread counters (counters.hpp). No lock anywhere, so that nothing can
// deadlock a child of fork() whatever other threads were doing:
//   - the blocks are a singly linked list that only grows (a compare-and-swap on its
//     head) and is never freed: readers walk it while threads are added;
//   - a thread takes a block on its first count: one a thread that exited gave back
//     (compare-and-swap on `owned`), else a new one; the counts the block holds stay
//     in it, so what exited threads counted is never lost;
//   - a pthread key's destructor gives the block back when the thread exits (the
//     thread's pointer is plain initial-exec TLS: a C++ thread_local with a destructor
//     would not be);
//   - a reset stores each value in `base`; a reader sums value - base. Only the owner
//     writes `value`, so the owner's add needs no atomic read-modify-write. A reader
//     loads `base` first (acquire, against the reset's release), then `value`: the
//     value it sees is then at least the one the reset stored as base, so a reset
//     meanwhile never makes the difference wrap (a reader loading `value` first could
//     see a base newer than it: counts near 2^64);
//   - a thread that cannot have a block (no memory, or the key not made yet because
//     another thread is making it) adds to a shared block with atomic adds instead.
// In a child of fork() the blocks of the parent's other threads stay owned (their
// counts stay in the sums, as the parent's counts did before), and its one thread
// keeps its block.
#include "support/counters.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <new>

namespace tiledmm::blas {

__thread CounterBlock* t_counter_block __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

constexpr int kRoutines = CounterBlock::kRoutines;
constexpr int kCounters = CounterBlock::kCounters;

// Zero-initialised static storage: no constructor runs at load time.
std::atomic<CounterBlock*> g_blocks{nullptr};
CounterBlock g_shared;  // for threads without a block: atomic adds

enum KeyState { kNoKey = 0, kMaking, kMade, kFailed };
std::atomic<int> g_key_state{kNoKey};
pthread_key_t g_key;

// The key's destructor, on the exiting thread: the block goes back for reuse. A BLAS
// call from a later destructor of the same thread takes a block again (glibc runs the
// destructors again for keys set meanwhile).
void give_back(void* block) {
  auto* b = static_cast<CounterBlock*>(block);
  if (t_counter_block == b) t_counter_block = nullptr;
  b->owned.store(false, std::memory_order_release);
}

// The key's destructor lives in this library: keep it loaded for good.
void keep_loaded() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&give_back), &info) != 0 && info.dli_fname != nullptr)
    dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

// Made by the first thread to count; a thread that finds it being made does not
// wait (it counts in the shared block meanwhile).
bool have_key() {
  int state = g_key_state.load(std::memory_order_acquire);
  if (state == kNoKey && g_key_state.compare_exchange_strong(state, kMaking)) {
    keep_loaded();
    state = pthread_key_create(&g_key, give_back) == 0 ? kMade : kFailed;
    g_key_state.store(state, std::memory_order_release);
  }
  return state == kMade;
}

CounterBlock* take_block() {
  if (!have_key()) return nullptr;
  CounterBlock* b = nullptr;
  for (CounterBlock* p = g_blocks.load(std::memory_order_acquire); p != nullptr; p = p->next) {
    bool free = false;
    // Acquire: the counts its last owner stored are seen before this thread adds.
    if (!p->owned.load(std::memory_order_relaxed) &&
        p->owned.compare_exchange_strong(free, true, std::memory_order_acquire)) {
      b = p;
      break;
    }
  }
  if (b == nullptr) {
    b = new (std::nothrow) CounterBlock();  // value-initialised: zeros
    if (b == nullptr) return nullptr;
    b->owned.store(true, std::memory_order_relaxed);
    b->next = g_blocks.load(std::memory_order_relaxed);
    while (!g_blocks.compare_exchange_weak(b->next, b, std::memory_order_release,
                                           std::memory_order_relaxed)) {
    }
  }
  if (pthread_setspecific(g_key, b) != 0) {
    b->owned.store(false, std::memory_order_release);
    return nullptr;
  }
  t_counter_block = b;
  return b;
}

// Every block: the list, then the shared one.
template <class Fn>
void for_each_block(Fn fn) {
  for (CounterBlock* p = g_blocks.load(std::memory_order_acquire); p != nullptr; p = p->next)
    fn(*p);
  fn(g_shared);
}

}  // namespace

const char* routine_name(Routine routine) {
  switch (routine) {
    case Routine::kSgemm:
      return "sgemm_";
    case Routine::kCblasSgemm:
      return "cblas_sgemm";
    case Routine::kSgemm64:
      return "sgemm_64_";
    case Routine::kCblasSgemm64:
      return "cblas_sgemm64_";
    case Routine::kPilaenv:
      return "pilaenv_";
    case Routine::kDgemm:
      return "dgemm_";
    case Routine::kCblasDgemm:
      return "cblas_dgemm";
    case Routine::kDgemm64:
      return "dgemm_64_";
    case Routine::kCblasDgemm64:
      return "cblas_dgemm64_";
    case Routine::kWheelSgemm:
      return "scipy_sgemm_";
    case Routine::kWheelCblasSgemm:
      return "scipy_cblas_sgemm";
    case Routine::kWheelSgemm64:
      return "scipy_sgemm_64_";
    case Routine::kWheelCblasSgemm64:
      return "scipy_cblas_sgemm64_";
    case Routine::kWheelDgemm:
      return "scipy_dgemm_";
    case Routine::kWheelCblasDgemm:
      return "scipy_cblas_dgemm";
    case Routine::kWheelDgemm64:
      return "scipy_dgemm_64_";
    case Routine::kWheelCblasDgemm64:
      return "scipy_cblas_dgemm64_";
    case Routine::kCount:
      break;
  }
  return "?";
}

void Counters::add_first(Routine routine, Counter counter, uint64_t amount) {
  CounterBlock* b = t_counter_block;
  if (b == nullptr) b = take_block();
  if (b != nullptr) {
    bump(b->value[int(routine)][int(counter)], amount);
  } else {
    g_shared.value[int(routine)][int(counter)].fetch_add(amount, std::memory_order_relaxed);
  }
}

void Counters::note_k(Routine routine, int64_t k) {
  CounterBlock* b = t_counter_block;
  if (b == nullptr) b = take_block();
  std::atomic<int64_t>& slot = (b != nullptr ? b : &g_shared)->max_k[int(routine)];
  int64_t seen = slot.load(std::memory_order_relaxed);
  while (k > seen && !slot.compare_exchange_weak(seen, k, std::memory_order_relaxed)) {
  }
}

bool Counters::read(int routine, tmm_blas_counters& out) {
  const bool all = routine == TMM_BLAS_ALL;
  if (!all && (routine < 0 || routine >= kRoutines)) return false;
  uint64_t sum[kCounters] = {};
  int64_t max_k = 0;
  for_each_block([&](const CounterBlock& block) {
    for (int r = 0; r < kRoutines; ++r) {
      if (!all && r != routine) continue;
      for (int c = 0; c < kCounters; ++c) {
        const uint64_t base = block.base[r][c].load(std::memory_order_acquire);
        const uint64_t value = block.value[r][c].load(std::memory_order_relaxed);
        sum[c] += value > base ? value - base : 0;  // equal at least (the top of the file)
      }
      const int64_t k = block.max_k[r].load(std::memory_order_relaxed);
      if (k > max_k) max_k = k;
    }
  });
  out.tiledmm_calls = sum[int(Counter::kTiledmmCalls)];
  out.tiledmm_flops = sum[int(Counter::kTiledmmFlops)];
  out.fallback_calls = sum[int(Counter::kFallbackCalls)];
  out.fallback_flops = sum[int(Counter::kFallbackFlops)];
  out.recovered_calls = sum[int(Counter::kRecovered)];
  out.invalid_calls = sum[int(Counter::kInvalid)];
  out.noop_calls = sum[int(Counter::kNoop)];
  out.lost_calls = sum[int(Counter::kLost)];
  out.tiledmm_max_k = max_k;
  return true;
}

void Counters::reset() {
  for_each_block([](CounterBlock& block) {
    for (int r = 0; r < kRoutines; ++r) {
      for (int c = 0; c < kCounters; ++c)
        block.base[r][c].store(block.value[r][c].load(std::memory_order_relaxed),
                               std::memory_order_release);
      block.max_k[r].store(0, std::memory_order_relaxed);
    }
  });
}

}  // namespace tiledmm::blas
