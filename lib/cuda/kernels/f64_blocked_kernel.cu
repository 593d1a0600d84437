// BLOCKED in double on the CUDA cores: register-blocked DGEMM in strict FP64 (plain
// fused multiply-adds in double, no tensor cores), for devices where DMMA is absent
// (before compute capability 8.0) or slow (sm_86, sm_89: FP64 tensor math at 1/64 of the
// FP32 rate). The FP32 kernel's technique (blocked_kernel.cu) over doubles: not a
// template of that file, whose float4 groups are its shape.
//
// Ownership. A block of WARPS_M x WARPS_N warps owns a BM x BN tile of C
// (BM = 32 * WARPS_M, BN = 64 * WARPS_N). A warp owns 32 x 64 of it, arranged as
// 4 x 8 threads; a thread owns 8 x 8 outputs, as 4 x 4 groups of 2 x 2 that sit 8
// rows and 16 columns apart. So in each step of k, a thread reads four double2 of A
// and four double2 of B from shared memory and does 64 multiply-adds, and the warp's
// reads are either broadcasts or 128 contiguous bytes (no bank conflicts: a double2 is
// 16 bytes, eight lanes of a row read one line).
//
// Shared memory. Both operand tiles are stored K-major, a_tile[BK][BM + pad] and
// b_tile[BK][BN], whatever the transposes: the loader reads global memory along the
// direction in which it is contiguous (16-byte loads, a double2, when aligned) and
// transposes on the way into shared memory where needed. A transposed tile's rows are
// padded by 4 doubles: a warp's 8-byte stores (8 rows at 4 depths at depth 8, 16 rows
// at 2 depths at depth 4) then fall on 16 bank pairs twice each (two wavefronts, the
// least 256 bytes take); unpadded, depth 8's would fall four times on 8 of them.
//
// Pipelining. Two shared-memory buffers: while the block computes on one, each
// thread has already issued the global loads of the next tile into registers, and
// stores them into the other buffer after its multiply-adds. One barrier per tile.
//
// Edges. A tile that lies wholly inside the matrices takes unguarded vector loads;
// only tiles on an edge of C, or the last partial step of k, take the guarded path
// (zero fill), so edges cost nothing in the interior. Unaligned pointers or odd
// leading dimensions take a scalar-load instantiation.
//
// Order. Blocks are numbered in groups of kGroupM tile rows, so that blocks running
// at the same time share rows of A and columns of B in L2.
//
// Split-K. With splits > 1, block row y of the grid sums the slice y of k into a
// partial tile of the workspace; reduce_splits adds the slices in slice order, so the
// result has the same bits run to run.
#include <cstdint>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "plan/f64_shapes.hpp"

namespace tiledmm {
namespace {

constexpr int kGroupM = 8;  // tile rows per rasterisation group

// A warp is 4 x 8 threads, and a thread's outputs come in groups of 2 x 2 (one double2
// of A by one double2 of B): so a thread's groups sit 4 * 2 = 8 rows and 8 * 2 = 16
// columns apart, and a warp's reads of one depth from shared memory are broadcasts or
// 8 x 16 contiguous bytes.
constexpr int kLaneRows = 4, kLaneCols = 8, kGroup = 2;
static_assert(kLaneRows * kLaneCols == 32, "a warp is 4 x 8 threads");
constexpr int kGroupRowStride = kLaneRows * kGroup;  // 8
constexpr int kGroupColStride = kLaneCols * kGroup;  // 16
constexpr int kPad = 4;                              // doubles, where the loader transposes

// Moves an MN x BK tile of an operand from global memory into registers, then into
// shared memory, K-major. `KContig`: element (mn, k) is at src[mn * ld + k], else
// at src[k * ld + mn]. Each thread moves kPerThread pairs of consecutive elements,
// always the same positions of the tile: pair f + i * THREADS lies `kLinesApart` lines
// (rows of A or B along their contiguous direction) past pair f, so a thread keeps one
// pointer and one distance, not one pointer per pair (8 of them, 16 registers, pushed
// the 64 x 64 shape into spills), and advances the pointer by one tile of k per step.
template <int MN, int BK, int THREADS, bool KContig, bool Vec>
struct TileLoader {
  static constexpr int kPairs = MN * BK / 2;
  static constexpr int kPerThread = kPairs / THREADS;
  static constexpr int kPairsPerLine = (KContig ? BK : MN) / 2;
  static constexpr int kLinesApart = THREADS / kPairsPerLine;
  static_assert((KContig ? BK : MN) % 2 == 0,
                "pairs run along the contiguous direction: it must split into them");
  static_assert(kPairs % THREADS == 0, "the tile must split evenly into pairs");
  static_assert(THREADS % kPairsPerLine == 0,
                "a thread's pairs keep their place in a line: THREADS covers whole lines");
  // 16-byte loads: a pair starts 2-aligned only if tile origins (multiples of MN) and
  // steps of k (BK, also split-K's slice starts) keep it so (with ld % 2 == 0, which
  // vectorizable() checks at run time).
  static_assert(!Vec || (MN % 2 == 0 && BK % 2 == 0), "vector loads need MN and BK % 2 == 0");

  double2 reg[kPerThread];
  const double* ptr;  // the thread's first pair; pair i is at ptr + i * apart
  int64_t apart;      // elements between consecutive pairs of the thread
  int64_t step;       // elements between consecutive tiles of k

  // Position of pair `f` in the tile: (mn, k) of its first element.
  __device__ __forceinline__ static void where(int f, int& mn, int& k) {
    if (KContig) {
      mn = f / (BK / 2);
      k = (f % (BK / 2)) * 2;
    } else {
      k = f / (MN / 2);
      mn = (f % (MN / 2)) * 2;
    }
  }

  __device__ __forceinline__ TileLoader(const double* src, int64_t ld, int64_t mn0, int tid) {
    step = KContig ? BK : BK * ld;
    apart = kLinesApart * ld;
    int mn, k;
    where(tid, mn, k);
    ptr = KContig ? src + (mn0 + mn) * ld + k : src + int64_t(k) * ld + mn0 + mn;
  }

  __device__ __forceinline__ const double* pair(int i) const { return ptr + i * apart; }

  // Unguarded: the whole tile lies inside the matrix.
  __device__ __forceinline__ void load_full() {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (Vec) {
        reg[i] = __ldg(reinterpret_cast<const double2*>(pair(i)));
      } else {
        reg[i] = make_double2(__ldg(pair(i)), __ldg(pair(i) + 1));
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
      double v[2];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const bool inside =
            KContig ? (mn < mn_left && k + j < k_left) : (mn + j < mn_left && k < k_left);
        v[j] = inside ? __ldg(pair(i) + j) : 0.0;
      }
      reg[i] = make_double2(v[0], v[1]);
    }
  }

  __device__ __forceinline__ void advance() { ptr += step; }

  // Into tile[BK][STRIDE], K-major.
  template <int STRIDE>
  __device__ __forceinline__ void store(double* tile, int tid) const {
    static_assert(KContig || STRIDE % 2 == 0, "16-byte stores need 16-byte aligned rows");
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int mn, k;
      where(tid + i * THREADS, mn, k);
      if (KContig) {  // two depths of one row: a transposing store
        tile[(k + 0) * STRIDE + mn] = reg[i].x;
        tile[(k + 1) * STRIDE + mn] = reg[i].y;
      } else {
        *reinterpret_cast<double2*>(&tile[k * STRIDE + mn]) = reg[i];
      }
    }
  }
};

// A block's shape: WARPS_M x WARPS_N warps; each warp is 4 x 8 threads and each thread
// owns RG x CG groups of 2 x 2 outputs (groups 8 rows and 16 columns apart), so a warp
// owns (8 RG) x (16 CG) of C. Tiles of k have depth BK, and at least MIN_BLOCKS blocks
// stay resident per SM (which caps registers).
template <int WARPS_M_, int WARPS_N_, int RG_, int CG_, int BK_, int MIN_BLOCKS_>
struct BlockShape {
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, RG = RG_, CG = CG_;
  static constexpr int BK = BK_, MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int WM = kGroupRowStride * RG, WN = kGroupColStride * CG;  // a warp's tile
  static constexpr int BM = WARPS_M * WM, BN = WARPS_N * WN, THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int TM = kGroup * RG, TN = kGroup * CG;                    // a thread's outputs
  static constexpr int A_TILE = BK * (BM + kPad), B_TILE = BK * (BN + kPad);  // padded, most

  static_assert(WARPS_M > 0 && WARPS_N > 0 && RG > 0 && CG > 0 && BK > 0 && MIN_BLOCKS > 0,
                "every dimension of a block shape is positive");
  static_assert(THREADS <= 1024, "a block has at most 1024 threads");
  // Split-K slices start at multiples of BK; with BK % 2 == 0 they keep the 16-byte
  // alignment of K-contiguous rows.
  static_assert(BK % 2 == 0, "BK must be a multiple of 2");
  static_assert(2 * (A_TILE + B_TILE) * int(sizeof(double)) <= 48 * 1024,
                "static shared memory is limited to 48 KiB per block");
};

// The tile of C a block owns, in groups of kGroupM tile rows (kernel_common.cuh).
template <class S>
__device__ __forceinline__ TileOrigin tile_of_block(const GemmView<double>& p) {
  return grouped_tile_of_block<S::BM, S::BN, kGroupM>(p.m, p.n);
}

// Where this thread's first output lies in its block's tile; the others are at
// + 8 g + i rows and + 16 h + j columns.
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
__device__ __forceinline__ void take_k_slice(GemmView<double>& p, int64_t k_begin,
                                             int64_t k_per_split) {
  p.a += KContigA ? k_begin : k_begin * p.lda;
  p.b += KContigB ? k_begin : k_begin * p.ldb;
  p.k = min(p.k - k_begin, k_per_split);
}

// The main loop's loads: fetch(t) brings tile t of k of both operands from global
// memory into the loaders' registers (unguarded while t < full_tiles_k, zero-filled
// past the matrix edges after), store() puts them into one buffer of shared memory.
// It refers to the kernel's two loaders rather than holding them, as the FP32 kernel's
// does (there, as members, they cost ptxas registers).
template <class S, bool KContigA, bool KContigB, bool Vec>
struct OperandLoads {
  using LoaderA = TileLoader<S::BM, S::BK, S::THREADS, KContigA, Vec>;
  using LoaderB = TileLoader<S::BN, S::BK, S::THREADS, KContigB, Vec>;
  LoaderA& a;
  LoaderB& b;
  const GemmView<double>& p;
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
  __device__ __forceinline__ void store(double* a_tile, double* b_tile) const {
    a.template store<A_STRIDE>(a_tile, tid);
    b.template store<B_STRIDE>(b_tile, tid);
  }
};

// The multiply-adds of one tile of k, on registers: at each depth, a thread reads RG
// double2 of A and CG double2 of B from shared memory into `a` and `b`, then does
// TM x TN fma into `acc`. The caller declares `a` and `b` (scratch), as the FP32
// kernel's does.
template <class S, int A_STRIDE, int B_STRIDE>
__device__ __forceinline__ void multiply_tile(const double* as, const double* bs, ThreadOrigin thr,
                                              double (&a)[S::TM], double (&b)[S::TN],
                                              double (&acc)[S::TM][S::TN]) {
  static_assert(A_STRIDE % 2 == 0 && B_STRIDE % 2 == 0 && S::WM % 2 == 0 && S::WN % 2 == 0,
                "16-byte reads from shared memory need 16-byte aligned rows and offsets");
#pragma unroll
  for (int kk = 0; kk < S::BK; ++kk) {
#pragma unroll
    for (int g = 0; g < S::RG; ++g) {
      const double2 v =
          *reinterpret_cast<const double2*>(&as[kk * A_STRIDE + thr.row + kGroupRowStride * g]);
      a[2 * g] = v.x, a[2 * g + 1] = v.y;
    }
#pragma unroll
    for (int h = 0; h < S::CG; ++h) {
      const double2 v =
          *reinterpret_cast<const double2*>(&bs[kk * B_STRIDE + thr.col + kGroupColStride * h]);
      b[2 * h] = v.x, b[2 * h + 1] = v.y;
    }
#pragma unroll
    for (int i = 0; i < S::TM; ++i)
#pragma unroll
      for (int j = 0; j < S::TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
  }
}

// Visits this thread's outputs two adjacent columns at a time: f(row, col, v).
template <class S, class F>
__device__ __forceinline__ void each_pair(TileOrigin tile, ThreadOrigin thr,
                                          const double (&acc)[S::TM][S::TN], F&& f) {
  // Whole double2 pairs of C: col is even wherever the tile lies.
  static_assert(S::BN % 2 == 0 && S::WN % 2 == 0, "a pair's first column is even");
#pragma unroll
  for (int i = 0; i < S::TM; ++i) {
    const int64_t row = tile.row0 + thr.row + (i / kGroup) * kGroupRowStride + (i % kGroup);
#pragma unroll
    for (int h = 0; h < S::CG; ++h)
      f(row, tile.col0 + thr.col + h * kGroupColStride, &acc[i][h * kGroup]);
  }
}

// Split-K epilogue: raw sums into out[m][ldp] for reduce_splits(); ldp is even
// (f64_partial_ld), so interior tiles take 16-byte stores.
template <class S>
__device__ __forceinline__ void store_partial_tile(const GemmView<double>& p, double* out,
                                                   int64_t ldp, TileOrigin tile, ThreadOrigin thr,
                                                   bool interior,
                                                   const double (&acc)[S::TM][S::TN]) {
  each_pair<S>(tile, thr, acc, [&](int64_t row, int64_t col, const double* v) {
    if (interior) {
      *reinterpret_cast<double2*>(out + row * ldp + col) = make_double2(v[0], v[1]);
    } else if (row < p.m) {
#pragma unroll
      for (int j = 0; j < 2; ++j)
        if (col + j < p.n) out[row * ldp + col + j] = v[j];
    }
  });
}

// Epilogue: C = alpha * acc + beta * C, with 16-byte accesses where the tile is
// interior and the operands vectorizable().
template <class S, bool Vec>
__device__ __forceinline__ void store_c_tile(const GemmView<double>& p, TileOrigin tile,
                                             ThreadOrigin thr, bool interior,
                                             const double (&acc)[S::TM][S::TN]) {
  const bool vec_c = Vec && interior;
  each_pair<S>(tile, thr, acc, [&](int64_t row, int64_t col, const double* v) {
    if (vec_c) {
      double2* c = reinterpret_cast<double2*>(p.c + row * p.ldc + col);
      double2 out = make_double2(p.alpha * v[0], p.alpha * v[1]);
      if (p.beta != 0.0) {
        const double2 old = *c;
        out.x += p.beta * old.x;
        out.y += p.beta * old.y;
      }
      *c = out;
    } else if (row < p.m) {
#pragma unroll
      for (int j = 0; j < 2; ++j)
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
    f64_blocked_kernel(GemmView<double> p, int64_t k_per_split, double* partial, int64_t ldp) {
  constexpr int A_STRIDE = S::BM + (KContigA ? kPad : 0);  // padded where the loader transposes
  constexpr int B_STRIDE = S::BN + (KContigB ? kPad : 0);
  __shared__ __align__(16) double a_tile[2][S::BK * A_STRIDE];
  __shared__ __align__(16) double b_tile[2][S::BK * B_STRIDE];
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

  double acc[S::TM][S::TN] = {};
  loads.fetch(0);
  loads.template store<A_STRIDE, B_STRIDE>(a_tile[0], b_tile[0]);
  __syncthreads();

  for (int t = 0; t < tiles_k; ++t) {
    const int buf = t & 1;
    const bool has_next = t + 1 < tiles_k;
    if (has_next) loads.fetch(t + 1);  // in flight during the multiply-adds below
    double a[S::TM], b[S::TN];
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

// The split-K partial sums' leading dimension: even, so that rows stay 16-byte aligned.
int64_t f64_partial_ld(const GemmProblem& p) { return (p.n + 1) / 2 * 2; }

// 16-byte vector access needs every pointer 16-byte aligned and every leading
// dimension even.
bool vectorizable(const GemmProblem& p) {
  return rows_16_byte_aligned(p.a_as<double>(), p.lda) &&
         rows_16_byte_aligned(p.b_as<double>(), p.ldb) &&
         rows_16_byte_aligned(p.c_as<double>(), p.ldc);
}

template <class S, bool KA, bool KB, bool Vec>
void launch(const GemmProblem& p, const KernelPlan& plan, double* workspace, cudaStream_t stream) {
  const int64_t blocks = ceil_div(p.m, S::BM) * ceil_div(p.n, S::BN);
  require(blocks <= int64_t(0x7fffffff), Status::NotSupported,
          "FP64 blocked kernel: too many tiles for one launch");
  const int64_t k_per_split = ceil_div(ceil_div(p.k, plan.splits), S::BK) * S::BK;
  const dim3 grid(unsigned(blocks), unsigned(plan.splits));
  // The kernel counts its steps of k in 32 bits (k of 2^34 and more: 128 GiB operands).
  require(ceil_div(plan.splits > 1 ? k_per_split : p.k, S::BK) <= int64_t(INT32_MAX),
          Status::NotSupported, "FP64 blocked kernel: k = ", p.k, " is over 2^31 steps of ", S::BK,
          " for one block");
  if (plan.splits > 1) {
    launch_kernel("FP64 blocked kernel launch", f64_blocked_kernel<S, KA, KB, Vec, true>, grid,
                  S::THREADS, 0, stream, view_of<double>(p), k_per_split, workspace,
                  f64_partial_ld(p));
  } else {
    launch_kernel("FP64 blocked kernel launch", f64_blocked_kernel<S, KA, KB, Vec, false>, grid,
                  S::THREADS, 0, stream, view_of<double>(p), p.k, nullptr, 0);
  }
}

template <class S, bool Vec>
void launch_for_transposes(const GemmProblem& p, const KernelPlan& plan, double* ws,
                           cudaStream_t stream) {
  // A is K-contiguous unless transposed; B is K-contiguous only when transposed.
  with_transposes(p, [&](auto ta, auto tb) {
    launch<S, !decltype(ta)::value, decltype(tb)::value, Vec>(p, plan, ws, stream);
  });
}

template <class S>
void launch_for_shape(const GemmProblem& p, const KernelPlan& plan, double* ws,
                      cudaStream_t stream) {
  vectorizable(p) ? launch_for_transposes<S, true>(p, plan, ws, stream)
                  : launch_for_transposes<S, false>(p, plan, ws, stream);
}

// C = alpha * sum over splits of partial + beta * C, in slice order, so split-K
// results do not depend on timing.
__global__ void reduce_splits(GemmView<double> p, const double* partial, int64_t ldp, int splits) {
  const int64_t row = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  const int64_t col = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (row >= p.m || col >= p.n) return;
  double sum = 0.0;
  for (int s = 0; s < splits; ++s) sum += partial[(s * p.m + row) * ldp + col];
  store_c(p, row, col, sum);
}

// The configurations: 8 x 8 doubles of accumulators per thread (128 registers), the
// FP32 kernel's warp tile of 32 x 64. The 128 x 128 tile takes depth 8: its two buffers
// take 33 KiB (66 KiB, over the 48 KiB of static shared memory, at 16). The 64 x 64
// tile, 64 threads, takes depth 4: at depth 8 each thread holds 16 doubles of the next
// tile per operand beside the accumulators, and ptxas (CUDA 13.0) spilled up to 92 bytes
// in 5 of its 16 variants for sm_90 at 255 registers; at depth 4, none spill. Not
// measured on a GPU yet.
using Shape128 = BlockShape<4, 2, 4, 4, 8, 1>;  // 128 x 128, 256 threads
using Shape64 = BlockShape<2, 1, 4, 4, 4, 4>;   //  64 x  64,  64 threads, 4 blocks per SM

}  // namespace

// The shapes as the planner knows them (f64_shapes.hpp) are these shapes.
template <class S>
constexpr bool matches_f64(const BlockedShapeInfo& info) {
  return info.rows == S::BM && info.cols == S::BN && info.threads == S::THREADS &&
         info.min_blocks_per_sm == S::MIN_BLOCKS && info.outputs_per_thread == S::TM * S::TN &&
         info.shared_bytes == 2 * (S::A_TILE + S::B_TILE) * int(sizeof(double)) &&
         info.element_bytes == int(sizeof(double));
}
static_assert(matches_f64<Shape128>(kF64BlockedShapes[0]), "planner row 0 is the 128 x 128 shape");
static_assert(matches_f64<Shape64>(kF64BlockedShapes[1]), "planner row 1 is the 64 x 64 shape");
static_assert(kF64BlockedShapes[0].shared_bytes <= 48 * 1024 &&
                  kF64BlockedShapes[1].shared_bytes <= 48 * 1024,
              "static shared memory is limited to 48 KiB per block");

// Bytes of the split-K partial sums: `splits` doubles per element of C.
size_t f64_blocked_workspace(const GemmProblem& p, const KernelPlan& plan) {
  return plan.splits > 1
             ? size_t(plan.splits) * size_t(p.m) * size_t(f64_partial_ld(p)) * sizeof(double)
             : 0;
}

void launch_f64_blocked(const GemmProblem& p, const KernelPlan& plan, void* workspace_ptr,
                        void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  auto* const workspace = static_cast<double*>(workspace_ptr);
  switch (plan.tile) {
    case 128:
      launch_for_shape<Shape128>(p, plan, workspace, stream);
      break;
    case 64:
      launch_for_shape<Shape64>(p, plan, workspace, stream);
      break;
    default:
      throw Error(Status::Internal, "FP64 blocked kernel: unsupported tile");
  }
  if (plan.splits > 1) {
    const dim3 block(32, 8);
    const dim3 grid(unsigned(ceil_div(p.n, 32)), unsigned(ceil_div(p.m, 8)));
    require(grid.y <= 65535, Status::NotSupported, "split-K reduction: too many rows");
    launch_kernel("FP64 split-K reduction launch", reduce_splits, grid, block, 0, stream,
                  view_of<double>(p), workspace, f64_partial_ld(p), plan.splits);
  }
}

}  // namespace tiledmm
