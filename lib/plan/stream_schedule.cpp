#include "plan/stream_schedule.hpp"

#include <algorithm>
#include <iterator>

#include "core/error.hpp"

namespace tiledmm {
namespace {

// Hands out consecutive pieces of one allocation of elements of `bytes` bytes, each on
// a 256-byte boundary, or none (-1) for a buffer the call
// does not need.
class Carver {
 public:
  explicit Carver(int bytes) : per_block_(256 / bytes) {}
  int64_t take(int64_t elements, bool needed = true) {
    if (!needed) return -1;
    const int64_t at = used_;
    used_ += (elements + per_block_ - 1) / per_block_ * per_block_;
    return at;
  }
  int64_t used() const { return used_; }

 private:
  int64_t per_block_;  // elements in 256 bytes
  int64_t used_ = 0;
};

}  // namespace

StreamLayout stream_layout(const StreamPlan& plan, const StreamBuffers& sizes, bool reads_c,
                           bool a_staged, bool b_staged, bool c_staged, int bytes) {
  const int c_slots = int(plan.c_slots());
  require(c_slots <= kMaxCSlots, Status::Internal, "a plan with ", c_slots, " C slots");
  StreamLayout l;
  std::fill(std::begin(l.acc), std::end(l.acc), -1);
  std::fill(std::begin(l.c_in), std::end(l.c_in), -1);
  std::fill(std::begin(l.panel), std::end(l.panel), -1);

  Carver d(bytes);
  for (int i = 0; i < kASlots; ++i) l.a_chunk[i] = d.take(sizes.a_slot);
  for (int i = 0; i < c_slots; ++i) {
    l.acc[i] = d.take(sizes.c_tile);
    l.c_in[i] = d.take(sizes.c_tile, reads_c);
  }
  for (int i = 0; i < plan.panels(); ++i) l.panel[i] = d.take(sizes.b_panel);
  l.device_elements = d.used();

  // Staging is dense: a chunk of op(A) is tile_m x chunk_k elements whichever way A is
  // stored, and so on.
  const int64_t a_chunk = plan.tile_m * plan.chunk_k, b_chunk = plan.chunk_k * plan.tile_n;
  const int64_t c_strip = c_strip_rows(plan, bytes) * plan.tile_n;
  Carver h(bytes);
  for (int i = 0; i < kASlots; ++i) l.a_stage[i] = h.take(a_chunk, a_staged);
  for (int i = 0; i < 2; ++i) l.b_stage[i] = h.take(b_chunk, b_staged);
  const int strips = c_strips(plan, bytes);
  for (int i = 0; i < kCStrips; ++i) {
    l.c_up_stage[i] = h.take(c_strip, i < strips && reads_c && c_staged);
    l.c_down_stage[i] = h.take(c_strip, i < strips && c_staged);
  }
  l.staging_elements = h.used();
  return l;
}

}  // namespace tiledmm
