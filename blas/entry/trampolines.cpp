// The layout the x86-64 entry points (entry/trampolines_x86_64.S) rely on, checked:
// each number of entry/entry_offsets.h against the C++ it stands for. The assembly
// itself, and its calling convention, are described in the .S file.
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "entry/entry_offsets.h"
#include "entry/fast_path.hpp"
#include "route/router.hpp"
#include "support/counters.hpp"

#if TMM_BLAS_ASM_ENTRIES

namespace tiledmm::blas {

static_assert(offsetof(Route, fallback_max_flops) == TMM_ROUTE_MAX_FLOPS);
static_assert(offsetof(Route, gemm) == TMM_ROUTE_SGEMM);
static_assert(offsetof(Route, cblas_gemm) == TMM_ROUTE_CBLAS);
static_assert(offsetof(Route, cblas_direct) == TMM_ROUTE_CBLAS_DIRECT);
static_assert(offsetof(Route, gemm_direct) == TMM_ROUTE_SGEMM_DIRECT);
static_assert(sizeof(bool) == 1 && sizeof(int) == 4 && sizeof(uint64_t) == 8);
// g_route is the Route's address, t_counter_block a pointer, t_fallback_depth an int.
static_assert(sizeof(std::atomic<const Route*>) == 8 &&
              std::atomic<const Route*>::is_always_lock_free);
constexpr size_t counter_offset(Routine r, Counter c) {
  return (size_t(r) * CounterBlock::kCounters + size_t(c)) * sizeof(uint64_t);
}
static_assert(offsetof(CounterBlock, value) == 0);
static_assert(counter_offset(Routine::kSgemm, Counter::kFallbackCalls) == TMM_SGEMM_CALLS);
static_assert(counter_offset(Routine::kSgemm, Counter::kFallbackFlops) == TMM_SGEMM_FLOPS);
static_assert(counter_offset(Routine::kCblasSgemm, Counter::kFallbackCalls) == TMM_CBLAS_CALLS);
static_assert(counter_offset(Routine::kCblasSgemm, Counter::kFallbackFlops) == TMM_CBLAS_FLOPS);

}  // namespace tiledmm::blas

#endif  // TMM_BLAS_ASM_ENTRIES
