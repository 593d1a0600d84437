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
// come after pilaenv_, as they came after it in the library, and the wheels' prefixed
// twins (support/wheel_names.hpp) after them, in the same order as the standard names.
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
  kWheelSgemm,  // scipy_sgemm_
  kWheelCblasSgemm,
  kWheelSgemm64,
  kWheelCblasSgemm64,
  kWheelDgemm,
  kWheelCblasDgemm,
  kWheelDgemm64,
  kWheelCblasDgemm64,  // scipy_cblas_dgemm64_
  kCount
};
static_assert(int(Routine::kPilaenv) == TMM_BLAS_PILAENV &&
              int(Routine::kDgemm) == TMM_BLAS_DGEMM &&
              int(Routine::kCblasDgemm64) == TMM_BLAS_CBLAS_DGEMM_64 &&
              int(Routine::kWheelSgemm) == TMM_BLAS_SCIPY_SGEMM &&
              int(Routine::kWheelCblasDgemm64) == TMM_BLAS_SCIPY_CBLAS_DGEMM_64);

const char* routine_name(Routine routine);

// The routine of a GEMM entry point: element type T (float or double), integers Int
// (int, or int64_t for the ILP64 names), Fortran or CBLAS, a standard name or its
// wheel's prefixed twin (Wheel).
template <class T, class Int, bool Wheel = false>
constexpr Routine gemm_routine(bool cblas) {
  constexpr bool wide = sizeof(Int) == 8;
  if constexpr (Wheel) {
    constexpr int twin = int(gemm_routine<T, Int>(false));
    constexpr int first =
        sizeof(T) == sizeof(float) ? int(Routine::kWheelSgemm) : int(Routine::kWheelDgemm);
    constexpr int standard_first =
        sizeof(T) == sizeof(float) ? int(Routine::kSgemm) : int(Routine::kDgemm);
    return Routine(first + (twin - standard_first) + (cblas ? 1 : 0));
  } else if constexpr (sizeof(T) == sizeof(float)) {
    return cblas ? (wide ? Routine::kCblasSgemm64 : Routine::kCblasSgemm)
                 : (wide ? Routine::kSgemm64 : Routine::kSgemm);
  } else {
    return cblas ? (wide ? Routine::kCblasDgemm64 : Routine::kCblasDgemm)
                 : (wide ? Routine::kDgemm64 : Routine::kDgemm);
  }
}
static_assert(gemm_routine<float, int, true>(false) == Routine::kWheelSgemm &&
              gemm_routine<float, int64_t, true>(true) == Routine::kWheelCblasSgemm64 &&
              gemm_routine<double, int, true>(true) == Routine::kWheelCblasDgemm &&
              gemm_routine<double, int64_t, true>(false) == Routine::kWheelDgemm64);

// A wheel's prefixed name, and the standard name it is the twin of.
constexpr bool is_wheel(Routine r) {
  return int(r) >= int(Routine::kWheelSgemm) && int(r) <= int(Routine::kWheelCblasDgemm64);
}
constexpr Routine standard_twin(Routine r) {
  if (!is_wheel(r)) return r;
  const int i = int(r) - int(Routine::kWheelSgemm);  // 0..3 single, 4..7 double
  return Routine((i < 4 ? int(Routine::kSgemm) : int(Routine::kDgemm)) + i % 4);
}

// Whether a GEMM routine is a CBLAS one, or takes 64-bit integers (a wheel's name as
// its twin).
constexpr bool is_cblas(Routine r) {
  r = standard_twin(r);
  return r == Routine::kCblasSgemm || r == Routine::kCblasSgemm64 || r == Routine::kCblasDgemm ||
         r == Routine::kCblasDgemm64;
}
constexpr bool is_wide(Routine r) {
  r = standard_twin(r);
  return r == Routine::kSgemm64 || r == Routine::kCblasSgemm64 || r == Routine::kDgemm64 ||
         r == Routine::kCblasDgemm64;
}
static_assert(is_cblas(Routine::kWheelCblasSgemm) && !is_cblas(Routine::kWheelDgemm64) &&
              is_wide(Routine::kWheelDgemm64) && !is_wide(Routine::kWheelCblasDgemm) &&
              standard_twin(Routine::kWheelCblasDgemm64) == Routine::kCblasDgemm64);

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
