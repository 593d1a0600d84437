// THIN: products with one side of C at most 16 wide (m or n <= 16: GEMV-like), in either
// precision, strict (fused multiply-adds in the call's precision). Such a product reads
// its large operand once and is bound by memory bandwidth; BLOCKED's tiles of 64 and more
// rows or columns would leave most of their work, and most of the SMs, idle.
//
// The problem is read as W (L x K, the large operand), X (S x K, the small one, S <= 16
// per pass) and C(s, l) (lib/plan/thin_shapes.hpp says which operand is which). W is
// read with 16-byte loads along the direction in which it is contiguous, and X, staged
// chunk by chunk in shared memory, is reused from there by every row of W:
//
//   along K: a warp owns R rows of W; lane j reads the 16-byte vectors j and 32 + j of
//            each row's chunk, multiplies them with the same vectors of X's S rows
//            (shared memory, conflict-free), and the warp's lanes add their sums in a
//            fixed butterfly at the end;
//   along L: a thread owns one 16-byte vector of L and sums down the chunk's rows of W,
//            with X's values of that row read as broadcasts.
//
// Split-K. Where the tiles of L are too few for the SMs, grid.y runs slices of k (whole
// chunks, so vectors stay aligned), each block writing its raw sums to
// partial[slice][s][l]; thin_reduce adds the slices in slice order, so the result has the
// same bits run to run. Unsplit, the block applies alpha and beta itself (C is not read
// when beta is 0).
//
// Edges: a chunk wholly inside k and a row (or vector) wholly inside L load unguarded;
// the rest load element by element, zero past the matrix. Rows of W not 16-byte aligned
// take scalar loads (an instantiation of their own).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cuda/kernels/blocked_core.cuh"
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "plan/thin_shapes.hpp"

namespace tiledmm {
namespace {

// W(l, q): AlongK ? w[l * ldw + q] : w[q * ldw + l]; X(s, q) = x[s * xs + q * xq];
// C(s, l) = c[s * cs + l * cl].
template <class T>
struct ThinView {
  const T* w;
  int64_t ldw;
  const T* x;
  int64_t xs, xq;
  T* c;
  int64_t cs, cl;
  int64_t long_side, small, k;
  T alpha, beta;
  const T* alpha_at;  // GemmView's: scalars in device memory where set
  const T* beta_at;
};

template <class T>
ThinView<T> thin_view_of(const GemmProblem& p) {
  const GemmView<T> v = view_of<T>(p);
  const ThinForm f = thin_form(p);
  ThinView<T> t{};
  if (f.w_is_b) {  // W(l = j, q) = op(B)[q][j]; X(s = i, q) = op(A)[i][q]; C(s, l) = C[i][j]
    t.w = v.b, t.ldw = v.ldb;
    t.x = v.a, t.xs = p.trans_a ? 1 : p.lda, t.xq = p.trans_a ? p.lda : 1;
    t.c = v.c, t.cs = p.ldc, t.cl = 1;
  } else {  // W(l = i, q) = op(A)[i][q]; X(s = j, q) = op(B)[q][j]; C(s, l) = C[i][j]
    t.w = v.a, t.ldw = v.lda;
    t.x = v.b, t.xs = p.trans_b ? p.ldb : 1, t.xq = p.trans_b ? 1 : p.ldb;
    t.c = v.c, t.cs = 1, t.cl = p.ldc;
  }
  t.long_side = f.long_side, t.small = f.small_side, t.k = p.k;
  t.alpha = v.alpha, t.beta = v.beta, t.alpha_at = v.alpha_at, t.beta_at = v.beta_at;
  return t;
}

template <class T>
__device__ __forceinline__ void store_thin(const ThinView<T>& t, int64_t s, int64_t l, T acc) {
  T* c = t.c + s * t.cs + l * t.cl;
  *c = blas_value(scalars_of(t.alpha, t.beta, t.alpha_at, t.beta_at), acc, [&] { return *c; });
}

// X(s, c0 + j) for s < SB, j < CHUNK into xs (x_at(s, j) is its address there), zero
// past X's S rows or past the slice's end k1; the threads walk X along its contiguous
// direction.
template <int SB, int CHUNK, int THREADS, class T, class At>
__device__ __forceinline__ void stage_x(const ThinView<T>& t, int64_t c0, int64_t k1, At x_at) {
  const bool along_q = t.xq == 1;
  for (int i = threadIdx.x; i < SB * CHUNK; i += THREADS) {
    const int s = along_q ? i / CHUNK : i % SB;
    const int j = along_q ? i % CHUNK : i / SB;
    const int64_t q = c0 + j;
    *x_at(s, j) = s < t.small && q < k1 ? __ldg(t.x + s * t.xs + q * t.xq) : T(0);
  }
}

// Along K: 8 warps, R rows of W per warp (thin_rows_per_warp), chunks of 32 x U vectors
// of k.
template <class T, int SB>
struct AlongK {
  static constexpr int V = BlockedElement<T>::kPerVector;
  static constexpr int U = kThinVectorsPerLane;
  static constexpr int R = thin_rows_per_warp(int(sizeof(T)), SB);
  static constexpr int WARPS = kThinWarpsAlongK, THREADS = 32 * WARPS;
  static constexpr int CHUNK = 32 * U * V;
  static constexpr int STRIDE = CHUNK + V;  // X's rows in shared memory, 16-byte aligned
  static constexpr int ROWS = WARPS * R;
};

template <class T, int SB, bool Vec>
__global__ void __launch_bounds__(AlongK<T, SB>::THREADS)
    thin_along_k(ThinView<T> t, int64_t depth, T* partial) {
  using Sh = AlongK<T, SB>;
  using E = BlockedElement<T>;
  using Vector = typename E::Vector;
  constexpr int V = Sh::V, U = Sh::U, R = Sh::R;
  __shared__ __align__(16) T xs[SB * Sh::STRIDE];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t l0 = int64_t(blockIdx.x) * Sh::ROWS + warp * R;
  const int64_t k0 = int64_t(blockIdx.y) * depth;
  const int64_t k1 = min(t.k, k0 + depth);

  T acc[R][SB] = {};
  for (int64_t c0 = k0; c0 < k1; c0 += Sh::CHUNK) {
    const bool full = c0 + Sh::CHUNK <= k1;
    Vector w[R][U];  // in flight while X is staged
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int64_t l = l0 + r;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int64_t q = c0 + (u * 32 + lane) * V;
        const T* src = t.w + l * t.ldw + q;
        if (l < t.long_side && full) {
          w[r][u] = Vec ? __ldg(reinterpret_cast<const Vector*>(src)) : E::load_scalars(src);
        } else {
          T v[V];
#pragma unroll
          for (int j = 0; j < V; ++j) v[j] = l < t.long_side && q + j < k1 ? __ldg(src + j) : T(0);
          w[r][u] = E::pack(v);
        }
      }
    }
    stage_x<SB, Sh::CHUNK, Sh::THREADS>(t, c0, k1,
                                        [&](int s, int j) { return &xs[s * Sh::STRIDE + j]; });
    __syncthreads();
#pragma unroll
    for (int u = 0; u < U; ++u) {
      T wv[R][V];
#pragma unroll
      for (int r = 0; r < R; ++r) E::unpack(w[r][u], wv[r]);
#pragma unroll
      for (int s = 0; s < SB; ++s) {
        T xv[V];
        E::unpack(*reinterpret_cast<const Vector*>(&xs[s * Sh::STRIDE + (u * 32 + lane) * V]), xv);
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int j = 0; j < V; ++j) acc[r][s] = E::fma(wv[r][j], xv[j], acc[r][s]);
      }
    }
    __syncthreads();  // xs is rewritten by the next chunk
  }

  // The lanes' sums, added in a fixed butterfly: every lane ends with the warp's; then
  // lane (r SB + s) % 32 stores output (r, s).
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int s = 0; s < SB; ++s)
#pragma unroll
      for (int off = 16; off > 0; off /= 2)
        acc[r][s] += __shfl_xor_sync(0xffffffffu, acc[r][s], off);
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int s = 0; s < SB; ++s) {
      const int64_t l = l0 + r;
      if ((r * SB + s) % 32 != lane || l >= t.long_side || s >= t.small) continue;
      if (partial != nullptr) {
        partial[(blockIdx.y * t.small + s) * t.long_side + l] = acc[r][s];
      } else {
        store_thin(t, s, l, acc[r][s]);
      }
    }
}

// Along L: a thread owns one 16-byte vector of L; chunks of kThinChunkAlongL rows of W,
// read GROUP rows at a time, the next group's loads in flight during this group's
// multiply-adds (and the first group's while X is staged).
template <class T, int SB>
struct AlongL {
  static constexpr int V = BlockedElement<T>::kPerVector;
  static constexpr int THREADS = kThinThreadsAlongL;
  static constexpr int CHUNK = kThinChunkAlongL;
  static constexpr int COLS = THREADS * V;
  static constexpr int GROUP = 4;
  static_assert(CHUNK % GROUP == 0, "a chunk is whole groups of rows");
};

template <class T, int SB, bool Vec>
__global__ void __launch_bounds__(AlongL<T, SB>::THREADS)
    thin_along_l(ThinView<T> t, int64_t depth, T* partial) {
  using Sh = AlongL<T, SB>;
  using E = BlockedElement<T>;
  using Vector = typename E::Vector;
  constexpr int V = Sh::V, CHUNK = Sh::CHUNK, GROUP = Sh::GROUP;
  __shared__ __align__(16) T xs[CHUNK * SB];  // xs[j * SB + s]: a row's values side by side
  const int64_t l = int64_t(blockIdx.x) * Sh::COLS + threadIdx.x * V;
  const int64_t k0 = int64_t(blockIdx.y) * depth;
  const int64_t k1 = min(t.k, k0 + depth);
  const bool whole = l + V <= t.long_side;

  auto load_group = [&](const T* rows, Vector(&w)[GROUP]) {
#pragma unroll
    for (int i = 0; i < GROUP; ++i) {
      const T* row = rows + i * t.ldw;
      w[i] = Vec ? __ldg(reinterpret_cast<const Vector*>(row)) : E::load_scalars(row);
    }
  };
  T acc[SB][V] = {};
  // X's values of row j, read V at a time (one 16-byte broadcast) where SB allows.
  auto multiply_row = [&](const T(&wv)[V], int j) {
    if constexpr (SB % V == 0) {
#pragma unroll
      for (int s0 = 0; s0 < SB; s0 += V) {
        T x[V];
        E::unpack(*reinterpret_cast<const Vector*>(&xs[j * SB + s0]), x);
#pragma unroll
        for (int i = 0; i < V; ++i)
#pragma unroll
          for (int v = 0; v < V; ++v) acc[s0 + i][v] = E::fma(wv[v], x[i], acc[s0 + i][v]);
      }
    } else {
#pragma unroll
      for (int s = 0; s < SB; ++s) {
        const T x = xs[j * SB + s];
#pragma unroll
        for (int v = 0; v < V; ++v) acc[s][v] = E::fma(wv[v], x, acc[s][v]);
      }
    }
  };

  for (int64_t c0 = k0; c0 < k1; c0 += CHUNK) {
    const T* src = t.w + c0 * t.ldw + l;
    const bool fast = c0 + CHUNK <= k1 && whole;
    Vector cur[GROUP];
    if (fast) load_group(src, cur);
    stage_x<SB, CHUNK, Sh::THREADS>(t, c0, k1, [&](int s, int j) { return &xs[j * SB + s]; });
    __syncthreads();
    if (fast) {
#pragma unroll
      for (int g = 0; g < CHUNK / GROUP; ++g) {
        Vector next[GROUP];
        if (g + 1 < CHUNK / GROUP) load_group(src + (g + 1) * GROUP * t.ldw, next);
#pragma unroll
        for (int i = 0; i < GROUP; ++i) {
          T wv[V];
          E::unpack(cur[i], wv);
          multiply_row(wv, g * GROUP + i);
        }
        if (g + 1 < CHUNK / GROUP) {
#pragma unroll
          for (int i = 0; i < GROUP; ++i) cur[i] = next[i];
        }
      }
    } else if (l < t.long_side) {
      const int64_t rows = min(int64_t(CHUNK), k1 - c0);
      for (int j = 0; j < rows; ++j) {
        T wv[V];
#pragma unroll
        for (int v = 0; v < V; ++v) wv[v] = l + v < t.long_side ? __ldg(src + j * t.ldw + v) : T(0);
        multiply_row(wv, j);
      }
    }
    __syncthreads();  // xs is rewritten by the next chunk
  }

#pragma unroll
  for (int s = 0; s < SB; ++s)
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (s >= t.small || l + v >= t.long_side) continue;
      if (partial != nullptr) {
        partial[(blockIdx.y * t.small + s) * t.long_side + l + v] = acc[s][v];
      } else {
        store_thin(t, s, l + v, acc[s][v]);
      }
    }
}

// C(s, l) = alpha * (sum of the slices' partial sums, in slice order) + beta * C(s, l).
template <class T>
__global__ void thin_reduce(ThinView<T> t, const T* partial, int slices) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t outputs = t.small * t.long_side;
  if (i >= outputs) return;
  T sum = T(0);
  for (int y = 0; y < slices; ++y) sum += partial[y * outputs + i];
  store_thin(t, i / t.long_side, i % t.long_side, sum);
}

// One pass (t.small <= 16): the kernel of the form, with X's columns rounded up to SB.
template <class T, int SB, bool Vec>
void launch_pass(const ThinView<T>& t, bool along_k, int64_t tiles, int64_t depth, int slices,
                 T* partial, cudaStream_t stream) {
  const dim3 grid{unsigned(tiles), unsigned(slices)};
  if (along_k) {
    launch_kernel("thin kernel launch", thin_along_k<T, SB, Vec>, grid, AlongK<T, SB>::THREADS, 0,
                  stream, t, depth, partial);
  } else {
    launch_kernel("thin kernel launch", thin_along_l<T, SB, Vec>, grid, AlongL<T, SB>::THREADS, 0,
                  stream, t, depth, partial);
  }
}

template <class T, bool Vec>
void launch_bucket(const ThinView<T>& t, bool along_k, int64_t tiles, int64_t depth, int slices,
                   T* partial, cudaStream_t stream) {
  const int64_t s = t.small;
  if (s <= 1) return launch_pass<T, 1, Vec>(t, along_k, tiles, depth, slices, partial, stream);
  if (s <= 2) return launch_pass<T, 2, Vec>(t, along_k, tiles, depth, slices, partial, stream);
  if (s <= 4) return launch_pass<T, 4, Vec>(t, along_k, tiles, depth, slices, partial, stream);
  if (s <= 8) return launch_pass<T, 8, Vec>(t, along_k, tiles, depth, slices, partial, stream);
  launch_pass<T, 16, Vec>(t, along_k, tiles, depth, slices, partial, stream);
}

template <class T>
void launch_typed(const GemmProblem& p, const KernelPlan& plan, T* workspace, cudaStream_t stream) {
  const ThinView<T> whole = thin_view_of<T>(p);
  const ThinForm form = thin_form(p);
  const int slices = thin_launched_slices(p, plan.splits);
  const int64_t depth = slices > 1 ? thin_slice_depth(p, plan.splits) : p.k;
  // A plan the launcher was not sized for (the planner makes neither): split slices
  // without their workspace would each write C, and grid.y holds 65535 slices.
  require(slices == 1 || workspace != nullptr, Status::Internal,
          "thin kernel: a split of k needs its workspace (thin_workspace)");
  require(slices <= 65535, Status::NotSupported, "thin kernel: ", slices,
          " slices of k are more than one launch holds");
  const bool vec = rows_16_byte_aligned(whole.w, whole.ldw);
  // Passes of 16 columns of X, one after another on the stream (they share the
  // workspace): a forced tile 16 on a product whose short side is wider.
  for (int64_t s0 = 0; s0 < whole.small; s0 += kThinMaxSmall) {
    ThinView<T> t = whole;
    t.x += s0 * whole.xs;
    t.c += s0 * whole.cs;
    t.small = std::min<int64_t>(kThinMaxSmall, whole.small - s0);
    GemmProblem pass = p;
    (form.w_is_b ? pass.m : pass.n) = t.small;
    const int64_t tiles = thin_tiles(pass);
    require(tiles <= int64_t(0x7fffffff), Status::NotSupported,
            "thin kernel: too many tiles for one launch");
    T* const partial = slices > 1 ? workspace : nullptr;
    vec ? launch_bucket<T, true>(t, form.along_k, tiles, depth, slices, partial, stream)
        : launch_bucket<T, false>(t, form.along_k, tiles, depth, slices, partial, stream);
    if (slices > 1) {
      const int64_t blocks = ceil_div(t.small * t.long_side, 256);
      require(blocks <= int64_t(0x7fffffff), Status::NotSupported,
              "thin split-K reduction: too many outputs");
      launch_kernel("thin split-K reduction launch", thin_reduce<T>, dim3(unsigned(blocks)),
                    dim3(256), 0, stream, t, static_cast<const T*>(partial), slices);
    }
  }
}

// The blocks are the planner's (thin_shapes.hpp: thin_tiles, thin_chunk), for every
// bucket of X's columns and both element types.
template <class T, int SB>
constexpr bool matches_planner() {
  constexpr int bytes = int(sizeof(T));
  return AlongK<T, SB>::CHUNK == 32 * kThinVectorsPerLane * thin_vector(bytes) &&
         AlongK<T, SB>::ROWS == kThinWarpsAlongK * thin_rows_per_warp(bytes, SB) &&
         AlongK<T, SB>::THREADS == 32 * kThinWarpsAlongK &&
         AlongL<T, SB>::COLS == kThinThreadsAlongL * thin_vector(bytes) &&
         AlongL<T, SB>::CHUNK == kThinChunkAlongL && AlongL<T, SB>::THREADS == kThinThreadsAlongL;
}
template <class T>
constexpr bool matches_planner_every_bucket() {
  return matches_planner<T, 1>() && matches_planner<T, 2>() && matches_planner<T, 4>() &&
         matches_planner<T, 8>() && matches_planner<T, 16>();
}
static_assert(matches_planner_every_bucket<float>() && matches_planner_every_bucket<double>(),
              "the thin kernel's blocks are the planner's");
static_assert(AlongK<float, 16>::ROWS == kThinWarpsAlongK * 4, "along K: 32 rows of W a block");
static_assert(AlongK<double, 8>::ROWS == kThinWarpsAlongK * 2, "8 doubles of X: 16 rows");

}  // namespace

// Bytes of the split-K partial sums: `splits` slices of (short side, at most 16) x L.
size_t thin_workspace(const GemmProblem& p, const KernelPlan& plan) {
  if (plan.splits <= 1) return 0;
  const ThinForm f = thin_form(p);
  return size_t(plan.splits) * size_t(std::min<int64_t>(f.small_side, kThinMaxSmall)) *
         size_t(f.long_side) * size_t(element_bytes(p.precision));
}

void launch_thin(const GemmProblem& p, const KernelPlan& plan, void* workspace, void* stream) {
  visit_precision(p.precision, [&](auto zero) {
    using T = decltype(zero);
    launch_typed<T>(p, plan, static_cast<T*>(workspace), static_cast<cudaStream_t>(stream));
  });
}

}  // namespace tiledmm
