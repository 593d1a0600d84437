// The sharded counters (counters.hpp). A thread takes a shard on its first count and
// keeps it; threads beyond kShards share shards, which stays correct (atomic adds).
#include "counters.hpp"

#include <atomic>

namespace tiledmm::blas {
namespace {

constexpr int kShards = 32;
constexpr int kRoutines = int(Routine::kCount);
constexpr int kCounters = int(Counter::kCount);

struct alignas(64) Shard {
  std::atomic<uint64_t> value[kRoutines][kCounters];
  std::atomic<int64_t> max_k[kRoutines];
};

// Zero-initialised static storage: no constructor runs at load time.
Shard g_shards[kShards];
std::atomic<unsigned> g_next_shard{0};

// Initial-exec TLS: a plain load, no __tls_get_addr call, on every BLAS call. (Four
// bytes of the static TLS surplus glibc keeps for libraries loaded later.)
__attribute__((tls_model("initial-exec"))) thread_local int t_shard = -1;

Shard& my_shard() {
  if (t_shard < 0) t_shard = int(g_next_shard.fetch_add(1, std::memory_order_relaxed) % kShards);
  return g_shards[t_shard];
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
    case Routine::kCount:
      break;
  }
  return "?";
}

void Counters::add(Routine routine, Counter counter, uint64_t amount) {
  my_shard().value[int(routine)][int(counter)].fetch_add(amount, std::memory_order_relaxed);
}

void Counters::add_call(Routine routine, Counter calls, Counter flops, uint64_t amount) {
  auto& row = my_shard().value[int(routine)];
  row[int(calls)].fetch_add(1, std::memory_order_relaxed);
  row[int(flops)].fetch_add(amount, std::memory_order_relaxed);
}

void Counters::note_k(Routine routine, int64_t k) {
  std::atomic<int64_t>& slot = my_shard().max_k[int(routine)];
  int64_t seen = slot.load(std::memory_order_relaxed);
  while (k > seen && !slot.compare_exchange_weak(seen, k, std::memory_order_relaxed)) {
  }
}

bool Counters::read(int routine, tmm_blas_counters& out) {
  const bool all = routine == TMM_BLAS_ALL;
  if (!all && (routine < 0 || routine >= kRoutines)) return false;
  uint64_t sum[kCounters] = {};
  int64_t max_k = 0;
  for (const Shard& shard : g_shards) {
    for (int r = 0; r < kRoutines; ++r) {
      if (!all && r != routine) continue;
      for (int c = 0; c < kCounters; ++c)
        sum[c] += shard.value[r][c].load(std::memory_order_relaxed);
      const int64_t k = shard.max_k[r].load(std::memory_order_relaxed);
      if (k > max_k) max_k = k;
    }
  }
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
  for (Shard& shard : g_shards) {
    for (int r = 0; r < kRoutines; ++r) {
      for (int c = 0; c < kCounters; ++c) shard.value[r][c].store(0, std::memory_order_relaxed);
      shard.max_k[r].store(0, std::memory_order_relaxed);
    }
  }
}

}  // namespace tiledmm::blas
