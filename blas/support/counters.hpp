// Counters of calls and flops per routine and per destination, for
// tmm_blas_get_counters. Each thread counts in a block of its own, which no other
// thread writes, so that counting a call costs a plain load, add and store (no
// lock-prefixed instruction, no cache line shared with other threads). The blocks
// form a list that only grows; a reader sums them. When a thread exits, its block is
// handed to the next new thread, with its counts in it (counters.cpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "tiledmm/tiledmm_blas.h"

namespace tiledmm::blas {

// The values of tmm_blas_routine (tiledmm_blas.h): the double-precision entry points
// come after pilaenv_, as they came after it in the library.
enum class Routine : int {
  kSgemm = 0,
  kCblasSgemm,
  kSgemm64,
  kCblasSgemm64,
  kPilaenv,
  kDgemm,
  kCblasDgemm,
  kDgemm64,
  kCblasDgemm64,
  kCount
};
static_assert(int(Routine::kPilaenv) == TMM_BLAS_PILAENV &&
              int(Routine::kDgemm) == TMM_BLAS_DGEMM &&
              int(Routine::kCblasDgemm64) == TMM_BLAS_CBLAS_DGEMM_64);

const char* routine_name(Routine routine);

// The routine of a GEMM entry point: element type T (float or double), integers Int
// (int, or int64_t for the ILP64 names), Fortran or CBLAS.
template <class T, class Int>
constexpr Routine gemm_routine(bool cblas) {
  constexpr bool wide = sizeof(Int) == 8;
  if constexpr (sizeof(T) == sizeof(float)) {
    return cblas ? (wide ? Routine::kCblasSgemm64 : Routine::kCblasSgemm)
                 : (wide ? Routine::kSgemm64 : Routine::kSgemm);
  } else {
    return cblas ? (wide ? Routine::kCblasDgemm64 : Routine::kCblasDgemm)
                 : (wide ? Routine::kDgemm64 : Routine::kDgemm);
  }
}

// Whether a GEMM routine is a CBLAS one, or takes 64-bit integers.
constexpr bool is_cblas(Routine r) {
  return r == Routine::kCblasSgemm || r == Routine::kCblasSgemm64 || r == Routine::kCblasDgemm ||
         r == Routine::kCblasDgemm64;
}
constexpr bool is_wide(Routine r) {
  return r == Routine::kSgemm64 || r == Routine::kCblasSgemm64 || r == Routine::kDgemm64 ||
         r == Routine::kCblasDgemm64;
}

enum class Counter : int {
  kTiledmmCalls = 0,
  kTiledmmFlops,
  kFallbackCalls,
  kFallbackFlops,
  kRecovered,
  kInvalid,
  kNoop,
  kLost,
  kCount
};

// One thread's counts. `value` only grows, and only its owner writes it (relaxed
// atomics: a reader on another thread sees whole values); a reset records the values
// in `base` instead of zeroing them, so that it never races with the owner's stores.
struct alignas(64) CounterBlock {
  static constexpr int kRoutines = int(Routine::kCount);
  static constexpr int kCounters = int(Counter::kCount);
  std::atomic<uint64_t> value[kRoutines][kCounters];
  std::atomic<uint64_t> base[kRoutines][kCounters];  // the values at the last reset
  std::atomic<int64_t> max_k[kRoutines];             // compare-and-swap: a reset zeroes it
  std::atomic<bool> owned;                           // a live thread counts here
  CounterBlock* next;                                // set once, before the block is listed
};

// This thread's block; nullptr until its first count (or after it was given back).
// Initial-exec TLS: a plain load, no __tls_get_addr call, on every BLAS call (eight
// bytes of the static TLS surplus glibc keeps for libraries loaded later).
// (The fast path's assembly, entry/trampolines_x86_64.S, reads it by its asm name.)
extern __thread CounterBlock* t_counter_block __asm__("tmm_blas_t_counter_block")
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

class Counters {
 public:
  static void add(Routine routine, Counter counter, uint64_t amount = 1) {
    if (CounterBlock* b = t_counter_block) {
      bump(b->value[int(routine)][int(counter)], amount);
    } else {
      add_first(routine, counter, amount);
    }
  }
  // One call and its flops: the small calls' fast path.
  static void add_call(Routine routine, Counter calls, Counter flops, uint64_t amount) {
    if (CounterBlock* b = t_counter_block) {
      bump(b->value[int(routine)][int(calls)], 1);
      bump(b->value[int(routine)][int(flops)], amount);
    } else {
      add_first(routine, calls, 1);
      add_first(routine, flops, amount);
    }
  }
  // This thread has its block: add and add_call make no call.
  static bool ready() { return t_counter_block != nullptr; }
  static void note_k(Routine routine, int64_t k);  // the largest k tiledmm ran
  // Sums the blocks for one routine (TMM_BLAS_ALL: every routine); false if unknown.
  static bool read(int routine, tmm_blas_counters& out);
  static void reset();

 private:
  // The owner's add: no other thread writes `v`, so no read-modify-write is needed.
  static void bump(std::atomic<uint64_t>& v, uint64_t amount) {
    v.store(v.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
  }
  // The thread's first count: takes a block, then adds (out of line).
  static void add_first(Routine routine, Counter counter, uint64_t amount);
};

}  // namespace tiledmm::blas
