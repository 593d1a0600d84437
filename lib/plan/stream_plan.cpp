#include "plan/stream_plan.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"

namespace tiledmm {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }  // a >= 0, b > 0
// v elements of `bytes` bytes (a divisor of 16) rounded up to whole 16 bytes: a padded
// row (4 floats, 2 doubles).
int64_t aligned_elements(int64_t v, int bytes) {
  const int per = 16 / bytes;
  return (v + per - 1) / per * per;
}

StreamPlan make(const GemmProblem& p, int64_t tm, int64_t tn, int64_t tk, int64_t group = 1,
                bool b_resident = true) {
  StreamPlan s;
  s.b_resident = b_resident;
  s.tile_m = std::min(tm, p.m);
  s.tile_n = std::min(tn, p.n);
  s.chunk_k = std::max<int64_t>(1, std::min(tk, p.k));
  s.tiles_m = ceil_div(p.m, s.tile_m);
  s.tiles_n = ceil_div(p.n, s.tile_n);
  s.chunks = ceil_div(std::max<int64_t>(p.k, 1), s.chunk_k);
  s.group = std::max<int64_t>(1, std::min(group, s.tiles_m));
  return s;
}

// True when a panel of all of k by `tile_n` columns (as stream_buffers lays it out)
// fits `device` bytes on its own. Checked in 128 bits before any buffer size is
// computed, since k may be up to 2^61: once it holds, the panel's elements fit 64 bits
// (the byte totals are summed in 128 bits and saturated).
bool panel_can_fit(const GemmProblem& p, int64_t tile_n, int64_t device) {
  const int bytes = element_bytes(p.precision);
  const int64_t k = std::max<int64_t>(p.k, 1);
  const __int128 rows = p.trans_b ? tile_n : k;
  const __int128 ld = aligned_elements(p.trans_b ? k : tile_n, bytes);
  return rows * ld * bytes <= __int128(device);
}

bool fits(const GemmProblem& p, const StreamPlan& s, int64_t device, int64_t staging) {
  if (s.b_resident && !panel_can_fit(p, s.tile_n, device)) return false;
  return stream_device_bytes(p, s) <= device && stream_staging_bytes(p, s) <= staging;
}

}  // namespace

// Device rows are padded to 16 bytes (16-byte accesses); staging is dense.
StreamBuffers stream_buffers(const GemmProblem& p, const StreamPlan& s) {
  const int bytes = element_bytes(p.precision);
  StreamBuffers b;
  // Each operand keeps the orientation it is stored in (op(A) chunk: tile_m x chunk_k,
  // or chunk_k x tile_m when A is transposed; the panel: k x tile_n, or tile_n x k).
  // Streaming B, the panel is one chunk deep.
  const int64_t k = s.b_resident ? std::max<int64_t>(p.k, 1) : s.chunk_k;
  b.a_ld = aligned_elements(p.trans_a ? s.tile_m : s.chunk_k, bytes);
  b.b_ld = aligned_elements(p.trans_b ? k : s.tile_n, bytes);
  b.c_ld = aligned_elements(s.tile_n, bytes);
  b.a_slot = (p.trans_a ? s.chunk_k : s.tile_m) * b.a_ld;
  b.b_panel = (p.trans_b ? s.tile_n : k) * b.b_ld;
  b.b_slot = s.chunk_k * s.tile_n;
  b.c_tile = s.tile_m * b.c_ld;
  return b;
}

int64_t c_strip_rows(const StreamPlan& s, int bytes) {
  const int64_t row = std::max<int64_t>(1, s.tile_n) * bytes;
  return std::max<int64_t>(1, std::min(s.tile_m, kCStripBytes / row));
}

int c_strips(const StreamPlan& s, int bytes) {
  const int64_t per_tile = ceil_div(std::max<int64_t>(1, s.tile_m), c_strip_rows(s, bytes));
  return int(std::min<int64_t>(kCStrips, s.c_slots() * per_tile));
}

namespace {

// Byte counts in 128 bits, saturated at INT64_MAX (more than any budget): a panel of
// B is up to tile_n x k elements (up to 2^63 - 4 of them; rounding them up in 64 bits
// would overflow), and two panels with the rest pass 2^63 bytes for operands near the
// 2^63-byte limit of make_problem.
using i128 = __int128;
// A buffer of `elements` of `bytes` bytes, as elements up to the next 256-byte boundary.
i128 aligned(i128 elements, int bytes) {
  const int per = 256 / bytes;
  return (elements + per - 1) / per * per;
}
int64_t saturated_bytes(i128 elements, int bytes) {
  return bytes * elements > INT64_MAX ? INT64_MAX : int64_t(bytes * elements);
}

}  // namespace

int64_t stream_device_bytes(const GemmProblem& p, const StreamPlan& s) {
  const int bytes = element_bytes(p.precision);
  const StreamBuffers b = stream_buffers(p, s);
  const int64_t c_buffers = (p.beta != 0.0 ? 2 : 1) * s.c_slots();
  return saturated_bytes(kASlots * aligned(b.a_slot, bytes) +
                             s.panels() * aligned(b.b_panel, bytes) +
                             c_buffers * aligned(b.c_tile, bytes),
                         bytes);
}

// Staging is dense: no padding inside a buffer. C's is a ring of strips each way,
// whatever the group and the tile's height.
int64_t stream_staging_bytes(const GemmProblem& p, const StreamPlan& s) {
  const int bytes = element_bytes(p.precision);
  const int64_t strips = (p.beta != 0.0 ? 2 : 1) * c_strips(s, bytes);  // down, and up
  return saturated_bytes(kASlots * aligned(i128(s.tile_m) * s.chunk_k, bytes) +
                             2 * aligned(i128(s.chunk_k) * s.tile_n, bytes) +
                             strips * aligned(i128(c_strip_rows(s, bytes)) * s.tile_n, bytes),
                         bytes);
}

namespace {

// Candidate edges: powers of two from 16 below `full`, and `full` itself.
int edges(int64_t full, int64_t cap, int64_t* out) {
  int n = 0;
  if (full <= cap) out[n++] = full;
  for (int64_t e = 16; e < full && e <= cap; e *= 2) out[n++] = e;
  return n;
}

}  // namespace

StreamPlan plan_stream(const GemmProblem& p, int64_t device_bytes, int64_t staging_bytes,
                       double flops_per_s, int threads, const HostRates& rates, int lanes) {
  int64_t ms[64], ns[64], ks[64];
  const int nm = edges(p.m, int64_t(1) << 20, ms), nn = edges(p.n, int64_t(1) << 20, ns);
  const int nk = edges(std::max<int64_t>(p.k, 1), 4096, ks);
  // Several lanes: cuts of at least 4 tiles a lane first, for the queue to balance.
  const int64_t balanced = lanes > 1 ? 4 * int64_t(lanes) : 0;
  for (int64_t min_tiles : {balanced, int64_t(0)}) {
    StreamPlan best;
    double best_time = 1e300;
    // A panel of all of k where one fits (B uploaded once); streaming B's chunks only
    // where none does.
    for (bool resident : {true, false}) {
      for (int a = 0; a < nm; ++a) {
        for (int b = 0; b < nn; ++b) {
          for (int c = 0; c < nk; ++c) {
            for (int64_t g = 1; g <= 8; g *= 2) {
              const StreamPlan s = make(p, ms[a], ns[b], ks[c], g, resident);
              if (s.group < g || !fits(p, s, device_bytes, staging_bytes)) break;
              if (s.tiles() < min_tiles) continue;
              // Ties go to the smaller group and the cut found first (less memory).
              const double t = shared_streamed_seconds(p, s, flops_per_s, lanes, threads, rates);
              if (t < best_time * (1 - 1e-9)) {
                best_time = t;
                best = s;
              }
            }
          }
        }
      }
      if (best.tile_m > 0) return best;
    }
    if (min_tiles == 0) break;
  }
  const StreamPlan s = make(p, 16, 16, 16, 1, false);
  fail(Status::OutOfMemory, "the streamed host path needs at least ",
       stream_device_bytes(p, s) >> 10, " KiB of device memory and ",
       stream_staging_bytes(p, s) >> 10,
       " KiB of pinned staging for this shape (budget: ", device_bytes >> 10, " KiB and ",
       staging_bytes >> 10, " KiB)");
}

double direct_seconds(const GemmProblem& p, double flops_per_s, const HostRates& r) {
  const double size = element_bytes(p.precision);
  const double a = size * double(p.m) * double(p.k), b = size * double(p.k) * double(p.n);
  const double c = size * double(p.m) * double(p.n);
  const double up = (a + b + (p.beta != 0.0 ? c : 0.0)) / r.pageable_h2d;
  return up + 2.0 * double(p.m) * double(p.n) * double(p.k) / flops_per_s + c / r.pageable_d2h;
}

double streamed_seconds(const GemmProblem& p, const StreamPlan& s, double flops_per_s, int threads,
                        const HostRates& r) {
  return shared_streamed_seconds(p, s, flops_per_s, 1, threads, r);
}

// The host's packing rate, `threads` threads in all packing for `lanes` lanes: several
// lanes pack at once, while each waits for its own copies, and together reach more of
// the host's memory bus than one lane.
static double pack_rate(const HostRates& r, int lanes, int threads) {
  const double host_max = lanes > 1 ? std::max(r.pack_max, r.pack_shared_max) : r.pack_max;
  return std::min(host_max, r.pack_per_thread * std::max(1, threads));
}

double shared_streamed_seconds(const GemmProblem& p, const StreamPlan& s, double flops_per_s,
                               int lanes, int threads, const HostRates& r) {
  const double size = element_bytes(p.precision);
  const double d = std::max(1, lanes);
  const double a = size * double(p.m) * double(p.k), b = size * double(p.k) * double(p.n);
  const double c = size * double(p.m) * double(p.n);
  const double c_moves = p.beta != 0.0 ? 2.0 : 1.0;
  // Several lanes: besides its columns, each lane but one uploads about one more panel
  // (the back half of another's range it takes at the end, TileQueue's rule 3).
  const double panels = double(s.b_uploads()) +
                        (s.b_resident ? (d - 1.0) / double(std::max<int64_t>(1, s.tiles_n)) : 0.0);
  const double moved = a * double(s.tiles_n) + b * panels + c * c_moves;  // each way once
  // The packing threads (all the lanes') share the host; each device has its link.
  const double pack = pack_rate(r, lanes, threads);
  const double kernel = 2.0 * double(p.m) * double(p.n) * double(p.k) / flops_per_s;
  const double steady = std::max({moved / (d * r.pinned_link), moved / pack, kernel});
  // Fill: the first chunks packed and uploaded before the first kernel; drain: the
  // last tile of C downloaded and unpacked after the last kernel (each lane's at once).
  const double first = size * double(s.chunk_k) * double(s.tile_m + s.tile_n);
  const double last = size * double(s.tile_m) * double(s.tile_n);
  const double fill = first / pack + first / r.pinned_link;
  const double drain = last / r.pinned_link + last / pack;
  // Each panel: the host packs it and the group's chunks of A while the device
  // multiplies the group; what the device cannot cover is lost, once per panel.
  const double lane_flops = flops_per_s / d;
  const double panel = size * double(p.k) * double(s.tile_n);
  const double group_a = size * double(s.group) * double(s.tile_m) * double(p.k);
  const double group_flops =
      2.0 * double(s.group) * double(s.tile_m) * double(s.tile_n) * double(p.k);
  const double panel_wait =
      s.b_resident
          ? std::max(0.0, std::max((panel + group_a) / pack, (panel + group_a) / r.pinned_link) -
                              group_flops / lane_flops)
          : 0.0;
  // And the group's tiles finish together: the host unpacks them while the device
  // multiplies the later row tiles of the panel; what those cannot cover is lost too.
  const double tile_flops = 2.0 * double(s.tile_m) * double(s.tile_n) * double(p.k);
  const double bunch = std::max(0.0, double(s.group - 1) * last / pack -
                                         double(s.tiles_m - s.group) * tile_flops / lane_flops);
  const double steps = double(s.tiles()) * double(s.chunks) +
                       double(s.tiles_n) * double(s.b_uploads()) * double(s.chunks);
  // Several lanes end about half a tile apart (the queue hands out a tile at a time), and
  // each lane's thread, allocations and first waits cost a fixed time.
  const double tail = lanes > 1 ? 0.5 * tile_flops / lane_flops + r.lane_overhead_s : 0.0;
  // The lanes lose their panels' waits, and do their steps, side by side.
  return steady + fill + drain + tail + double(s.tiles_n) * (panel_wait + bunch) / d +
         steps * r.step_overhead_s / d;
}

SharedStreamPlan plan_shared_stream(const GemmProblem& p, const std::vector<StreamLane>& lanes,
                                    int threads, const HostRates& r, bool every_lane) {
  require(!lanes.empty(), Status::Internal, "plan_shared_stream: no lanes");
  const int d = int(lanes.size());
  SharedStreamPlan out;
  const StreamLane& first = lanes.front();
  out.plan = plan_stream(p, first.device_bytes, first.staging_bytes, first.flops_per_s, threads, r);
  out.one_seconds = streamed_seconds(p, out.plan, first.flops_per_s, threads, r);
  out.shared_seconds = out.one_seconds;
  if (d == 1) return out;
  // One cut for all: what the smallest budgets hold, planned as if every lane ran at the
  // slowest one's rate; timed at their rates together.
  int64_t device = first.device_bytes, staging = first.staging_bytes;
  double slowest = first.flops_per_s, total = 0;
  for (const StreamLane& l : lanes) {
    device = std::min(device, l.device_bytes);
    staging = std::min(staging, l.staging_bytes);
    slowest = std::min(slowest, l.flops_per_s);
    total += l.flops_per_s;
  }
  // A lane too small for even the least cut leaves the first lane to run it alone.
  StreamPlan shared;
  try {
    shared = plan_stream(p, device, staging, slowest * d, threads, r, d);
  } catch (const Error& e) {
    if (e.status() != Status::OutOfMemory) throw;
    return out;
  }
  const double seconds = shared_streamed_seconds(p, shared, total, d, threads, r);
  // All the lanes where the model says they beat the first alone by a tenth (threads
  // and a shared queue cost something the model does not count).
  if (every_lane || seconds < 0.9 * out.one_seconds) {
    out.plan = shared;
    out.lanes = d;
    out.shared_seconds = seconds;
    // A steal's cost: a row tile at the slowest lane's rate, or its bytes (its chunks of
    // op(A) packed, its tile of C down and unpacked) at a lane's share of the packing,
    // whichever is slower; a panel of op(B) at that share or its link (none streaming
    // B: each group brings its chunks). The plain rule (the default cost) where either
    // is not finite.
    const double size = element_bytes(p.precision);
    const double lane_bytes_s = std::min(pack_rate(r, d, threads) / d, r.pinned_link);
    const double tile_bytes = size * double(shared.tile_m) *
                              (double(p.k) + (p.beta != 0.0 ? 2.0 : 1.0) * double(shared.tile_n));
    StealCost cost;
    cost.tile_s =
        std::max(2.0 * double(shared.tile_m) * double(shared.tile_n) * double(p.k) / slowest,
                 tile_bytes / lane_bytes_s);
    cost.panel_s =
        shared.b_resident ? size * double(p.k) * double(shared.tile_n) / lane_bytes_s : 0.0;
    if (std::isfinite(cost.tile_s) && cost.tile_s > 0 && std::isfinite(cost.panel_s))
      out.steal = cost;
  }
  return out;
}

}  // namespace tiledmm
