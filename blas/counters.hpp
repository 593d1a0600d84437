// Counters of calls and flops per routine and per destination, for
// tmm_blas_get_counters. Sharded by thread (each shard on its own cache lines), so
// that threads calling small products at once do not contend on one counter.
#pragma once

#include <cstdint>

#include "tiledmm/tiledmm_blas.h"

namespace tiledmm::blas {

enum class Routine : int { kSgemm = 0, kCblasSgemm, kSgemm64, kCblasSgemm64, kPilaenv, kCount };

const char* routine_name(Routine routine);

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

class Counters {
 public:
  static void add(Routine routine, Counter counter, uint64_t amount = 1);
  // One call and its flops (one shard lookup for both).
  static void add_call(Routine routine, Counter calls, Counter flops, uint64_t amount);
  static void note_k(Routine routine, int64_t k);  // the largest k tiledmm ran
  // Sums the shards of one routine (TMM_BLAS_ALL: every routine); false if unknown.
  static bool read(int routine, tmm_blas_counters& out);
  static void reset();
};

}  // namespace tiledmm::blas
