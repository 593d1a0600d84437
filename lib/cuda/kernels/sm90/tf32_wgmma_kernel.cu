// TF32 tensor cores on Hopper (TMM_MATH_TF32, sm_90a): SGEMM on the warpgroup
// instruction wgmma.m64n256k8 with TF32 inputs and FP32 accumulation, fed by the
// bulk tensor copy engine (TMA) through a pipeline of shared-memory stages.
//
// The product. The kernel computes D = A' B'^T over a 128 x 256 tile of D per block,
// A' (rows x k) and B' (cols x k). wgmma reads TF32 B' from shared memory only
// K-major (rows along k), and A' K-major from shared memory or, in any layout, from
// registers. So, per the operands' layouts (canonical row-major, gemm_problem.hpp):
//   A K-major, B K-major (A as is, B transposed): A' = A, B' = B, both from shared
//     memory;
//   A MN-major (transposed), B K-major: A' = A through registers;
//   A K-major, B MN-major (row-major NN, the common case): D = C^T = B^T A^T, A' = B
//     through registers, B' = A; the epilogue writes D transposed;
//   both MN-major, or rows the copy engine cannot read (not 16-byte aligned): the
//     launcher first copies B (or the unreadable operand) into the workspace as a
//     K-major matrix (pack_kernel.cu), rows padded to 128 bytes.
// Past the matrix's edges the copy engine fills zeros, so every m, n, k takes the
// same path; the epilogue writes inside the matrix only.
//
// Roles. Three warpgroups. Warpgroup 0 is the producer: one of its threads issues,
// per tile of 32 in k, the TMA copies of A' (128 x 32) and B' (256 x 32) into the
// next free stage and tells that stage's "full" barrier how many bytes to expect.
// Warpgroups 1 and 2 are the consumers, each owning 64 rows of the tile: they wait on
// a stage's "full" barrier, issue four wgmma (k = 8 each), and once those have
// finished arrive on the stage's "empty" barrier, which the producer waits on before
// refilling it. A consumer keeps one tile's wgmma in flight while it issues the next
// (wgmma.wait_group 1); an A' from registers uses two sets of fragment registers in
// turn, since the wgmma read them until they finish. setmaxnreg moves registers from
// the producer (40) to the consumers (232): a consumer holds 64 x 256 accumulators,
// 128 per thread.
//
// Shared memory. 4 stages of 48 KiB (16 KiB of A', 32 KiB of B'). K-major tiles are
// rows of 32 floats (128 bytes) with the copy engine's 128-byte swizzle: the 16-byte
// chunk c of row r lands at chunk c ^ (r % 8), so wgmma's reads of 8 rows hit
// different banks; the matrix descriptors name that layout (sm90_common.cuh) and the
// 4 steps of k in a row are 32 bytes apart. An MN-major A' arrives as 4 boxes of 32
// rows x 32 k, each [k][32 rows] swizzled the same way; a consumer thread reads its
// fragment elements one by one (mn_major_element).
//
// Rounding. The tensor maps say TFLOAT32: the copy engine rounds every element to
// TF32 to nearest (ties to even) as it lands. Measured on the H100: the error against
// FP64 is cuBLAS TF32's (2.6e-4 at 8192^3); FLOAT32 maps leave wgmma to truncate,
// 2.7x the error.
//
// Last wave. Where the tiles leave the last wave of blocks partly full, the plan may
// split those tiles along k (tail_split.cuh): such a block writes its slice's sums
// to the workspace, and tail_reduce_kernel adds them and writes C.
//
// Strided batches. With kBatched, the launch runs a batch's products side by side,
// product blockIdx.z: the operands' maps have a third dimension, the products, and the
// epilogue writes that product's C (select_product). Only where the copy engine reads
// every product as it lies (wgmma_batches_in_one_launch, plan/planner.hpp); otherwise
// the launcher runs the batch product by product. A batch is never split along k.
//
// Epilogue. Straight from the accumulators: C = alpha * acc + beta * C, two floats at
// a time where C allows (one at a time when D is C^T); beta = 0 never reads C.
//
// Speed (H100, tmm_bench --math tf32, row-major NN): 345-390 TFLOP/s at 4096^3,
// 8192^3 and 16384^3 (0.86-1.06x cuBLAS TF32, by machine; sustained 0.975-0.998x);
// 220-275 on 4095^3, 4097^3 and 12345 x 6789 x 2345 (1.9-2.7x cuBLAS, whose TF32
// falls to 107-135 off 16-byte rows). BENCHMARKS.md has the runs.
//
// Built for sm_90a only (lib/CMakeLists.txt): elsewhere the registry row (cc 9.0) is
// never chosen, and tf32_wgmma_available() asks the runtime whether the sm_90a code
// loaded for the current device.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <type_traits>

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
constexpr int kBM = kTf32Wgmma128x256.rows, kBN = kTf32Wgmma128x256.cols;
constexpr int kBK = kTf32Wgmma128x256.depth;
constexpr int kStages = 4;
constexpr int kThreads = 384;  // producer warpgroup + 2 consumer warpgroups
constexpr int kGroupM = 8;     // tile rows per rasterisation group
constexpr int kTileABytes = kBM * kBK * 4, kTileBBytes = kBN * kBK * 4;
constexpr int kStageBytes = kTileABytes + kTileBBytes;
// Stages, their barriers, and room to align the first stage to 1024 bytes (the
// swizzle's atom).
constexpr int kSharedBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
static_assert(kBK * 4 == 128, "a row of a tile is one 128-byte swizzle span");
static_assert(kTileABytes % 1024 == 0 && kTileBBytes % 1024 == 0, "stages stay 1024-aligned");

#if TMM_SM90A

using namespace sm90;

// The k-th step's fragment of A from an MN-major tile (register A): the stage holds
// 4 sub-tiles of 32 rows, each [32 k][32 rows] with the 128-byte swizzle.
__device__ __forceinline__ uint32_t mn_major_element(const float* tile, int row, int k) {
  const int sub = row / 32, r = row % 32;
  return __float_as_uint(tile[sub * 1024 + k * 32 + (((r / 4) ^ (k % 8)) * 4) + r % 4]);
}

#endif  // TMM_SM90A

// D (M' x N') = A' B'^T, A' M' x k and B' N' x k: with kRegisterA false A' is
// K-major and both come from shared memory; with it true A' is MN-major (its rows
// contiguous along M') and goes through registers. D is C, or C's transpose when
// kTransposed (then A' is B and B' is A: C^T = B^T A^T).
template <bool kRegisterA, bool kTransposed, bool kBatched>
__global__ void __launch_bounds__(kThreads, 1)
    tf32_wgmma_kernel(const __grid_constant__ CUtensorMap a_map,
                      const __grid_constant__ CUtensorMap b_map, GemmView<float> p,
                      TailSplit split) {
#if TMM_SM90A
  extern __shared__ unsigned char shared_raw[];
  const uintptr_t base = (reinterpret_cast<uintptr_t>(shared_raw) + 1023) & ~uintptr_t(1023);
  unsigned char* const stages = reinterpret_cast<unsigned char*>(base);
  uint64_t* const barriers = reinterpret_cast<uint64_t*>(stages + kStages * kStageBytes);
  const StageRing ring{barriers, barriers + kStages, kStages};

  const int64_t rows = kTransposed ? p.n : p.m, cols = kTransposed ? p.m : p.n;  // of D
  // A whole tile, or a slice of k of one (tail_split.cuh): tiles_k tiles of k from
  // work.first_step on (k < 2^31: the launcher requires it).
  const BlockWork work = block_work(split);
  const TileOrigin tile = grouped_tile<kBM, kBN, kGroupM>(work.tile, rows, cols);
  const int tiles_k = work.steps;
  const int tiles_copied = kRegisterA ? tiles_k + tiles_k % 2 : tiles_k;  // see the consumer

  ring.init(2);  // two consumer warpgroups

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      const int32_t row0 = int32_t(tile.row0), col0 = int32_t(tile.col0);
      const int32_t z = kBatched ? int32_t(blockIdx.z) : 0;  // the product
      for (int t = 0; t < tiles_copied; ++t) {
        // Refilling waits until the consumers released tile t - kStages.
        const int s = ring.acquire(t, kStageBytes);
        unsigned char* const stage = stages + s * kStageBytes;
        // Past the slice: step `steps` lies wholly past k (zeros).
        const int32_t k0 = k_coordinate(t < tiles_k ? work.first_step + t : split.steps, kBK);
        if (kRegisterA) {  // 4 boxes of 32 rows x 32 k, rows contiguous
#pragma unroll
          for (int j = 0; j < kBM / 32; ++j)
            tma_load<kBatched>(shared_address(stage + j * 4096), &a_map, &ring.full[s],
                               row0 + 32 * j, k0, z);
        } else {
          tma_load<kBatched>(shared_address(stage), &a_map, &ring.full[s], k0, row0, z);
        }
        tma_load<kBatched>(shared_address(stage + kTileABytes), &b_map, &ring.full[s], k0, col0, z);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int consumer = warpgroup - 1;  // rows 64 consumer .. of the tile
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    if (kRegisterA) {
      // Two sets of fragment registers, a tile apart: tile t's are loaded while tile
      // t - 1's wgmma still read theirs (wgmma.wait_group 1 has retired tile t - 2's).
      // The loop takes tiles in pairs, so that each set's registers are fixed (an
      // odd count ends with a tile of zeros from the copy engine).
      const float* const a_base = reinterpret_cast<const float*>(stages);
      const int row = 64 * consumer + 16 * warp + lane / 4, k = lane % 4;
      uint32_t frag[2][kBK / 8][4];
      for (int t0 = 0; t0 < tiles_copied; t0 += 2) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int t = t0 + h, s = ring.wait(t);
          const float* const a_tile = a_base + s * (kStageBytes / 4);
#pragma unroll
          for (int step = 0; step < kBK / 8; ++step) {
            frag[h][step][0] = mn_major_element(a_tile, row, 8 * step + k);
            frag[h][step][1] = mn_major_element(a_tile, row + 8, 8 * step + k);
            frag[h][step][2] = mn_major_element(a_tile, row, 8 * step + k + 4);
            frag[h][step][3] = mn_major_element(a_tile, row + 8, 8 * step + k + 4);
          }
          const uint32_t b = shared_address(stages + s * kStageBytes + kTileABytes);
          fence_accumulators(acc);
          wgmma_fence();
#pragma unroll
          for (int step = 0; step < kBK / 8; ++step)
            wgmma_m64n256k8_tf32_rs(acc, frag[h][step], descriptor_k_major_sw128(b + 32 * step), 1);
          wgmma_commit();
          // Tile t - 1's wgmma have finished: its stage and its fragments are free.
          wgmma_wait<1>();
          fence_accumulators(acc);
          if (t > 0) ring.release(t - 1);
        }
      }
    } else {
      for (int t = 0; t < tiles_copied; ++t) {
        const int s = ring.wait(t);
        const uint32_t b = shared_address(stages + s * kStageBytes + kTileABytes);
        const uint32_t a = shared_address(stages + s * kStageBytes + consumer * 64 * kBK * 4);
        fence_accumulators(acc);
        wgmma_fence();
#pragma unroll
        for (int step = 0; step < kBK / 8; ++step)
          wgmma_m64n256k8_tf32(acc, descriptor_k_major_sw128(a + 32 * step),
                               descriptor_k_major_sw128(b + 32 * step), 1);
        wgmma_commit();
        // Tile t - 1's wgmma have finished reading their stage: release it.
        wgmma_wait<1>();
        fence_accumulators(acc);
        if (t > 0) ring.release(t - 1);
      }
    }
    wgmma_wait<0>();
    fence_accumulators(acc);

    const int tile_row = 64 * consumer + 16 * warp + lane / 4;
    if (kBatched) select_product(p);  // its C
    if (work.split >= 0) {  // a slice's sums, as they are (D's layout), for tail_reduce_kernel
      float* const sums = partial_tile<kBM, kBN>(split, work.split, 1, 0);
#pragma unroll
      for (int j = 0; j < 32; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h)
          store_partial_pair_inside(sums, kBN, tile_row + 8 * h, 8 * j + 2 * (lane % 4), tile, rows,
                                    cols, acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
      }
      return;
    }
    const int64_t row = tile.row0 + tile_row;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const int64_t col = tile.col0 + 8 * j + 2 * (lane % 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
        if (kTransposed) {  // D(r, c) is C(c, r)
          const int64_t r = row + 8 * h;
          if (r < p.n) {
            if (col < p.m) store_c(p, col, r, v0);
            if (col + 1 < p.m) store_c(p, col + 1, r, v1);
          }
        } else {
          store_pair(p, row + 8 * h, col, v0, v1);
        }
      }
    }
  }
#else
  (void)a_map;
  (void)b_map;
  (void)p;
  (void)split;
#endif
}

// ---- host

// Packed rows are whole 128-byte lines (32 floats): the copy engine's 128-byte rows of
// a box then start on a line, one line each (rows 16 bytes off measured 1.7x slower).
int64_t padded_k(const GemmProblem& p) { return ceil_div(p.k, 32) * 32; }

// Which operands the launcher first copies into the workspace, and whether it computes
// D = C^T (A' = B): the rule is the planner's (wgmma_operands, plan/planner.hpp), so
// that the planner's split of the last wave counts the tiles this kernel runs.
WgmmaOperands operands(const GemmProblem& p) { return wgmma_operands(p, kTf32Wgmma128x256); }

// Tiles of D.
int64_t tiles_of(const GemmProblem& p, bool transposed) {
  return wgmma_tiles(p, kTf32Wgmma128x256, transposed);
}

constexpr size_t kPartialFloats = size_t(kTf32Wgmma128x256.partial_floats);
static_assert(kPartialFloats == size_t(kBM) * kBN, "a split block's sums: one float per output");
static_assert(kTf32Wgmma128x256.outputs_per_thread * (kThreads - 128) == kBM * kBN,
              "the consumer warpgroups own the tile");
static_assert(kTf32Wgmma128x256.may_transpose, "the launcher computes D = C^T (operands())");

// `products`: p's products side by side (kBatched; the maps' third dimension), unsplit.
template <bool kRegisterA, bool kTransposed, bool kBatched>
void launch_variant(const CUtensorMap& a_map, const CUtensorMap& b_map, const GemmProblem& p,
                    const KernelPlan& plan, float* partials, cudaStream_t stream,
                    unsigned products) {
  const auto kernel = tf32_wgmma_kernel<kRegisterA, kTransposed, kBatched>;
  opt_in_shared_memory(reinterpret_cast<const void*>(kernel), kSharedBytes, false,
                       "tf32 wgmma kernel: cudaFuncSetAttribute (shared memory)");
  const int64_t rows = kTransposed ? p.n : p.m, cols = kTransposed ? p.m : p.n;  // of D
  const TailSplit split = make_tail_split(tiles_of(p, kTransposed), int(ceil_div(p.k, kBK)),
                                          kBatched ? KernelPlan{} : plan, partials);
  const int64_t blocks = tail_split_blocks(split);
  require(blocks <= int64_t(0x7fffffff), Status::NotSupported,
          "tf32 wgmma kernel: too many tiles for one launch");
  const dim3 grid(unsigned(blocks), 1, products);
  const GemmView<float> view = view_of<float>(p);
  launch_kernel("tf32 wgmma kernel launch", kernel, grid, kThreads, kSharedBytes, stream, a_map,
                b_map, view, split);
  launch_tail_reduce<kBM, kBN, kGroupM, kTransposed, false>(view, split, rows, cols, stream);
}

}  // namespace

void plan_tf32_wgmma_tail(const GemmProblem& p, const DeviceProfile& device, KernelPlan& plan) {
  const TailSplitPlan tail = plan_wgmma_tail(p, kTf32Wgmma128x256, device);
  plan.splits = tail.splits;
  plan.tail_tiles = tail.tail_tiles;
}

// Bytes: the packed operands, then the tail's partial sums, all floats.
size_t tf32_wgmma_workspace(const GemmProblem& p, const KernelPlan& plan) {
  const WgmmaOperands ops = operands(p);
  return (size_t((ops.pack_a ? p.m : 0) + (ops.pack_b ? p.n : 0)) * size_t(padded_k(p)) +
          tail_partial_elements(plan, kPartialFloats)) *
         sizeof(float);
}

bool tf32_wgmma_available() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> known[kMaxDevices];  // 0 unknown, 1 yes, 2 no
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return false;
  int state = known[device].load(std::memory_order_relaxed);
  if (state == 0) {
    cudaFuncAttributes attributes{};
    const LastErrorScope scope;
    const bool loaded =
        cudaFuncGetAttributes(&attributes, tf32_wgmma_kernel<false, false, false>) == cudaSuccess;
    if (!loaded) scope.clear_if_ours();  // not sticky
    state = loaded && sm90::tensor_map_encoder() != nullptr ? 1 : 2;
    known[device].store(state, std::memory_order_relaxed);
  }
  return state == 1;
}

bool tf32_wgmma_batches(const GemmProblem& p) {
  return wgmma_batches_in_one_launch(p, kTf32Wgmma128x256);
}

void launch_tf32_wgmma(const GemmProblem& p, const KernelPlan& plan, void* workspace,
                       void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  constexpr int64_t kLimit = sm90::kMaxExtent;
  require(p.m <= kLimit && p.n <= kLimit && p.k <= kLimit, Status::NotSupported,
          "tf32 wgmma kernel: m, n and k must be at most 2^31 - 513");
  // A strided batch the copy engine cannot read as it lies: product by product (each
  // may pack into the workspace, one after another on the stream).
  if (p.batch > 1 && !tf32_wgmma_batches(p)) {
    for (int64_t b = 0; b < p.batch; ++b)
      launch_tf32_wgmma(product_of(p, b), plan, workspace, stream);
    return;
  }
  // A (m x k) and B (n x k) as the kernel reads them: K-major (rows along k) or
  // MN-major, packed into the workspace first where operands() says (never for a batch).
  const WgmmaOperands ops = operands(p);
  require(workspace != nullptr || tf32_wgmma_workspace(p, plan) == 0, Status::Internal,
          "tf32 wgmma kernel: no workspace for the packed operands or the partial sums");
  const int64_t kp = padded_k(p);
  const float* a = p.a_as<float>();
  const float* b = p.b_as<float>();
  int64_t lda = p.lda, ldb = p.ldb;
  bool a_k_major = !p.trans_a, b_k_major = p.trans_b;
  float* next = static_cast<float*>(workspace);
  if (ops.pack_a) {  // A is stored k x m when transposed
    launch_pack(p.a_as<float>(), p.lda, p.trans_a, p.m, p.k, next, kp, stream);
    a = next;
    lda = kp;
    a_k_major = true;
    next += p.m * kp;
  }
  if (ops.pack_b) {  // B is stored k x n unless transposed
    launch_pack(p.b_as<float>(), p.ldb, !p.trans_b, p.n, p.k, next, kp, stream);
    b = next;
    ldb = kp;
    b_k_major = true;
    next += p.n * kp;
  }
  float* const partials = next;  // after the packed operands
  // The maps of A' and B' (of `products` products from q's first on, for a batch) and
  // the variant that reads them.
  const auto launch = [&](auto batched, const GemmProblem& q, unsigned products) {
    constexpr bool kBatched = decltype(batched)::value;
    const int64_t n_products = kBatched ? int64_t(products) : 0;  // 0: a 2-D map
    const auto map = [&](const float* x, bool k_major, int64_t rows, int64_t ld, int box,
                         int64_t stride) {
      return sm90::operand_map(x, k_major, rows, q.k, ld, box, n_products, stride);
    };
    const float* qa = kBatched ? q.a_as<float>() : a;
    const float* qb = kBatched ? q.b_as<float>() : b;
    if (a_k_major && b_k_major) {  // both from shared memory
      launch_variant<false, false, kBatched>(map(qa, true, q.m, lda, kBM, q.stride_a),
                                             map(qb, true, q.n, ldb, kBN, q.stride_b), q, plan,
                                             partials, stream, products);
    } else if (!a_k_major) {  // A through registers
      launch_variant<true, false, kBatched>(map(qa, false, q.m, lda, kBM, q.stride_a),
                                            map(qb, true, q.n, ldb, kBN, q.stride_b), q, plan,
                                            partials, stream, products);
    } else {  // C^T = B^T A^T: B through registers
      launch_variant<true, true, kBatched>(map(qb, false, q.n, ldb, kBM, q.stride_b),
                                           map(qa, true, q.m, lda, kBN, q.stride_a), q, plan,
                                           partials, stream, products);
    }
  };
  if (p.batch <= 1) {
    launch(std::false_type{}, p, 1u);
  } else {  // side by side, in slices of at most 65535 products (gridDim.z)
    launch_in_product_slices(
        p, [&](const GemmProblem& q, unsigned products) { launch(std::true_type{}, q, products); });
  }
}

}  // namespace tiledmm
