// FP64 tensor cores (DMMA): DGEMM on the warp-wide mma.sync instruction over doubles,
// strict IEEE FP64 (each product exact, each sum a correctly rounded FP64 add, as cuBLAS
// DGEMM's default math), so it is what AUTO and BLOCKED run in double wherever it runs,
// not a permission of the math mode.
//
// Instruction. On compute capability 9.0 and later, mma.sync m16n8kK .f64 (K = 4, 8 or
// 16, a shape parameter; PTX ISA 7.8); on 8.x, where only m8n8k4 .f64 exists, each 16 x 8
// x 4 step is two m8n8k4, one for rows 0-7 and one for rows 8-15, which holds the same
// fragments (below). Hopper has no wgmma over doubles: its FP64 tensor-core work is
// mma.sync (docs/design/double-precision.md, part 2).
//
// Fragments (PTX ISA, "Matrix Fragments for mma.m16n8k4/k8/k16" with .f64). With
// g = lane / 4 and t = lane % 4, a thread holds, of a 16 x K tile of A, the elements
// (g + 8 (e % 2), t + 4 (e / 2)) for e < K / 2; of a K x 8 tile of B, (t + 4 e, g) for
// e < K / 4; of the 16 x 8 tile of C, (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1):
// the TF32 kernels' accumulator layout, so the epilogue is theirs (store_tile).
//
// Ownership. A block of WARPS_M x WARPS_N warps owns a BM x BN tile of C; a warp owns
// WM x WN of it, MT x NT tiles of 16 x 8: 64 doubles (128 registers) of accumulators per
// thread in the 128 x 64 shape below, 32 in the 64 x 64.
//
// Shared memory and pipeline. The TF32 kernels' (mma_common.cuh): each operand's tile
// of BK in k is copied by cp.async as it lies in global memory, in lines along its
// contiguous direction, 16 bytes (two doubles) a copy where the operand's rows are
// 16-byte aligned and 8 bytes otherwise, zeros stored past every edge of m, n and k;
// STAGES buffers, STAGES - 1 tiles in flight. Lines are 4 doubles longer than the tile:
// a warp's fragment reads, 8 bytes a thread, are served 16 threads at a time, and with a
// line stride of 4 mod 16 doubles the 16 threads of each half (g over 4 values, t over
// 4) reach 16 different 8-byte bank pairs, in either layout (4 g + t or 4 t + g).
//
// Schedule (run_rolling; the order cuBLAS's DGEMM kernel of the same shape issues, as
// its SASS shows). A tile of k is BK / K steps. Each warp keeps its fragments rolling:
// B's column tiles for the next step are read as a step starts, into the second of two
// buffers, and each of A's row tiles is read for the next step right after its products
// of this step are issued, so that reads run under the DMMAs and A needs one buffer.
// The barrier that hands a stage on comes after the first row tile's products of a
// tile's last step, with the DMMAs queued, and the next tile's first fragments follow
// it. Where every copy a tile starts lies inside the matrix and the block's range of k
// (all but a block's last STAGES - 1 tiles, in blocks away from the edges of m and n),
// the copies carry no checks and are issued a share after each row tile's products of
// the first step, branch-free, so the scheduler interleaves them with the DMMAs; the
// other tiles copy as the TF32 kernels do, with their checks, at the first step.
//
// Edges, alignment and the epilogue: as the TF32 kernels. C = alpha * acc + beta * C
// inside the matrix only, 16 bytes at a time where C allows; beta = 0 never reads C.
//
// Split-K (tail_split.cuh): where the tiles leave the last wave of blocks partly empty,
// or fill one wave over deep k, the planner (plan_f64_tail) splits those tiles along k;
// each split block writes its partial tile of doubles to the workspace, and
// tail_reduce_kernel adds them in slice order, in FP64, through the epilogue. A tile's
// sums run in one order whatever the blocks' timing, so a call gives the same bits run to
// run. Without a workspace (the streamed path's chunks) nothing splits.
//
// mma.sync over doubles and cp.async need compute capability 8.0: for older targets the
// kernel compiles to a trap, and its registry row (min_cc 80) keeps it from being chosen
// there.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "cuda/kernels/mma/mma_common.cuh"
#include "cuda/kernels/tail_split.cuh"
#include "plan/f64_shapes.hpp"
#include "plan/planner.hpp"

namespace tiledmm {
namespace {

// A block's shape over doubles: MmaShape's, with K, the depth of one mma (4, 8 or 16).
template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int MIN_BLOCKS, int K>
struct F64Shape : MmaShape<BM, BN, BK, WARPS_M, WARPS_N, STAGES, MIN_BLOCKS> {
  static constexpr int KSTEP = K;
  static_assert(K == 4 || K == 8 || K == 16, "mma.sync .f64 shapes: m16n8k4, k8, k16");
  static_assert(BK % KSTEP == 0, "tiles of k are whole steps of the mma");
};

constexpr int kGroupRows = 8;  // tile rows per rasterisation group

#if TMM_MMA_SYNC

// d += a * b on one 16 x 8 x K tile of doubles, FP64 products and sums.
template <int K>
__device__ __forceinline__ void mma_f64(double (&d)[4], const double (&a)[K / 2],
                                        const double (&b)[K / 4]) {
#if __CUDA_ARCH__ >= 900
  if constexpr (K == 4) {
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  } else if constexpr (K == 8) {
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
#else
  // m8n8k4: a thread holds A's (g, t), B's (t, g) and C's (g, 2t), (g, 2t + 1); the
  // 16 x 8 tile's rows g and g + 8 are two of them, in the order of the k steps.
#pragma unroll
  for (int s = 0; s < K / 4; ++s) {
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(d[0]), "+d"(d[1])
        : "d"(a[2 * s]), "d"(b[s]));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(d[2]), "+d"(d[3])
        : "d"(a[2 * s + 1]), "d"(b[s]));
  }
#endif
}

// Where this thread's fragment reads start in a stage's tiles (doubles): row g and
// depth t of its warp's first row tile, column g and depth t of its first column tile.
template <class S, bool KContigA, bool KContigB>
struct F64FragmentOrigin {
  int a, b;

  __device__ __forceinline__ F64FragmentOrigin(int wm, int wn, int lane) {
    using TileA = OperandTile<S::BM, S::BK, KContigA, double>;
    using TileB = OperandTile<S::BN, S::BK, KContigB, double>;
    const int g = lane / 4, t = lane % 4;
    a = KContigA ? (wm + g) * TileA::kStride + t : t * TileA::kStride + wm + g;
    b = KContigB ? (wn + g) * TileB::kStride + t : t * TileB::kStride + wn + g;
  }
};

// A warp's fragments, rolling (the schedule in the header): A's MT row tiles of the
// step being multiplied, each replaced by the next step's as soon as its products are
// issued, and B's NT column tiles in two buffers, this step's and the next one's.
template <class S, bool KContigA, bool KContigB>
struct RollingFragments {
  static constexpr int SA = OperandTile<S::BM, S::BK, KContigA, double>::kStride;
  static constexpr int SB = OperandTile<S::BN, S::BK, KContigB, double>::kStride;

  double a[S::MT][S::KSTEP / 2];
  double b[2][S::NT][S::KSTEP / 4];
  const F64FragmentOrigin<S, KContigA, KContigB> at;

  __device__ __forceinline__ RollingFragments(int wm, int wn, int lane) : at(wm, wn, lane) {}

  // Row tile i of A, depths kk .. kk + K - 1 of one stage's tile.
  __device__ __forceinline__ void load_a(const double* a_tile, int i, int kk) {
#pragma unroll
    for (int e = 0; e < S::KSTEP / 2; ++e) {
      const int row = 16 * i + 8 * (e % 2), depth = kk + 4 * (e / 2);
      a[i][e] = a_tile[at.a + (KContigA ? row * SA + depth : depth * SA + row)];
    }
  }

  // B's column tiles, depths kk .. kk + K - 1, into buffer `buf`.
  __device__ __forceinline__ void load_b(const double* b_tile, int buf, int kk) {
#pragma unroll
    for (int j = 0; j < S::NT; ++j)
#pragma unroll
      for (int e = 0; e < S::KSTEP / 4; ++e) {
        const int col = 8 * j, depth = kk + 4 * e;
        b[buf][j][e] = b_tile[at.b + (KContigB ? col * SB + depth : depth * SB + col)];
      }
  }
};

// The main loop over the block's tiles of k (the header's schedule). On entry no copy
// is in flight; on return none is, and acc holds the block's sums.
template <class S, bool KContigA, bool KContigB, bool VecA, bool VecB>
__device__ __forceinline__ void run_rolling(
    MmaMainloop<S, KContigA, KContigB, VecA, VecB, double>& block,
    RollingFragments<S, KContigA, KContigB>& f, double (&acc)[S::MT][S::NT][4]) {
  using TileA = OperandTile<S::BM, S::BK, KContigA, double>;
  using TileB = OperandTile<S::BN, S::BK, KContigB, double>;
  using CopyA = decltype(block.copy_a);
  using CopyB = decltype(block.copy_b);
  constexpr int kSteps = S::BK / S::KSTEP;
  static_assert(kSteps % 2 == 0, "B's two buffers alternate by step, the same way every tile");

  // The first STAGES - 1 tiles in flight, one commit group each (empty past the last).
#pragma unroll
  for (int s = 0; s < S::STAGES - 1; ++s) {
    if (s < block.tiles_k) block.copy_tile(s, s);
    cp_async_commit();
  }
  if (block.tiles_k > 0) {
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();
#pragma unroll
    for (int i = 0; i < S::MT; ++i) f.load_a(block.a_stages, i, 0);
    f.load_b(block.b_stages, 0, 0);
  }
  int t = 0, read = 0, write = S::STAGES - 1;  // stages of tiles t and t + STAGES - 1

  // Tile t: its products, the copies of tile t + STAGES - 1, and the fragments of the
  // next step, which for the last step are the next tile's first. INTERIOR: every tile
  // copied here lies wholly inside the matrix and inside the block's range of k, and a
  // next tile exists; its copies are issued a share after each row tile's products, with
  // no branch, so that the scheduler can interleave them with the DMMAs.
  auto tile = [&](auto interior_tag) {
    constexpr bool kInterior = decltype(interior_tag)::value;
    const int next = read + 1 == S::STAGES ? 0 : read + 1;
    const bool more = kInterior || t + 1 < block.tiles_k;  // a next tile to load from
    const uint32_t a_dst =
        shared_address(block.a_stages + write * TileA::kElements + block.copy_a.offset);
    const uint32_t b_dst =
        shared_address(block.b_stages + write * TileB::kElements + block.copy_b.offset);
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      const bool last = step + 1 == kSteps;
      const double* a_tile = block.a_stages + (last ? next : read) * TileA::kElements;
      const double* b_tile = block.b_stages + (last ? next : read) * TileB::kElements;
      const int kk = last ? 0 : S::KSTEP * (step + 1);
      if (!last) f.load_b(b_tile, (step + 1) % 2, kk);
      if (!kInterior && step == 0) {
        if (t + S::STAGES - 1 < block.tiles_k) block.copy_tile(t + S::STAGES - 1, write);
        cp_async_commit();
      }
#pragma unroll
      for (int i = 0; i < S::MT; ++i) {
#pragma unroll
        for (int j = 0; j < S::NT; ++j) mma_f64<S::KSTEP>(acc[i][j], f.a[i], f.b[step % 2][j]);
        if (kInterior && step == 0) {
#pragma unroll
          for (int q = 0; q < CopyA::kPasses; ++q)
            if (q * S::MT / CopyA::kPasses == i)
              CopyA::copy_group(a_dst + sizeof(double) * q * CopyA::kPassElements,
                                block.copy_a.src + q * block.copy_a.pass_step);
#pragma unroll
          for (int q = 0; q < CopyB::kPasses; ++q)
            if (q * S::MT / CopyB::kPasses == i)
              CopyB::copy_group(b_dst + sizeof(double) * q * CopyB::kPassElements,
                                block.copy_b.src + q * block.copy_b.pass_step);
          if (i == S::MT - 1) {
            block.copy_a.advance();
            block.copy_b.advance();
            cp_async_commit();
          }
        }
        if (last && i == 0 && more) {
          // Tile t + 1 has landed (all but the newest STAGES - 2 groups, then everyone's),
          // and every warp has issued its last read of tile t, whose stage the next
          // tile's copies refill.
          cp_async_wait<S::STAGES - 2>();
          __syncthreads();
          f.load_b(b_tile, 0, 0);
        }
        if (!last || more) f.load_a(a_tile, i, kk);
      }
    }
    read = next;
    write = write + 1 == S::STAGES ? 0 : write + 1;
  };

  if (block.rows_inside && block.cols_inside) {
    const int interior = min(block.full_tiles_k, block.tiles_k) - (S::STAGES - 1);
    for (; t < interior; ++t) tile(std::true_type{});
  }
  for (; t < block.tiles_k; ++t) tile(std::false_type{});
  cp_async_wait<0>();  // only empty groups can remain; leave none behind
}

// A split block's accumulators to its partial tile (BM x BN doubles, row-major), where
// they lie inside C (m x n; the tile's first element at `origin`).
template <class S>
__device__ __forceinline__ void store_partial(double* sums, const TileOrigin& origin, int64_t m,
                                              int64_t n, int wm, int wn, int lane,
                                              const double (&acc)[S::MT][S::NT][4]) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < S::MT; ++i)
#pragma unroll
    for (int j = 0; j < S::NT; ++j) {
      const int row = wm + 16 * i + g, col = wn + 8 * j + 2 * t;
      store_partial_pair_inside(sums, S::BN, row, col, origin, m, n, acc[i][j][0], acc[i][j][1]);
      store_partial_pair_inside(sums, S::BN, row + 8, col, origin, m, n, acc[i][j][2],
                                acc[i][j][3]);
    }
}

#endif  // TMM_MMA_SYNC

// The kernel: place the block (a whole tile, or a slice of k of one) and its warps, keep
// STAGES - 1 tiles of k in flight, multiply each as it lands, then the epilogue or the
// partial tile.
template <class S, bool KContigA, bool KContigB, bool VecA, bool VecB>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS)
    f64_mma_kernel(GemmView<double> p, TailSplit split) {
#if TMM_MMA_SYNC
  extern __shared__ __align__(16) double shared_doubles[];
  select_product(p);
  const BlockWork work = block_work(split);
  MmaMainloop<S, KContigA, KContigB, VecA, VecB, double> block(
      p, shared_doubles, grouped_tile<S::BM, S::BN, kGroupRows>(work.tile, p.m, p.n),
      work.first_step, work.steps);
  RollingFragments<S, KContigA, KContigB> fragments(block.wm, block.wn, block.lane);
  double acc[S::MT][S::NT][4] = {};
  run_rolling(block, fragments, acc);
  if (work.split < 0) {
    store_tile<S>(p, block.tile, block.wm, block.wn, block.lane, acc);
  } else {
    store_partial<S>(partial_tile<S::BM, S::BN, double>(split, work.split, 1, 0), block.tile, p.m,
                     p.n, block.wm, block.wn, block.lane, acc);
  }
#else
  // Built for an architecture without mma.sync over doubles: fail loudly (a sticky
  // CUDA error) rather than leave C as it was with a success status.
  (void)p;
  (void)split;
  __trap();
#endif
}

// The shapes, as the planner knows them (f64_shapes.hpp). 128 x 128 tiles, 2 x 4 warps
// of 64 x 32, tiles of k of 16, 4 stages, m16n8k8: 160 KiB of shared memory, one block
// per SM (A100, H100), for products of many waves (plan_f64): per flop it moves a third
// less between L2 and the SMs than 128 x 64, which is what counts where the H100 runs at
// its power cap (docs/design/double-precision.md, "The widest tile"). 128 x 64 tiles,
// 2 x 2 warps of 64 x 32, 3 stages: 90 KiB, two blocks per SM. 64 x 64 tiles, 2 x 2
// warps of 32 x 32, 3 stages: 60 KiB, three blocks per SM, for products with fewer
// tiles. The narrower two fit every device of compute capability 8.0 or later (sm_86
// and sm_89 opt into 99 KiB per block, where the widest does not fit).
//
// Tried and slower, on an H200 and the H100 at 4096^3 and 8192^3 NN in a session harness
// (not committed; these shapes are not rows): m16n8k16 and depth-32 tiles (they spill);
// each step's fragments loaded during the previous step's products (CUTLASS's multistage
// order: all 255 registers); and a K-contiguous tile's fragments read 16 bytes at a time
// (each thread's k slots permuted to adjacent depths, lines padded to 8 mod 16 doubles).
// One block of 128 x 128 per SM was slower under the schedule before the one above
// (every barrier stalled the whole SM); under this one it is the widest row. With the
// schedule above, m16n8k8 beats m16n8k4 (which spills under it); before it, loading each
// step's fragments and then issuing its DMMAs, with the copies and their checks in one
// block at the first step, reached 0.82-0.89x cuBLAS DGEMM
// (docs/design/double-precision.md, "What the kernel's SASS spends").
using Shape128x128 = F64Shape<128, 128, 16, 2, 4, 4, 1, 8>;
using Shape128x64 = F64Shape<128, 64, 16, 2, 2, 3, 2, 8>;
using Shape64x64 = F64Shape<64, 64, 16, 2, 2, 3, 3, 8>;

static_assert(matches<Shape128x128, double>(kF64Mma128x128), "planner row 128 x 128");
static_assert(matches<Shape128x64, double>(kF64Mma128x64), "planner row 128 x 64");
static_assert(matches<Shape64x64, double>(kF64Mma64x64), "planner row 64 x 64");
static_assert(kF64Mma128x128.blocks_per_sm == Shape128x128::MIN_BLOCKS &&
                  kF64Mma128x64.blocks_per_sm == Shape128x64::MIN_BLOCKS &&
                  kF64Mma64x64.blocks_per_sm == Shape64x64::MIN_BLOCKS,
              "the planner counts the blocks per SM the launch bounds give");
static_assert(Shape128x128::BK == kF64MmaDepth && Shape128x64::BK == kF64MmaDepth &&
                  Shape64x64::BK == kF64MmaDepth,
              "the planner's steps of k are the kernel's tiles of k");

const MmaShapeInfo& shape_of(int tile) {
  return tile == kF64Mma128x128.tile ? kF64Mma128x128
         : tile == kF64Mma64x64.tile ? kF64Mma64x64
                                     : kF64Mma128x64;
}

// The kernel for p's alignment (16-byte copies for each operand whose rows are all
// 16-byte aligned), then the reduction of the split tiles' partials, if any.
template <class S, bool KContigA, bool KContigB>
void launch_shape(const GemmProblem& p, const KernelPlan& plan, void* workspace,
                  cudaStream_t stream) {
  const GemmView<double> view = view_of<double>(p);
  const int64_t tiles = ceil_div(p.m, S::BM) * ceil_div(p.n, S::BN);
  require(ceil_div(p.k, S::BK) <= int64_t(INT32_MAX), Status::NotSupported,
          "f64 mma kernel: k is over 2^31 steps for one block");
  // A batch's products share no workspace: they run unsplit (choose_kernel).
  require(plan.splits <= 1 || p.batch <= 1, Status::Internal,
          "f64 mma kernel: a strided batch split along k");
  const TailSplit split = make_tail_split(tiles, int(ceil_div(p.k, S::BK)), plan, workspace);
  with_alignment(p, [&](auto vec_a, auto vec_b) {
    launch_in_product_slices(p, [&](const GemmProblem& q, unsigned products) {
      launch_mma_blocks<S>(
          f64_mma_kernel<S, KContigA, KContigB, decltype(vec_a)::value, decltype(vec_b)::value>,
          shared_bytes<S, KContigA, KContigB, double>(), tail_split_blocks(split), products, p.k,
          stream, "f64 mma kernel", view_of<double>(q), split);
    });
  });
  launch_tail_reduce<S::BM, S::BN, kGroupRows, false, false>(view, split, p.m, p.n, stream);
}

}  // namespace

void launch_f64_mma(const GemmProblem& p, const KernelPlan& plan, void* workspace,
                    void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  with_transposes(p, [&](auto ta, auto tb) {
    constexpr bool ka = !decltype(ta)::value, kb = decltype(tb)::value;
    switch (plan.tile) {
      case 256:
        launch_shape<Shape128x128, ka, kb>(p, plan, workspace, stream);
        break;
      case 128:
        launch_shape<Shape128x64, ka, kb>(p, plan, workspace, stream);
        break;
      case 64:
        launch_shape<Shape64x64, ka, kb>(p, plan, workspace, stream);
        break;
      default:
        throw Error(Status::Internal, "f64 mma kernel: unsupported tile");
    }
  });
}

size_t f64_mma_workspace(const GemmProblem& p, const KernelPlan& plan) {
  (void)p;
  const MmaShapeInfo& shape = shape_of(plan.tile);
  return tail_partial_elements(plan, size_t(shape.rows) * size_t(shape.cols)) * sizeof(double);
}

void plan_f64_mma_tail(const GemmProblem& p, const DeviceProfile& device, KernelPlan& plan) {
  const TailSplitPlan split = plan_f64_tail(p, shape_of(plan.tile), device);
  plan.splits = split.splits;
  plan.tail_tiles = split.tail_tiles;
}

}  // namespace tiledmm
