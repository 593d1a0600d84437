// How the streamed engine (lib/cuda/streamed/streamed_gemm.cu) lays out its buffers and
// walks a StreamPlan: which piece of the product comes when and which slot it uses.
// Host C++, no CUDA: unit-tested in tests/plan/test_stream_schedule.cpp, so the GPU's
// engine only enqueues what these say.
#pragma once

#include <algorithm>
#include <cstdint>

#include "plan/stream_plan.hpp"

namespace tiledmm {

// The most C slots a plan has (groups of up to 8 row tiles, plus one).
constexpr int kMaxCSlots = 9;

// Where each buffer of a call lies in the engine's one device allocation and its one
// pinned allocation: offsets in elements of the call, each on a 256-byte boundary,
// -1 for a buffer the call does not need (and for slots past the plan's). Both
// allocations are made before the first write to C; the carving is this order.
struct StreamLayout {
  // Device: kASlots chunks of op(A), then per C slot its accumulator and (beta != 0)
  // C's copy, then panels() panels (or slots) of op(B).
  int64_t a_chunk[kASlots], acc[kMaxCSlots], c_in[kMaxCSlots], panel[2];
  // Staging (dense), for an operand not already pinned: kASlots chunks of op(A), two
  // of op(B), then c_strips() strips of C (c_strip_rows of a tile each) going up
  // (beta != 0) and as many coming down.
  int64_t a_stage[kASlots], b_stage[2], c_up_stage[kCStrips], c_down_stage[kCStrips];
  int64_t device_elements, staging_elements;  // the sizes of the two allocations, in elements
};

// Throws Error(Internal) for a plan of more than kMaxCSlots C slots. An operand that
// is staged is not in the caller's pinned memory (those the DMA engines reach in place).
// Elements are of `bytes` bytes (4 or 8), as stream_device_bytes and
// stream_staging_bytes count them.
StreamLayout stream_layout(const StreamPlan& plan, const StreamBuffers& sizes, bool reads_c,
                           bool a_staged, bool b_staged, bool c_staged, int bytes = 4);

// Slots handed out in turn: 0, 1, ..., count - 1, 0, ...
class SlotRing {
 public:
  explicit SlotRing(int count) : count_(count) {}
  int take() {
    const int slot = next_;
    next_ = (next_ + 1) % count_;
    return slot;
  }
  // The i-th slot counted from the one taken longest ago (i = 0: the next to take).
  int oldest(int i) const { return (next_ + i) % count_; }

 private:
  int count_;
  int next_ = 0;
};

// One column tile of C: columns [n0, n0 + cols), and (B resident) its panel of op(B).
struct StreamColumn {
  int64_t index, n0, cols;
  int panel;
};

// One row tile of C: rows [m0, m0 + rows), in C slot c_slot.
struct StreamRowTile {
  int64_t index, m0, rows;
  int c_slot;
};

// Row tiles [first, end) computed together (StreamPlan::next_row_tile).
struct StreamGroup {
  int64_t first, end;
  StreamRowTile tiles[kMaxCSlots];  // end - first of them
  int size() const { return int(end - first); }
};

// One chunk of k: rows [k0, k0 + depth) of op(B). B's chunk goes up through staging
// slot b_slot (-1: already on the device, in the column's panel, which the first group
// uploaded), into device buffer b_buffer (the column's panel, or streaming B the
// slot's), at its row b_row of op(B) (k0 in a panel of all of k, 0 in a slot).
struct StreamChunk {
  int64_t index, k0, depth;
  int b_slot, b_buffer;
  int64_t b_row;
};

// A piece of the product an engine takes at a time: row tiles [t0, t1) of column tile
// `column` of a StreamPlan. A walk asks its source for the next unit when it has
// enqueued the last one's work (walk_stream_units), so that a source shared by several
// engines (plan/tile_queue.hpp) hands work out as each engine gets to it.
struct StreamUnit {
  int64_t column = 0, t0 = 0, t1 = 0;
};

// What an engine's walk pulls its units from: the whole plan (WholePlanSource), or a
// lane's share of a queue (LaneSource, tile_queue.hpp).
class UnitSource {
 public:
  // The next unit, or false when there is none (then never true again).
  virtual bool next(StreamUnit& unit) = 0;

 protected:
  ~UnitSource() = default;
};

// The source of one engine that runs the whole product: every column tile whole, in
// order.
class WholePlanSource final : public UnitSource {
 public:
  explicit WholePlanSource(const StreamPlan& plan) : plan_(plan) {}
  bool next(StreamUnit& unit) override {
    if (column_ >= plan_.tiles_n) return false;
    unit = StreamUnit{column_++, 0, plan_.tiles_m};
    return true;
  }

 private:
  const StreamPlan& plan_;
  int64_t column_ = 0;
};

// Walks `plan` over an m x n x k product in the engine's order, over the units
// `source.next(unit)` hands out (until it returns false), calling on `steps`:
//
//   for each column tile:  begin_column(column)       (a unit of another column than the last)
//     for each group:      begin_group(column, group)      (its tiles' C slots taken)
//       for each chunk:    begin_chunk(column, group, chunk)
//         for each tile:   product(column, group, chunk, tile, a_slot)
//                          end_chunk(column, group, chunk)
//                          end_group(column, group)
//                          end_column(column)         (before the next column, and at the end)
//
// Units of the column the walk is in continue it: the panel of op(B) is already up.
// Within a column the first group has plan.group row tiles (the unit's, if fewer), the
// later ones one (streaming B: group after group), never past the unit's end; B resident,
// the first group of the column uploads the panel chunk by chunk and the later ones read
// it; streaming B, every group uploads its chunks. Panels are taken in turn, one per
// column begun. C slots, B's staging slots (each chunk that goes up) and A's (each
// product) are taken in turn across units; returns the C slots' ring as it ends, whose
// oldest() order is the order the last tiles finished in. Needs plan.c_slots() <=
// kMaxCSlots (stream_layout checks it) and units inside the plan's tiles. A step or a
// source that throws ends the walk.
template <class Source, class Steps>
SlotRing walk_stream_units(const StreamPlan& plan, int64_t m, int64_t n, int64_t k, Source& source,
                           Steps& steps) {
  SlotRing a_slots(kASlots), b_slots(2), c_slots(int(plan.c_slots())), panels(int(plan.panels()));
  StreamColumn column{-1, 0, 0, 0};
  bool first_group = false;  // the next group is the column's first (it uploads the panel)
  StreamUnit unit;
  while (source.next(unit)) {
    if (unit.column != column.index) {
      if (column.index >= 0) steps.end_column(column);
      const int64_t n0 = unit.column * plan.tile_n;
      column = StreamColumn{unit.column, n0, std::min(plan.tile_n, n - n0), panels.take()};
      first_group = true;
      steps.begin_column(column);
    }
    for (int64_t t0 = unit.t0; t0 < unit.t1;) {
      StreamGroup group{};
      group.first = t0;
      group.end = std::min(t0 + (first_group || !plan.b_resident ? plan.group : 1), unit.t1);
      for (int64_t ti = t0; ti < group.end; ++ti) {
        const int64_t m0 = ti * plan.tile_m;
        group.tiles[ti - t0] = StreamRowTile{ti, m0, std::min(plan.tile_m, m - m0), c_slots.take()};
      }
      steps.begin_group(column, group);
      // B resident, the column's first group uploads the panel chunk by chunk;
      // streaming B, every group uploads its chunks.
      const bool uploads_b = first_group || !plan.b_resident;
      first_group = false;
      for (int64_t ci = 0; ci < plan.chunks; ++ci) {
        StreamChunk chunk{};
        chunk.index = ci;
        chunk.k0 = ci * plan.chunk_k;
        chunk.depth = std::min(plan.chunk_k, k - chunk.k0);
        chunk.b_slot = uploads_b ? b_slots.take() : -1;
        chunk.b_buffer = plan.b_resident ? column.panel : chunk.b_slot;
        chunk.b_row = plan.b_resident ? chunk.k0 : 0;
        steps.begin_chunk(column, group, chunk);
        for (int i = 0; i < group.size(); ++i) {
          steps.product(column, group, chunk, group.tiles[i], a_slots.take());
        }
        steps.end_chunk(column, group, chunk);
      }
      steps.end_group(column, group);
      t0 = group.end;
    }
  }
  if (column.index >= 0) steps.end_column(column);
  return c_slots;
}

// walk_stream_units over the whole plan (WholePlanSource): column tiles in order, each
// whole.
template <class Steps>
SlotRing walk_stream_plan(const StreamPlan& plan, int64_t m, int64_t n, int64_t k, Steps& steps) {
  WholePlanSource source(plan);
  return walk_stream_units(plan, m, n, k, source, steps);
}

}  // namespace tiledmm
