// How the streamed engine lays out its buffers and walks a plan
// (lib/plan/stream_schedule.hpp), host C++: the layout is what the plan's budgets count,
// and the walk visits every product once, in the engine's order, with its slots taken
// in turn, over the whole plan or over the units a shared queue hands one engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "plan/stream_plan.hpp"
#include "plan/stream_schedule.hpp"
#include "plan_fixtures.hpp"

namespace tiledmm {
namespace {

using tmm_test::h100;
using tmm_test::shape;

StreamPlan hand_plan(const GemmProblem& p, int64_t tile_m, int64_t tile_n, int64_t chunk_k,
                     int64_t group, bool resident) {
  StreamPlan s;
  s.tile_m = tile_m;
  s.tile_n = tile_n;
  s.chunk_k = chunk_k;
  s.tiles_m = (p.m + tile_m - 1) / tile_m;
  s.tiles_n = (p.n + tile_n - 1) / tile_n;
  s.chunks = (p.k + chunk_k - 1) / chunk_k;
  s.group = group;
  s.b_resident = resident;
  return s;
}

// Plans the planner makes, and hand-made ones with every group size up to the most C
// slots, ragged edges, resident and streaming B.
std::vector<std::pair<GemmProblem, StreamPlan>> plans() {
  std::vector<std::pair<GemmProblem, StreamPlan>> all;
  for (bool trans : {false, true}) {
    for (float beta : {0.0f, 1.0f}) {
      for (const GemmProblem& base : {shape(333, 200, 700), shape(4096, 4096, 4096),
                                      shape(20000, 100, 300), shape(64, 9000, 1 << 16)}) {
        GemmProblem p = base;
        p.trans_a = p.trans_b = trans;
        p.beta = beta;
        all.emplace_back(
            p, plan_stream(p, int64_t(64) << 20, int64_t(32) << 20, 0.74 * h100().fp32_peak(), 16));
        if (p.m * p.n * p.k > (int64_t(1) << 30)) continue;  // few enough products to walk
        for (int64_t group = 1; group < kMaxCSlots; ++group) {
          for (bool resident : {true, false}) {
            all.emplace_back(p, hand_plan(p, 48, 128, 96, group, resident));
          }
        }
      }
    }
  }
  return all;
}

// ---- The layout ----------------------------------------------------------------

TEST(StreamLayout, IsWhatThePlansBudgetsCount) {
  for (const auto& [p, plan] : plans()) {
    const StreamLayout l =
        stream_layout(plan, stream_buffers(p, plan), p.beta != 0.0f, true, true, true);
    EXPECT_EQ(l.device_elements * 4, stream_device_bytes(p, plan));
    EXPECT_EQ(l.staging_elements * 4, stream_staging_bytes(p, plan));
  }
}

// In double the layout carves 8-byte elements: its sizes are what the budgets count
// (each buffer rounded to 256 bytes, 32 doubles, not 64), and every offset is on a
// 256-byte boundary.
TEST(StreamLayout, DoubleCarvesEightByteElements) {
  for (const auto& [f, plan] : plans()) {
    GemmProblem p = f;
    p.precision = Precision::F64;
    const StreamBuffers sizes = stream_buffers(p, plan);
    const StreamLayout l = stream_layout(plan, sizes, p.beta != 0.0, true, true, true, 8);
    EXPECT_EQ(l.device_elements * 8, stream_device_bytes(p, plan));
    EXPECT_EQ(l.staging_elements * 8, stream_staging_bytes(p, plan));
    for (int i = 0; i < kASlots; ++i) {
      EXPECT_EQ(l.a_chunk[i] * 8 % 256, 0);
      EXPECT_EQ(l.a_stage[i] * 8 % 256, 0);
    }
    for (int i = 0; i < int(plan.c_slots()); ++i) EXPECT_EQ(l.acc[i] * 8 % 256, 0);
    for (int i = 0; i < c_strips(plan, 8); ++i) EXPECT_EQ(l.c_down_stage[i] * 8 % 256, 0);
    for (int i = 0; i < plan.panels(); ++i) EXPECT_EQ(l.panel[i] * 8 % 256, 0);
  }
}

// Every buffer the call needs is on a 256-byte boundary, as large as its slot, inside
// its allocation and apart from every other; the others are -1, and an operand in the
// caller's pinned memory takes no staging.
TEST(StreamLayout, BuffersAreAlignedAndApart) {
  for (const auto& [p, plan] : plans()) {
    const StreamBuffers sizes = stream_buffers(p, plan);
    const bool reads_c = p.beta != 0.0f;
    const int c_slots = int(plan.c_slots());
    for (int staged = 0; staged < 8; ++staged) {
      const bool a_staged = staged & 1, b_staged = staged & 2, c_staged = staged & 4;
      const StreamLayout l = stream_layout(plan, sizes, reads_c, a_staged, b_staged, c_staged);
      // (offset, floats) of each buffer, and the buffers that must be absent.
      std::vector<std::pair<int64_t, int64_t>> device, staging;
      std::vector<int64_t> absent;
      auto need = [&](bool needed, std::vector<std::pair<int64_t, int64_t>>& in, int64_t offset,
                      int64_t floats) {
        if (needed) {
          in.emplace_back(offset, floats);
        } else {
          absent.push_back(offset);
        }
      };
      for (int i = 0; i < kASlots; ++i) {
        device.emplace_back(l.a_chunk[i], sizes.a_slot);
        need(a_staged, staging, l.a_stage[i], plan.tile_m * plan.chunk_k);
      }
      for (int i = 0; i < 2; ++i) {
        need(i < plan.panels(), device, l.panel[i], sizes.b_panel);
        need(b_staged, staging, l.b_stage[i], sizes.b_slot);
      }
      for (int i = 0; i < kMaxCSlots; ++i) {
        const bool slot = i < c_slots;
        need(slot, device, l.acc[i], sizes.c_tile);
        need(slot && reads_c, device, l.c_in[i], sizes.c_tile);
      }
      // C's staging: a ring of strips each way, whatever the group.
      const int64_t c_strip = c_strip_rows(plan, 4) * plan.tile_n;
      for (int i = 0; i < kCStrips; ++i) {
        const bool strip = i < c_strips(plan, 4);
        need(strip && reads_c && c_staged, staging, l.c_up_stage[i], c_strip);
        need(strip && c_staged, staging, l.c_down_stage[i], c_strip);
      }
      for (int64_t offset : absent) EXPECT_EQ(offset, -1);
      for (auto* buffers : {&device, &staging}) {
        const int64_t total = buffers == &device ? l.device_elements : l.staging_elements;
        std::sort(buffers->begin(), buffers->end());
        int64_t end = 0;
        for (const auto& [offset, floats] : *buffers) {
          EXPECT_EQ(offset % 64, 0) << "256-byte boundary";
          EXPECT_GE(offset, end) << "overlaps the buffer before it";
          end = offset + floats;
        }
        EXPECT_LE(end, total);
        if (buffers->empty()) {
          EXPECT_EQ(total, 0);
        }
      }
    }
  }
}

TEST(StreamLayout, RefusesMoreCSlotsThanTheEngineHas) {
  const GemmProblem p = shape(1000, 100, 100);
  const StreamPlan plan = hand_plan(p, 16, 16, 16, kMaxCSlots, true);  // group + 1 slots
  try {
    stream_layout(plan, stream_buffers(p, plan), false, true, true, true);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::Internal);
  }
}

// ---- The walk ------------------------------------------------------------------

// Records the steps, as text, and what the checks below need.
struct Recorder {
  std::vector<std::string> trace;
  struct Product {
    int64_t tj, ti, ci;
    int a_slot, c_slot;
  };
  std::vector<Product> products;
  std::vector<StreamChunk> b_uploads;  // each chunk of op(B) that goes up
  std::vector<int64_t> tile_order;     // row tiles in the order their C slots are taken
  std::vector<int> c_slot_order;
  std::set<std::pair<int64_t, int64_t>> on_device;  // (column, k0) of B's chunks up
  int64_t column = -1;
  const StreamPlan* plan = nullptr;

  void begin_column(const StreamColumn& col) {
    column = col.index;
    if (plan->b_resident) on_device.clear();  // this column's panel, not yet up
    trace.push_back("col " + std::to_string(col.index) + " n" + std::to_string(col.n0) + "+" +
                    std::to_string(col.cols) + " panel " + std::to_string(col.panel));
  }
  void begin_group(const StreamColumn&, const StreamGroup& group) {
    std::string s =
        "group [" + std::to_string(group.first) + "," + std::to_string(group.end) + ") c";
    for (int i = 0; i < group.size(); ++i) {
      EXPECT_EQ(group.tiles[i].index, group.first + i);
      s += " " + std::to_string(group.tiles[i].c_slot);
      tile_order.push_back(group.tiles[i].index);
      c_slot_order.push_back(group.tiles[i].c_slot);
    }
    if (!plan->b_resident) on_device.clear();  // streaming B: each group uploads its own
    trace.push_back(s);
  }
  void begin_chunk(const StreamColumn&, const StreamGroup&, const StreamChunk& chunk) {
    if (chunk.b_slot >= 0) {
      b_uploads.push_back(chunk);
      on_device.emplace(column, chunk.k0);
    }
    trace.push_back("chunk " + std::to_string(chunk.index) + " k" + std::to_string(chunk.k0) + "+" +
                    std::to_string(chunk.depth) + " b " + std::to_string(chunk.b_slot) + " -> " +
                    std::to_string(chunk.b_buffer) + "@" + std::to_string(chunk.b_row));
  }
  void product(const StreamColumn&, const StreamGroup&, const StreamChunk& chunk,
               const StreamRowTile& tile, int a_slot) {
    EXPECT_EQ(on_device.count({column, chunk.k0}), 1u) << "B's chunk is not up";
    products.push_back(Product{column, tile.index, chunk.index, a_slot, tile.c_slot});
    trace.push_back("  tile " + std::to_string(tile.index) + " m" + std::to_string(tile.m0) + "+" +
                    std::to_string(tile.rows) + " a " + std::to_string(a_slot));
  }
  void end_chunk(const StreamColumn&, const StreamGroup&, const StreamChunk&) {
    trace.push_back("end chunk");
  }
  void end_group(const StreamColumn&, const StreamGroup&) { trace.push_back("end group"); }
  void end_column(const StreamColumn&) { trace.push_back("end col"); }
};

Recorder walk(const StreamPlan& plan, const GemmProblem& p, SlotRing* ring = nullptr) {
  Recorder r;
  r.plan = &plan;
  const SlotRing end = walk_stream_plan(plan, p.m, p.n, p.k, r);
  if (ring != nullptr) *ring = end;
  return r;
}

// The order itself, on a product small enough to read: 3 row tiles (the last of 1
// row), 2 column tiles (the last of 1 column), 2 chunks (the last 2 deep), groups of
// 2. B resident: the first group uploads the panel, the next reads it. Streaming B:
// every group uploads its chunks, into the slot's own buffer.
TEST(WalkStreamPlan, GivesTheEnginesOrder) {
  const GemmProblem p = shape(5, 3, 5);
  const std::vector<std::string> resident = {
      "col 0 n0+2 panel 0",
      "group [0,2) c 0 1",
      "chunk 0 k0+3 b 0 -> 0@0",
      "  tile 0 m0+2 a 0",
      "  tile 1 m2+2 a 1",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 0@3",
      "  tile 0 m0+2 a 2",
      "  tile 1 m2+2 a 3",
      "end chunk",
      "end group",
      "group [2,3) c 2",
      "chunk 0 k0+3 b -1 -> 0@0",
      "  tile 2 m4+1 a 0",
      "end chunk",
      "chunk 1 k3+2 b -1 -> 0@3",
      "  tile 2 m4+1 a 1",
      "end chunk",
      "end group",
      "end col",
      "col 1 n2+1 panel 1",
      "group [0,2) c 0 1",
      "chunk 0 k0+3 b 0 -> 1@0",
      "  tile 0 m0+2 a 2",
      "  tile 1 m2+2 a 3",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 1@3",
      "  tile 0 m0+2 a 0",
      "  tile 1 m2+2 a 1",
      "end chunk",
      "end group",
      "group [2,3) c 2",
      "chunk 0 k0+3 b -1 -> 1@0",
      "  tile 2 m4+1 a 2",
      "end chunk",
      "chunk 1 k3+2 b -1 -> 1@3",
      "  tile 2 m4+1 a 3",
      "end chunk",
      "end group",
      "end col",
  };
  EXPECT_EQ(walk(hand_plan(p, 2, 2, 3, 2, true), p).trace, resident);

  const std::vector<std::string> streaming = {
      "col 0 n0+2 panel 0",
      "group [0,2) c 0 1",
      "chunk 0 k0+3 b 0 -> 0@0",
      "  tile 0 m0+2 a 0",
      "  tile 1 m2+2 a 1",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 1@0",
      "  tile 0 m0+2 a 2",
      "  tile 1 m2+2 a 3",
      "end chunk",
      "end group",
      "group [2,3) c 2",
      "chunk 0 k0+3 b 0 -> 0@0",
      "  tile 2 m4+1 a 0",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 1@0",
      "  tile 2 m4+1 a 1",
      "end chunk",
      "end group",
      "end col",
      "col 1 n2+1 panel 1",
      "group [0,2) c 0 1",
      "chunk 0 k0+3 b 0 -> 0@0",
      "  tile 0 m0+2 a 2",
      "  tile 1 m2+2 a 3",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 1@0",
      "  tile 0 m0+2 a 0",
      "  tile 1 m2+2 a 1",
      "end chunk",
      "end group",
      "group [2,3) c 2",
      "chunk 0 k0+3 b 0 -> 0@0",
      "  tile 2 m4+1 a 2",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 1@0",
      "  tile 2 m4+1 a 3",
      "end chunk",
      "end group",
      "end col",
  };
  EXPECT_EQ(walk(hand_plan(p, 2, 2, 3, 2, false), p).trace, streaming);
}

// Every product of a row tile, column tile and chunk once, each tile's chunks in
// order; B's chunks go up once per column tile (resident) or per group (streaming),
// each before the products that read it (Recorder::product); A's, B's and C's slots
// are taken in turn, and a group's tiles have C slots of their own.
TEST(WalkStreamPlan, VisitsEveryProductOnceWithSlotsInTurn) {
  for (const auto& [p, plan] : plans()) {
    SCOPED_TRACE("m " + std::to_string(p.m) + " n " + std::to_string(p.n) + " k " +
                 std::to_string(p.k) + " group " + std::to_string(plan.group) + " resident " +
                 std::to_string(plan.b_resident));
    SlotRing ring(1);
    const Recorder r = walk(plan, p, &ring);
    const int c_slots = int(plan.c_slots());

    ASSERT_EQ(int64_t(r.products.size()), plan.tiles() * plan.chunks);
    std::map<std::pair<int64_t, int64_t>, int64_t> next_chunk;  // (tj, ti) -> ci
    for (size_t i = 0; i < r.products.size(); ++i) {
      const Recorder::Product& x = r.products[i];
      EXPECT_EQ(x.ci, next_chunk[std::make_pair(x.tj, x.ti)]++) << "a tile's chunks in order";
      EXPECT_EQ(x.a_slot, int(i % kASlots)) << "A's slots in turn";
    }
    EXPECT_EQ(int64_t(r.b_uploads.size()), plan.tiles_n * plan.chunks * plan.b_uploads());
    for (size_t i = 0; i < r.b_uploads.size(); ++i) {
      const StreamChunk& c = r.b_uploads[i];
      EXPECT_EQ(c.b_slot, int(i % 2)) << "B's slots in turn";
      if (!plan.b_resident) {
        EXPECT_EQ(c.b_buffer, c.b_slot);
      }
      EXPECT_EQ(c.b_row, plan.b_resident ? c.k0 : 0);
    }

    ASSERT_EQ(int64_t(r.c_slot_order.size()), plan.tiles());
    for (size_t i = 0; i < r.c_slot_order.size(); ++i) {
      EXPECT_EQ(r.c_slot_order[i], int(i % size_t(c_slots))) << "C's slots in turn";
      EXPECT_EQ(r.tile_order[i], int64_t(i) % plan.tiles_m) << "row tiles in order";
    }
    // The ring ends where the last tiles left it: oldest first, the last slot is the
    // last tile's.
    EXPECT_EQ(ring.oldest(c_slots - 1), r.c_slot_order.back());
  }
}

// The edges: column tiles cover n, row tiles m and chunks k, the last ragged.
TEST(WalkStreamPlan, PiecesCoverTheProduct) {
  for (const auto& [p, plan] : plans()) {
    struct Edges {
      int64_t n = 0, m = 0, k = 0;
      void begin_column(const StreamColumn& col) {
        EXPECT_EQ(col.n0, n);
        n += col.cols;
      }
      void begin_group(const StreamColumn&, const StreamGroup& group) {
        if (group.first == 0) m = 0;
        for (int i = 0; i < group.size(); ++i) {
          EXPECT_EQ(group.tiles[i].m0, m);
          m += group.tiles[i].rows;
        }
      }
      void begin_chunk(const StreamColumn&, const StreamGroup&, const StreamChunk& chunk) {
        if (chunk.index == 0) k = 0;
        EXPECT_EQ(chunk.k0, k);
        k += chunk.depth;
      }
      void product(const StreamColumn&, const StreamGroup&, const StreamChunk&,
                   const StreamRowTile&, int) {}
      void end_chunk(const StreamColumn&, const StreamGroup&, const StreamChunk&) {}
      void end_group(const StreamColumn&, const StreamGroup&) {}
      void end_column(const StreamColumn&) {}
    } edges;
    walk_stream_plan(plan, p.m, p.n, p.k, edges);
    EXPECT_EQ(edges.n, p.n);
    EXPECT_EQ(edges.m, p.m);
    EXPECT_EQ(edges.k, p.k);
  }
}

// ---- The walk over units --------------------------------------------------------

// Hands out a list of units, in order.
struct ListSource {
  std::vector<StreamUnit> units;
  size_t next_unit = 0;
  bool next(StreamUnit& unit) {
    if (next_unit == units.size()) return false;
    unit = units[next_unit++];
    return true;
  }
};

Recorder walk_units(const StreamPlan& plan, const GemmProblem& p, ListSource source,
                    SlotRing* ring = nullptr) {
  Recorder r;
  r.plan = &plan;
  const SlotRing end = walk_stream_units(plan, p.m, p.n, p.k, source, r);
  if (ring != nullptr) *ring = end;
  return r;
}

// Whole columns in order, cut into units as a queue cuts them (B resident, the column's
// first unit at least plan.group row tiles and the later ones any size, here 1, 2, 3
// row tiles in turn or one each; streaming B, whole groups), walk as the whole plan does,
// step for step: a unit of the column the walk is in continues it (no new panel, the
// same grouping). So the engine's order for one device is unchanged by the units.
TEST(WalkStreamUnits, ColumnsInOrderCutIntoUnitsWalkAsTheWholePlan) {
  for (const auto& [p, plan] : plans()) {
    if (plan.tiles() > 4096) continue;  // a trace small enough to compare
    SCOPED_TRACE("m " + std::to_string(p.m) + " n " + std::to_string(p.n) + " k " +
                 std::to_string(p.k) + " group " + std::to_string(plan.group) + " resident " +
                 std::to_string(plan.b_resident));
    SlotRing whole_ring(1);
    const Recorder whole = walk(plan, p, &whole_ring);
    for (int cut : {0, 1}) {
      ListSource source;
      int size = 0;
      for (int64_t tj = 0; tj < plan.tiles_n; ++tj) {
        for (int64_t t0 = 0; t0 < plan.tiles_m;) {
          const int64_t step = !plan.b_resident ? plan.group * (1 + (cut == 0 ? size++ % 2 : 0))
                               : t0 == 0        ? plan.group + (cut == 0 ? size++ % 3 : 0)
                               : cut == 0       ? 1 + size++ % 3
                                                : 1;
          const int64_t t1 = std::min(plan.tiles_m, t0 + step);
          source.units.push_back(StreamUnit{tj, t0, t1});
          t0 = t1;
        }
      }
      SlotRing ring(1);
      const Recorder units = walk_units(plan, p, source, &ring);
      EXPECT_EQ(units.trace, whole.trace);
      EXPECT_EQ(ring.oldest(0), whole_ring.oldest(0));
    }
  }
}

// A lane of several: columns out of order, a column left and come back to, a unit from
// the middle of a column. Each change of column ends the last one and begins the new one
// on the next panel in turn; the column's first group (the first plan.group row tiles of
// the unit, fewer if the unit has fewer) uploads the panel, the later ones read it one
// tile at a time; a unit of the same column continues it without an upload.
TEST(WalkStreamUnits, AColumnBegunAnywhereUploadsItsPanelWithItsFirstGroup) {
  const GemmProblem p = shape(9, 6, 5);  // 2-row, 2-column tiles: 5 x 3 tiles, 2 chunks
  const StreamPlan plan = hand_plan(p, 2, 2, 3, 2, true);
  ListSource source;
  source.units = {{2, 1, 4}, {2, 4, 5}, {0, 3, 4}, {2, 0, 1}};
  const std::vector<std::string> expected = {
      "col 2 n4+2 panel 0",
      "group [1,3) c 0 1",
      "chunk 0 k0+3 b 0 -> 0@0",
      "  tile 1 m2+2 a 0",
      "  tile 2 m4+2 a 1",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 0@3",
      "  tile 1 m2+2 a 2",
      "  tile 2 m4+2 a 3",
      "end chunk",
      "end group",
      "group [3,4) c 2",
      "chunk 0 k0+3 b -1 -> 0@0",
      "  tile 3 m6+2 a 0",
      "end chunk",
      "chunk 1 k3+2 b -1 -> 0@3",
      "  tile 3 m6+2 a 1",
      "end chunk",
      "end group",
      "group [4,5) c 0",
      "chunk 0 k0+3 b -1 -> 0@0",
      "  tile 4 m8+1 a 2",
      "end chunk",
      "chunk 1 k3+2 b -1 -> 0@3",
      "  tile 4 m8+1 a 3",
      "end chunk",
      "end group",
      "end col",
      "col 0 n0+2 panel 1",
      "group [3,4) c 1",
      "chunk 0 k0+3 b 0 -> 1@0",
      "  tile 3 m6+2 a 0",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 1@3",
      "  tile 3 m6+2 a 1",
      "end chunk",
      "end group",
      "end col",
      "col 2 n4+2 panel 0",
      "group [0,1) c 2",
      "chunk 0 k0+3 b 0 -> 0@0",
      "  tile 0 m0+2 a 2",
      "end chunk",
      "chunk 1 k3+2 b 1 -> 0@3",
      "  tile 0 m0+2 a 3",
      "end chunk",
      "end group",
      "end col",
  };
  EXPECT_EQ(walk_units(plan, p, source).trace, expected);
}

// Scattered units of every plan (each column's row tiles in two ranges, the back one
// first, the columns from the last): every product once, each tile's chunks in order,
// every chunk of B up before a product reads it (Recorder::product), and A's, B's and
// C's slots in turn across units and columns.
TEST(WalkStreamUnits, SlotsRunOnAcrossUnits) {
  for (const auto& [p, plan] : plans()) {
    SCOPED_TRACE("m " + std::to_string(p.m) + " n " + std::to_string(p.n) + " k " +
                 std::to_string(p.k) + " group " + std::to_string(plan.group) + " resident " +
                 std::to_string(plan.b_resident));
    ListSource source;
    for (int64_t tj = plan.tiles_n - 1; tj >= 0; --tj) {
      const int64_t mid = plan.tiles_m / 2;
      source.units.push_back(StreamUnit{tj, mid, plan.tiles_m});
      if (mid > 0) source.units.push_back(StreamUnit{tj, 0, mid});
    }
    const Recorder r = walk_units(plan, p, source);
    ASSERT_EQ(int64_t(r.products.size()), plan.tiles() * plan.chunks);
    std::map<std::pair<int64_t, int64_t>, int64_t> next_chunk;
    for (size_t i = 0; i < r.products.size(); ++i) {
      const Recorder::Product& x = r.products[i];
      EXPECT_EQ(x.ci, next_chunk[std::make_pair(x.tj, x.ti)]++) << "a tile's chunks in order";
      EXPECT_EQ(x.a_slot, int(i % kASlots)) << "A's slots in turn";
    }
    for (size_t i = 0; i < r.b_uploads.size(); ++i) {
      EXPECT_EQ(r.b_uploads[i].b_slot, int(i % 2)) << "B's slots in turn";
    }
    ASSERT_EQ(int64_t(r.c_slot_order.size()), plan.tiles());
    for (size_t i = 0; i < r.c_slot_order.size(); ++i) {
      EXPECT_EQ(r.c_slot_order[i], int(i % size_t(plan.c_slots()))) << "C's slots in turn";
    }
  }
}

TEST(SlotRing, TakesInTurnAndCountsFromTheOldest) {
  SlotRing ring(3);
  EXPECT_EQ(ring.take(), 0);
  EXPECT_EQ(ring.take(), 1);
  EXPECT_EQ(ring.oldest(0), 2);
  EXPECT_EQ(ring.take(), 2);
  EXPECT_EQ(ring.take(), 0);
  EXPECT_EQ(ring.oldest(0), 1);
  EXPECT_EQ(ring.oldest(2), 0);
}

}  // namespace
}  // namespace tiledmm
