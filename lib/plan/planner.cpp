#include "plan/planner.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "plan/blocked_shapes.hpp"
#include "plan/f64_shapes.hpp"
#include "plan/measured_rates.hpp"
#include "plan/tf32_shapes.hpp"
#include "plan/thin_shapes.hpp"

namespace tiledmm {
namespace {

// a >= 0, b > 0; a + b - 1 would overflow for the sizes up to INT64_MAX that a call
// may pass where it does not use them (m with n = 0, k with alpha = 0).
int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// What the planners plan for p: p, or where it computes nothing (is_empty: a strided batch
// of no products may carry m, n and k up to INT64_MAX together, whose tiles overflow a
// count) a product of one element, which any plan serves.
GemmProblem plannable(const GemmProblem& p) {
  if (!is_empty(p)) return p;
  GemmProblem one = p;
  one.m = one.n = one.k = 1;
  return one;
}

const BlockedShapeInfo* shape_of(int tile) {
  for (const BlockedShapeInfo& s : kBlockedShapes)
    if (s.tile == tile) return &s;
  return nullptr;
}

// The CUDA driver keeps 1 KiB of each block's shared memory for itself.
constexpr int64_t kReservedSharedPerBlock = 1024;
constexpr int kMaxSplits = 32;        // slices of k wherever C is large
constexpr int kMaxDeepSplits = 1024;  // and where C is small, by its partials' bytes
constexpr int64_t kMaxSplitPartialBytes = int64_t(64) << 20;
constexpr int64_t kMinDepthPerSplit = 512;  // less leaves a block too little work
// Except where the tile's blocks leave SMs idle (512^3 ran 64 blocks of 64 x 64 on 132
// SMs, 31 x 33 x 8191 one block in 16 slices): slices of this depth fill them. On the
// H100 (2026-11-27, docs/benchmarks/device-kernels.md "Split floor where SMs idle"),
// against 512 wherever k >= 1024 (and 128 below): 31 x 33 x 8191 0.056 -> 0.022 ms,
// 1023 x 1025 x 1027 0.123 -> 0.089, 96 x 96 x 32768 0.056 -> 0.048, 200 x 100 x 16384
// 0.057 -> 0.049, 640 x 480 x 320 0.031 -> 0.026, 333 x 777 x 555 0.033 -> 0.027; 128
// gave most of it, and no shape of the suite ran slower at 64.
constexpr int64_t kMinDepthPerSplitIdle = 64;

// Blocks of shape `s` one SM of `d` holds at once (resident_blocks).
int resident_blocks_of(const BlockedShapeInfo& s, const DeviceProfile& d) {
  if (s.shared_bytes > d.shared_memory_per_block_optin) return 0;
  const int64_t by_threads = d.max_threads_per_sm / s.threads;
  const int64_t by_shared = d.shared_memory_per_sm / (s.shared_bytes + kReservedSharedPerBlock);
  return int(std::min<int64_t>({s.min_blocks_per_sm, by_threads, by_shared}));
}

// plan_blocked's model over a table of register-blocked shapes (widest first, the
// narrowest last) and `peak`, the rate of the lanes they run on: FP32 for BLOCKED in
// float, the FP64 lanes for the CUDA-core rows in double.
template <size_t N>
BlockedPlan plan_register_blocked(const BlockedShapeInfo (&shapes)[N], double peak,
                                  const GemmProblem& problem, const DeviceProfile& d,
                                  int forced_tile, int max_splits) {
  const GemmProblem p = plannable(problem);
  const BlockedShapeInfo& narrowest = shapes[N - 1];
  // A strided batch runs its products side by side in one launch, unsplit: its blocks and
  // flops are the batch's.
  const int64_t products = std::max<int64_t>(1, p.batch);
  const double flops = 2.0 * double(p.m) * double(p.n) * double(p.k) * double(products);
  if (forced_tile == 0 && flops < kLatencyBoundSeconds * peak &&
      resident_blocks_of(narrowest, d) > 0)
    forced_tile = narrowest.tile;
  const double peak_per_sm = peak / std::max(1, d.multiprocessors);
  const double split_bandwidth = kSplitReductionBandwidth * d.memory_bandwidth;
  BlockedPlan best{0, 1};
  double best_time = 1e300;
  for (const BlockedShapeInfo& s : shapes) {
    if (forced_tile != 0 && s.tile != forced_tile) continue;
    const int resident = resident_blocks_of(s, d);
    if (resident == 0) continue;
    const int64_t blocks = ceil_div(p.m, s.rows) * ceil_div(p.n, s.cols) * products;
    const int64_t slots = int64_t(d.multiprocessors) * resident;
    const double per_block_rate = s.efficiency * peak_per_sm / resident;
    const int most_splits = products > 1 ? 1 : blocked_split_cap(p, max_splits);
    // No split beats the perfect spread of the whole product over every slot, and each
    // slice adds a reduction pass: once that floor plus the passes comes within 5% of
    // the best so far, no larger split can be taken (the loop stops; the plan is the
    // one the whole loop would choose, and deep k over a small C weighs tens of splits,
    // not a thousand). The floor errs low by a hair, so that rounding never stops it early.
    const double floor_time = (1.0 - 1e-9) * double(blocks) * 2.0 * s.rows * s.cols * double(p.k) /
                              (double(slots) * per_block_rate);
    const double pass_time =
        double(element_bytes(p.precision)) * double(p.m) * double(p.n) / split_bandwidth;
    const int64_t min_depth =
        blocks < d.multiprocessors ? kMinDepthPerSplitIdle : kMinDepthPerSplit;
    for (int splits = 1; splits <= most_splits; ++splits) {
      const int64_t depth = ceil_div(p.k, splits);
      if (splits > 1 && depth < min_depth) break;
      if (splits > 1 &&
          floor_time + kLaunchSeconds + double(splits + 2) * pass_time >= best_time * 0.95)
        break;
      const int64_t waves = ceil_div(blocks * splits, slots);
      double t = double(waves) * 2.0 * s.rows * s.cols * double(depth) / per_block_rate;
      if (splits > 1)
        t += kLaunchSeconds + double(splits + 2) * double(element_bytes(p.precision)) *
                                  double(p.m) * double(p.n) / split_bandwidth;
      if (t < best_time * 0.95) {  // prefer fewer splits and earlier tiles unless clearly faster
        best_time = t;
        best = {s.tile, splits};
      }
    }
  }
  require(best.tile != 0, Status::NotSupported, "no BLOCKED tile",
          forced_tile ? " of the size asked for" : "", " fits this device's shared memory");
  return best;
}

}  // namespace

// The most slices of k plan_register_blocked weighs for p: max_splits where the caller
// caps it (> 0), else 32, or more where C is small enough that the slices' partial sums
// stay within 64 MiB (up to 1024): one tile of C over deep k then fills every SM, each
// slice summing fewer terms (64 x 64 x 2^20 in strict FP32 ran at 0.09x cuBLAS, and 3.4x
// its error, with 32 slices on 32 of 132 SMs).
int blocked_split_cap(const GemmProblem& p, int max_splits) {
  if (max_splits > 0) return max_splits;
  // A slice's partial sums: m rows of n rounded up to 16 bytes (the kernels' partial_ld).
  const int64_t bytes = element_bytes(p.precision), per_16 = 16 / bytes;
  const double n_padded = double(ceil_div(std::max<int64_t>(p.n, 1), per_16)) * double(per_16);
  const double per_slice = double(std::max<int64_t>(p.m, 1)) * n_padded * double(bytes);
  const double by_bytes = double(kMaxSplitPartialBytes) / per_slice;
  return by_bytes >= kMaxDeepSplits ? kMaxDeepSplits : std::max(kMaxSplits, int(by_bytes));
}

int resident_blocks(int tile, const DeviceProfile& d) {
  const BlockedShapeInfo* s = shape_of(tile);
  return s == nullptr ? 0 : resident_blocks_of(*s, d);
}

bool small_batch_pays(const GemmProblem& p) {
  return p.batch > 1 && p.m <= kSmallBatchMaxSide && p.n <= kSmallBatchMaxSide &&
         p.k <= kSmallBatchMaxDepth;
}

bool tiny_pays(const GemmProblem& p) {
  return p.batch <= 1 && p.precision == Precision::F32 &&
         double(p.m) * double(p.n) <= kTinyMaxOutputs && p.k <= kTinyMaxDepth;
}

bool small_product(const GemmProblem& p) {
  return p.batch <= 1 && double(p.m) * double(p.n) * double(p.k) <= kSmallProductMaxVolume &&
         p.k <= kSmallProductMaxDepth;
}

bool tf32_tiny_pays(const GemmProblem& p) {
  return tiny_pays(p) && double(p.m) * double(p.n) <= kTf32TinyMaxOutputs;
}

bool by_product_pays(const GemmProblem& one, int splits, int64_t tail_tiles) {
  return splits > 1 && (tail_tiles == 0 || is_deep_k(ceil_div(one.k, kF64MmaDepth)));
}

int small_batch_tile(const GemmProblem& p) { return p.m <= 16 && p.n <= 16 ? 16 : 32; }

bool batch_leaves_sms_idle(const GemmProblem& p, const DeviceProfile& d) {
  return p.batch > 1 && double(ceil_div(p.m, 64)) * double(ceil_div(p.n, 64)) * double(p.batch) <
                            double(d.multiprocessors);
}

BlockedPlan plan_blocked(const GemmProblem& p, const DeviceProfile& d, int forced_tile,
                         int max_splits) {
  return plan_register_blocked(kBlockedShapes, d.fp32_peak(), p, d, forced_tile, max_splits);
}

BlockedPlan plan_f64_blocked(const GemmProblem& problem, const DeviceProfile& d, int forced_tile,
                             int max_splits) {
  const GemmProblem p = plannable(problem);
  // Fewer wide tiles than SMs: the narrow tile, four times as many blocks. The wave model
  // alone counts a lone block on an SM at its share of a full SM's rate, and would keep
  // the wide tile with most SMs idle.
  if (forced_tile == 0 && ceil_div(p.m, kF64Blocked128x128.rows) *
                                  ceil_div(p.n, kF64Blocked128x128.cols) *
                                  std::max<int64_t>(1, p.batch) <
                              d.multiprocessors)
    forced_tile = kF64Blocked64x64.tile;
  return plan_register_blocked(kF64BlockedShapes, d.fp64_lanes_peak(), p, d, forced_tile,
                               max_splits);
}

namespace {

// A tensor-core kernel's tile among its shapes (widest first), as plan_tf32 describes.
// `products`: the products launched side by side (a batch on a batched row), whose
// tiles count together.
template <size_t N>
int plan_tensor_core_tile(const MmaShapeInfo (&shapes)[N], const GemmProblem& p,
                          const DeviceProfile& d, int forced_tile, int64_t products = 1) {
  auto fits = [&](const MmaShapeInfo& s) {
    return s.shared_bytes <= d.shared_memory_per_block_optin;
  };
  if (forced_tile != 0) {
    for (const MmaShapeInfo& s : shapes)
      if (s.tile == forced_tile) return fits(s) ? s.tile : 0;
    return 0;
  }
  // The rows go widest first: the first that fits with a full wave of tiles, else
  // the narrowest that fits (small products want more blocks, not wider ones).
  const MmaShapeInfo* chosen = nullptr;
  for (const MmaShapeInfo& s : shapes) {
    if (!fits(s)) continue;
    chosen = &s;
    if (ceil_div(p.m, s.rows) * ceil_div(p.n, s.cols) * products >= d.multiprocessors) break;
  }
  return chosen ? chosen->tile : 0;
}

}  // namespace

int plan_tf32(const GemmProblem& problem, const DeviceProfile& d, int forced_tile,
              bool wide_everywhere) {
  const GemmProblem p = plannable(problem);
  // On Hopper the wide tile runs the wgmma kernel (tf32_wgmma_kernel.cu), faster than
  // the narrower mma.sync tile even with a fraction of a wave of blocks: on the H100,
  // 1.3x at 512^3 and 2.2x at 2048^3 (BENCHMARKS.md, "Where AUTO's TF32 tile should
  // change on Hopper"). Not past the wgmma kernel's extents: there the mma.sync tiles
  // run, which have none.
  // A strided batch runs its products side by side (on the wgmma kernel for tile 256
  // where the copy engine reads them as they lie, wgmma_batches_in_one_launch, else on
  // the mma.sync rows): the tile that leaves the least of its area idle over a product
  // (the wider on a tie), and none (the strict rows' batched tiles, down to 64 x 64)
  // where even that leaves more than half idle. On the H100 10,000 x 64^3 ran in
  // 1.18 ms on 128 x 256 tiles, 0.21 on strict 64 x 64 ones; 4,000 x 128^3 0.59 in 128 x
  // 256 (docs/benchmarks/batched.md, "Batched tensor cores").
  const int64_t products = std::max<int64_t>(1, p.batch);
  if (forced_tile == 0 && products > 1) {
    const MmaShapeInfo* best = nullptr;
    double best_area = 0;
    for (const MmaShapeInfo& s : kTf32Shapes) {
      if (s.shared_bytes > d.shared_memory_per_block_optin) continue;
      const double area =
          double(ceil_div(p.m, s.rows) * s.rows) * double(ceil_div(p.n, s.cols) * s.cols);
      if (best == nullptr || area < best_area) best = &s, best_area = area;
    }
    if (best == nullptr || best_area > 2.0 * double(p.m) * double(p.n)) return 0;
    return best->tile;
  }
  // A small product (small_product) whose wide tiles leave SMs idle: the 64 x 64 tile,
  // four times as many blocks per 128 x 128 of C, each a short way through k. (Where
  // the wide tiles fill the SMs, as at 12345 x 678 x 9, they stay.)
  if (forced_tile == 0 && wide_everywhere && small_product(p) &&
      wgmma_tiles(p, kTf32Wgmma128x256, wgmma_operands(p, kTf32Wgmma128x256).transposed) <
          d.multiprocessors &&
      kTf32Mma64x64.shared_bytes <= d.shared_memory_per_block_optin)
    return kTf32Mma64x64.tile;
  if (forced_tile == 0 && wide_everywhere && wgmma_takes(p.m, p.n, p.k)) {
    for (const MmaShapeInfo& s : kTf32Shapes)
      if (s.shared_bytes <= d.shared_memory_per_block_optin) return s.tile;
  }
  return plan_tensor_core_tile(kTf32Shapes, p, d, forced_tile);
}

int plan_f64(const GemmProblem& problem, const DeviceProfile& d, int forced_tile) {
  const GemmProblem p = plannable(problem);
  if (forced_tile != 0) return plan_tensor_core_tile(kF64MmaShapes, p, d, forced_tile);
  const auto fits = [&](const MmaShapeInfo& s) {
    return s.shared_bytes <= d.shared_memory_per_block_optin && p.m >= s.rows && p.n >= s.cols;
  };
  // A batch runs on the FP64 rows side by side, unsplit: its tiles count together, and
  // deep k is not split.
  const int64_t products = std::max<int64_t>(1, p.batch);
  const bool deep = products == 1 && is_deep_k(ceil_div(p.k, kF64MmaDepth));
  // The widest tile moves a third less between L2 and the SMs per flop than two blocks of
  // 128 x 64: on the H100 1.05x at 16384^3, where both are held at the power cap, and
  // 1.01x at 8192^3. Where its tiles fill a few waves only, one block per SM leaves more
  // of the last wave idle than two do (4095^3, 4097^3 and 11111 x 2222 x 3333 ran slower
  // in it), so only over many waves, or over deep k in under a wave of its tiles, which
  // plan_f64_tail splits (1000 x 1000 x 32768 and 256 x 256 x 65536 ran faster in it):
  // docs/design/double-precision.md, "The widest tile".
  const int64_t wide_tiles =
      ceil_div(p.m, kF64Mma128x128.rows) * ceil_div(p.n, kF64Mma128x128.cols) * products;
  const int64_t sms = d.multiprocessors;
  if (products > 1) {
    // A batch: the widest tile no wider than a product that the batch fills with waves of
    // tiles (many for 128 x 128, one for 128 x 64), else 64 x 64.
    for (const MmaShapeInfo& s : kF64MmaShapes) {
      const int64_t tiles = ceil_div(p.m, s.rows) * ceil_div(p.n, s.cols) * products;
      const int64_t waves = s.tile == kF64Mma128x128.tile ? kF64WideWaves : 1;
      if (fits(s) && tiles >= waves * sms) return s.tile;
    }
    return plan_tensor_core_tile(kF64MmaShapes, p, d, kF64Mma64x64.tile);
  }
  // The area of C a tile's blocks cover, against the narrowest tile's: the wider tiles
  // compute their padding past m and n too.
  const auto padded = [&](const MmaShapeInfo& s) {  // in double: m, n up to INT64_MAX
    return double(ceil_div(p.m, s.rows)) * s.rows * (double(ceil_div(p.n, s.cols)) * s.cols);
  };
  const auto covers_tightly = [&](const MmaShapeInfo& s) {
    return padded(s) <= kF64MaxPaddingOverNarrowest * padded(kF64Mma64x64);
  };
  // Deep k: the wider tiles only where they waste little more of C than 64 x 64 does
  // (300 x 5000 x 5000 in 128 x 128 tiles computes 1.2x the area of 64 x 64's: 0.47 ms
  // split at best, 0.40-0.44 in 64 x 64; docs/benchmarks/double-precision.md, "One wave
  // of FP64 tiles").
  if (fits(kF64Mma128x128) && ((deep && wide_tiles < sms && covers_tightly(kF64Mma128x128)) ||
                               wide_tiles >= kF64WideWaves * sms))
    return kF64Mma128x128.tile;
  // Deep k where C fills a 128 x 64 tile: that tile, whatever the count of tiles, where
  // it covers C tightly; plan_f64_tail splits k until its blocks fill the SMs. (On the
  // H100, 1000 x 1000 x 32768 ran at 0.73x cuBLAS so against 0.57x in 64 x 64 tiles; 96
  // x 96 x 32768 and 1 x 4096 x 4096 ran slower in the wide tile, mostly empty there.)
  const int64_t mid_slots = sms * kF64Mma128x64.blocks_per_sm;
  const int64_t mid_tiles = ceil_div(p.m, kF64Mma128x64.rows) * ceil_div(p.n, kF64Mma128x64.cols);
  if (deep && fits(kF64Mma128x64) && covers_tightly(kF64Mma128x64)) return kF64Mma128x64.tile;
  // Else 128 x 64 where its tiles fill a wave of its slots, or 64 x 64 (three blocks per
  // SM): 1023 x 1025 x 1027, 136 tiles of 128 x 64, ran in 0.136 ms, in 64 x 64 0.110.
  if (mid_tiles >= mid_slots && fits(kF64Mma128x64)) return kF64Mma128x64.tile;
  if (fits(kF64Mma64x64)) return kF64Mma64x64.tile;
  static constexpr MmaShapeInfo kNarrower[] = {kF64Mma128x64, kF64Mma64x64};
  return plan_tensor_core_tile(kNarrower, p, d, 0, products);
}

// 3xTF32 runs three TF32 products for each FP32 one, so it pays only where the tensor
// cores' TF32 rate is several times the FP32 rate: the A100 (sm_80) and Hopper and later
// (8x). On consumer Ampere and Ada (sm_86, sm_89) dense TF32 runs at about the FP32
// rate: there strict FP32, always an allowed answer, is the faster one.
bool tf32x3_pays(const DeviceProfile& d) {
  const int cc = d.compute_capability();
  return cc == 80 || cc >= 90;
}

bool tiny_c_deep_k(const GemmProblem& p) {
  return p.batch <= 1 && double(p.m) * double(p.n) <= kTinyCDeepMaxOutputs &&
         p.k >= kTinyCDeepMinDepth;
}

bool tf32x3_batch_pays(const GemmProblem& p, const DeviceProfile& d) {
  const WgmmaShapeInfo& w = kTf32x3Wgmma128x128;
  const double tiles = double(ceil_div(p.m, w.rows)) * double(ceil_div(p.n, w.cols));
  return p.batch > 1 && p.k >= kX3BatchMinDepth &&
         tiles * double(w.rows * w.cols) * double(p.k) >= kX3BatchMinVolume &&
         tiles * double(tf32x3_batch_group(p)) >= double(d.multiprocessors);
}

bool fp32_accurate_takes_strict(const GemmProblem& p) {
  return double(p.m) * double(p.n) <= double(kAccurateStrictMaxOutputs) &&
         p.k >= kAccurateStrictMinDepth;
}

int plan_tf32x3(const GemmProblem& problem, const DeviceProfile& d, int forced_tile,
                bool wide_splits_deep_k) {
  const GemmProblem p = plannable(problem);
  if (!tf32x3_pays(d)) return 0;
  // The Hopper row's tile (wide_splits_deep_k: it runs, with a workspace), within the
  // wgmma kernel's extents, for a single product only where plan_tail_split will split
  // (two slices or more per tile in one wave): otherwise the narrow tile's blocks fill
  // more SMs; for a strided batch where its products are large enough (tf32x3_batch_pays:
  // the row packs them in groups), whatever the count of tiles. Other batches: the
  // mma.sync rows, their tiles counted together (dispatch runs them strict where the
  // Hopper rows exist).
  const int64_t products = std::max<int64_t>(1, p.batch);
  const int64_t wide_tiles =
      ceil_div(p.m, kTf32x3Wgmma128x128.rows) * ceil_div(p.n, kTf32x3Wgmma128x128.cols);
  const bool deep_in_one_wave = products == 1 && 2 * wide_tiles <= d.multiprocessors &&
                                is_deep_k(ceil_div(p.k, kTf32x3Wgmma128x128.depth));
  const bool large_batch = products > 1 && tf32x3_batch_pays(p, d);
  if (forced_tile == 0 && wide_splits_deep_k && wgmma_takes(p.m, p.n, p.k) &&
      (deep_in_one_wave || large_batch)) {
    for (const MmaShapeInfo& s : kTf32x3Shapes)
      if (s.tile == kTf32x3Wgmma128x128.tile && s.shared_bytes <= d.shared_memory_per_block_optin)
        return s.tile;
  }
  return plan_tensor_core_tile(kTf32x3Shapes, p, d, forced_tile, products);
}

TailSplitPlan plan_tail_split(int64_t tiles, int64_t tiles_k, const DeviceProfile& d,
                              int64_t partial_bytes) {
  constexpr int kMaxTailSplits = 32;
  constexpr int64_t kMinSliceSteps = 8;
  constexpr int64_t kMaxPartialBytes = int64_t(64) << 20;
  const int64_t sms = d.multiprocessors;
  if (sms <= 0 || tiles <= 0 || partial_bytes <= 0) return {1, 0};
  if (tiles <= sms) {  // one wave: split every tile where k is deep, to fill the SMs
    if (!is_deep_k(tiles_k)) return {1, 0};
    const int64_t s = std::min<int64_t>(
        {sms / tiles, tiles_k / kMinSliceSteps, kMaxPartialBytes / (tiles * partial_bytes)});
    if (s < 2) return {1, 0};
    return {int(ceil_div(tiles_k, ceil_div(tiles_k, s))), tiles};
  }
  const int64_t tail = tiles % sms;
  if (tail == 0) return {1, 0};
  // s slices of ceil(tiles_k / s) steps (the last one shorter) in rounds over the SMs.
  const auto time = [&](int64_t s) {
    const int64_t slice = ceil_div(tiles_k, s), blocks = tail * ceil_div(tiles_k, slice);
    return double(ceil_div(blocks, sms)) * double(slice) / double(tiles_k);
  };
  const int64_t most = std::min<int64_t>(
      {kMaxTailSplits, tiles_k / kMinSliceSteps, kMaxPartialBytes / (tail * partial_bytes)});
  double best = 1.0;
  for (int64_t s = 2; s <= most; ++s) best = std::min(best, time(s));
  if (best > 0.75) return {1, 0};  // saves less than a quarter of a tile
  for (int64_t s = 2; s <= most; ++s)
    if (time(s) <= best + 0.05) return {int(ceil_div(tiles_k, ceil_div(tiles_k, s))), tail};
  return {1, 0};
}

TailSplitPlan plan_f64_tail(const GemmProblem& p, const MmaShapeInfo& shape,
                            const DeviceProfile& device) {
  DeviceProfile slots = device;  // plan_tail_split's SMs: one block each
  slots.multiprocessors *= shape.blocks_per_sm;
  if (is_empty(p)) return {1, 0};  // nothing to split (and m, n may overflow a count)
  const int64_t tiles = ceil_div(p.m, shape.rows) * ceil_div(p.n, shape.cols);
  const int64_t tiles_k = ceil_div(p.k, kF64MmaDepth);
  const int64_t partial_bytes = int64_t(shape.rows) * shape.cols * int64_t(sizeof(double));
  const int64_t blocks = slots.multiprocessors;
  constexpr int64_t kMaxPartialBytes = int64_t(64) << 20;
  // C's edges cross tiles: its blocks there copy with checks, at about half the interior
  // blocks' speed (511 x 511 x 512 in 64 x 64 tiles ran in 0.040 ms, 512^3 in 0.020).
  const bool ragged = p.m % shape.rows != 0 || p.n % shape.cols != 0;
  if (blocks > 0 && tiles > 0 && tiles <= blocks && !is_deep_k(tiles_k) && p.batch <= 1 && ragged) {
    // One partial wave over k that is not deep, with edge blocks: each tile in as many
    // slices as the idle slots hold in one round, of kMinShallowSliceSteps steps or more
    // (the last may be shorter), so that the slow edge blocks are short: on the H100 333 x 777 x
    // 555 (78 tiles of 64 x 64) 0.042 -> 0.029-0.031 ms, 100^3 0.016 -> 0.013, 640 x 480 x 320
    // 0.025 -> 0.023-0.024; where C has no edges (512^3: 0.020 -> 0.025) the slices cost more than
    // they save (docs/benchmarks/double-precision.md, "One wave of FP64 tiles").
    constexpr int64_t kMinShallowSliceSteps = 2;
    const int64_t s = std::min<int64_t>({blocks / tiles, tiles_k / kMinShallowSliceSteps,
                                         kMaxPartialBytes / (tiles * partial_bytes)});
    if (s < 2) return {1, 0};
    return {int(ceil_div(tiles_k, ceil_div(tiles_k, s))), tiles};
  }
  if (blocks <= 0 || tiles <= 0 || tiles > blocks || !is_deep_k(tiles_k))
    return plan_tail_split(tiles, tiles_k, slots, partial_bytes);
  // One wave over deep k: s slices per tile, in rounds of `blocks` blocks of 1/s of a
  // tile's time each. Slices of at most kMaxSliceSteps steps where the limits allow (an
  // FP64 sum over 2^12 terms or fewer, as short as cuBLAS's: its error, not 3x it, at
  // 1000 x 1000 x 32768), at least kMinSliceSteps, in whole rounds: the fewest slices
  // within 1/20 of the best time.
  constexpr int64_t kMinSliceSteps = 8, kMaxSliceSteps = 256;
  const int64_t most =
      std::min<int64_t>({tiles_k / kMinSliceSteps, kMaxPartialBytes / (tiles * partial_bytes),
                         4 * ceil_div(blocks, tiles)});
  const int64_t fewest = std::min(most, std::max<int64_t>(2, ceil_div(tiles_k, kMaxSliceSteps)));
  if (most < 2) return {1, 0};
  return {int(ceil_div(tiles_k, ceil_div(tiles_k, one_wave_slices(tiles, blocks, fewest, most)))),
          tiles};
}

int64_t one_wave_slices(int64_t tiles, int64_t blocks, int64_t fewest, int64_t most) {
  if (tiles <= 0 || blocks <= 0 || fewest < 1 || most < fewest) return 1;
  // time(s): rounds of `blocks` blocks, each 1/s of a tile. Within round r (the counts of
  // slices whose blocks take r rounds: up to floor(r blocks / tiles)) time falls as s
  // grows, so each round's best is its largest count, and the fewest counts within 5% of
  // the best lie in the first round that reaches it: a handful of rounds, not one
  // candidate per count (this runs on every call).
  const auto time = [&](int64_t s) { return double(ceil_div(tiles * s, blocks)) / double(s); };
  const auto last_of_round = [&](int64_t r) { return std::min(most, r * blocks / tiles); };
  const int64_t first = ceil_div(tiles * fewest, blocks), rounds = ceil_div(tiles * most, blocks);
  double best = time(fewest);
  for (int64_t r = first; r <= rounds; ++r) {
    const int64_t s = last_of_round(r);
    if (s >= fewest) best = std::min(best, time(s));
  }
  const double bound = best * 1.05;
  for (int64_t r = first; r <= rounds; ++r) {
    const int64_t hi = last_of_round(r);
    const int64_t lo = std::max(fewest, (r - 1) * blocks / tiles + 1);
    if (lo > hi || time(hi) > bound) continue;
    // The smallest s in [lo, hi] with r / s <= bound, then exactly by time().
    int64_t s = std::max(lo, std::min(hi, int64_t(double(r) / bound)));
    while (s > lo && time(s - 1) <= bound) --s;
    while (time(s) > bound) ++s;
    return s;
  }
  return fewest;
}

WgmmaOperands wgmma_operands(const GemmProblem& p, const WgmmaShapeInfo& shape) {
  if (!shape.may_transpose) return {true, true, false};
  const int bytes = element_bytes(p.precision);
  WgmmaOperands ops{!rows_16_byte_aligned(p.a, p.lda, bytes),
                    !rows_16_byte_aligned(p.b, p.ldb, bytes), false};
  const bool a_k_major = ops.pack_a || !p.trans_a, b_k_major = ops.pack_b || p.trans_b;
  if (!a_k_major && !b_k_major) ops.pack_b = true;
  ops.transposed = (ops.pack_a || !p.trans_a) && !(ops.pack_b || p.trans_b);
  return ops;
}

bool wgmma_batches_in_one_launch(const GemmProblem& p, const WgmmaShapeInfo& shape) {
  if (p.batch <= 1) return true;
  const WgmmaOperands ops = wgmma_operands(p, shape);
  if (ops.pack_a || ops.pack_b) return false;
  const int64_t bytes = element_bytes(p.precision);
  constexpr int64_t kMapStrideLimit = int64_t(1) << 40;  // bytes
  // A is stored m x k (k x m transposed), B k x n (n x k transposed), canonically.
  const auto one_after_another = [&](int64_t stride, int64_t stored_rows, int64_t ld) {
    return stride > 0 && stride % (16 / bytes) == 0 && stride < kMapStrideLimit / bytes && ld > 0 &&
           stride / ld >= stored_rows;
  };
  return one_after_another(p.stride_a, p.trans_a ? p.k : p.m, p.lda) &&
         one_after_another(p.stride_b, p.trans_b ? p.n : p.k, p.ldb);
}

int64_t tf32x3_batch_group(const GemmProblem& p) {
  const int64_t batch = std::max<int64_t>(1, p.batch);
  const int64_t padded_k = ceil_div(p.k, kTf32x3Wgmma128x128.depth) * kTf32x3Wgmma128x128.depth;
  const double product_bytes = 2.0 * double(p.m + p.n) * double(padded_k) * 4.0;
  const double fits = product_bytes > 0 ? double(kX3BatchWorkspaceBytes) / product_bytes : 65535.0;
  return std::max<int64_t>(1, std::min<int64_t>({batch, 65535, int64_t(std::min(fits, 65535.0))}));
}

int64_t wgmma_tiles(const GemmProblem& p, const WgmmaShapeInfo& shape, bool transposed) {
  const int64_t rows = transposed ? p.n : p.m, cols = transposed ? p.m : p.n;
  return ceil_div(rows, shape.rows) * ceil_div(cols, shape.cols);
}

TailSplitPlan plan_wgmma_tail(const GemmProblem& p, const WgmmaShapeInfo& shape,
                              const DeviceProfile& device) {
  return plan_tail_split(wgmma_tiles(p, shape, wgmma_operands(p, shape).transposed),
                         ceil_div(p.k, shape.depth), device, int64_t(shape.partial_floats) * 4);
}

bool thin_pays(const GemmProblem& p) {
  const ThinForm f = thin_form(p);
  const int most = p.precision != Precision::F64 ? kThinMaxSmallF32
                   : f.along_k                   ? kThinMaxSmallF64AlongK
                                                 : kThinMaxSmallF64AlongL;
  return f.small_side >= 1 && f.small_side <= most && f.long_side >= kThinMinLong &&
         double(f.long_side) * double(p.k) >= kThinMinElements;
}

int plan_thin(const GemmProblem& p, const DeviceProfile& d, int max_splits) {
  // Blocks for every thread slot of every SM (memory latency is hidden by the loads in
  // flight), in as few slices as give them.
  const int64_t tiles = std::max<int64_t>(1, thin_tiles(p));
  const int64_t per_sm = std::max(1, d.max_threads_per_sm / thin_block_threads(p));
  const int64_t target = per_sm * std::max(1, d.multiprocessors);
  if (tiles >= target || p.k <= 0) return 1;
  const ThinForm f = thin_form(p);
  int64_t splits = ceil_div(target, tiles);
  splits = std::min<int64_t>(splits, p.k / thin_min_slice_depth(p));
  const double per_slice = double(std::clamp<int64_t>(f.small_side, 1, kThinMaxSmall)) *
                           double(std::max<int64_t>(f.long_side, 1)) *
                           double(element_bytes(p.precision));
  splits = std::min<int64_t>(splits, int64_t(double(kMaxSplitPartialBytes) / per_slice));
  splits = std::min<int64_t>(splits, max_splits > 0 ? max_splits : kMaxDeepSplits);
  return int(std::max<int64_t>(1, splits));
}

}  // namespace tiledmm
