// BLOCKED: register-blocked SGEMM in strict FP32 (plain fused multiply-adds; no
// tensor cores, no TF32), the step past the classic ladder that races cuBLAS.
//
// Ownership. A block of WARPS_M x WARPS_N warps owns a BM x BN tile of C
// (BM = 32 * WARPS_M, BN = 64 * WARPS_N). A warp owns 32 x 64 of it, arranged as
// 4 x 8 threads; a thread owns 8 x 8 outputs, as 2 x 2 groups of 4 x 4 that sit 16
// rows and 32 columns apart. So in each step of k, a thread reads two float4 of A
// and two float4 of B from shared memory and does 64 multiply-adds, and the warp's
// reads are either broadcasts or 128 contiguous bytes (no bank conflicts).
//
// Shared memory. Both operand tiles are stored K-major, a_tile[BK][BM + pad] and
// b_tile[BK][BN], whatever the transposes: the loader reads global memory along the
// direction in which it is contiguous (16-byte loads when aligned) and transposes
// on the way into shared memory where needed. The A tile's rows are padded by 4
// floats so that the transposing stores spread over the banks.
//
// Pipelining. Two shared-memory buffers: while the block computes on one, each
// thread has already issued the global loads of the next tile into registers, and
// stores them into the other buffer after its multiply-adds. One barrier per tile.
//
// Edges. A tile that lies wholly inside the matrices takes unguarded vector loads;
// only tiles on an edge of C, or the last partial step of k, take the guarded path
// (zero fill), so edges cost nothing in the interior. Unaligned pointers or leading
// dimensions take a scalar-load instantiation.
//
// Order. Blocks are numbered in groups of kGroupM tile rows, so that blocks running
// at the same time share rows of A and columns of B in L2.
#include <cstdint>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "plan/blocked_shapes.hpp"

namespace tiledmm {
namespace {

constexpr int kGroupM = 8;  // tile rows per rasterisation group

// A warp is 4 x 8 threads, and a thread's outputs come in groups of 4 x 4 (one
// float4 of A by one float4 of B): so a thread's groups sit 4 * 4 = 16 rows and
// 8 * 4 = 32 columns apart, and a warp's reads of one depth from shared memory are
// broadcasts or 8 x 16 contiguous bytes.
constexpr int kLaneRows = 4, kLaneCols = 8, kGroup = 4;
static_assert(kLaneRows * kLaneCols == 32, "a warp is 4 x 8 threads");
constexpr int kGroupRowStride = kLaneRows * kGroup;  // 16
constexpr int kGroupColStride = kLaneCols * kGroup;  // 32

// Moves an MN x BK tile of an operand from global memory into registers, then into
// shared memory, K-major. `KContig`: element (mn, k) is at src[mn * ld + k], else
// at src[k * ld + mn]. Each thread moves kPerThread groups of 4 consecutive
// elements, always the same positions of the tile, so it keeps one pointer per
// group and advances it by one tile of k per step.
template <int MN, int BK, int THREADS, bool KContig, bool Vec>
struct TileLoader {
  static constexpr int kVecs = MN * BK / 4;
  static constexpr int kPerThread = kVecs / THREADS;
  static_assert((KContig ? BK : MN) % 4 == 0,
                "groups of 4 run along the contiguous direction: it must split into them");
  static_assert(kVecs % THREADS == 0, "the tile must split evenly into 4-element groups");
  // 16-byte loads: a group starts 4-aligned only if tile origins (multiples of MN)
  // and steps of k (BK, also split-K's slice starts) keep it so (with ld % 4 == 0,
  // which vectorizable() checks at run time).
  static_assert(!Vec || (MN % 4 == 0 && BK % 4 == 0), "vector loads need MN and BK % 4 == 0");

  float4 reg[kPerThread];
  const float* ptr[kPerThread];
  int64_t step;  // elements between consecutive tiles of k

  // Position of group `f` in the tile: (mn, k) of its first element.
  __device__ __forceinline__ static void where(int f, int& mn, int& k) {
    if (KContig) {
      mn = f / (BK / 4);
      k = (f % (BK / 4)) * 4;
    } else {
      k = f / (MN / 4);
      mn = (f % (MN / 4)) * 4;
    }
  }

  __device__ __forceinline__ TileLoader(const float* src, int64_t ld, int64_t mn0, int tid) {
    step = KContig ? BK : BK * ld;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int mn, k;
      where(tid + i * THREADS, mn, k);
      ptr[i] = KContig ? src + (mn0 + mn) * ld + k : src + int64_t(k) * ld + mn0 + mn;
    }
  }

  // Unguarded: the whole tile lies inside the matrix.
  __device__ __forceinline__ void load_full() {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (Vec) {
        reg[i] = __ldg(reinterpret_cast<const float4*>(ptr[i]));
      } else {
        reg[i] =
            make_float4(__ldg(ptr[i]), __ldg(ptr[i] + 1), __ldg(ptr[i] + 2), __ldg(ptr[i] + 3));
      }
    }
  }

  // Guarded: elements at or past (mn_left, k_left), relative to this tile's origin,
  // read as zero.
  __device__ __forceinline__ void load_edge(int64_t mn_left, int64_t k_left, int tid) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int mn, k;
      where(tid + i * THREADS, mn, k);
      float v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool inside =
            KContig ? (mn < mn_left && k + j < k_left) : (mn + j < mn_left && k < k_left);
        v[j] = inside ? __ldg(ptr[i] + j) : 0.0f;
      }
      reg[i] = make_float4(v[0], v[1], v[2], v[3]);
    }
  }

  __device__ __forceinline__ void advance() {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) ptr[i] += step;
  }

  // Into tile[BK][STRIDE], K-major.
  template <int STRIDE>
  __device__ __forceinline__ void store(float* tile, int tid) const {
    static_assert(KContig || STRIDE % 4 == 0, "16-byte stores need 16-byte aligned rows");
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int mn, k;
      where(tid + i * THREADS, mn, k);
      if (KContig) {  // four depths of one row: a transposing store
        tile[(k + 0) * STRIDE + mn] = reg[i].x;
        tile[(k + 1) * STRIDE + mn] = reg[i].y;
        tile[(k + 2) * STRIDE + mn] = reg[i].z;
        tile[(k + 3) * STRIDE + mn] = reg[i].w;
      } else {
        *reinterpret_cast<float4*>(&tile[k * STRIDE + mn]) = reg[i];
      }
    }
  }
};

// A block's shape: WARPS_M x WARPS_N warps; each warp is 4 x 8 threads and each
// thread owns RG x CG groups of 4 x 4 outputs (groups 16 rows and 32 columns
// apart), so a warp owns (16 RG) x (32 CG) of C. Tiles of k have depth BK, and at
// least MIN_BLOCKS blocks stay resident per SM (which caps registers).
template <int WARPS_M_, int WARPS_N_, int RG_, int CG_, int BK_, int MIN_BLOCKS_>
struct BlockShape {
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, RG = RG_, CG = CG_;
  static constexpr int BK = BK_, MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int WM = kGroupRowStride * RG, WN = kGroupColStride * CG;  // a warp's tile
  static constexpr int BM = WARPS_M * WM, BN = WARPS_N * WN, THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int TM = kGroup * RG, TN = kGroup * CG;  // a thread's outputs

  static_assert(WARPS_M > 0 && WARPS_N > 0 && RG > 0 && CG > 0 && BK > 0 && MIN_BLOCKS > 0,
                "every dimension of a block shape is positive");
  static_assert(THREADS <= 1024, "a block has at most 1024 threads");
  // Split-K slices start at multiples of BK; with BK % 4 == 0 they keep the
  // 16-byte alignment of K-contiguous rows.
  static_assert(BK % 4 == 0, "BK must be a multiple of 4");
};

// The tile of C a block owns, in groups of kGroupM tile rows (kernel_common.cuh).
template <class S>
__device__ __forceinline__ TileOrigin tile_of_block(const GemmView<float>& p) {
  return grouped_tile_of_block<S::BM, S::BN, kGroupM>(p.m, p.n);
}

// Where this thread's first output lies in its block's tile; the others are at
// + 16 g + i rows and + 32 h + j columns.
struct ThreadOrigin {
  int row, col;
};

template <class S>
__device__ __forceinline__ ThreadOrigin thread_in_tile(int tid) {
  static_assert(S::THREADS == 32 * S::WARPS_M * S::WARPS_N,
                "the block is WARPS_M x WARPS_N whole warps, WARPS_N to a row");
  const int warp = tid / 32, lane = tid % 32;
  return {(warp / S::WARPS_N) * S::WM + (lane / kLaneCols) * kGroup,
          (warp % S::WARPS_N) * S::WN + (lane % kLaneCols) * kGroup};
}

// Split-K: the block's slice [k_begin, k_begin + k_per_split) of k, as a problem of
// its own: A and B shifted to its start, k shortened.
template <bool KContigA, bool KContigB>
__device__ __forceinline__ void take_k_slice(GemmView<float>& p, int64_t k_begin,
                                             int64_t k_per_split) {
  p.a += KContigA ? k_begin : k_begin * p.lda;
  p.b += KContigB ? k_begin : k_begin * p.ldb;
  p.k = min(p.k - k_begin, k_per_split);
}

// The main loop's loads: fetch(t) brings tile t of k of both operands from global
// memory into the loaders' registers (unguarded while t < full_tiles_k, zero-filled
// past the matrix edges after), store() puts them into one buffer of shared memory.
// It refers to the kernel's two loaders rather than holding them: as members of one
// object, nvcc orders their registers differently and ptxas then allocates from 8
// fewer to 32 more registers per instantiation (nvcc 13.0, sm_90).
template <class S, bool KContigA, bool KContigB, bool Vec>
struct OperandLoads {
  using LoaderA = TileLoader<S::BM, S::BK, S::THREADS, KContigA, Vec>;
  using LoaderB = TileLoader<S::BN, S::BK, S::THREADS, KContigB, Vec>;
  LoaderA& a;
  LoaderB& b;
  const GemmView<float>& p;
  TileOrigin tile;
  int full_tiles_k;
  int tid;

  __device__ __forceinline__ void fetch(int t) {
    if (t < full_tiles_k) {
      a.load_full();
      b.load_full();
    } else {
      a.load_edge(p.m - tile.row0, p.k - int64_t(t) * S::BK, tid);
      b.load_edge(p.n - tile.col0, p.k - int64_t(t) * S::BK, tid);
    }
    a.advance();
    b.advance();
  }

  template <int A_STRIDE, int B_STRIDE>
  __device__ __forceinline__ void store(float* a_tile, float* b_tile) const {
    a.template store<A_STRIDE>(a_tile, tid);
    b.template store<B_STRIDE>(b_tile, tid);
  }
};

// The multiply-adds of one tile of k, on registers: at each depth, a thread reads
// RG float4 of A and CG float4 of B from shared memory into `a` and `b`, then does
// TM x TN fmaf into `acc`. The caller declares `a` and `b` (scratch, no values in or
// out): declared in here, they move ahead of the kernel's other locals, and ptxas
// allocates from 8 fewer to 2 more registers for the 128 x 256 shape.
template <class S, int A_STRIDE, int B_STRIDE>
__device__ __forceinline__ void multiply_tile(const float* as, const float* bs, ThreadOrigin thr,
                                              float (&a)[S::TM], float (&b)[S::TN],
                                              float (&acc)[S::TM][S::TN]) {
  static_assert(A_STRIDE % 4 == 0 && B_STRIDE % 4 == 0 && S::WM % 4 == 0 && S::WN % 4 == 0,
                "16-byte reads from shared memory need 16-byte aligned rows and offsets");
#pragma unroll
  for (int kk = 0; kk < S::BK; ++kk) {
#pragma unroll
    for (int g = 0; g < S::RG; ++g) {
      const float4 v =
          *reinterpret_cast<const float4*>(&as[kk * A_STRIDE + thr.row + kGroupRowStride * g]);
      a[4 * g] = v.x, a[4 * g + 1] = v.y, a[4 * g + 2] = v.z, a[4 * g + 3] = v.w;
    }
#pragma unroll
    for (int h = 0; h < S::CG; ++h) {
      const float4 v =
          *reinterpret_cast<const float4*>(&bs[kk * B_STRIDE + thr.col + kGroupColStride * h]);
      b[4 * h] = v.x, b[4 * h + 1] = v.y, b[4 * h + 2] = v.z, b[4 * h + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < S::TM; ++i)
#pragma unroll
      for (int j = 0; j < S::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

// Visits this thread's outputs four adjacent columns at a time: f(row, col, v).
template <class S, class F>
__device__ __forceinline__ void each_group(TileOrigin tile, ThreadOrigin thr,
                                           const float (&acc)[S::TM][S::TN], F&& f) {
  // Whole float4 groups of C: col is a multiple of 4 wherever the tile lies.
  static_assert(S::BN % 4 == 0 && S::WN % 4 == 0, "a group's first column is 4-aligned");
#pragma unroll
  for (int i = 0; i < S::TM; ++i) {
    const int64_t row = tile.row0 + thr.row + (i / 4) * kGroupRowStride + (i % 4);
#pragma unroll
    for (int h = 0; h < S::CG; ++h)
      f(row, tile.col0 + thr.col + h * kGroupColStride, &acc[i][h * 4]);
  }
}

// Split-K epilogue: raw sums into out[m][ldp] for reduce_splits(); ldp % 4 == 0
// (partial_ld()), so interior tiles take 16-byte stores.
template <class S>
__device__ __forceinline__ void store_partial_tile(const GemmView<float>& p, float* out,
                                                   int64_t ldp, TileOrigin tile, ThreadOrigin thr,
                                                   bool interior,
                                                   const float (&acc)[S::TM][S::TN]) {
  each_group<S>(tile, thr, acc, [&](int64_t row, int64_t col, const float* v) {
    if (interior) {
      *reinterpret_cast<float4*>(out + row * ldp + col) = make_float4(v[0], v[1], v[2], v[3]);
    } else if (row < p.m) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (col + j < p.n) out[row * ldp + col + j] = v[j];
    }
  });
}

// Epilogue: C = alpha * acc + beta * C, with 16-byte accesses where the tile is
// interior and the operands vectorizable().
template <class S, bool Vec>
__device__ __forceinline__ void store_c_tile(const GemmView<float>& p, TileOrigin tile,
                                             ThreadOrigin thr, bool interior,
                                             const float (&acc)[S::TM][S::TN]) {
  const bool vec_c = Vec && interior;
  each_group<S>(tile, thr, acc, [&](int64_t row, int64_t col, const float* v) {
    if (vec_c) {
      float4* c = reinterpret_cast<float4*>(p.c + row * p.ldc + col);
      float4 out = make_float4(p.alpha * v[0], p.alpha * v[1], p.alpha * v[2], p.alpha * v[3]);
      if (p.beta != 0.0f) {
        const float4 old = *c;
        out.x += p.beta * old.x;
        out.y += p.beta * old.y;
        out.z += p.beta * old.z;
        out.w += p.beta * old.w;
      }
      *c = out;
    } else if (row < p.m) {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (col + j < p.n) store_c(p, row, col + j, v[j]);
    }
  });
}

// The kernel: place the block and the thread, then a double-buffered pipeline over
// the tiles of k, then the epilogue. With splits > 1 (split-K), block row y of the
// grid computes the slice [y * k_per_split, (y + 1) * k_per_split) of k and writes
// its raw sums to partial[y][m][ldp]; reduce_splits() then applies alpha and beta.
template <class S, bool KContigA, bool KContigB, bool Vec, bool Split>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS)
    blocked_kernel(GemmView<float> p, int64_t k_per_split, float* partial, int64_t ldp) {
  constexpr int A_STRIDE = S::BM + (KContigA ? 4 : 0);  // padded where the loader transposes
  constexpr int B_STRIDE = S::BN + (KContigB ? 4 : 0);
  __shared__ __align__(16) float a_tile[2][S::BK * A_STRIDE];
  __shared__ __align__(16) float b_tile[2][S::BK * B_STRIDE];
  static_assert(sizeof(a_tile) + sizeof(b_tile) <= 48 * 1024,
                "static shared memory is limited to 48 KiB per block");
  using Loads = OperandLoads<S, KContigA, KContigB, Vec>;

  if (Split) take_k_slice<KContigA, KContigB>(p, blockIdx.y * k_per_split, k_per_split);
  const TileOrigin tile = tile_of_block<S>(p);
  const int tid = threadIdx.x;
  const ThreadOrigin thr = thread_in_tile<S>(tid);

  typename Loads::LoaderA load_a(p.a, p.lda, tile.row0, tid);
  typename Loads::LoaderB load_b(p.b, p.ldb, tile.col0, tid);
  const bool interior = tile.row0 + S::BM <= p.m && tile.col0 + S::BN <= p.n;
  // Tiles of k fit in 32 bits: the launcher refuses more.
  const int tiles_k = int(ceil_div(p.k, S::BK));
  const int full_tiles_k = interior ? int(p.k / S::BK) : 0;  // tiles needing no guard
  Loads loads{load_a, load_b, p, tile, full_tiles_k, tid};

  float acc[S::TM][S::TN] = {};
  loads.fetch(0);
  loads.template store<A_STRIDE, B_STRIDE>(a_tile[0], b_tile[0]);
  __syncthreads();

  for (int t = 0; t < tiles_k; ++t) {
    const int buf = t & 1;
    const bool has_next = t + 1 < tiles_k;
    if (has_next) loads.fetch(t + 1);  // in flight during the multiply-adds below
    float a[S::TM], b[S::TN];
    multiply_tile<S, A_STRIDE, B_STRIDE>(a_tile[buf], b_tile[buf], thr, a, b, acc);
    // The other buffer was last read before the previous barrier: free to fill.
    if (has_next) loads.template store<A_STRIDE, B_STRIDE>(a_tile[buf ^ 1], b_tile[buf ^ 1]);
    // The next tile must be complete before anyone computes on it, and this one
    // must not be overwritten (next iteration) while slower warps still read it.
    __syncthreads();
  }

  if (Split) {
    store_partial_tile<S>(p, partial + blockIdx.y * p.m * ldp, ldp, tile, thr, interior, acc);
  } else {
    store_c_tile<S, Vec>(p, tile, thr, interior, acc);
  }
}

// 16-byte vector access needs every pointer 16-byte aligned and every leading
// dimension a multiple of 4 floats.
bool vectorizable(const GemmProblem& p) {
  return rows_16_byte_aligned(p.a_as<float>(), p.lda) &&
         rows_16_byte_aligned(p.b_as<float>(), p.ldb) &&
         rows_16_byte_aligned(p.c_as<float>(), p.ldc);
}

template <class S, bool KA, bool KB, bool Vec>
void launch(const GemmProblem& p, const KernelPlan& plan, float* workspace, cudaStream_t stream) {
  const int64_t blocks = ceil_div(p.m, S::BM) * ceil_div(p.n, S::BN);
  require(blocks <= int64_t(0x7fffffff), Status::NotSupported,
          "blocked kernel: too many tiles for one launch");
  const int64_t k_per_split = ceil_div(ceil_div(p.k, plan.splits), S::BK) * S::BK;
  const dim3 grid(unsigned(blocks), unsigned(plan.splits));
  // The kernel counts its steps of k in 32 bits (k of 2^34 and more: 64 GiB operands).
  require(ceil_div(plan.splits > 1 ? k_per_split : p.k, S::BK) <= int64_t(INT32_MAX),
          Status::NotSupported, "blocked kernel: k = ", p.k, " is over 2^31 steps of ", S::BK,
          " for one block");
  if (plan.splits > 1) {
    launch_kernel("blocked kernel launch", blocked_kernel<S, KA, KB, Vec, true>, grid, S::THREADS,
                  0, stream, view_of<float>(p), k_per_split, workspace, partial_ld(p));
  } else {
    launch_kernel("blocked kernel launch", blocked_kernel<S, KA, KB, Vec, false>, grid, S::THREADS,
                  0, stream, view_of<float>(p), p.k, nullptr, 0);
  }
}

template <class S, bool Vec>
void launch_for_transposes(const GemmProblem& p, const KernelPlan& plan, float* ws,
                           cudaStream_t stream) {
  // A is K-contiguous unless transposed; B is K-contiguous only when transposed.
  with_transposes(p, [&](auto ta, auto tb) {
    launch<S, !decltype(ta)::value, decltype(tb)::value, Vec>(p, plan, ws, stream);
  });
}

template <class S>
void launch_for_shape(const GemmProblem& p, const KernelPlan& plan, float* ws,
                      cudaStream_t stream) {
  vectorizable(p) ? launch_for_transposes<S, true>(p, plan, ws, stream)
                  : launch_for_transposes<S, false>(p, plan, ws, stream);
}

// C = alpha * sum over splits of partial + beta * C, in a fixed order, so split-K
// results do not depend on timing.
__global__ void reduce_splits(GemmView<float> p, const float* partial, int64_t ldp, int splits) {
  const int64_t row = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  const int64_t col = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (row >= p.m || col >= p.n) return;
  float sum = 0.0f;
  for (int s = 0; s < splits; ++s) sum += partial[(s * p.m + row) * ldp + col];
  store_c(p, row, col, sum);
}

// The configurations, measured on the H100 (BENCHMARKS.md). The widest is the
// workhorse: 16 x 8 outputs per thread give 128 multiply-adds per 6 shared-memory
// loads, which is what it takes to keep the FP32 pipes issuing (ncu: issue slots
// 74% busy with 8 x 8 per thread, as cuBLAS's 256 x 128 x 8 kernel does it).
using Shape256 = BlockShape<2, 4, 4, 2, 8, 1>;   // 128 x 256, 256 threads, 1 block per SM
using Shape128 = BlockShape<4, 2, 2, 2, 16, 1>;  // 128 x 128, 256 threads
using Shape64 = BlockShape<2, 1, 2, 2, 16, 4>;   //  64 x  64,  64 threads, 4 blocks per SM

}  // namespace

int64_t partial_ld(const GemmProblem& p) { return (p.n + 3) / 4 * 4; }

// The shapes as the planner knows them (blocked_shapes.hpp) are these shapes.
template <class S>
constexpr bool matches(const BlockedShapeInfo& info) {
  return info.rows == S::BM && info.cols == S::BN && info.threads == S::THREADS &&
         info.min_blocks_per_sm == S::MIN_BLOCKS && info.outputs_per_thread == S::TM * S::TN &&
         info.shared_bytes == 2 * S::BK * ((S::BM + 4) + (S::BN + 4)) * 4;
}
static_assert(matches<Shape256>(kBlockedShapes[0]), "planner row 0 is the 128 x 256 shape");
static_assert(matches<Shape128>(kBlockedShapes[1]), "planner row 1 is the 128 x 128 shape");
static_assert(matches<Shape64>(kBlockedShapes[2]), "planner row 2 is the 64 x 64 shape");
static_assert(kBlockedShapes[0].shared_bytes <= 48 * 1024 &&
                  kBlockedShapes[1].shared_bytes <= 48 * 1024 &&
                  kBlockedShapes[2].shared_bytes <= 48 * 1024,
              "static shared memory is limited to 48 KiB per block");

// Bytes of the split-K partial sums: `splits` floats per element of C.
size_t blocked_workspace(const GemmProblem& p, const KernelPlan& plan) {
  return plan.splits > 1 ? size_t(plan.splits) * size_t(p.m) * size_t(partial_ld(p)) * sizeof(float)
                         : 0;
}

void launch_blocked(const GemmProblem& p, const KernelPlan& plan, void* workspace_ptr,
                    void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  auto* const workspace = static_cast<float*>(workspace_ptr);
  switch (plan.tile) {
    case 256:
      launch_for_shape<Shape256>(p, plan, workspace, stream);
      break;
    case 128:
      launch_for_shape<Shape128>(p, plan, workspace, stream);
      break;
    case 64:
      launch_for_shape<Shape64>(p, plan, workspace, stream);
      break;
    default:
      throw Error(Status::Internal, "blocked kernel: unsupported tile");
  }
  if (plan.splits > 1) {
    const dim3 block(32, 8);
    const dim3 grid(unsigned(ceil_div(p.n, 32)), unsigned(ceil_div(p.m, 8)));
    require(grid.y <= 65535, Status::NotSupported, "split-K reduction: too many rows");
    launch_kernel("split-K reduction launch", reduce_splits, grid, block, 0, stream,
                  view_of<float>(p), workspace, partial_ld(p), plan.splits);
  }
}

}  // namespace tiledmm
