// FP32 accuracy on Hopper's tensor cores (TMM_MATH_FP32_ACCURATE, sm_90a): the
// 3xTF32 arithmetic of tf32x3_mma_kernel.cu (its header gives the analysis) on
// wgmma.m64n128k8, with the TMA pipeline of tf32_wgmma_kernel.cu.
//
// Split. The launcher first writes A and B split and K-major into the workspace
// (pack_kernel.cu): big = x rounded to TF32, small = (x - big) 2^11, rows padded to
// 128 bytes. So the kernel reads four K-major operands, all from shared memory:
// A_big, A_small (m x k) and B_big, B_small (n x k).
//
// Sums. Per tile of 32 in k, a consumer issues per step of 8 three wgmma: A_big
// B_big into `tile`, A_small B_big and A_big B_small into `corr` (over the whole of
// k). Every kFold tiles (a fold, 96 in k), once those wgmma finished, the fold's sum
// is added to `acc` outside the tensor cores by Fast2Sum (s = acc + tile, e = tile -
// (s - acc), acc = s), e 2^11 into corr, and the next fold starts `tile` afresh. The
// result is acc + 2^-11 corr, or acc alone where corr is not finite (Inf or NaN
// inputs, or corr overflowing): the arithmetic, and the limits, of the mma.sync
// kernel, whose sums fold every 32 in k.
//
// The fold's length trades speed for accuracy. The tensor cores truncate their sums,
// so a fold's error grows with its length, but not with k (each fold starts afresh
// and Fast2Sum carries the rest). Measured on the H100 at 8192^3 (uniform inputs,
// relative Frobenius error against FP64; cuBLAS SGEMM 1.62e-6, 5.74e-7 at 1024^3):
//   fold 32: 1.24e-7, 89 TFLOP/s     fold 64: 1.92e-7, 104-109
//   fold 96: 2.62e-7, 109            fold 128: 3.36e-7, 110      fold 256: 6.35e-7, 117
// 96 keeps the error under strict FP32's with room to spare, also on inputs whose
// exponents spread over 2^-16..2^16 (test_tensor_cores, k = 16384: 2.56e-7 against a
// split-k strict FP32 run's 2.62e-7; the test's bar is 1.1x that run).
//
// Shape. A block of three warpgroups owns 128 x 128 of C: the producer (one thread
// issues four TMA copies per tile of k, 64 KiB a stage, 3 stages) and two consumers
// of 64 x 128 each, with 3 x 64 accumulators per thread (setmaxnreg 40/232). Within
// a fold a consumer keeps one tile's wgmma in flight while it issues the next
// (wgmma.wait_group 1); at the fold's end it waits for them all. Consumer 1 folds
// kShift tiles after consumer 0, so that one's Fast2Sum runs while the other's wgmma
// keep the tensor cores busy (in step, both waited at once: 104 against 109 TFLOP/s
// at fold 64). Its first fold begins with kShift phantom tiles, which read tile 0's
// stage and which tile 0 then overwrites (its wgmma start the sums afresh). Tiles
// past k are zeros from the copy engine; the producer copies up to the later of the
// two consumers' last folds, and each consumer releases the tiles past its own.
//
// Last wave. Where the tiles leave the last wave of blocks partly full (8192^3: 4096
// tiles on 132 SMs, 4 in the 32nd wave), the plan may split those tiles along k
// (tail_split.cuh): such a block runs the same pipeline over its slice of k and
// writes acc and corr as they are; tail_reduce_kernel adds the slices (TwoSum, the
// errors into corr) and writes C. Measured on the H100 at 8192^3: 2-5% faster.
//
// Strided batches. The launcher takes a batch in groups (tf32x3_batch_group, plan/
// planner.hpp): a group's products split and packed side by side into the workspace, then
// one launch with kBatched, product blockIdx.z, whose maps have a third dimension, the
// products; the epilogue writes that product's C. A batch is never split along k.
//
// Each fold is straight-line code (the tile loop unrolled kFold times): branches
// around the wgmma make the compiler copy accumulators still being written, insert
// waits and spill (measured with -Xptxas -v).
//
// Built for sm_90a only, in the object library of tf32_wgmma_kernel.cu, whose
// tf32_wgmma_available() says whether that code loaded.
#include <cuda.h>

#include <cfloat>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "cuda/kernels/pack.hpp"
#include "cuda/kernels/sm90/sm90_common.cuh"
#include "cuda/kernels/tail_split.cuh"
#include "cuda/runtime/tensor_map.hpp"
#include "plan/planner.hpp"
#include "plan/tf32_shapes.hpp"

namespace tiledmm {
namespace {

// The block's tile and a tile of k, stated once in plan/tf32_shapes.hpp (the planner's
// last-wave split and tests/planner_golden.cpp use them too).
constexpr int kBM = kTf32x3Wgmma128x128.rows, kBN = kTf32x3Wgmma128x128.cols;
constexpr int kBK = kTf32x3Wgmma128x128.depth;
constexpr int kStages = 3;
constexpr int kFold = 3;       // tiles of k summed on the tensor cores between two Fast2Sums
constexpr int kShift = 1;      // consumer 1 folds this many tiles after consumer 0
constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr int kGroupM = 8;     // tile rows per rasterisation group
constexpr int kTileBytes = kBM * kBK * 4;    // one operand's tile (kBM == kBN)
constexpr int kStageBytes = 4 * kTileBytes;  // A_big, A_small, B_big, B_small
constexpr int kSharedBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
constexpr float kSmallScale = 2048.0f, kSmallUnscale = 1.0f / 2048.0f;
static_assert(kBM == kBN, "the four operand tiles have one size");
static_assert(kTileBytes % 1024 == 0, "tiles stay 1024-aligned (the swizzle's atom)");

template <bool kBatched>
__global__ void __launch_bounds__(kThreads, 1)
    tf32x3_wgmma_kernel(const __grid_constant__ CUtensorMap a_big_map,
                        const __grid_constant__ CUtensorMap a_small_map,
                        const __grid_constant__ CUtensorMap b_big_map,
                        const __grid_constant__ CUtensorMap b_small_map, GemmView<float> p,
                        TailSplit split) {
#if TMM_SM90A
  using namespace sm90;
  extern __shared__ unsigned char shared_raw[];
  const uintptr_t base = (reinterpret_cast<uintptr_t>(shared_raw) + 1023) & ~uintptr_t(1023);
  unsigned char* const stages = reinterpret_cast<unsigned char*>(base);
  uint64_t* const barriers = reinterpret_cast<uint64_t*>(stages + kStages * kStageBytes);
  const StageRing ring{barriers, barriers + kStages, kStages};

  // A whole tile, or a slice of k of one (tail_split.cuh): its steps are tiles_k
  // tiles of k from work.first_step on.
  const BlockWork work = block_work(split);
  const TileOrigin tile0 = grouped_tile<kBM, kBN, kGroupM>(work.tile, p.m, p.n);
  const int tiles_k = work.steps;
  // Consumer c folds at tiles c kShift + j kFold: its folds end at ends[c]. Tiles up to
  // the later end are copied (zeros past tiles_k: copied from past k); a consumer
  // releases those past its own.
  const int end0 = int(ceil_div(tiles_k, kFold) * kFold);
  const int end1 = int(ceil_div(tiles_k + kShift, kFold) * kFold) - kShift;
  const int tiles_copied = max(end0, end1);

  ring.init(2);  // two consumer warpgroups

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      const int32_t row0 = int32_t(tile0.row0), col0 = int32_t(tile0.col0);
      const int32_t z = kBatched ? int32_t(blockIdx.z) : 0;  // the product
      for (int t = 0; t < tiles_copied; ++t) {
        const int s = ring.acquire(t, kStageBytes);
        unsigned char* const stage = stages + s * kStageBytes;
        const int32_t k0 = k_coordinate(t < tiles_k ? work.first_step + t : split.steps, kBK);
        tma_load<kBatched>(shared_address(stage), &a_big_map, &ring.full[s], k0, row0, z);
        tma_load<kBatched>(shared_address(stage + kTileBytes), &a_small_map, &ring.full[s], k0,
                           row0, z);
        tma_load<kBatched>(shared_address(stage + 2 * kTileBytes), &b_big_map, &ring.full[s], k0,
                           col0, z);
        tma_load<kBatched>(shared_address(stage + 3 * kTileBytes), &b_small_map, &ring.full[s], k0,
                           col0, z);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int consumer = warpgroup - 1;  // rows 64 consumer .. of the tile
    float tile[64], acc[64], corr[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = corr[i] = tile[i] = 0.0f;
    const uint32_t rows = consumer * 64 * kBK * 4;  // this consumer's 64 rows of A
    const int shift = consumer * kShift;
    const int end = consumer ? end1 : end0;
    // Tiles v < 0 of consumer 1's first fold are phantoms: they read tile 0's stage,
    // and tile 0 starts the sums afresh.
    for (int t0 = -shift; t0 < end; t0 += kFold) {
#pragma unroll
      for (int j = 0; j < kFold; ++j) {
        const int v = t0 + j, s = ring.wait(max(v, 0));
        unsigned char* const stage = stages + s * kStageBytes;
        const uint32_t a_big = shared_address(stage) + rows;
        const uint32_t a_small = shared_address(stage + kTileBytes) + rows;
        const uint32_t b_big = shared_address(stage + 2 * kTileBytes);
        const uint32_t b_small = shared_address(stage + 3 * kTileBytes);
        if (j == 0) {
          fence_accumulators(tile);
          fence_accumulators(corr);
        }
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < kBK / 8; ++step) {
          const uint32_t k = 32 * step;  // bytes along the 128-byte rows
          wgmma_m64n128k8_tf32(tile, descriptor_k_major_sw128(a_big + k),
                               descriptor_k_major_sw128(b_big + k), (j > 0 && v > 0) || step > 0);
          wgmma_m64n128k8_tf32(corr, descriptor_k_major_sw128(a_small + k),
                               descriptor_k_major_sw128(b_big + k), v > 0 || step > 0);
          wgmma_m64n128k8_tf32(corr, descriptor_k_major_sw128(a_big + k),
                               descriptor_k_major_sw128(b_small + k), 1);
        }
        wgmma_commit();
        if (j + 1 < kFold) {
          wgmma_wait<1>();
          if (j > 0 && v > 0) ring.release(v - 1);
        }
      }
      wgmma_wait<0>();
      fence_accumulators(tile);
      fence_accumulators(corr);
      const int last = t0 + kFold - 1;
      if (kFold > 1 && last > 0) ring.release(last - 1);
      if (last >= 0) ring.release(last);
        // The tile's sum into acc, rounded to nearest; its rounding error into corr.
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        const float sum = __fadd_rn(acc[i], tile[i]);
        const float error = __fsub_rn(tile[i], __fsub_rn(sum, acc[i]));
        acc[i] = sum;
        corr[i] = __fmaf_rn(error, kSmallScale, corr[i]);
      }
    }
    // Copied tiles past this consumer's folds: release them.
    for (int t = end; t < tiles_copied; ++t) {
      ring.wait(t);
      ring.release(t);
    }

    const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
    const int tile_row = 64 * consumer + 16 * warp + lane / 4;
    if (kBatched) select_product(p);  // its C
    if (work.split >= 0) {            // a slice's sums, as they are, for tail_reduce_kernel
      float* const sums = partial_tile<kBM, kBN>(split, work.split, 2, 0);
      float* const corrections = partial_tile<kBM, kBN>(split, work.split, 2, 1);
#pragma unroll
      for (int j = 0; j < 16; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = 4 * j + 2 * h, r = tile_row + 8 * h, c = 8 * j + 2 * (lane % 4);
          store_partial_pair_inside(sums, kBN, r, c, tile0, p.m, p.n, acc[i], acc[i + 1]);
          store_partial_pair_inside(corrections, kBN, r, c, tile0, p.m, p.n, corr[i], corr[i + 1]);
        }
      }
      return;
    }
    const int64_t row = tile0.row0 + tile_row;
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int64_t col = tile0.col0 + 8 * j + 2 * (lane % 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float v[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int i = 4 * j + 2 * h + e;
          v[e] = fabsf(corr[i]) <= FLT_MAX ? __fmaf_rn(corr[i], kSmallUnscale, acc[i]) : acc[i];
        }
        store_pair(p, row + 8 * h, col, v[0], v[1]);
      }
    }
  }
#else
  (void)a_big_map;
  (void)a_small_map;
  (void)b_big_map;
  (void)b_small_map;
  (void)p;
  (void)split;
#endif
}

// Packed rows are whole 128-byte lines (see tf32_wgmma_kernel.cu).
int64_t padded_k(const GemmProblem& p) { return ceil_div(p.k, 32) * 32; }

int64_t tiles_of(const GemmProblem& p) { return wgmma_tiles(p, kTf32x3Wgmma128x128, false); }

constexpr size_t kPartialFloats = size_t(kTf32x3Wgmma128x128.partial_floats);
static_assert(kPartialFloats == 2 * kBM * kBN, "a split block's sums and corrections");
static_assert(kTf32x3Wgmma128x128.outputs_per_thread * (kThreads - 128) == kBM * kBN,
              "the consumer warpgroups own the tile");
static_assert(!kTf32x3Wgmma128x128.may_transpose, "the launcher never computes D = C^T");

}  // namespace

void plan_tf32x3_wgmma_tail(const GemmProblem& p, const DeviceProfile& device, KernelPlan& plan) {
  const TailSplitPlan tail = plan_wgmma_tail(p, kTf32x3Wgmma128x128, device);
  plan.splits = tail.splits;
  plan.tail_tiles = tail.tail_tiles;
}

// Bytes: the split operands (of a group of a batch's products), then the tail's partial
// sums, all floats. A batch in one call is never split (its plan asks for none), but a
// batch that dispatch runs product by product (by_product) asks with its products' plan,
// which may split: their partial sums then follow one product's operands.
size_t tf32x3_wgmma_workspace(const GemmProblem& p, const KernelPlan& plan) {
  const size_t products = p.batch > 1 ? size_t(tf32x3_batch_group(p)) : 1;
  return (products * 2 * size_t(p.m + p.n) * size_t(padded_k(p)) +
          tail_partial_elements(plan, kPartialFloats)) *
         sizeof(float);
}

void launch_tf32x3_wgmma(const GemmProblem& p, const KernelPlan& plan, void* workspace,
                         void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  constexpr int64_t kMax = 0x7fffffff;
  constexpr int64_t kLimit = sm90::kMaxExtent;
  require(p.m <= kLimit && p.n <= kLimit && p.k <= kLimit, Status::NotSupported,
          "tf32x3 wgmma kernel: m, n and k must be at most 2^31 - 513");
  require(workspace != nullptr || tf32x3_wgmma_workspace(p, plan) == 0, Status::Internal,
          "tf32x3 wgmma kernel: no workspace");
  // A (m x k) and B (n x k), split and K-major: A is stored k x m when transposed, B
  // k x n unless transposed. A batch: `group` products at a time, side by side.
  const bool batched = p.batch > 1;
  const int64_t group = batched ? tf32x3_batch_group(p) : 1;
  const int64_t kp = padded_k(p);
  float* const a_big = static_cast<float*>(workspace);
  float* const a_small = a_big + group * p.m * kp;
  float* const b_big = a_small + group * p.m * kp;
  float* const b_small = b_big + group * p.n * kp;
  float* const partials = b_small + group * p.n * kp;
  const KernelPlan unsplit{};
  const TailSplit split =
      make_tail_split(tiles_of(p), int(ceil_div(p.k, kBK)), batched ? unsplit : plan, partials);
  const int64_t blocks = tail_split_blocks(split);
  require(blocks <= kMax, Status::NotSupported,
          "tf32x3 wgmma kernel: too many tiles for one launch");
  for (int64_t first = 0; first < std::max<int64_t>(1, p.batch); first += group) {
    const int64_t count = batched ? std::min(group, p.batch - first) : 1;
    const GemmProblem q = batched ? products_of(p, first, count) : p;
    const unsigned products = unsigned(count);
    launch_pack(q.a_as<float>(), q.lda, q.trans_a, q.m, q.k, a_big, kp, stream, a_small, products,
                {q.stride_a, q.m * kp});
    launch_pack(q.b_as<float>(), q.ldb, !q.trans_b, q.n, q.k, b_big, kp, stream, b_small, products,
                {q.stride_b, q.n * kp});
    const auto map = [&](const float* x, int64_t rows, int box) {
      return sm90::operand_map(x, true, rows, q.k, kp, box, batched ? count : 0, rows * kp);
    };
    const GemmView<float> view = view_of<float>(q);
    const auto launch = [&](auto kernel) {
      opt_in_shared_memory(reinterpret_cast<const void*>(kernel), kSharedBytes, false,
                           "tf32x3 wgmma kernel: cudaFuncSetAttribute (shared memory)");
      launch_kernel("tf32x3 wgmma kernel launch", kernel, dim3(unsigned(blocks), 1, products),
                    kThreads, kSharedBytes, stream, map(a_big, q.m, kBM), map(a_small, q.m, kBM),
                    map(b_big, q.n, kBN), map(b_small, q.n, kBN), view, split);
    };
    if (batched) {
      launch(tf32x3_wgmma_kernel<true>);
    } else {
      launch(tf32x3_wgmma_kernel<false>);
      launch_tail_reduce<kBM, kBN, kGroupM, false, true>(view, split, p.m, p.n, stream);
    }
  }
}

}  // namespace tiledmm
