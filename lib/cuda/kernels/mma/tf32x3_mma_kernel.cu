// FP32 accuracy on TF32 tensor cores (TMM_MATH_FP32_ACCURATE): "3xTF32 with error
// correction" (Ootomo and Yokota 2022, "Recovering single precision accuracy from
// Tensor Cores while surpassing the FP32 theoretical peak performance"), on the
// warp-wide mma.sync m16n8k8 .tf32 instruction. The pipeline is tf32_mma_kernel.cu's
// (mma_common.cuh): cp.async stages, the tile copier, zeros past the edges of the
// matrix, 16- or 4-byte copies by alignment, the fragment layouts and the epilogue
// (C = alpha * sum + beta * C inside the matrix only; beta = 0 never reads C). What
// differs is the arithmetic.
//
// Split. Each input x leaves shared memory as two TF32 values: big = cvt.rna(x) and
// small = cvt.rna((x - big) * 2^11). x - big is exact in FP32, at most 2^-11 |x|, and
// so is its scaling by 2^11 (at most |x|: no overflow). Then
//   a b = a_big b_big + 2^-11 (a_big b_small + a_small b_big) + (what is dropped:
//         a_small b_small, at most 2^-24 |a b|, and the rounding of small, at most
//         2^-23 |x| per input, about 2^-25 |x| on average).
// The scaling keeps small a normal number for |x| down to about 2^-125; unscaled, the
// low part of any |x| below 2^-114 would be subnormal, which TF32 holds only to
// multiples of 2^-136 (an input at 2^-120 would keep 17 bits instead of 24).
//
// Sums. The tensor cores add into their accumulator with truncation (toward zero,
// aligned to the largest addend: Fasi et al. 2021, "Numerical behavior of NVIDIA
// tensor cores"), a bias that adds up over k: 3xTF32 summed over the whole of k in
// one mma accumulator loses accuracy as k grows (measured with cuBLAS calls on the
// H100: 3.8e-5 relative error at k = 16384, strict FP32 1.6e-6). So each output has
// three accumulators:
//   tile  the big products a_big b_big of one tile of k (BK = 32, four mma steps),
//         fresh for each tile (its first mma takes C = 0);
//   acc   the sum of the tiles, added outside the tensor cores in FP32 (round to
//         nearest) by Fast2Sum: s = acc + tile, e = tile - (s - acc), acc = s. e is
//         that add's rounding error (exactly, when |acc| >= |tile|; about it when not,
//         as in the first tiles), and it is kept, not lost:
//   corr  the correction products (scaled by 2^11), over the whole of k, plus
//         2^11 e of every tile. They are about 2^-11 of the result, so the tensor
//         cores' truncation there costs about 2^-11 of plain 3xTF32's error.
// The result is acc + 2^-11 corr (one fma). What is left: the split (above), the
// truncation inside each tile's 32-deep sum (biased within the tile, random across
// tiles) and the last rounding: a few units in the last place, whatever k. A model of
// this arithmetic on the CPU (the truncating mma as Fasi et al. describe it) gives a
// relative Frobenius error against FP64 of 1.2e-7 to 1.4e-7 for k = 129 to 16384 on
// uniform [-1, 1] inputs; strict FP32 summed in one sequence gives 2.1e-7 to 2.3e-6,
// and with BLOCKED's 32 slices of split-K (its plan for 256 x 256 x 16384 on the
// H100) 4.5e-7 at k = 16384. At small k (below about 100) strict FP32 has few adds
// to lose and can be the more accurate, both being a few units in the last place.
//
// Where it is not FP32 (include/tiledmm/tiledmm.h says the same):
//  - Inf and NaN: an Inf input makes its small part NaN (Inf - Inf), so the result
//    takes the sum of the big products alone (acc, which follows FP32's rules for
//    Inf and NaN) wherever corr is not finite: specials propagate as in FP32.
//  - Near FLT_MAX: a finite input within 2^-11 of FLT_MAX (|x| >= (2 - 2^-11) 2^127)
//    rounds to Inf in big, as under TMM_MATH_TF32: the result is Inf or NaN where
//    FP32's may be finite. corr adds up about |a b| (not signed sums that cancel):
//    where the sum over l of |a(i,l) b(l,j)| passes about 2^127, corr may overflow,
//    and the result is then acc alone: finite, with TF32's accuracy.
//  - Near the subnormals: inputs below about 2^-125 in magnitude have a subnormal
//    small part, held to multiples of 2^-136 (2^-147 of x): such an input carries an
//    absolute error up to 2^-148 (FP32 holds it exactly); products and sums below
//    2^-126 are subnormal in the accumulators as in FP32, but truncated.
//
// Registers and shape. Three accumulators per output: a warp owns 32 x 32 of C, MT x
// NT = 2 x 4 mma tiles, 96 accumulators per thread, plus the split fragments of one
// step (8 + 8 inputs: 32 registers). Per step of 8 in k a warp issues 24 mma (8 tile,
// 16 corr) on fragments read once from shared memory (2 KiB: 85 bytes per mma, under
// the 128 bytes per clock shared memory delivers) and split on the way (cvt.rna, a
// subtract, a multiply, cvt.rna: six instructions per input on sm_90); per tile of
// k, 32 Fast2Sum (three adds and an fma each). Shapes (tf32_shapes.hpp,
// kTf32x3Shapes): 128 x 64 (4 x 2 warps, 3 stages of depth 32, 81 KiB of shared
// memory; registers allow one block per SM) and 64 x 64 (2 x 2 warps, 4 stages,
// 72 KiB, two blocks per SM where 144 KiB fit: A100, H100). plan_tf32x3() chooses.
// ptxas (CUDA 13.0), over the 16 instantiations of each shape: sm_90 128 x 64
// 168-221 registers, 64 x 64 172-225; sm_80 and sm_86 166-217 and 164-210; no
// spills, no stack frame. Not measured for speed yet (no GPU where it was written).
//
// mma.sync with TF32 and cp.async need compute capability 8.0: for older targets the
// kernel compiles to an empty body, and its registry rows (min_cc 80) keep it from
// being chosen there.
#include <algorithm>
#include <cfloat>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "cuda/kernels/mma/mma_common.cuh"
#include "plan/tf32_shapes.hpp"

namespace tiledmm {
namespace {

#if TMM_MMA_SYNC

constexpr int kX3GroupM = 8;  // tile rows per rasterisation group

// small = (x - big) * 2^11; the corrections are summed at that scale.
constexpr float kSmallScale = 2048.0f;
constexpr float kSmallUnscale = 1.0f / 2048.0f;

// x as two TF32 values: big = x rounded to TF32, small = (x - big) * 2^11 rounded
// to TF32. The subtract and the scaling are exact (round-to-nearest intrinsics, so
// that nothing is contracted or reassociated).
__device__ __forceinline__ void split_tf32(uint32_t x, uint32_t& big, uint32_t& small) {
  big = to_tf32(x);
  const float rest = __fmul_rn(__fsub_rn(__uint_as_float(x), __uint_as_float(big)), kSmallScale);
  small = to_tf32(__float_as_uint(rest));
}

// d = a * b on one 16 x 8 x 8 tile (the accumulator starts at 0).
__device__ __forceinline__ void mma_tf32_zero(float (&d)[4], const uint32_t (&a)[4],
                                              const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%10, %10, %10, %10};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
}

// One step of 8 in k of a warp's operands, split: big and small of a[i] for row tile
// i (a0..a3), of b[j] for column tile j (b0, b1).
template <class S>
struct SplitFragments {
  uint32_t a_big[S::MT][4], a_small[S::MT][4];
  uint32_t b_big[S::NT][2], b_small[S::NT][2];
};

// Loads the fragments of depths kk .. kk + 7 of one stage's tiles (as
// tf32_mma_kernel.cu's load_fragments) and splits each input.
template <class S, bool KContigA, bool KContigB>
__device__ __forceinline__ void load_split(SplitFragments<S>& f, const float* a_tile,
                                           const float* b_tile,
                                           FragmentOrigin<S, KContigA, KContigB> at, int kk) {
  using TileA = OperandTile<S::BM, S::BK, KContigA>;
  using TileB = OperandTile<S::BN, S::BK, KContigB>;
  constexpr int SA = TileA::kStride, SB = TileB::kStride;
#pragma unroll
  for (int i = 0; i < S::MT; ++i) {
    uint32_t r[4];
    if (KContigA) {  // rows 16 i.., depths kk..
      ldmatrix_x4(r, shared_address(a_tile + at.a + 16 * i * SA + kk));
    } else {  // depths kk + t (+ 4), rows 16 i + g (+ 8)
      const float* e = a_tile + at.a + kk * SA + 16 * i;
      r[0] = __float_as_uint(e[0]);
      r[1] = __float_as_uint(e[8]);
      r[2] = __float_as_uint(e[4 * SA]);
      r[3] = __float_as_uint(e[4 * SA + 8]);
    }
#pragma unroll
    for (int q = 0; q < 4; ++q) split_tf32(r[q], f.a_big[i][q], f.a_small[i][q]);
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
    split_tf32(r[0], f.b_big[j][0], f.b_small[j][0]);
    split_tf32(r[1], f.b_big[j][1], f.b_small[j][1]);
    split_tf32(r[2], f.b_big[j + 1][0], f.b_small[j + 1][0]);
    split_tf32(r[3], f.b_big[j + 1][1], f.b_small[j + 1][1]);
  }
}

// The 3 x MT x NT mma of one step of 8 in k: the corrections into corr, the big
// products into the tile's sum (from 0 on the tile's first step). Each accumulator's
// two mma are MT x NT apart, to hide the mma latency.
template <class S>
__device__ __forceinline__ void multiply(const SplitFragments<S>& f, bool first_step,
                                         float (&tile)[S::MT][S::NT][4],
                                         float (&corr)[S::MT][S::NT][4]) {
#pragma unroll
  for (int i = 0; i < S::MT; ++i)
#pragma unroll
    for (int j = 0; j < S::NT; ++j) mma_tf32(corr[i][j], f.a_small[i], f.b_big[j]);
#pragma unroll
  for (int i = 0; i < S::MT; ++i) {
#pragma unroll
    for (int j = 0; j < S::NT; ++j) {
      if (first_step) {
        mma_tf32_zero(tile[i][j], f.a_big[i], f.b_big[j]);
      } else {
        mma_tf32(tile[i][j], f.a_big[i], f.b_big[j]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < S::MT; ++i)
#pragma unroll
    for (int j = 0; j < S::NT; ++j) mma_tf32(corr[i][j], f.a_big[i], f.b_small[j]);
}

// A tile's sum into acc in FP32, round to nearest (Fast2Sum), its rounding error
// into corr at corr's scale.
template <class S>
__device__ __forceinline__ void accumulate_tile(const float (&tile)[S::MT][S::NT][4],
                                                float (&acc)[S::MT][S::NT][4],
                                                float (&corr)[S::MT][S::NT][4]) {
#pragma unroll
  for (int i = 0; i < S::MT; ++i) {
#pragma unroll
    for (int j = 0; j < S::NT; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float sum = __fadd_rn(acc[i][j][e], tile[i][j][e]);
        const float error = __fsub_rn(tile[i][j][e], __fsub_rn(sum, acc[i][j][e]));
        acc[i][j][e] = sum;
        corr[i][j][e] = __fmaf_rn(error, kSmallScale, corr[i][j][e]);
      }
    }
  }
}

#endif  // TMM_MMA_SYNC

// The kernel: place the block and its warps, keep STAGES - 1 tiles of k in flight,
// multiply each as it lands into a fresh sum and add that to acc, then the epilogue
// of acc + 2^-11 corr.
template <class S, bool KContigA, bool KContigB, bool VecA, bool VecB>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS) tf32x3_mma_kernel(GemmView<float> p) {
#if TMM_MMA_SYNC
  extern __shared__ __align__(16) float shared[];
  select_product(p);  // a strided batch's product blockIdx.z
  MmaMainloop<S, KContigA, KContigB, VecA, VecB> block(
      p, shared, grouped_tile_of_block<S::BM, S::BN, kX3GroupM>(p.m, p.n));
  float acc[S::MT][S::NT][4] = {};
  float corr[S::MT][S::NT][4] = {};
  float sum[S::MT][S::NT][4];  // the current tile's big products; at the end, the result
  block.run(
      [&](const float* a, const float* b, int k) {
        SplitFragments<S> frag;
        load_split(frag, a, b, block.fragments, k);
        return frag;
      },
      [&](const SplitFragments<S>& frag, int step) { multiply<S>(frag, step == 0, sum, corr); },
      [&] { accumulate_tile<S>(sum, acc, corr); });

  // acc + 2^-11 corr; where corr is not finite (an Inf or NaN input, or corr's own
  // overflow), acc alone, which follows FP32's rules for specials.
#pragma unroll
  for (int i = 0; i < S::MT; ++i)
#pragma unroll
    for (int j = 0; j < S::NT; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        sum[i][j][e] = fabsf(corr[i][j][e]) <= FLT_MAX
                           ? __fmaf_rn(corr[i][j][e], kSmallUnscale, acc[i][j][e])
                           : acc[i][j][e];
  store_tile<S>(p, block.tile, block.wm, block.wn, block.lane, sum);
#else
  // Built for an architecture without mma.sync (a PTX of compute_75, say, that a
  // newer GPU compiles at load): fail loudly (a sticky CUDA error) rather than leave C
  // as it was with a success status.
  (void)p;
  __trap();
#endif
}

// The shapes, as the planner knows them (tf32_shapes.hpp, kTf32x3Shapes): warps of
// 32 x 32 (three accumulators per output); 128 x 64 with 4 x 2 warps, tiles of k of
// 32, 3 stages (81 KiB of shared memory), and 64 x 64 with 2 x 2 warps, 4 stages
// (72 KiB, two blocks per SM where the shared memory allows). Both fit under 255
// registers without spills (a cap of 168, for three 64 x 64 blocks per SM, spilled).
using X3Shape128 = MmaShape<128, 64, 32, 4, 2, 3, 1>;
using X3Shape64 = MmaShape<64, 64, 32, 2, 2, 4, 2>;

// Each matches the planner's row (matches(), mma_common.cuh).
static_assert(matches<X3Shape128>(kTf32x3Shapes[0]), "planner row 0 is the 128 x 64 shape");
static_assert(matches<X3Shape64>(kTf32x3Shapes[1]), "planner row 1 is the 64 x 64 shape");
static_assert(kTf32x3Shapes[0].shared_bytes <= 99 * 1024 &&
                  kTf32x3Shapes[1].shared_bytes <= 99 * 1024,
              "both shapes fit every device of compute capability 8.0 or later");

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
          tf32x3_mma_kernel<S, KContigA, KContigB, decltype(vec_a)::value, decltype(vec_b)::value>,
          shared_bytes<S, KContigA, KContigB>(), tiles, products, p.k, stream, "tf32x3 kernel",
          view_of<float>(q));
    });
  });
}

}  // namespace

void launch_tf32x3_mma(const GemmProblem& p, const KernelPlan& plan, void*, void* stream_ptr) {
  require(plan.splits == 1, Status::Internal, "tf32x3 kernel: split-K is not supported");
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  // A is K-contiguous unless transposed; B is K-contiguous only when transposed.
  with_transposes(p, [&](auto ta, auto tb) {
    constexpr bool ka = !decltype(ta)::value, kb = decltype(tb)::value;
    switch (plan.tile) {
      case 128:
        launch_for_alignment<X3Shape128, ka, kb>(p, stream);
        break;
      case 64:
        launch_for_alignment<X3Shape64, ka, kb>(p, stream);
        break;
      default:
        throw Error(Status::Internal, "tf32x3 kernel: unsupported tile");
    }
  });
}

}  // namespace tiledmm
