// BLOCKED's machinery over the element type T (float: blocked_kernel.cu; double on the
// CUDA cores: f64_blocked_kernel.cu): the tile loaders, the block shapes, the main loop,
// the epilogues, split-K's reduction and the launch. Each kernel file brings its shapes
// and its registry entry points. Everything is in the includer's unnamed namespace.
//
// Ownership. A block of WARPS_M x WARPS_N warps owns a BM x BN tile of C. A warp is
// 4 x 8 threads, and a thread owns RG x CG groups of V x V outputs (V = the elements of
// one 16-byte vector: 4 floats, 2 doubles). So in each step of k, a thread reads RG
// vectors of A and CG vectors of B from shared memory and does TM x TN multiply-adds,
// and the warp's reads are either broadcasts or 128 contiguous bytes (no bank
// conflicts).
//
// Shared memory. Both operand tiles are stored K-major, a_tile[BK][BM + pad] and
// b_tile[BK][BN + pad], whatever the transposes: the loader reads global memory along
// the direction in which it is contiguous (16-byte loads when aligned) and transposes on
// the way into shared memory where needed. A transposed tile's rows are padded by kPad
// elements so that the transposing stores spread over the banks.
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
//
// Split-K. With splits > 1, block row y of the grid sums the slice y of k into a
// partial tile of the workspace; reduce_splits adds the slices in slice order, so the
// result has the same bits run to run.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "plan/blocked_shapes.hpp"

namespace tiledmm {
namespace {

// What BLOCKED needs of its element type: the 16-byte vector and its elements, the fused
// multiply-add, the vector's few operations (written out per type: on arrays of
// elements nvcc places or splits the accesses differently), how the loaders address
// their vectors, and the kernel's name in messages.
template <class T>
struct BlockedElement;

template <>
struct BlockedElement<float> {
  using Vector = float4;
  static constexpr int kPerVector = 4;
  // One pointer per vector of a loader (see TileLoader).
  static constexpr bool kLoaderOnePointer = false;
  static constexpr const char* kName = "blocked kernel";
  static constexpr const char* kLaunch = "blocked kernel launch";
  static constexpr const char* kReduceLaunch = "split-K reduction launch";

  __device__ __forceinline__ static float fma(float a, float b, float c) { return fmaf(a, b, c); }
  // V elements through the read-only cache, one at a time (rows not 16-byte aligned).
  __device__ __forceinline__ static float4 load_scalars(const float* p) {
    return make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
  }
  __device__ __forceinline__ static float4 pack(const float* v) {
    return make_float4(v[0], v[1], v[2], v[3]);
  }
  __device__ __forceinline__ static void unpack(const float4& v, float* out) {
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  }
  // alpha * v, and out += beta * v: the epilogue's arithmetic, kept on whole vectors (on
  // arrays, nvcc splits the 16-byte accesses of C).
  __device__ __forceinline__ static float4 scaled(float alpha, const float* v) {
    return make_float4(alpha * v[0], alpha * v[1], alpha * v[2], alpha * v[3]);
  }
  __device__ __forceinline__ static void add_scaled(float4& out, float beta, const float4& v) {
    out.x += beta * v.x;
    out.y += beta * v.y;
    out.z += beta * v.z;
    out.w += beta * v.w;
  }
};

template <>
struct BlockedElement<double> {
  using Vector = double2;
  static constexpr int kPerVector = 2;
  // A loader keeps its first vector's pointer and the distance to the next: one pointer
  // per vector (8 of them, 16 registers) pushed the 64 x 64 shape into spills.
  static constexpr bool kLoaderOnePointer = true;
  static constexpr const char* kName = "FP64 blocked kernel";
  static constexpr const char* kLaunch = "FP64 blocked kernel launch";
  static constexpr const char* kReduceLaunch = "FP64 split-K reduction launch";

  __device__ __forceinline__ static double fma(double a, double b, double c) {
    return ::fma(a, b, c);
  }
  __device__ __forceinline__ static double2 load_scalars(const double* p) {
    return make_double2(__ldg(p), __ldg(p + 1));
  }
  __device__ __forceinline__ static double2 pack(const double* v) {
    return make_double2(v[0], v[1]);
  }
  __device__ __forceinline__ static void unpack(const double2& v, double* out) {
    out[0] = v.x, out[1] = v.y;
  }
  __device__ __forceinline__ static double2 scaled(double alpha, const double* v) {
    return make_double2(alpha * v[0], alpha * v[1]);
  }
  __device__ __forceinline__ static void add_scaled(double2& out, double beta, const double2& v) {
    out.x += beta * v.x;
    out.y += beta * v.y;
  }
};

constexpr int kGroupM = 8;  // tile rows per rasterisation group
constexpr int kPad = 4;     // elements, where the loader transposes

// A warp is 4 x 8 threads, and a thread's outputs come in groups of V x V (one vector of
// A by one vector of B): so a thread's groups sit 4 V rows and 8 V columns apart, and a
// warp's reads of one depth from shared memory are broadcasts or 8 x 16 contiguous
// bytes.
constexpr int kLaneRows = 4, kLaneCols = 8;
static_assert(kLaneRows * kLaneCols == 32, "a warp is 4 x 8 threads");

// Moves an MN x BK tile of an operand from global memory into registers, then into
// shared memory, K-major. `KContig`: element (mn, k) is at src[mn * ld + k], else
// at src[k * ld + mn]. Each thread moves kPerThread vectors of V consecutive elements,
// always the same positions of the tile, so it keeps one pointer per vector, or (with
// kLoaderOnePointer) the first one's and the distance between them: vector
// f + i * THREADS lies kLinesApart lines (rows of A or B along their contiguous
// direction) past vector f. It advances them by one tile of k per step.
template <class T, int MN, int BK, int THREADS, bool KContig, bool Vec>
struct TileLoader {
  using E = BlockedElement<T>;
  static constexpr int V = E::kPerVector;
  static constexpr bool kOnePointer = E::kLoaderOnePointer;
  static constexpr int kVecs = MN * BK / V;
  static constexpr int kPerThread = kVecs / THREADS;
  static constexpr int kVecsPerLine = (KContig ? BK : MN) / V;
  static constexpr int kLinesApart = THREADS / kVecsPerLine;
  static_assert((KContig ? BK : MN) % V == 0,
                "vectors run along the contiguous direction: it must split into them");
  static_assert(kVecs % THREADS == 0, "the tile must split evenly into vectors");
  static_assert(!kOnePointer || THREADS % kVecsPerLine == 0,
                "a thread's vectors keep their place in a line: THREADS covers whole lines");
  // 16-byte loads: a vector starts V-aligned only if tile origins (multiples of MN)
  // and steps of k (BK, also split-K's slice starts) keep it so (with ld % V == 0,
  // which vectorizable() checks at run time).
  static_assert(!Vec || (MN % V == 0 && BK % V == 0), "vector loads need MN and BK % V == 0");

  typename E::Vector reg[kPerThread];
  const T* ptr[kOnePointer ? 1 : kPerThread];
  int64_t apart;  // kOnePointer: elements between consecutive vectors of the thread
  int64_t step;   // elements between consecutive tiles of k

  // Position of vector `f` in the tile: (mn, k) of its first element.
  __device__ __forceinline__ static void where(int f, int& mn, int& k) {
    if (KContig) {
      mn = f / (BK / V);
      k = (f % (BK / V)) * V;
    } else {
      k = f / (MN / V);
      mn = (f % (MN / V)) * V;
    }
  }

  __device__ __forceinline__ TileLoader(const T* src, int64_t ld, int64_t mn0, int tid) {
    step = KContig ? BK : BK * ld;
    if constexpr (kOnePointer) {
      apart = kLinesApart * ld;
      int mn, k;
      where(tid, mn, k);
      ptr[0] = KContig ? src + (mn0 + mn) * ld + k : src + int64_t(k) * ld + mn0 + mn;
    } else {
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        int mn, k;
        where(tid + i * THREADS, mn, k);
        ptr[i] = KContig ? src + (mn0 + mn) * ld + k : src + int64_t(k) * ld + mn0 + mn;
      }
    }
  }

  __device__ __forceinline__ const T* at(int i) const {
    if constexpr (kOnePointer) {
      return ptr[0] + i * apart;
    } else {
      return ptr[i];
    }
  }

  // Unguarded: the whole tile lies inside the matrix.
  __device__ __forceinline__ void load_full() {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (Vec) {
        reg[i] = __ldg(reinterpret_cast<const typename E::Vector*>(at(i)));
      } else {
        reg[i] = E::load_scalars(at(i));
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
      T v[V];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const bool inside =
            KContig ? (mn < mn_left && k + j < k_left) : (mn + j < mn_left && k < k_left);
        v[j] = inside ? __ldg(at(i) + j) : T(0);
      }
      reg[i] = E::pack(v);
    }
  }

  __device__ __forceinline__ void advance() {
#pragma unroll
    for (int i = 0; i < (kOnePointer ? 1 : kPerThread); ++i) ptr[i] += step;
  }

  // Into tile[BK][STRIDE], K-major.
  template <int STRIDE>
  __device__ __forceinline__ void store(T* tile, int tid) const {
    static_assert(KContig || STRIDE % V == 0, "16-byte stores need 16-byte aligned rows");
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int mn, k;
      where(tid + i * THREADS, mn, k);
      if (KContig) {  // V depths of one row: a transposing store
        T v[V];
        E::unpack(reg[i], v);
#pragma unroll
        for (int j = 0; j < V; ++j) tile[(k + j) * STRIDE + mn] = v[j];
      } else {
        *reinterpret_cast<typename E::Vector*>(&tile[k * STRIDE + mn]) = reg[i];
      }
    }
  }
};

// A block's shape over elements T: WARPS_M x WARPS_N warps; each warp is 4 x 8 threads
// and each thread owns RG x CG groups of V x V outputs (groups 4 V rows and 8 V columns
// apart), so a warp owns (4 V RG) x (8 V CG) of C. Tiles of k have depth BK, and at
// least MIN_BLOCKS blocks stay resident per SM (which caps registers).
template <class T, int WARPS_M_, int WARPS_N_, int RG_, int CG_, int BK_, int MIN_BLOCKS_>
struct BlockShape {
  using Element = T;
  using E = BlockedElement<T>;
  static constexpr int V = E::kPerVector;
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, RG = RG_, CG = CG_;
  static constexpr int BK = BK_, MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int ROW_STRIDE = kLaneRows * V, COL_STRIDE = kLaneCols * V;  // of groups
  static constexpr int WM = ROW_STRIDE * RG, WN = COL_STRIDE * CG;              // a warp's tile
  static constexpr int BM = WARPS_M * WM, BN = WARPS_N * WN, THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int TM = V * RG, TN = V * CG;                              // a thread's outputs
  static constexpr int A_TILE = BK * (BM + kPad), B_TILE = BK * (BN + kPad);  // padded, most

  static_assert(WARPS_M > 0 && WARPS_N > 0 && RG > 0 && CG > 0 && BK > 0 && MIN_BLOCKS > 0,
                "every dimension of a block shape is positive");
  static_assert(THREADS <= 1024, "a block has at most 1024 threads");
  // Split-K slices start at multiples of BK; with BK % V == 0 they keep the 16-byte
  // alignment of K-contiguous rows.
  static_assert(BK % V == 0, "BK must be a multiple of the elements of a vector");
  static_assert(2 * (A_TILE + B_TILE) * int(sizeof(T)) <= 48 * 1024,
                "static shared memory is limited to 48 KiB per block");
};

// The shapes as the planner knows them (blocked_shapes.hpp, f64_shapes.hpp) are these
// shapes.
template <class S>
constexpr bool matches(const BlockedShapeInfo& info) {
  return info.rows == S::BM && info.cols == S::BN && info.threads == S::THREADS &&
         info.min_blocks_per_sm == S::MIN_BLOCKS && info.outputs_per_thread == S::TM * S::TN &&
         info.shared_bytes == 2 * (S::A_TILE + S::B_TILE) * int(sizeof(typename S::Element)) &&
         info.element_bytes == int(sizeof(typename S::Element));
}

// The tile of C a block owns, in groups of kGroupM tile rows (kernel_common.cuh).
template <class S, class T>
__device__ __forceinline__ TileOrigin tile_of_block(const GemmView<T>& p) {
  return grouped_tile_of_block<S::BM, S::BN, kGroupM>(p.m, p.n);
}

// Where this thread's first output lies in its block's tile; the others are at
// + ROW_STRIDE g + i rows and + COL_STRIDE h + j columns.
struct ThreadOrigin {
  int row, col;
};

template <class S>
__device__ __forceinline__ ThreadOrigin thread_in_tile(int tid) {
  static_assert(S::THREADS == 32 * S::WARPS_M * S::WARPS_N,
                "the block is WARPS_M x WARPS_N whole warps, WARPS_N to a row");
  const int warp = tid / 32, lane = tid % 32;
  return {(warp / S::WARPS_N) * S::WM + (lane / kLaneCols) * S::V,
          (warp % S::WARPS_N) * S::WN + (lane % kLaneCols) * S::V};
}

// Split-K: the block's slice [k_begin, k_begin + k_per_split) of k, as a problem of
// its own: A and B shifted to its start, k shortened.
template <bool KContigA, bool KContigB, class T>
__device__ __forceinline__ void take_k_slice(GemmView<T>& p, int64_t k_begin, int64_t k_per_split) {
  p.a += KContigA ? k_begin : k_begin * p.lda;
  p.b += KContigB ? k_begin : k_begin * p.ldb;
  p.k = min(p.k - k_begin, k_per_split);
}

// The main loop's loads: fetch(t) brings tile t of k of both operands from global
// memory into the loaders' registers (unguarded while t < full_tiles_k, zero-filled
// past the matrix edges after), store() puts them into one buffer of shared memory.
// It refers to the kernel's two loaders rather than holding them: as members of one
// object, nvcc orders their registers differently and ptxas then allocates from 8
// fewer to 32 more registers per instantiation (nvcc 13.0, sm_90, FP32).
template <class S, bool KContigA, bool KContigB, bool Vec>
struct OperandLoads {
  using T = typename S::Element;
  using LoaderA = TileLoader<T, S::BM, S::BK, S::THREADS, KContigA, Vec>;
  using LoaderB = TileLoader<T, S::BN, S::BK, S::THREADS, KContigB, Vec>;
  LoaderA& a;
  LoaderB& b;
  const GemmView<T>& p;
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
  __device__ __forceinline__ void store(T* a_tile, T* b_tile) const {
    a.template store<A_STRIDE>(a_tile, tid);
    b.template store<B_STRIDE>(b_tile, tid);
  }
};

// The multiply-adds of one tile of k, on registers: at each depth, a thread reads
// RG vectors of A and CG vectors of B from shared memory into `a` and `b`, then does
// TM x TN fused multiply-adds into `acc`. The caller declares `a` and `b` (scratch, no
// values in or out): declared in here, they move ahead of the kernel's other locals,
// and ptxas allocates from 8 fewer to 2 more registers for the FP32 128 x 256 shape.
template <class S, int A_STRIDE, int B_STRIDE, class T>
__device__ __forceinline__ void multiply_tile(const T* as, const T* bs, ThreadOrigin thr,
                                              T (&a)[S::TM], T (&b)[S::TN],
                                              T (&acc)[S::TM][S::TN]) {
  using E = typename S::E;
  using Vector = typename E::Vector;
  constexpr int V = S::V;
  static_assert(A_STRIDE % V == 0 && B_STRIDE % V == 0 && S::WM % V == 0 && S::WN % V == 0,
                "16-byte reads from shared memory need 16-byte aligned rows and offsets");
#pragma unroll
  for (int kk = 0; kk < S::BK; ++kk) {
#pragma unroll
    for (int g = 0; g < S::RG; ++g) {
      const Vector v =
          *reinterpret_cast<const Vector*>(&as[kk * A_STRIDE + thr.row + S::ROW_STRIDE * g]);
      E::unpack(v, &a[V * g]);
    }
#pragma unroll
    for (int h = 0; h < S::CG; ++h) {
      const Vector v =
          *reinterpret_cast<const Vector*>(&bs[kk * B_STRIDE + thr.col + S::COL_STRIDE * h]);
      E::unpack(v, &b[V * h]);
    }
#pragma unroll
    for (int i = 0; i < S::TM; ++i)
#pragma unroll
      for (int j = 0; j < S::TN; ++j) acc[i][j] = E::fma(a[i], b[j], acc[i][j]);
  }
}

// Visits this thread's outputs V adjacent columns at a time: f(row, col, v).
template <class S, class T, class F>
__device__ __forceinline__ void each_group(TileOrigin tile, ThreadOrigin thr,
                                           const T (&acc)[S::TM][S::TN], F&& f) {
  // Whole vectors of C: col is a multiple of V wherever the tile lies.
  static_assert(S::BN % S::V == 0 && S::WN % S::V == 0, "a group's first column is V-aligned");
#pragma unroll
  for (int i = 0; i < S::TM; ++i) {
    const int64_t row = tile.row0 + thr.row + (i / S::V) * S::ROW_STRIDE + (i % S::V);
#pragma unroll
    for (int h = 0; h < S::CG; ++h)
      f(row, tile.col0 + thr.col + h * S::COL_STRIDE, &acc[i][h * S::V]);
  }
}

// The split-K partial sums' leading dimension: a multiple of V, so that rows stay
// 16-byte aligned.
template <class T>
int64_t partial_ld_of(const GemmProblem& p) {
  constexpr int V = BlockedElement<T>::kPerVector;
  return (p.n + V - 1) / V * V;
}

// Split-K epilogue: raw sums into out[m][ldp] for reduce_splits(); ldp % V == 0
// (partial_ld_of()), so interior tiles take 16-byte stores.
template <class S, class T>
__device__ __forceinline__ void store_partial_tile(const GemmView<T>& p, T* out, int64_t ldp,
                                                   TileOrigin tile, ThreadOrigin thr, bool interior,
                                                   const T (&acc)[S::TM][S::TN]) {
  using E = typename S::E;
  each_group<S>(tile, thr, acc, [&](int64_t row, int64_t col, const T* v) {
    if (interior) {
      *reinterpret_cast<typename E::Vector*>(out + row * ldp + col) = E::pack(v);
    } else if (row < p.m) {
#pragma unroll
      for (int j = 0; j < S::V; ++j)
        if (col + j < p.n) out[row * ldp + col + j] = v[j];
    }
  });
}

// Epilogue: C = alpha * acc + beta * C, with 16-byte accesses where the tile is
// interior and the operands vectorizable().
template <class S, bool Vec, class T>
__device__ __forceinline__ void store_c_tile(const GemmView<T>& p, TileOrigin tile,
                                             ThreadOrigin thr, bool interior,
                                             const T (&acc)[S::TM][S::TN]) {
  using E = typename S::E;
  using Vector = typename E::Vector;
  const Scalars<T> s = scalars_of(p);
  const bool vec_c = Vec && interior && s.alpha != T(0);  // alpha 0: store_c's rule
  each_group<S>(tile, thr, acc, [&](int64_t row, int64_t col, const T* v) {
    if (vec_c) {
      Vector* c = reinterpret_cast<Vector*>(p.c + row * p.ldc + col);
      Vector out = E::scaled(s.alpha, v);
      if (s.beta != T(0)) {
        const Vector old = *c;
        E::add_scaled(out, s.beta, old);
      }
      *c = out;
    } else if (row < p.m) {
#pragma unroll
      for (int j = 0; j < S::V; ++j)
        if (col + j < p.n) store_c(p, row, col + j, v[j]);
    }
  });
}

// The kernel: place the block and the thread, then a double-buffered pipeline over
// the tiles of k, then the epilogue. With splits > 1 (split-K), block row y of the
// grid computes the slice [y * k_per_split, (y + 1) * k_per_split) of k and writes
// its raw sums to partial[y][m][ldp]; reduce_splits() then applies alpha and beta.
template <class S, bool KContigA, bool KContigB, bool Vec, bool Split,
          class T = typename S::Element>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS)
    blocked_kernel(GemmView<T> p, int64_t k_per_split, T* partial, int64_t ldp) {
  constexpr int A_STRIDE = S::BM + (KContigA ? kPad : 0);  // padded where the loader transposes
  constexpr int B_STRIDE = S::BN + (KContigB ? kPad : 0);
  __shared__ __align__(16) T a_tile[2][S::BK * A_STRIDE];
  __shared__ __align__(16) T b_tile[2][S::BK * B_STRIDE];
  static_assert(sizeof(a_tile) + sizeof(b_tile) <= 48 * 1024,
                "static shared memory is limited to 48 KiB per block");
  using Loads = OperandLoads<S, KContigA, KContigB, Vec>;

  select_product(p);
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

  T acc[S::TM][S::TN] = {};
  loads.fetch(0);
  loads.template store<A_STRIDE, B_STRIDE>(a_tile[0], b_tile[0]);
  __syncthreads();

  for (int t = 0; t < tiles_k; ++t) {
    const int buf = t & 1;
    const bool has_next = t + 1 < tiles_k;
    if (has_next) loads.fetch(t + 1);  // in flight during the multiply-adds below
    T a[S::TM], b[S::TN];
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
// dimension a multiple of V (and, in a batch, every stride).
template <class T>
bool vectorizable(const GemmProblem& p) {
  const int bytes = int(sizeof(T));
  return rows_16_byte_aligned(p.a, p.lda, p.stride_a, p.batch, bytes) &&
         rows_16_byte_aligned(p.b, p.ldb, p.stride_b, p.batch, bytes) &&
         rows_16_byte_aligned(p.c, p.ldc, p.stride_c, p.batch, bytes);
}

// Split-K: each slice's depth, ceil(k / splits) rounded up to whole tiles of k, and the
// slices that depth leaves non-empty (at most plan.splits: with hundreds of slices the
// rounding can leave the last ones past k, which are then not launched, nor reduced).
template <class S>
int64_t slice_depth(const GemmProblem& p, const KernelPlan& plan) {
  return ceil_div(ceil_div(p.k, plan.splits), S::BK) * S::BK;
}
template <class S>
int launched_slices(const GemmProblem& p, const KernelPlan& plan) {
  return plan.splits > 1 ? int(std::max<int64_t>(1, ceil_div(p.k, slice_depth<S>(p, plan)))) : 1;
}

template <class S, bool KA, bool KB, bool Vec, class T = typename S::Element>
void launch(const GemmProblem& p, const KernelPlan& plan, T* workspace, cudaStream_t stream) {
  using E = typename S::E;
  const int64_t blocks = ceil_div(p.m, S::BM) * ceil_div(p.n, S::BN);
  require(blocks <= int64_t(0x7fffffff), Status::NotSupported, E::kName,
          ": too many tiles for one launch");
  const int64_t k_per_split = slice_depth<S>(p, plan);
  // A batch's products share no workspace: they run unsplit (choose_kernel).
  require(plan.splits <= 1 || p.batch <= 1, Status::Internal, E::kName,
          ": a strided batch split along k");
  const unsigned slices = unsigned(launched_slices<S>(p, plan));
  // The kernel counts its steps of k in 32 bits (k of 2^34 and more: 64 GiB operands
  // of floats).
  require(ceil_div(plan.splits > 1 ? k_per_split : p.k, S::BK) <= int64_t(INT32_MAX),
          Status::NotSupported, E::kName, ": k = ", p.k, " is over 2^31 steps of ", S::BK,
          " for one block");
  if (plan.splits > 1) {
    launch_kernel(E::kLaunch, blocked_kernel<S, KA, KB, Vec, true>, dim3(unsigned(blocks), slices),
                  S::THREADS, 0, stream, view_of<T>(p), k_per_split, workspace,
                  partial_ld_of<T>(p));
  } else {
    launch_in_product_slices(p, [&](const GemmProblem& q, unsigned products) {
      launch_kernel(E::kLaunch, blocked_kernel<S, KA, KB, Vec, false>,
                    dim3(unsigned(blocks), slices, products), S::THREADS, 0, stream, view_of<T>(q),
                    q.k, nullptr, 0);
    });
  }
}

template <class S, bool Vec, class T>
void launch_for_transposes(const GemmProblem& p, const KernelPlan& plan, T* ws,
                           cudaStream_t stream) {
  // A is K-contiguous unless transposed; B is K-contiguous only when transposed.
  with_transposes(p, [&](auto ta, auto tb) {
    launch<S, !decltype(ta)::value, decltype(tb)::value, Vec>(p, plan, ws, stream);
  });
}

// One shape's launch over the transposes and the alignment of the operands; returns the
// slices of k it launched (launched_slices).
template <class S, class T>
int launch_for_shape(const GemmProblem& p, const KernelPlan& plan, T* ws, cudaStream_t stream) {
  static_assert(std::is_same_v<T, typename S::Element>, "the workspace holds the shape's elements");
  vectorizable<T>(p) ? launch_for_transposes<S, true>(p, plan, ws, stream)
                     : launch_for_transposes<S, false>(p, plan, ws, stream);
  return launched_slices<S>(p, plan);
}

// C = alpha * sum over splits of partial + beta * C, in slice order, so split-K
// results do not depend on timing.
template <class T>
__global__ void reduce_splits(GemmView<T> p, const T* partial, int64_t ldp, int splits) {
  const int64_t row = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  const int64_t col = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (row >= p.m || col >= p.n) return;
  T sum = T(0);
  for (int s = 0; s < splits; ++s) sum += partial[(s * p.m + row) * ldp + col];
  store_c(p, row, col, sum);
}

// Bytes of the split-K partial sums: `splits` elements per element of C.
template <class T>
size_t split_workspace(const GemmProblem& p, const KernelPlan& plan) {
  return plan.splits > 1
             ? size_t(plan.splits) * size_t(p.m) * size_t(partial_ld_of<T>(p)) * sizeof(T)
             : 0;
}

// A kernel file's registry entry point: plan.tile picks one of `Shapes`, which are the
// rows of the planner's table `infos` in its order (the file static_asserts matches()),
// and launches it; with split-K, then the reduction of its partial sums into C.
template <class... Shapes, size_t N>
void launch_by_tile(const BlockedShapeInfo (&infos)[N], const GemmProblem& p,
                    const KernelPlan& plan, void* workspace_ptr, void* stream_ptr) {
  static_assert(sizeof...(Shapes) == N, "one shape per row of the planner's table");
  using T = typename std::tuple_element_t<0, std::tuple<Shapes...>>::Element;
  using E = BlockedElement<T>;
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  auto* const workspace = static_cast<T*>(workspace_ptr);
  size_t row = 0;
  bool launched = false;
  int slices = 1;
  ((launched = launched || (infos[row++].tile == plan.tile &&
                            (slices = launch_for_shape<Shapes>(p, plan, workspace, stream), true))),
   ...);
  if (!launched) fail(Status::Internal, E::kName, ": unsupported tile");
  if (plan.splits > 1) {
    const dim3 block(32, 8);
    const dim3 grid(unsigned(ceil_div(p.n, 32)), unsigned(ceil_div(p.m, 8)));
    require(grid.y <= 65535, Status::NotSupported, "split-K reduction: too many rows");
    launch_kernel(E::kReduceLaunch, reduce_splits<T>, grid, block, 0, stream, view_of<T>(p),
                  workspace, partial_ld_of<T>(p), slices);
  }
}

}  // namespace
}  // namespace tiledmm
