// TF32 tensor cores (TMM_MATH_TF32): SGEMM on the warp-wide mma.sync instruction
// m16n8k8 with TF32 inputs and FP32 accumulation. Each input is rounded to TF32
// (cvt.rna: to nearest, ties away from zero) as its fragment leaves shared memory;
// the tensor cores multiply exactly and add in FP32, into registers that hold the
// sums over the whole of k. No split-K: the planner's split-K serves the strict
// kernel, and the streamed host path hands each call one slice of k anyway.
//
// Ownership. A block of WARPS_M x WARPS_N warps owns a BM x BN tile of C: 2 x 4
// warps and 128 x 256 in the wide shape, 2 x 2 and 128 x 128 in the other. A warp
// owns 64 x 64 of it, as MT x NT = 4 x 8 tiles of 16 x 8, the shape of one mma. In
// each step of 8 in k, a warp loads the A fragments of its 4 row tiles and the B
// fragments of its 8 column tiles (4 KiB of shared memory) and issues 32 mma. (A
// 64 x 32 warp tile would read 3 KiB per 16 mma: more than the 128 bytes per clock
// that shared memory delivers at the H100's tensor-core rate.) With g = lane / 4 and
// t = lane % 4, a thread holds, of each 16 x 8 tile, the elements (g, 2t),
// (g, 2t + 1), (g + 8, 2t) and (g + 8, 2t + 1) (PTX ISA, "Matrix Fragments for
// mma.m16n8k8"): 128 accumulators.
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
// blocks per SM on the A100 and H100, one on sm_86/89 (100 KiB per SM). plan_tf32()
// chooses.
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

#include "kernel_common.cuh"
#include "kernels.hpp"
#include "tf32_shapes.hpp"

// The device pass for sm_80 and later, where the tensor-core code exists.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TMM_TF32_MMA 1
#else
#define TMM_TF32_MMA 0
#endif

namespace tiledmm {
namespace {

// A block's shape: a BM x BN tile of C, tiles of k of depth BK, WARPS_M x WARPS_N
// warps, STAGES shared-memory buffers, and at least MIN_BLOCKS blocks per SM
// (which caps registers).
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_, int MIN_BLOCKS_>
struct MmaShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
  static constexpr int STAGES = STAGES_, MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // a warp's tile of C
  static constexpr int MT = WM / 16, NT = WN / 8;             // its mma tiles
  static constexpr int THREADS = 32 * WARPS_M * WARPS_N;

  static_assert(BM % WARPS_M == 0 && BN % WARPS_N == 0, "warps split the tile evenly");
  static_assert(MT * 16 == WM && NT * 8 == WN && NT % 2 == 0,
                "a warp's tile is whole 16 x 8 mma tiles, an even number of them across "
                "(ldmatrix.x4 loads B for two)");
  static_assert(BK % 8 == 0, "tiles of k are whole steps of the mma (k = 8)");
  static_assert(STAGES >= 2, "the pipeline needs a buffer to fill and one to read");
  static_assert(THREADS <= 1024, "a block has at most 1024 threads");
};

// One operand's tile in one stage of shared memory, as it lies in global memory:
// kLines lines of kLineLength floats along the contiguous direction, kStride floats
// apart. K-contiguous: [MN][BK + 4]; MN-contiguous: [BK][MN + 8] (see the header).
template <int MN, int BK, bool KContig>
struct OperandTile {
  static constexpr int kLines = KContig ? MN : BK;
  static constexpr int kLineLength = KContig ? BK : MN;
  static constexpr int kStride = kLineLength + (KContig ? 4 : 8);
  static constexpr int kFloats = kLines * kStride;
  static_assert(kStride % 4 == 0, "lines start 16-byte aligned (cp.async 16, ldmatrix)");
  static_assert(KContig ? (kStride / 4) % 2 == 1 : (kStride % 32 == 8 || kStride % 32 == 24),
                "padding that spreads a warp's fragment reads over all 32 banks");
};

// Bytes of dynamic shared memory a kernel of shape S uses.
template <class S, bool KContigA, bool KContigB>
constexpr int shared_bytes() {
  return S::STAGES *
         (OperandTile<S::BM, S::BK, KContigA>::kFloats +
          OperandTile<S::BN, S::BK, KContigB>::kFloats) *
         int(sizeof(float));
}

#if TMM_TF32_MMA

constexpr int kGroupM = 8;  // tile rows per rasterisation group

__device__ __forceinline__ uint32_t shared_address(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

// Starts a copy of BYTES (16 or 4) from global `src` to shared `dst`.
template <int BYTES>
__device__ __forceinline__ void cp_async(uint32_t dst, const float* src) {
  static_assert(BYTES == 16 || BYTES == 4, "16-byte or 4-byte copies");
  if (BYTES == 16) {  // .cg: through L2 only; the tile is read once per block
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
  }
}

// Closes the group of copies this thread started since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most N of this thread's groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Four 8 x 4 blocks of 32-bit words from shared memory, one per register: lane l
// gives the address of row l % 8 of block l / 8, and receives word l % 4 of row
// l / 4 of each block.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

// An FP32 value rounded to TF32 (10-bit mantissa), to nearest, ties away from zero.
__device__ __forceinline__ uint32_t to_tf32(uint32_t fp32_bits) {
  uint32_t out;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(out) : "f"(__uint_as_float(fp32_bits)));
  return out;
}

// d += a * b on one 16 x 8 x 8 tile, TF32 inputs, FP32 accumulation.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Copies one operand's tiles of k, one after the other, into stages of shared
// memory, in groups of 4 floats along the contiguous direction. Thread `tid` always
// copies the same groups of the tile: at pos(tid) of lines line0(tid),
// line0 + kLinesPerPass, ..., so it keeps just one pointer, the distance between its
// passes and its offset in a stage (registers are scarce: 128 accumulators and 32
// fragment registers). A group is one 16-byte cp.async when the operand's rows are
// 16-byte aligned (Vec), else four 4-byte ones at fixed offsets from one address.
// Tiles that lie wholly inside the matrix (copy_full) take no checks; on an edge
// (copy_edge) the floats inside are 4-byte copies and the rest are zeros stored
// directly, so that no copy names a byte outside the matrix (cp.async's src-size
// could skip reading them, but compute-sanitizer's initcheck counts the whole copy).
template <int MN, int BK, int THREADS, bool KContig, bool Vec>
struct TileCopier {
  using Tile = OperandTile<MN, BK, KContig>;
  static constexpr int kPerLine = Tile::kLineLength / 4;  // groups per line
  static constexpr int kLinesPerPass = THREADS / kPerLine;
  static constexpr int kPasses = Tile::kLines / kLinesPerPass;
  static constexpr int kPassFloats = kLinesPerPass * Tile::kStride;  // in shared memory
  static_assert(Tile::kLineLength % 4 == 0 && THREADS % kPerLine == 0 &&
                    Tile::kLines % kLinesPerPass == 0,
                "the block's threads split the tile into equal passes of whole lines");

  const float* src;   // this thread's first group in the next tile of k
  int64_t pass_step;  // elements between the groups of consecutive passes
  int offset;         // floats from a stage's start to this thread's first group

  __device__ __forceinline__ static int line0(int tid) { return tid / kPerLine; }
  __device__ __forceinline__ static int pos(int tid) { return (tid % kPerLine) * 4; }

  // The operand at `a` with leading dimension `ld`; the block's tile starts at mn0.
  __device__ __forceinline__ TileCopier(const float* a, int64_t ld, int64_t mn0, int tid)
      : pass_step(kLinesPerPass * ld), offset(line0(tid) * Tile::kStride + pos(tid)) {
    src = KContig ? a + (mn0 + line0(tid)) * ld + pos(tid)  // lines: rows, along k
                  : a + line0(tid) * ld + mn0 + pos(tid);   // lines: depths, along mn
  }

  __device__ __forceinline__ static void copy_group(uint32_t dst, const float* s) {
    if (Vec) {
      cp_async<16>(dst, s);
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) cp_async<4>(dst + 4 * e, s + e);
    }
  }

  // Past one tile of k: BK along the lines, or BK lines (kPasses passes) down.
  __device__ __forceinline__ void advance() { src += KContig ? BK : kPasses * pass_step; }

  // The next tile of k lies wholly inside the matrix.
  __device__ __forceinline__ void copy_full(float* stage) {
    const uint32_t dst = shared_address(stage + offset);
#pragma unroll
    for (int i = 0; i < kPasses; ++i) copy_group(dst + 4 * i * kPassFloats, src + i * pass_step);
    advance();
  }

  // The next tile of k crosses an edge: mn_left elements of the matrix from the
  // tile's first row (or column), k_left from its first depth.
  __device__ __forceinline__ void copy_edge(float* stage, int64_t mn_left, int64_t k_left,
                                            int tid) {
    const int64_t lines_left = (KContig ? mn_left : k_left) - line0(tid);
    const int64_t pos_left = (KContig ? k_left : mn_left) - pos(tid);
    const int inside = int(min(max(pos_left, int64_t(0)), int64_t(4)));  // of each group
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      float* const d = stage + offset + i * kPassFloats;
      const float* const s = src + i * pass_step;
      const bool line_inside = i * kLinesPerPass < lines_left;
      if (line_inside && inside == 4) {
        copy_group(shared_address(d), s);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if (line_inside && e < inside) {
            cp_async<4>(shared_address(d + e), s + e);
          } else {
            d[e] = 0.0f;
          }
        }
      }
    }
    advance();
  }
};

// Where this thread's fragment reads start in a stage's tiles (floats), for
// ldmatrix on K-contiguous tiles or 32-bit loads on MN-contiguous ones.
template <class S, bool KContigA, bool KContigB>
struct FragmentOrigin {
  int a, b;

  __device__ __forceinline__ FragmentOrigin(int wm, int wn, int lane) {
    using TileA = OperandTile<S::BM, S::BK, KContigA>;
    using TileB = OperandTile<S::BN, S::BK, KContigB>;
    const int g = lane / 4, t = lane % 4;
    // ldmatrix.x4 on A: blocks (rows 0-7, k 0-3), (8-15, 0-3), (0-7, 4-7), (8-15, 4-7)
    // are a0, a1, a2, a3; on B: (n 0-7, k 0-3), (0-7, 4-7), (8-15, 0-3), (8-15, 4-7)
    // are b0, b1 of one n tile and b0, b1 of the next.
    a = KContigA ? (wm + lane % 16) * TileA::kStride + (lane / 16) * 4
                 : t * TileA::kStride + wm + g;
    b = KContigB ? (wn + lane % 8 + (lane / 16) * 8) * TileB::kStride + (lane / 8 % 2) * 4
                 : t * TileB::kStride + wn + g;
  }
};

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

// C[row][col, col + 1] = alpha * v + beta * C, inside the matrix only; 8-byte
// accesses where both columns exist and C is aligned for them.
__device__ __forceinline__ void store_pair(const GemmProblem& p, int64_t row, int64_t col, float v0,
                                           float v1) {
  if (row >= p.m || col >= p.n) return;
  float* c = p.c + row * p.ldc + col;
  if (col + 1 < p.n && (reinterpret_cast<uintptr_t>(c) & 7) == 0) {
    float2 out = make_float2(p.alpha * v0, p.alpha * v1);
    if (p.beta != 0.0f) {
      const float2 old = *reinterpret_cast<const float2*>(c);
      out.x += p.beta * old.x;
      out.y += p.beta * old.y;
    }
    *reinterpret_cast<float2*>(c) = out;
  } else {
    store_c(p, row, col, v0);
    if (col + 1 < p.n) store_c(p, row, col + 1, v1);
  }
}

// The epilogue: each thread's accumulators to their places in C (see the header).
template <class S>
__device__ __forceinline__ void store_tile(const GemmProblem& p, TileOrigin tile, int wm, int wn,
                                           int lane, const float (&acc)[S::MT][S::NT][4]) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int i = 0; i < S::MT; ++i) {
    const int64_t row = tile.row0 + wm + 16 * i + g;
#pragma unroll
    for (int j = 0; j < S::NT; ++j) {
      const int64_t col = tile.col0 + wn + 8 * j + 2 * t;
      store_pair(p, row, col, acc[i][j][0], acc[i][j][1]);
      store_pair(p, row + 8, col, acc[i][j][2], acc[i][j][3]);
    }
  }
}

#endif  // TMM_TF32_MMA

// The kernel: place the block and its warps, keep STAGES - 1 tiles of k in flight,
// multiply each as it lands, then the epilogue.
template <class S, bool KContigA, bool KContigB, bool VecA, bool VecB>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS) tf32_mma_kernel(GemmProblem p) {
#if TMM_TF32_MMA
  using TileA = OperandTile<S::BM, S::BK, KContigA>;
  using TileB = OperandTile<S::BN, S::BK, KContigB>;
  extern __shared__ __align__(16) float shared[];
  float* const a_stages = shared;
  float* const b_stages = shared + S::STAGES * TileA::kFloats;

  const TileOrigin tile = grouped_tile_of_block<S::BM, S::BN, kGroupM>(p.m, p.n);
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = (warp / S::WARPS_N) * S::WM, wn = (warp % S::WARPS_N) * S::WN;
  TileCopier<S::BM, S::BK, S::THREADS, KContigA, VecA> copy_a(p.a, p.lda, tile.row0, tid);
  TileCopier<S::BN, S::BK, S::THREADS, KContigB, VecB> copy_b(p.b, p.ldb, tile.col0, tid);
  const FragmentOrigin<S, KContigA, KContigB> fragments(wm, wn, lane);
  // Tiles of k fit in 32 bits: k < 2^31 * BK would need more memory than exists.
  const int tiles_k = int(ceil_div(p.k, S::BK));
  const int full_tiles_k = int(p.k / S::BK);
  const bool rows_inside = tile.row0 + S::BM <= p.m, cols_inside = tile.col0 + S::BN <= p.n;
  // Tile t of k of both operands into `stage`, without checks where it lies inside.
  auto copy_tile = [&](int t, int stage) {
    float* const a = a_stages + stage * TileA::kFloats;
    float* const b = b_stages + stage * TileB::kFloats;
    if (rows_inside && t < full_tiles_k) {
      copy_a.copy_full(a);
    } else {
      copy_a.copy_edge(a, p.m - tile.row0, p.k - int64_t(t) * S::BK, tid);
    }
    if (cols_inside && t < full_tiles_k) {
      copy_b.copy_full(b);
    } else {
      copy_b.copy_edge(b, p.n - tile.col0, p.k - int64_t(t) * S::BK, tid);
    }
  };

  // The first STAGES - 1 tiles in flight, one commit group each; groups past the
  // last tile are empty, so that every wait below counts the same way.
#pragma unroll
  for (int s = 0; s < S::STAGES - 1; ++s) {
    if (s < tiles_k) copy_tile(s, s);
    cp_async_commit();
  }

  // The main loop. Each tile of k: wait for it, then per step of 8 load the
  // fragments, start the copies of a later tile once the first step's loads are on
  // their way (their latency hides the copies' issue), and run the mma.
  constexpr int kSteps = S::BK / 8;
  float acc[S::MT][S::NT][4] = {};
  int read = 0, write = S::STAGES - 1;  // the stages of tiles t and t + STAGES - 1
  for (int t = 0; t < tiles_k; ++t) {
    // This thread's copies of tile t are done (all but the newest STAGES - 2
    // groups); after the barrier everyone's are, and every warp has finished tile
    // t - 1, whose stage the copies below refill.
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      Fragments<S> frag;
      load_fragments(frag, a_stages + read * TileA::kFloats, b_stages + read * TileB::kFloats,
                     fragments, 8 * step);
      if (step == 0) {
        if (t + S::STAGES - 1 < tiles_k) copy_tile(t + S::STAGES - 1, write);
        cp_async_commit();
      }
      multiply<S>(frag, acc);
    }
    read = read + 1 == S::STAGES ? 0 : read + 1;
    write = write + 1 == S::STAGES ? 0 : write + 1;
  }
  cp_async_wait<0>();  // only empty groups can remain; leave none behind
  store_tile<S>(p, tile, wm, wn, lane, acc);
#else
  (void)p;
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

// Its most shared memory over the transposes, and that it matches the planner's row.
template <class S>
constexpr bool matches(const Tf32ShapeInfo& info) {
  constexpr int most =
      std::max(std::max(shared_bytes<S, true, true>(), shared_bytes<S, true, false>()),
               std::max(shared_bytes<S, false, true>(), shared_bytes<S, false, false>()));
  return info.rows == S::BM && info.cols == S::BN && info.threads == S::THREADS &&
         info.shared_bytes == most && info.outputs_per_thread == S::WM * S::WN / 32;
}
static_assert(matches<Shape256>(kTf32Shapes[0]), "planner row 0 is the 128 x 256 shape");
static_assert(matches<Shape128>(kTf32Shapes[1]), "planner row 1 is the 128 x 128 shape");
static_assert(kTf32Shapes[1].shared_bytes <= 99 * 1024,
              "the 128 x 128 shape fits every device of compute capability 8.0 or later");

template <class S, bool KContigA, bool KContigB, bool VecA, bool VecB>
void launch(const GemmProblem& p, cudaStream_t stream) {
  constexpr int bytes = shared_bytes<S, KContigA, KContigB>();
  const auto kernel = tf32_mma_kernel<S, KContigA, KContigB, VecA, VecB>;
  // Over 48 KiB needs the opt-in; the largest carveout lets two blocks share an SM.
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
             "tf32 kernel: cudaFuncSetAttribute (shared memory)");
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared),
             "tf32 kernel: cudaFuncSetAttribute (carveout)");
  const int64_t blocks = ceil_div(p.m, S::BM) * ceil_div(p.n, S::BN);
  require(blocks <= int64_t(0x7fffffff), Status::NotSupported,
          "tf32 kernel: too many tiles for one launch");
  kernel<<<unsigned(blocks), S::THREADS, bytes, stream>>>(p);
}

// 16-byte copies for each operand whose rows are all 16-byte aligned.
template <class S, bool KContigA, bool KContigB>
void launch_for_alignment(const GemmProblem& p, cudaStream_t stream) {
  const bool vec_a = rows_16_byte_aligned(p.a, p.lda);
  const bool vec_b = rows_16_byte_aligned(p.b, p.ldb);
  if (vec_a) {
    vec_b ? launch<S, KContigA, KContigB, true, true>(p, stream)
          : launch<S, KContigA, KContigB, true, false>(p, stream);
  } else {
    vec_b ? launch<S, KContigA, KContigB, false, true>(p, stream)
          : launch<S, KContigA, KContigB, false, false>(p, stream);
  }
}

}  // namespace

void launch_tf32_mma(const GemmProblem& p, const KernelPlan& plan, float*, void* stream_ptr) {
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
      default:
        throw Error(Status::Internal, "tf32 kernel: unsupported tile");
    }
  });
  check_cuda(cudaGetLastError(), "tf32 kernel launch");
}

}  // namespace tiledmm
