// TF32 tensor cores (TMM_MATH_TF32): SGEMM on the warp-wide mma.sync instruction
// m16n8k8 with TF32 inputs and FP32 accumulation. Each input is rounded to TF32
// (cvt.rna: to nearest, ties away from zero) as its fragment leaves shared memory;
// the tensor cores multiply exactly and add in FP32, into registers that hold the
// sums over the whole of k. No split-K: the planner's split-K serves the strict
// kernel, and the streamed host path hands each call one slice of k anyway.
//
// Ownership. A block of WARPS_M x WARPS_N warps owns a BM x BN tile of C: 2 x 4
// warps and 128 x 256 in the wide shape, 2 x 2 and 128 x 128 in the next. A warp
// owns 64 x 64 of it, as MT x NT = 4 x 8 tiles of 16 x 8, the shape of one mma. (The
// small shape, 64 x 64 in 2 x 2 warps of 32 x 32, is for small products: see Shape64.) In
// each step of 8 in k, a warp loads the A fragments of its 4 row tiles and the B
// fragments of its 8 column tiles (4 KiB of shared memory) and issues 32 mma. (A
// 64 x 32 warp tile would read 3 KiB per 16 mma: more than the 128 bytes per clock
// that shared memory delivers at the H100's tensor-core rate.) With g = lane / 4 and
// t = lane % 4, a thread holds, of each 16 x 8 tile, the elements (g, 2t),
// (g, 2t + 1), (g + 8, 2t) and (g + 8, 2t + 1) (PTX ISA, "Matrix Fragments for
// mma.m16n8k8"): 128 accumulators (32 in the small shape's 32 x 32 warps).
//
// Shared memory. Each operand's tile of BK in k (32 wide, 16 other) is copied as it
// lies in global memory, in lines along its contiguous direction: K-contiguous
// operands (A not transposed, B transposed) as [rows][BK + 4], MN-contiguous ones as
// [BK][columns + 8]. The padding makes the fragment reads conflict-free. In a
// K-contiguous tile a warp reads rows g and columns t: banks ((BK + 4) g + t) mod
// 32, all 32 different ((BK + 4) / 4 is odd); ldmatrix.x4 reads them, 4 floats per
// row, exactly a0..a3 of one A tile or b0, b1 of two B tiles. In an MN-contiguous
// tile it reads rows t and columns g, with 32-bit loads: banks 8 t + g mod 32
// (rows 136 or 264 floats apart), all different.
//
// Pipeline. STAGES buffers of both tiles, filled by cp.async: while the warps
// multiply tile t, the copies of tiles t + 1 .. t + STAGES - 1 are in flight. One
// barrier per tile of k; after it, a warp loads its first fragments of the tile, then
// starts the copies of tile t + STAGES - 1 while those loads are on their way. (Two
// steps of fragments in registers, to load one step while the other multiplies,
// spill at 255 registers and measured slower on the H100.) The wide shape: 3 stages
// of depth 32, 162 KiB of dynamic shared memory, one block per SM (A100, H100 and
// other parts that opt into that much). The other: 4 stages of depth 16, 80 KiB, two
// blocks per SM on the A100 and H100, one on sm_86/89 (100 KiB per SM). The small
// one (Shape64): 4 stages of depth 32, 72 KiB, two blocks per SM on the A100 and H100.
// plan_tf32() chooses.
//
// Speed. On the H100 (tmm_bench --math tf32) about 150-160 TFLOP/s at 4096^3 and
// 8192^3, 0.4x cuBLAS's TF32 (wgmma), and 0.63-0.75x cuBLAS on the unaligned
// 4095^3, 4097^3, 12345 x 6789 x 2345. With 8 warps per SM the issue slots bound it:
// each input takes two instructions to round (cvt.rna is a test for Inf/NaN and an
// add on sm_90) and there is one input per mma. Hopper's wgmma, reading its operands
// from shared memory, is the step beyond.
//
// Edges and alignment. The copies are 16 bytes (4 floats) where the operand's pointer
// and leading dimension keep every row 16-byte aligned, 4 bytes otherwise (a template
// parameter per operand, chosen at launch). Past the edges of the matrix, in m, n or
// k, zeros are stored in place of the missing elements (TileCopier), so zeros enter
// the products and no byte outside the matrix is read. The epilogue writes
// C = alpha * acc + beta * C inside the matrix only, two floats at a time where C is
// 8-byte aligned; beta = 0 never reads C.
//
// Order. Blocks are numbered in groups of kGroupM tile rows (grouped_tile_of_block).
//
// mma.sync with TF32 and cp.async need compute capability 8.0: for older targets the
// kernel compiles to an empty body, and its registry row (min_cc 80) keeps it from
// being chosen there.
#include <algorithm>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "cuda/kernels/mma/mma_common.cuh"
#include "plan/tf32_shapes.hpp"

namespace tiledmm {
namespace {

#if TMM_MMA_SYNC

constexpr int kGroupM = 8;  // tile rows per rasterisation group

// One step of 8 in k of a warp's operands, in registers, rounded to TF32: a[i] for
// row tile i (a0..a3), b[j] for column tile j (b0, b1).
template <class S>
struct Fragments {
  uint32_t a[S::MT][4];
  uint32_t b[S::NT][2];
};

// Loads the fragments of depths kk .. kk + 7 of one stage's tiles, rounding each
// input to TF32 on the way (cvt.rna: on sm_90 a test for Inf/NaN and an add).
template <class S, bool KContigA, bool KContigB>
__device__ __forceinline__ void load_fragments(Fragments<S>& f, const float* a_tile,
                                               const float* b_tile,
                                               FragmentOrigin<S, KContigA, KContigB> at, int kk) {
  using TileA = OperandTile<S::BM, S::BK, KContigA>;
  using TileB = OperandTile<S::BN, S::BK, KContigB>;
  constexpr int SA = TileA::kStride, SB = TileB::kStride;
#pragma unroll
  for (int i = 0; i < S::MT; ++i) {
    if (KContigA) {  // rows 16 i.., depths kk..
      ldmatrix_x4(f.a[i], shared_address(a_tile + at.a + 16 * i * SA + kk));
    } else {  // depths kk + t (+ 4), rows 16 i + g (+ 8)
      const float* e = a_tile + at.a + kk * SA + 16 * i;
      f.a[i][0] = __float_as_uint(e[0]);
      f.a[i][1] = __float_as_uint(e[8]);
      f.a[i][2] = __float_as_uint(e[4 * SA]);
      f.a[i][3] = __float_as_uint(e[4 * SA + 8]);
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) f.a[i][r] = to_tf32(f.a[i][r]);
  }
#pragma unroll
  for (int j = 0; j < S::NT; j += 2) {
    uint32_t r[4];
    if (KContigB) {  // columns 8 j.. (two n tiles), depths kk..
      ldmatrix_x4(r, shared_address(b_tile + at.b + 8 * j * SB + kk));
    } else {  // depths kk + t (+ 4), columns 8 j + g (+ 8)
      const float* e = b_tile + at.b + kk * SB + 8 * j;
      r[0] = __float_as_uint(e[0]);
      r[1] = __float_as_uint(e[4 * SB]);
      r[2] = __float_as_uint(e[8]);
      r[3] = __float_as_uint(e[4 * SB + 8]);
    }
    f.b[j][0] = to_tf32(r[0]);
    f.b[j][1] = to_tf32(r[1]);
    f.b[j + 1][0] = to_tf32(r[2]);
    f.b[j + 1][1] = to_tf32(r[3]);
  }
}

// The MT x NT mma of one step of 8 in k.
template <class S>
__device__ __forceinline__ void multiply(const Fragments<S>& f, float (&acc)[S::MT][S::NT][4]) {
#pragma unroll
  for (int i = 0; i < S::MT; ++i)
#pragma unroll
    for (int j = 0; j < S::NT; ++j) mma_tf32(acc[i][j], f.a[i], f.b[j]);
}

#endif  // TMM_MMA_SYNC

// The kernel: place the block and its warps, keep STAGES - 1 tiles of k in flight,
// multiply each as it lands, then the epilogue.
template <class S, bool KContigA, bool KContigB, bool VecA, bool VecB>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS) tf32_mma_kernel(GemmView<float> p) {
#if TMM_MMA_SYNC
  extern __shared__ __align__(16) float shared[];
  select_product(p);  // a strided batch's product blockIdx.z
  MmaMainloop<S, KContigA, KContigB, VecA, VecB> block(
      p, shared, grouped_tile_of_block<S::BM, S::BN, kGroupM>(p.m, p.n));
  float acc[S::MT][S::NT][4] = {};
  block.run(
      [&](const float* a, const float* b, int k) {
        Fragments<S> frag;
        load_fragments(frag, a, b, block.fragments, k);
        return frag;
      },
      [&](const Fragments<S>& frag, int) { multiply<S>(frag, acc); }, [] {});
  store_tile<S>(p, block.tile, block.wm, block.wn, block.lane, acc);
#else
  // Built for an architecture without mma.sync (a PTX of compute_75, say, that a
  // newer GPU compiles at load): fail loudly (a sticky CUDA error) rather than leave C
  // as it was with a success status.
  (void)p;
  __trap();
#endif
}

// The shapes, as the planner knows them (tf32_shapes.hpp). The wide one: 128 x 256
// tiles, 2 x 4 warps of 64 x 64, tiles of k of 32, 3 stages: 162 KiB of shared
// memory, one block per SM (A100, H100), fewer barriers and half the copies per
// multiply-add of the other. That one: 128 x 128 tiles, 2 x 2 warps, tiles of k of 16,
// 4 stages: 80 KiB, two blocks per SM where they fit, and it fits every device of
// compute capability 8.0 or later (sm_86 and sm_89 opt into 99 KiB per block).
using Shape256 = MmaShape<128, 256, 32, 2, 4, 3, 1>;
using Shape128 = MmaShape<128, 128, 16, 2, 2, 4, 2>;
// The small one: 64 x 64 tiles, 2 x 2 warps of 32 x 32 (2 x 4 mma tiles: 32
// accumulators), tiles of k of 32, 4 stages: 72 KiB, two blocks per SM on the A100 and
// H100. For small products, whose 128 x 128 tiles leave most SMs idle.
using Shape64 = MmaShape<64, 64, 32, 2, 2, 4, 2>;

// Each matches the planner's row (matches(), mma_common.cuh).
static_assert(matches<Shape256>(kTf32Shapes[0]), "planner row 0 is the 128 x 256 shape");
static_assert(matches<Shape128>(kTf32Shapes[1]), "planner row 1 is the 128 x 128 shape");
static_assert(matches<Shape64>(kTf32Shapes[2]) &&
                  kTf32Shapes[2].blocks_per_sm == Shape64::MIN_BLOCKS,
              "planner row 2 is the 64 x 64 shape");
static_assert(kTf32Shapes[1].shared_bytes <= 99 * 1024 && kTf32Shapes[2].shared_bytes <= 99 * 1024,
              "the 128 x 128 and 64 x 64 shapes fit every device of compute capability 8.0 "
              "or later");

// The kernel for p's alignment: 16-byte copies for each operand whose rows are all
// 16-byte aligned.
template <class S, bool KContigA, bool KContigB>
void launch_for_alignment(const GemmProblem& p, cudaStream_t stream) {
  // A strided batch: its products side by side (blockIdx.z), the tiles of one product
  // in each slice of the grid's z.
  const int64_t tiles = ceil_div(p.m, S::BM) * ceil_div(p.n, S::BN);
  with_alignment(p, [&](auto vec_a, auto vec_b) {
    launch_in_product_slices(p, [&](const GemmProblem& q, unsigned products) {
      launch_mma_blocks<S>(
          tf32_mma_kernel<S, KContigA, KContigB, decltype(vec_a)::value, decltype(vec_b)::value>,
          shared_bytes<S, KContigA, KContigB>(), tiles, products, p.k, stream, "tf32 kernel",
          view_of<float>(q));
    });
  });
}

}  // namespace

void launch_tf32_mma(const GemmProblem& p, const KernelPlan& plan, void*, void* stream_ptr) {
  require(plan.splits == 1, Status::Internal, "tf32 kernel: split-K is not supported");
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  // A is K-contiguous unless transposed; B is K-contiguous only when transposed.
  with_transposes(p, [&](auto ta, auto tb) {
    constexpr bool ka = !decltype(ta)::value, kb = decltype(tb)::value;
    switch (plan.tile) {
      case 256:
        launch_for_alignment<Shape256, ka, kb>(p, stream);
        break;
      case 128:
        launch_for_alignment<Shape128, ka, kb>(p, stream);
        break;
      case 64:
        launch_for_alignment<Shape64, ka, kb>(p, stream);
        break;
      default:
        throw Error(Status::Internal, "tf32 kernel: unsupported tile");
    }
  });
}

}  // namespace tiledmm
