// The planner of BLOCKED: which tile of C a block owns, and into how many slices
// k is split (split-K), for a shape on a device described by its DeviceProfile; and
// the tile of BLOCKED's tensor-core kernels (TMM_MATH_TF32, TMM_MATH_FP32_ACCURATE).
// Host C++ with no CUDA, so tests/plan/test_planner.cpp checks it on device profiles
// this machine does not have.
#pragma once

#include "core/device_profile.hpp"
#include "core/gemm_problem.hpp"
#include "plan/f64_shapes.hpp"
#include "plan/tf32_shapes.hpp"

namespace tiledmm {

// How BLOCKED runs a shape: its tile of C per block, and how many slices of k run
// as separate blocks (1 = none).
struct BlockedPlan {
  int tile;
  int splits;
};

// Blocks of `tile` one SM of `device` holds at once: the least of what the shape's
// register cap, the SM's threads and its shared memory allow (0: it does not fit).
int resident_blocks(int tile, const DeviceProfile& device);

// The plan for `p` on `device`; forced_tile != 0 fixes the tile (split-K is still
// chosen); k is split into at most max_splits slices (0: the planner's cap, 32, or up
// to 1024 where C is small enough that the slices' partial sums stay within 64 MiB).
// Models time as waves of blocks at each shape's measured efficiency of the device's FP32
// peak, plus the traffic and launch of the split-K reduction. A strided batch (p.batch >
// 1, its products side by side in one launch) counts every product's blocks and is never
// split. Throws Error(NotSupported) if no shape (or not the forced one) fits the device.
BlockedPlan plan_blocked(const GemmProblem& p, const DeviceProfile& device, int forced_tile,
                         int max_splits = 0);

// The most slices of k plan_blocked and plan_f64_blocked weigh for p: max_splits where
// it is over 0, else 32, or more where C is small enough that the slices' partial sums
// (m rows of n rounded up to 16 bytes) stay within 64 MiB, up to 1024.
int blocked_split_cap(const GemmProblem& p, int max_splits);

// Whether AUTO (and BLOCKED with tile 0) runs a strided batch of small products (p.batch >
// 1, m and n at most 32, k at most 128) on a kernel of one block per product, the products
// side by side, rather than on BLOCKED's 64 x 64 tile, which such a product leaves mostly
// empty: small_batch_tile 16 (m and n at most 16) runs TILED's 16 x 16 blocks
// (tiled_kernel.cu), 32 the small kernel (small_kernel.cu, BLOCKED's tile 32). In every
// math mode and precision (strict arithmetic).
bool small_batch_pays(const GemmProblem& p);
int small_batch_tile(const GemmProblem& p);

// Whether a single product in float that AUTO would run on the strict FP32 BLOCKED rows
// runs TILED's 16 x 16 blocks (tiled_kernel.cu) instead (BLOCKED asked for, with tile 0
// too, runs BLOCKED): C of at
// most kTinyMaxOutputs elements and k at most kTinyMaxDepth (measured_rates.hpp), where
// BLOCKED's narrowest tile leaves most SMs idle and its few blocks bound the call. Not a
// batch, not double, not where a tensor-core row runs (TF32 and FP32_ACCURATE on devices
// that have them).
bool tiny_pays(const GemmProblem& p);

// Whether `p` is a small single product (measured_rates.hpp: kSmallProductMaxVolume
// multiply-adds, k at most kSmallProductMaxDepth), which on Hopper TF32 runs in the
// 64 x 64 tile (plan_tf32), or TILED 16 under AUTO where tf32_tiny_pays, and
// FP32_ACCURATE in strict FP32 (dispatch), rather than on the wgmma rows.
bool small_product(const GemmProblem& p);

// Whether AUTO runs a single product under TF32 on Hopper in TILED's 16 x 16 blocks
// (strict FP32, an allowed answer): tiny_pays with C of at most kTf32TinyMaxOutputs.
bool tf32_tiny_pays(const GemmProblem& p);

// Whether a strided batch is too few products to fill the device side by side: fewer
// 64 x 64 tiles over the whole batch than SMs. Then its products run one by one, each
// with the single call's plan, where that splits k (4 products of 64 x 64 x 2^20 would
// otherwise run on 4 SMs); dispatch decides.
bool batch_leaves_sms_idle(const GemmProblem& p, const DeviceProfile& device);

// Whether such a batch runs product by product with the plan of one of its products alone
// (`one`; `splits` and `tail_tiles` as KernelPlan's): where that splits k, by BLOCKED's
// split-K (tail_tiles 0) or by a tensor-core row's split of every tile over deep k (k of
// at least kDeepKSteps steps of 16, the shallowest depth of those rows); not by the FP64
// rows' split of a shallow product with edge blocks (plan_f64_tail), which saves less
// than the batch's one launch costs as 2 launches a product.
bool by_product_pays(const GemmProblem& one, int splits, int64_t tail_tiles);

// Whether `p` runs the thin kernel (lib/cuda/kernels/thin_kernel.cu) under AUTO and
// BLOCKED with tile 0, in every math mode and precision: the short side of C (m or n) is
// 1 to 16 wide in float, 1 to 8 in double (4 where W is read along k; thin_shapes.hpp),
// and the large operand (the long side by k) is large enough that reading it once at the
// memory's rate is what the call costs.
bool thin_pays(const GemmProblem& p);

// The thin kernel's slices of k for `p` on `device`: enough blocks for every thread slot
// of every SM, each slice at least thin_min_slice_depth deep, at most max_splits (0: the
// planner's cap, 1024), and the slices' partial sums (short side by long side each)
// within 64 MiB. 1: no split.
int plan_thin(const GemmProblem& p, const DeviceProfile& device, int max_splits = 0);

// The tile setting of the TF32 tensor-core kernel for `p` on `device` (its rows in
// lib/plan/tf32_shapes.hpp), 0 when none fits the device's shared memory.
// forced_tile != 0 asks for that tile: it, or 0 when the kernel lacks it or the
// device cannot hold it. Otherwise the wide 128 x 256 tile where it fits and the
// product has at least one such tile per SM, else 128 x 128; with wide_everywhere
// (dispatch's: on Hopper, where the wide tile runs the wgmma kernel) the wide tile
// wherever it fits. No split-K.
int plan_tf32(const GemmProblem& p, const DeviceProfile& device, int forced_tile,
              bool wide_everywhere = false);

// The same for the FP32_ACCURATE (3xTF32) kernel (kTf32x3Shapes): 128 x 64 where the
// product has at least one such tile per SM, else 64 x 64; forced_tile 128 or 64. 0 on
// devices where 3xTF32 is slower than strict FP32 (sm_86, sm_89: TF32 at the FP32
// rate; only sm_80 and sm_90 and later run it). With wide_splits_deep_k (dispatch's: on
// Hopper, where tile 128 runs the wgmma kernel, which can split k) tile 128 also where k
// is deep (is_deep_k): split along k (plan_tail_split), its blocks fill the SMs that
// the narrow tile's few blocks would leave idle, and for a strided batch of products
// large enough for the Hopper row (tf32x3_batch_pays). Other strided batches: the
// mma.sync tiles, their products' tiles counted together.
int plan_tf32x3(const GemmProblem& p, const DeviceProfile& device, int forced_tile,
                bool wide_splits_deep_k = false);

// Whether FP32_ACCURATE, a permission, takes strict FP32 (plan_blocked) instead of its
// 3xTF32 rows for `p` under AUTO and BLOCKED with tile 0 where k may be split (dispatch
// asks only with a workspace and max_splits other than 1): where C is small (at most
// kAccurateStrictMaxOutputs elements) and k deep (at least kAccurateStrictMinDepth), so
// that the 3xTF32 rows' splitting of both operands into big and small parts costs more
// than the product, and BLOCKED's split of k over every SM is faster (1.23x-3.97x on the
// five such shapes of the suite on the H100: docs/benchmarks/tensor-cores.md, "Strict
// FP32 where it is faster"). Its error is then strict FP32's.
bool fp32_accurate_takes_strict(const GemmProblem& p);

// Whether TF32 and FP32_ACCURATE, both permissions, take strict FP32 (plan_blocked) for a
// single product under AUTO and BLOCKED with tile 0 where k may be split: C of at most
// kTinyCDeepMaxOutputs elements over k of at least kTinyCDeepMinDepth
// (measured_rates.hpp), where BLOCKED's slices of 64 over every SM beat the tensor-core
// rows' split of their one tile.
bool tiny_c_deep_k(const GemmProblem& p);

// Whether an FP32_ACCURATE strided batch pays on the 3xTF32 Hopper row (in groups,
// tf32x3_batch_group) where that row runs, rather than on strict FP32's batched rows:
// products whose tiles of 128 x 128 times k are at least kX3BatchMinVolume, over k of
// at least kX3BatchMinDepth (measured_rates.hpp), and a group's tiles at least one per
// SM. Smaller products run strict, faster there.
bool tf32x3_batch_pays(const GemmProblem& p, const DeviceProfile& device);

// The tile setting of the FP64 tensor-core kernel (kF64MmaShapes) for `p` on `device`:
// 128 x 128 (tile 256, one block per SM) where C holds at least kF64WideWaves waves of
// such tiles, or k is deep (is_deep_k: plan_f64_tail splits it) and C holds at least
// one such tile and fewer than a wave, covering at most kF64MaxPaddingOverNarrowest
// times the area 64 x 64 tiles cover; else 128 x 64 (tile 128) where its tiles fill a
// wave of two blocks per SM, or k is deep and C fills one with the same padding limit,
// else 64 x 64 (tile 64). A strided batch (its products side by side,
// unsplit): the widest tile no wider than a product whose tiles over the whole batch fill
// kF64WideWaves waves (128 x 128) or one (128 x 64), else 64 x 64. forced_tile 256, 128 or 64 asks
// for that tile (0 when the device cannot hold it).
int plan_f64(const GemmProblem& p, const DeviceProfile& device, int forced_tile);

// The plan of the FP64 CUDA-core kernel (f64_blocked_kernel.cu, kF64BlockedShapes:
// 128 x 128 and 64 x 64) for `p` on `device`, by plan_blocked's model over the FP64
// lanes' peak (DeviceProfile::fp64_lanes_peak) and the shapes' measured efficiencies:
// the 64 x 64 tile where the product has fewer 128 x 128 tiles than the device has SMs (or
// is latency-bound), else the model's choice; split-K where k is deep and the blocks
// few. What BLOCKED and AUTO run in double where DMMA does not pay
// (DeviceProfile::dmma_pays). Throws as plan_blocked does.
BlockedPlan plan_f64_blocked(const GemmProblem& p, const DeviceProfile& device, int forced_tile,
                             int max_splits = 0);

// Steps of k (of a tensor-core kernel's depth) from which a product whose tiles fill
// at most one wave splits every tile along k (plan_tail_split).
constexpr int64_t kDeepKSteps = 256;
inline bool is_deep_k(int64_t tiles_k) { return tiles_k >= kDeepKSteps; }

// The last wave of a kernel that runs one block per SM and one tile per block: where
// `tiles` leave a last wave only partly full (r = tiles % SMs tiles), those r tiles can
// run as r x splits blocks, each summing one slice of k into a partial tile, which a
// second kernel adds up (lib/cuda/kernels/tail_split.cuh). Where all the tiles fit in
// one wave (tiles <= SMs) and k is deep, every tile splits (r = tiles). tail_tiles = 0
// (or splits 1): no split.
struct TailSplitPlan {
  int splits;
  int64_t tail_tiles;
};

// The split for `tiles` tiles of `tiles_k` steps of k each on `device`, each split
// block's partial tile `partial_bytes` bytes. Counts time in tiles' worth of work: the
// r tiles take one tile's time whole, and ceil(r s / SMs) / s split in s. Takes the
// fewest splits within 1/20 of a tile of the best, if that saves at least a quarter of a
// tile; a slice keeps at least 8 steps of k, s <= 32, the partials at most 64 MiB. One
// partial wave over deep k (tiles <= SMs, is_deep_k(tiles_k)): as many slices as fill
// the SMs, within the same limits but s <= SMs / tiles. The tensor cores' FP32
// accumulators lose accuracy over long sums (TF32 at 64 x 64 x 2^23 in one block: 1.9e-2,
// cuBLAS 2.9e-4; docs/benchmarks/tensor-cores.md), so shorter slices help twice.
TailSplitPlan plan_tail_split(int64_t tiles, int64_t tiles_k, const DeviceProfile& device,
                              int64_t partial_bytes);

// The split of k of the FP64 tensor-core kernel of `shape`, its blocks per SM counted as
// SMs: plan_tail_split's last-wave split; but where the tiles fit in one wave and k is
// deep, every tile in slices of at most 256 steps where the limits allow (FP64 sums as
// short as cuBLAS's), as many as fill whole rounds of blocks: the fewest within 1/20 of
// the best time; and where they fit in one wave, k is not deep and C's edges cross tiles
// (m not a multiple of the tile's rows or n of its columns), every tile in as many
// slices of 2 steps or more (the last may be shorter) as one round of blocks holds. Its
// plan_tail hook.
TailSplitPlan plan_f64_tail(const GemmProblem& p, const MmaShapeInfo& shape,
                            const DeviceProfile& device);

// plan_f64_tail's count of slices per tile in one wave: `tiles` tiles of s slices each
// run in rounds of `blocks` blocks, each block 1/s of a tile's time; the fewest s in
// [fewest, most] whose time is within 1/20 of the best there. Found round by round (a
// handful), not count by count: it runs on every call.
int64_t one_wave_slices(int64_t tiles, int64_t blocks, int64_t fewest, int64_t most);

// The Hopper wgmma kernels' operands (lib/cuda/kernels/sm90/). The TF32 kernel
// (shape.may_transpose) first copies into its workspace, K-major, the operands whose
// rows the copy engine cannot read (not 16-byte aligned), and B when neither is K-major
// (wgmma reads B, and TF32 A, from shared memory K-major only; an MN-major A goes
// through registers); where A is then K-major and B is not it computes D = C^T. The
// 3xTF32 kernel splits both operands into its workspace and never transposes.
struct WgmmaOperands {
  bool pack_a, pack_b;
  bool transposed;  // D = C^T: D's tiles run over n x m
};
WgmmaOperands wgmma_operands(const GemmProblem& p, const WgmmaShapeInfo& shape);

// Whether a wgmma kernel of `shape` runs the strided batch p in one launch (its products
// side by side, blockIdx.z): the copy engine reads product z through a third dimension
// of each operand's map, so both operands are read where they lie (wgmma_operands packs
// neither), and A's and B's strides are positive multiples of 16 bytes under 2^40 bytes
// (the map's limits), each at least an operand's stored rows (products one after
// another: interleaved products would be read right too, each dimension of a map being
// bounded on its own, but the encoder's rules for such strides are unmeasured, so they
// take the mma.sync row). True for a single product. Otherwise the kernel's launcher
// runs the batch product by product, and dispatch takes a batched mma.sync row instead.
bool wgmma_batches_in_one_launch(const GemmProblem& p, const WgmmaShapeInfo& shape);

// The 3xTF32 wgmma kernel runs a strided batch in groups of this many products: each
// group's A and B split and packed into the workspace (2 (m + n) padded k floats a
// product), then one launch for the group. As many products as kX3BatchWorkspaceBytes
// holds (at least one, at most the batch and 65535).
constexpr int64_t kX3BatchWorkspaceBytes = int64_t(64) << 20;
int64_t tf32x3_batch_group(const GemmProblem& p);

// Tiles of D, `shape`'s rows x cols each.
int64_t wgmma_tiles(const GemmProblem& p, const WgmmaShapeInfo& shape, bool transposed);

// The last-wave split (plan_tail_split) of a wgmma kernel of `shape`: the plan_tail hook
// of its kernel row, and what tests/planner_golden.cpp prints.
TailSplitPlan plan_wgmma_tail(const GemmProblem& p, const WgmmaShapeInfo& shape,
                              const DeviceProfile& device);

}  // namespace tiledmm
