// What the mma.sync tensor-core kernels share (tf32_mma_kernel.cu, TMM_MATH_TF32;
// tf32x3_mma_kernel.cu, TMM_MATH_FP32_ACCURATE; f64_mma_kernel.cu, double): the block
// shapes, the operand tiles in shared memory and the cp.async copier that fills them
// (over the element type T), the TF32 fragment origins, the PTX wrappers (cp.async,
// ldmatrix, cvt.rna.tf32, mma.sync m16n8k8 .tf32), the pipeline over k (MmaMainloop:
// each kernel brings its fragments and arithmetic), the epilogue and the launch.
// tf32_mma_kernel.cu's header comment explains the layouts, the copier,
// the edges and the epilogue. Everything is in the includer's unnamed namespace, as it was when it
// lived in that one file.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "plan/mma_shapes.hpp"

// The device pass for sm_80 and later, where the tensor-core code exists.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TMM_MMA_SYNC 1
#else
#define TMM_MMA_SYNC 0
#endif

namespace tiledmm {
namespace {

// A block's shape: a BM x BN tile of C, tiles of k of depth BK, WARPS_M x WARPS_N
// warps, STAGES shared-memory buffers, and at least MIN_BLOCKS blocks per SM
// (which caps registers). KSTEP is the depth of one mma (the TF32 kernels' 8;
// f64_mma_kernel.cu's shapes say theirs).
template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_, int MIN_BLOCKS_>
struct MmaShape {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
  static constexpr int STAGES = STAGES_, MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // a warp's tile of C
  static constexpr int MT = WM / 16, NT = WN / 8;             // its mma tiles
  static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int KSTEP = 8;

  static_assert(BM % WARPS_M == 0 && BN % WARPS_N == 0, "warps split the tile evenly");
  static_assert(MT * 16 == WM && NT * 8 == WN && NT % 2 == 0,
                "a warp's tile is whole 16 x 8 mma tiles, an even number of them across "
                "(ldmatrix.x4 loads B for two)");
  static_assert(BK % 8 == 0, "tiles of k are whole steps of the mma (k = 8)");
  static_assert(STAGES >= 2, "the pipeline needs a buffer to fill and one to read");
  static_assert(THREADS <= 1024, "a block has at most 1024 threads");
};

// One operand's tile in one stage of shared memory, as it lies in global memory:
// kLines lines of kLineLength elements of T along the contiguous direction, kStride
// elements apart. Floats, K-contiguous: [MN][BK + 4]; MN-contiguous: [BK][MN + 8] (see
// tf32_mma_kernel.cu's header). Doubles, either way: 4 more than the line
// (f64_mma_kernel.cu's header).
template <int MN, int BK, bool KContig, class T = float>
struct OperandTile {
  static constexpr int kLines = KContig ? MN : BK;
  static constexpr int kLineLength = KContig ? BK : MN;
  static constexpr int kGroup = 16 / int(sizeof(T));  // elements in one 16-byte copy
  static constexpr int kStride = kLineLength + (sizeof(T) == 8 ? 4 : KContig ? 4 : 8);
  static constexpr int kElements = kLines * kStride;
  static_assert(kStride % kGroup == 0, "lines start 16-byte aligned (cp.async 16, ldmatrix)");
  static_assert(sizeof(T) == 8 ? kStride % 16 == 4 || kStride % 16 == 12
                : KContig      ? (kStride / 4) % 2 == 1
                               : (kStride % 32 == 8 || kStride % 32 == 24),
                "padding that spreads a warp's fragment reads over all 32 banks");
};

// Bytes of dynamic shared memory a kernel of shape S over T uses.
template <class S, bool KContigA, bool KContigB, class T = float>
constexpr int shared_bytes() {
  return S::STAGES *
         (OperandTile<S::BM, S::BK, KContigA, T>::kElements +
          OperandTile<S::BN, S::BK, KContigB, T>::kElements) *
         int(sizeof(T));
}

// Whether shape S over T is the planner's row `info` (tf32_shapes.hpp, f64_shapes.hpp):
// its tile, threads, outputs per thread, and its most shared memory over the transposes.
template <class S, class T = float>
constexpr bool matches(const MmaShapeInfo& info) {
  constexpr int most =
      std::max(std::max(shared_bytes<S, true, true, T>(), shared_bytes<S, true, false, T>()),
               std::max(shared_bytes<S, false, true, T>(), shared_bytes<S, false, false, T>()));
  return info.rows == S::BM && info.cols == S::BN && info.threads == S::THREADS &&
         info.shared_bytes == most && info.outputs_per_thread == S::WM * S::WN / 32;
}

#if TMM_MMA_SYNC

__device__ __forceinline__ uint32_t shared_address(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

// Starts a copy of BYTES (16, 8 or 4) from global `src` to shared `dst`.
template <int BYTES, class T>
__device__ __forceinline__ void cp_async(uint32_t dst, const T* src) {
  static_assert(BYTES == 16 || BYTES == 8 || BYTES == 4, "16-, 8- or 4-byte copies");
  if (BYTES == 16) {  // .cg: through L2 only; the tile is read once per block
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
  } else if (BYTES == 8) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst), "l"(src));
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
// memory, in groups of 16 bytes (4 floats or 2 doubles) along the contiguous
// direction. Thread `tid` always copies the same groups of the tile: at pos(tid) of
// lines line0(tid), line0 + kLinesPerPass, ..., so it keeps just one pointer, the
// distance between its passes and its offset in a stage (registers are scarce: 128
// accumulators and 32 fragment registers). A group is one 16-byte cp.async when the
// operand's rows are 16-byte aligned (Vec), else one copy per element at fixed offsets
// from one address. Tiles that lie wholly inside the matrix (copy_full) take no checks;
// on an edge (copy_edge) the elements inside are one-element copies and the rest are
// zeros stored directly, so that no copy names a byte outside the matrix (cp.async's
// src-size could skip reading them, but compute-sanitizer's initcheck counts the whole
// copy).
template <int MN, int BK, int THREADS, bool KContig, bool Vec, class T = float>
struct TileCopier {
  using Tile = OperandTile<MN, BK, KContig, T>;
  static constexpr int kGroup = Tile::kGroup;                  // elements per group
  static constexpr int kBytes = int(sizeof(T));                // per element
  static constexpr int kPerLine = Tile::kLineLength / kGroup;  // groups per line
  static constexpr int kLinesPerPass = THREADS / kPerLine;
  static constexpr int kPasses = Tile::kLines / kLinesPerPass;
  static constexpr int kPassElements = kLinesPerPass * Tile::kStride;  // in shared memory
  static_assert(Tile::kLineLength % kGroup == 0 && THREADS % kPerLine == 0 &&
                    Tile::kLines % kLinesPerPass == 0,
                "the block's threads split the tile into equal passes of whole lines");

  const T* src;       // this thread's first group in the next tile of k
  int64_t pass_step;  // elements between the groups of consecutive passes
  int offset;         // elements from a stage's start to this thread's first group

  __device__ __forceinline__ static int line0(int tid) { return tid / kPerLine; }
  __device__ __forceinline__ static int pos(int tid) { return (tid % kPerLine) * kGroup; }

  // The operand at `a` with leading dimension `ld`; the block's tile starts at mn0.
  __device__ __forceinline__ TileCopier(const T* a, int64_t ld, int64_t mn0, int tid)
      : pass_step(kLinesPerPass * ld), offset(line0(tid) * Tile::kStride + pos(tid)) {
    src = KContig ? a + (mn0 + line0(tid)) * ld + pos(tid)  // lines: rows, along k
                  : a + line0(tid) * ld + mn0 + pos(tid);   // lines: depths, along mn
  }

  __device__ __forceinline__ static void copy_group(uint32_t dst, const T* s) {
    if (Vec) {
      cp_async<16>(dst, s);
    } else {
#pragma unroll
      for (int e = 0; e < kGroup; ++e) cp_async<kBytes>(dst + kBytes * e, s + e);
    }
  }

  // Past one tile of k: BK along the lines, or BK lines (kPasses passes) down.
  __device__ __forceinline__ void advance() { src += KContig ? BK : kPasses * pass_step; }

  // Past `tiles` tiles of k at once (a block that starts inside k).
  __device__ __forceinline__ void skip(int tiles) {
    src += int64_t(tiles) * (KContig ? BK : kPasses * pass_step);
  }

  // The next tile of k lies wholly inside the matrix.
  __device__ __forceinline__ void copy_full(T* stage) {
    const uint32_t dst = shared_address(stage + offset);
#pragma unroll
    for (int i = 0; i < kPasses; ++i)
      copy_group(dst + kBytes * i * kPassElements, src + i * pass_step);
    advance();
  }

  // The next tile of k crosses an edge: mn_left elements of the matrix from the
  // tile's first row (or column), k_left from its first depth.
  __device__ __forceinline__ void copy_edge(T* stage, int64_t mn_left, int64_t k_left, int tid) {
    const int64_t lines_left = (KContig ? mn_left : k_left) - line0(tid);
    const int64_t pos_left = (KContig ? k_left : mn_left) - pos(tid);
    const int inside = int(min(max(pos_left, int64_t(0)), int64_t(kGroup)));  // of each group
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      T* const d = stage + offset + i * kPassElements;
      const T* const s = src + i * pass_step;
      const bool line_inside = i * kLinesPerPass < lines_left;
      if (line_inside && inside == kGroup) {
        copy_group(shared_address(d), s);
      } else {
#pragma unroll
        for (int e = 0; e < kGroup; ++e) {
          if (line_inside && e < inside) {
            cp_async<kBytes>(shared_address(d + e), s + e);
          } else {
            d[e] = T(0);
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

// A block's work over k: its tile of C, its warp's place, the copiers of its operand
// tiles, and the pipeline. run() keeps STAGES - 1 tiles of k in flight and, for each
// tile t and step of KSTEP in k, calls load(a_stage, b_stage, k) for the step's fragments,
// starts the copies of a later tile after the first step's loads (their latency hides
// the copies' issue), calls multiply(fragments, step), and after the tile's steps
// tile_done().
template <class S, bool KContigA, bool KContigB, bool VecA, bool VecB, class T = float>
struct MmaMainloop {
  using TileA = OperandTile<S::BM, S::BK, KContigA, T>;
  using TileB = OperandTile<S::BN, S::BK, KContigB, T>;

  const GemmView<T>& p;
  T* const a_stages;
  T* const b_stages;
  const TileOrigin tile;
  const int tid, lane, wm, wn;
  TileCopier<S::BM, S::BK, S::THREADS, KContigA, VecA, T> copy_a;
  TileCopier<S::BN, S::BK, S::THREADS, KContigB, VecB, T> copy_b;
  const FragmentOrigin<S, KContigA, KContigB> fragments;  // the TF32 kernels' (ldmatrix)
  // Tiles of k fit in 32 bits: k < 2^31 * BK would need more memory than exists.
  // The block's tiles of k are `tiles_k` from k0; full_tiles_k of them lie inside k.
  const int64_t k0;
  const int tiles_k, full_tiles_k;
  const bool rows_inside, cols_inside;

  // The whole of k, or (a split block) `tiles` tiles of k from tile `first_tile`.
  __device__ __forceinline__ MmaMainloop(const GemmView<T>& problem, T* shared, TileOrigin origin,
                                         int first_tile = 0, int tiles = -1)
      : p(problem),
        a_stages(shared),
        b_stages(shared + S::STAGES * TileA::kElements),
        tile(origin),
        tid(threadIdx.x),
        lane(threadIdx.x % 32),
        wm((threadIdx.x / 32 / S::WARPS_N) * S::WM),
        wn((threadIdx.x / 32 % S::WARPS_N) * S::WN),
        copy_a(problem.a, problem.lda, origin.row0, threadIdx.x),
        copy_b(problem.b, problem.ldb, origin.col0, threadIdx.x),
        fragments(wm, wn, lane),
        k0(int64_t(first_tile) * S::BK),
        tiles_k(tiles < 0 ? int(ceil_div(problem.k, S::BK)) : tiles),
        full_tiles_k(int((problem.k - k0) / S::BK)),
        rows_inside(origin.row0 + S::BM <= problem.m),
        cols_inside(origin.col0 + S::BN <= problem.n) {
    if (first_tile != 0) {
      copy_a.skip(first_tile);
      copy_b.skip(first_tile);
    }
  }

  // Tile t of k of both operands into `stage`, without checks where it lies inside.
  __device__ __forceinline__ void copy_tile(int t, int stage) {
    T* const a = a_stages + stage * TileA::kElements;
    T* const b = b_stages + stage * TileB::kElements;
    if (rows_inside && t < full_tiles_k) {
      copy_a.copy_full(a);
    } else {
      copy_a.copy_edge(a, p.m - tile.row0, p.k - k0 - int64_t(t) * S::BK, tid);
    }
    if (cols_inside && t < full_tiles_k) {
      copy_b.copy_full(b);
    } else {
      copy_b.copy_edge(b, p.n - tile.col0, p.k - k0 - int64_t(t) * S::BK, tid);
    }
  }

  template <class Load, class Multiply, class TileDone>
  __device__ __forceinline__ void run(Load&& load, Multiply&& multiply, TileDone&& tile_done) {
    // The first STAGES - 1 tiles in flight, one commit group each; groups past the
    // last tile are empty, so that every wait below counts the same way.
#pragma unroll
    for (int s = 0; s < S::STAGES - 1; ++s) {
      if (s < tiles_k) copy_tile(s, s);
      cp_async_commit();
    }
    int read = 0, write = S::STAGES - 1;  // the stages of tiles t and t + STAGES - 1
    for (int t = 0; t < tiles_k; ++t) {
      // This thread's copies of tile t are done (all but the newest STAGES - 2
      // groups); after the barrier everyone's are, and every warp has finished tile
      // t - 1, whose stage the copies below refill.
      cp_async_wait<S::STAGES - 2>();
      __syncthreads();
#pragma unroll
      for (int step = 0; step < S::BK / S::KSTEP; ++step) {
        auto frag = load(a_stages + read * TileA::kElements, b_stages + read * TileB::kElements,
                         S::KSTEP * step);
        if (step == 0) {
          if (t + S::STAGES - 1 < tiles_k) copy_tile(t + S::STAGES - 1, write);
          cp_async_commit();
        }
        multiply(frag, step);
      }
      tile_done();
      read = read + 1 == S::STAGES ? 0 : read + 1;
      write = write + 1 == S::STAGES ? 0 : write + 1;
    }
    cp_async_wait<0>();  // only empty groups can remain; leave none behind
  }
};

// The epilogue: each thread's accumulators to their places in C (see the header).
template <class S, class T>
__device__ __forceinline__ void store_tile(const GemmView<T>& p, TileOrigin tile, int wm, int wn,
                                           int lane, const T (&acc)[S::MT][S::NT][4]) {
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

#endif  // TMM_MMA_SYNC

// ---- host

// Launches `blocks` blocks of `kernel` (shape S, over a product of depth k) with `args`,
// `bytes` of dynamic shared memory (over 48 KiB needs the opt-in) and the largest
// carveout, so that blocks can share an SM. `name` heads the error messages.
// `products` > 1: as many products of a strided batch (gridDim.z; select_product).
template <class S, class Kernel, class... Args>
void launch_mma_blocks(Kernel kernel, int bytes, int64_t blocks, unsigned products, int64_t k,
                       cudaStream_t stream, const char* name, const Args&... args) {
  opt_in_shared_memory(reinterpret_cast<const void*>(kernel), bytes, true, name);
  require(blocks <= int64_t(0x7fffffff), Status::NotSupported, name,
          ": too many tiles for one launch");
  require(ceil_div(k, S::BK) <= int64_t(INT32_MAX), Status::NotSupported, name,
          ": k is over 2^31 steps for one block");  // the kernel counts them in 32 bits
  launch_kernel(name, kernel, dim3(unsigned(blocks), 1, products), S::THREADS, bytes, stream,
                args...);
}

}  // namespace
}  // namespace tiledmm
