// How the streamed host path cuts a product (host C++, no CUDA; unit-tested in
// tests/plan/test_stream_plan.cpp).
//
// B-stationary: C is cut into column tiles of tile_n columns; for each, the panel of
// op(B) it needs (all of k by tile_n) is uploaded once, in chunks of chunk_k rows, and
// stays on the device while the row tiles of C (tile_m rows) stream past: each row
// tile uploads its chunks of op(A) (tile_m by chunk_k) two slots deep, accumulates
// D += A_chunk * B_chunk on the device, applies C = alpha * D + beta * C (C uploaded
// when beta != 0) and downloads. A column tile as wide as n uploads A exactly once.
//
// While a panel goes up, the device could only multiply the one row tile that meets
// the chunks already there, and the host packs the panel (k x tile_n floats) in the
// time the device needs for that tile: the device would wait. So the first `group`
// row tiles of each column tile are computed together, chunk by chunk (each chunk of
// the panel meets `group` chunks of A), which gives the device `group` tiles of work
// while the panel goes up; the later row tiles go one at a time. C has group + 1
// slots (accumulator, and C's copy when beta != 0), so a finished tile downloads and
// unpacks while the next ones compute. C's pinned staging is not a tile per slot but
// a ring of kCStrips strips of about kCStripBytes each way (down, and up when beta !=
// 0): a tile goes up and comes down strip by strip, so the staging does not grow with
// the group or the tile (a double tile of 1024 x 16384 is 128 MiB, nine of them more
// than the default budget), and the host unpacks one strip while the next comes down.
//
// Any k: where no panel of all of k fits the device budget (k in the millions), B's
// chunks stream instead (b_resident false): for each group of row tiles, each chunk of
// op(B) (chunk_k by tile_n) goes up into one of two device slots just before the
// group's chunks of A that meet it, and groups of row tiles follow one another all the
// way down the column tile. Every device and staging buffer is then bounded by the
// tile and chunk edges, whatever k: B is uploaded once per group of row tiles instead
// of once, which the model counts.
#pragma once

#include <cstdint>
#include <vector>

#include "core/gemm_problem.hpp"
#include "plan/measured_rates.hpp"

namespace tiledmm {

// Chunks of op(A) in flight (staging and device slots): deep enough that the host
// packs ahead while the device multiplies a group's chunks.
constexpr int kASlots = 4;

// C's staging: up to kCStrips strips of whole rows of a tile, each up to kCStripBytes
// (one row at least), for C's downloads, and as many for its uploads when beta != 0.
// Four keep the link busy while the host unpacks (or packs) one; copies of 16 MiB run
// at the link's full rate.
constexpr int kCStrips = 4;
constexpr int64_t kCStripBytes = int64_t(16) << 20;

struct StreamPlan {
  int64_t tile_m = 0, tile_n = 0, chunk_k = 0;
  int64_t tiles_m = 0, tiles_n = 0, chunks = 0;
  int64_t group = 1;       // row tiles computed together while a panel goes up
  bool b_resident = true;  // a panel of all of k per column tile; else B's chunks stream
  int64_t tiles() const { return tiles_m * tiles_n; }
  int64_t c_slots() const { return group + 1; }
  // Two panels of op(B) when there are several column tiles: the next one goes up
  // while the last row tiles still multiply with this one. Streaming B: two slots,
  // one chunk each.
  int64_t panels() const { return !b_resident || tiles_n > 1 ? 2 : 1; }
  // Row tiles [t0, next_row_tile(t0)) compute together: the first group of a column
  // tile while its panel goes up, then one at a time; streaming B, groups all the way.
  int64_t next_row_tile(int64_t t0) const {
    const int64_t step = t0 == 0 || !b_resident ? group : 1;
    return t0 + step < tiles_m ? t0 + step : tiles_m;
  }
  // Times op(B) goes up: once, or once per group of row tiles.
  int64_t b_uploads() const { return b_resident ? 1 : (tiles_m + group - 1) / group; }
};

// The device buffers the plan needs: their leading dimensions (each operand kept in
// the orientation it is stored in, rows padded to 16 bytes for 16-byte accesses) and
// their sizes, in elements of the call's precision. For a problem from make_problem that
// uses A and B (each of m, n, k then below 2^61, each operand below 2^61 elements), each
// fits in int64_t.
struct StreamBuffers {
  int64_t a_ld, b_ld, c_ld;
  int64_t a_slot;   // a chunk of op(A), kASlots slots
  int64_t b_panel;  // all of k by tile_n of op(B) (a chunk streaming B); panels() of them
  int64_t b_slot;   // a chunk of the panel (staging only, two slots)
  int64_t c_tile;   // the accumulator, and C's copy when beta != 0; c_slots() of each
};
StreamBuffers stream_buffers(const GemmProblem& p, const StreamPlan& plan);

// Rows of a tile (tile_n elements of `bytes` bytes each, dense) in one strip of C's
// staging: as many as fit kCStripBytes, at least one, at most tile_m.
int64_t c_strip_rows(const StreamPlan& plan, int bytes);
// Strips of C's staging each way: kCStrips, or fewer when the C slots' tiles have fewer
// strips between them (small tiles of one strip each).
int c_strips(const StreamPlan& plan, int bytes);

// The buffers are carved out of one device allocation and one pinned allocation, each
// starting on a 256-byte boundary (stream_schedule.hpp's StreamLayout carves them).

// Bytes of device memory and of pinned staging the plan needs, alignment included
// (staging for every operand: an operand in the caller's pinned memory needs none);
// INT64_MAX when that is more. The device holds whole tiles of C (c_slots() of each);
// staging holds c_strips() strips of C each way.
int64_t stream_device_bytes(const GemmProblem& p, const StreamPlan& plan);
int64_t stream_staging_bytes(const GemmProblem& p, const StreamPlan& plan);

// Modeled seconds of the direct path (pageable copies, then the kernel, then the
// copy back) and of the streamed path for `plan` (the slowest of link, host copies
// and kernel, plus filling and draining the pipeline), on a device whose kernels
// run at `flops_per_s`, with `threads` packing threads.
double direct_seconds(const GemmProblem& p, double flops_per_s, const HostRates& r);
double streamed_seconds(const GemmProblem& p, const StreamPlan& plan, double flops_per_s,
                        int threads, const HostRates& r);

// The cut with the least modeled time (streamed_seconds) among those that fit
// `device_bytes` of device memory and `staging_bytes` of pinned host memory: tile
// edges from 16 up to the matrix (powers of two, or the whole edge), chunks of k up to
// 4096, groups of 1, 2, 4 or 8 row tiles; with a panel of all of k where one fits,
// else streaming B's chunks. Throws Error(OutOfMemory) when not even 16 x 16 tiles,
// 16-deep chunks and groups of one fit: below kMinStreamBudget of either, whatever
// m, n and k.
// Budgets (device memory, and pinned staging) at or above which every product runs on
// the streamed path, whatever m, n and k (the smallest cut needs under 64 KiB of each;
// tests/plan/test_stream_plan.cpp checks extreme shapes at this budget).
constexpr int64_t kMinStreamBudget = int64_t(1) << 20;

//
// lanes > 1: the cut for a product shared by that many devices (plan_shared_stream):
// flops_per_s is theirs together, the model shared_streamed_seconds, and cuts of at
// least 4 tiles a lane come first (for the queue to balance), where the shape has any.
StreamPlan plan_stream(const GemmProblem& p, int64_t device_bytes, int64_t staging_bytes,
                       double flops_per_s, int threads, const HostRates& rates = HostRates(),
                       int lanes = 1);

// ---- One product over several devices (a handle of several) -----------------------
//
// Each device (a lane) walks the same cut over the tiles a shared TileQueue
// (plan/tile_queue.hpp) hands it: its own streams, staging and budget; the host's
// packing threads are split between the lanes.

// What a lane brings: its budgets (device memory, pinned staging) and its kernels' rate.
struct StreamLane {
  int64_t device_bytes = 0, staging_bytes = 0;
  double flops_per_s = 0;
};

// What taking the back half of another lane's range costs (TileQueue's rule 3), in
// seconds: a row tile at a lane's nominal pace, and a panel of op(B) packed (at a lane's
// share of the host's packing rate) and uploaded.
struct StealCost {
  double tile_s = 1.0, panel_s = 0.0;
};

struct SharedStreamPlan {
  StreamPlan plan;  // the cut every lane used walks
  StealCost steal;  // on `plan`, for the lanes used
  int lanes = 1;    // the lanes to use: all of them, or the first alone where sharing does not pay
  double one_seconds = 0;     // the model's time for the first lane alone (plan_stream's cut)
  double shared_seconds = 0;  // and for the lanes used, on `plan`
};

// Modeled seconds of `plan` shared by `lanes` devices whose kernels run at `flops_per_s`
// together, each over a link of its own, with `threads` packing threads in all (the
// host's copies shared). lanes 1: streamed_seconds.
double shared_streamed_seconds(const GemmProblem& p, const StreamPlan& plan, double flops_per_s,
                               int lanes, int threads, const HostRates& rates = HostRates());

// The cut for `lanes` (at least one): plan_stream's for all of them, under the smallest
// budgets of any lane (every lane's allocations fit) as if each ran at the slowest one's
// rate, with at least 4 tiles a lane where the shape has such cuts; used where the model
// says all the lanes beat the first alone by a tenth (or always, with `every_lane`), else
// the first lane's own plan_stream cut and lanes = 1 (also where another lane's budgets
// hold no cut at all). Throws as plan_stream does for the first lane.
SharedStreamPlan plan_shared_stream(const GemmProblem& p, const std::vector<StreamLane>& lanes,
                                    int threads, const HostRates& rates = HostRates(),
                                    bool every_lane = false);

}  // namespace tiledmm
