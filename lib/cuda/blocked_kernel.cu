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
// Order. Blocks are numbered in groups of GROUP_M tile rows, so that blocks running
// at the same time share rows of A and columns of B in L2.
#include "kernel_common.cuh"
#include "kernels.hpp"

namespace tiledmm {
namespace {

constexpr int kGroupM = 8;  // tile rows per rasterisation group

// Moves an MN x BK tile of an operand from global memory into registers, then into
// shared memory, K-major. `KContig`: element (mn, k) is at src[mn * ld + k], else
// at src[k * ld + mn]. Each thread moves kPerThread groups of 4 consecutive
// elements, always the same positions of the tile, so it keeps one pointer per
// group and advances it by one tile of k per step.
template <int MN, int BK, int THREADS, bool KContig, bool Vec>
struct TileLoader {
  static constexpr int kVecs = MN * BK / 4;
  static constexpr int kPerThread = kVecs / THREADS;
  static_assert(kVecs % THREADS == 0, "the tile must split evenly into 4-element groups");

  float4 reg[kPerThread];
  const float* ptr[kPerThread];
  int64_t step;  // elements between consecutive tiles of k

  // Position of group `f` in the tile: (mn, k) of its first element.
  __device__ static void where(int f, int& mn, int& k) {
    if (KContig) {
      mn = f / (BK / 4);
      k = (f % (BK / 4)) * 4;
    } else {
      k = f / (MN / 4);
      mn = (f % (MN / 4)) * 4;
    }
  }

  __device__ TileLoader(const float* src, int64_t ld, int64_t mn0, int tid) {
    step = KContig ? BK : BK * ld;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int mn, k;
      where(tid + i * THREADS, mn, k);
      ptr[i] = KContig ? src + (mn0 + mn) * ld + k : src + int64_t(k) * ld + mn0 + mn;
    }
  }

  // Unguarded: the whole tile lies inside the matrix.
  __device__ void load_full() {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      if (Vec) {
        reg[i] = __ldg(reinterpret_cast<const float4*>(ptr[i]));
      } else {
        reg[i] = make_float4(__ldg(ptr[i]), __ldg(ptr[i] + 1), __ldg(ptr[i] + 2), __ldg(ptr[i] + 3));
      }
    }
  }

  // Guarded: elements at or past (mn_end, k_end), relative to this tile's origin
  // (mn0, k0), read as zero.
  __device__ void load_edge(int64_t mn_left, int64_t k_left, int tid) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int mn, k;
      where(tid + i * THREADS, mn, k);
      float v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool inside = KContig ? (mn < mn_left && k + j < k_left) : (mn + j < mn_left && k < k_left);
        v[j] = inside ? __ldg(ptr[i] + j) : 0.0f;
      }
      reg[i] = make_float4(v[0], v[1], v[2], v[3]);
    }
  }

  __device__ void advance() {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) ptr[i] += step;
  }

  // Into tile[BK][STRIDE], K-major.
  template <int STRIDE>
  __device__ void store(float* tile, int tid) const {
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

template <int WARPS_M, int WARPS_N, int BK, bool KContigA, bool KContigB, bool Vec>
__global__ void __launch_bounds__(WARPS_M * WARPS_N * 32, (WARPS_M * WARPS_N >= 8) ? 2 : 4)
    blocked_kernel(GemmProblem p) {
  constexpr int BM = 32 * WARPS_M, BN = 64 * WARPS_N;
  constexpr int THREADS = 32 * WARPS_M * WARPS_N;
  constexpr int A_STRIDE = BM + (KContigA ? 4 : 0);  // padded where the loader transposes
  constexpr int B_STRIDE = BN + (KContigB ? 4 : 0);
  __shared__ __align__(16) float a_tile[2][BK * A_STRIDE];
  __shared__ __align__(16) float b_tile[2][BK * B_STRIDE];

  // Grouped rasterisation of the 1D grid onto tiles of C.
  const int64_t tiles_m = ceil_div(p.m, BM), tiles_n = ceil_div(p.n, BN);
  const int64_t id = blockIdx.x;
  const int64_t group = id / (kGroupM * tiles_n);
  const int64_t first_m = group * kGroupM;
  const int64_t group_rows = min(tiles_m - first_m, int64_t(kGroupM));
  const int64_t row0 = (first_m + id % group_rows) * BM;
  const int64_t col0 = ((id % (kGroupM * tiles_n)) / group_rows) * BN;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int thr_row = (warp / WARPS_N) * 32 + (lane / 8) * 4;  // + {0, 16} + i
  const int thr_col = (warp % WARPS_N) * 64 + (lane % 8) * 4;  // + {0, 32} + j

  TileLoader<BM, BK, THREADS, KContigA, Vec> load_a(p.a, p.lda, row0, tid);
  TileLoader<BN, BK, THREADS, KContigB, Vec> load_b(p.b, p.ldb, col0, tid);
  const bool interior = row0 + BM <= p.m && col0 + BN <= p.n;
  // Tiles of k fit in 32 bits: k < 2^31 * BK would need more memory than exists.
  const int tiles_k = int(ceil_div(p.k, BK));
  const int full_tiles_k = interior ? int(p.k / BK) : 0;  // tiles needing no guard
  auto fetch = [&](int t) {
    if (t < full_tiles_k) {
      load_a.load_full();
      load_b.load_full();
    } else {
      load_a.load_edge(p.m - row0, p.k - int64_t(t) * BK, tid);
      load_b.load_edge(p.n - col0, p.k - int64_t(t) * BK, tid);
    }
    load_a.advance();
    load_b.advance();
  };

  float acc[8][8] = {};
  fetch(0);
  load_a.template store<A_STRIDE>(a_tile[0], tid);
  load_b.template store<B_STRIDE>(b_tile[0], tid);
  __syncthreads();

  for (int t = 0; t < tiles_k; ++t) {
    const int buf = t & 1;
    const bool has_next = t + 1 < tiles_k;
    if (has_next) fetch(t + 1);  // in flight during the multiply-adds below

    const float* as = a_tile[buf];
    const float* bs = b_tile[buf];
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&as[kk * A_STRIDE + thr_row]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[kk * A_STRIDE + thr_row + 16]);
      const float4 b0 = *reinterpret_cast<const float4*>(&bs[kk * B_STRIDE + thr_col]);
      const float4 b1 = *reinterpret_cast<const float4*>(&bs[kk * B_STRIDE + thr_col + 32]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }

    if (has_next) {
      // The other buffer was last read before the previous barrier: free to fill.
      load_a.template store<A_STRIDE>(a_tile[buf ^ 1], tid);
      load_b.template store<B_STRIDE>(b_tile[buf ^ 1], tid);
    }
    // The next tile must be complete before anyone computes on it, and this one
    // must not be overwritten (next iteration) while slower warps still read it.
    __syncthreads();
  }

  // Epilogue: C = alpha * acc + beta * C, four columns at a time where possible.
  const bool vec_c = Vec && interior;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t row = row0 + thr_row + (i / 4) * 16 + (i % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t col = col0 + thr_col + h * 32;
      const float* v = &acc[i][h * 4];
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
    }
  }
}

// 16-byte vector access needs every pointer 16-byte aligned and every leading
// dimension a multiple of 4 floats.
bool vectorizable(const GemmProblem& p) {
  auto aligned = [](const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0; };
  return aligned(p.a) && aligned(p.b) && aligned(p.c) && p.lda % 4 == 0 && p.ldb % 4 == 0 &&
         p.ldc % 4 == 0;
}

// Depth of one shared-memory tile for each block shape.
template <int WM, int WN>
constexpr int depth_for() { return WM * WN >= 8 ? 8 : 16; }

template <int WM, int WN, bool KA, bool KB, bool Vec>
void launch(const GemmProblem& p, cudaStream_t stream) {
  constexpr int BM = 32 * WM, BN = 64 * WN;
  const int64_t blocks = ceil_div(p.m, BM) * ceil_div(p.n, BN);
  require(blocks <= int64_t(0x7fffffff), Status::NotSupported,
          "blocked kernel: too many tiles for one launch");
  blocked_kernel<WM, WN, depth_for<WM, WN>(), KA, KB, Vec>
      <<<unsigned(blocks), WM * WN * 32, 0, stream>>>(p);
}

template <int WM, int WN, bool Vec>
void launch_for_transposes(const GemmProblem& p, cudaStream_t stream) {
  // A is K-contiguous unless transposed; B is K-contiguous only when transposed.
  if (p.trans_a) {
    p.trans_b ? launch<WM, WN, false, true, Vec>(p, stream)
              : launch<WM, WN, false, false, Vec>(p, stream);
  } else {
    p.trans_b ? launch<WM, WN, true, true, Vec>(p, stream)
              : launch<WM, WN, true, false, Vec>(p, stream);
  }
}

template <int WM, int WN>
void launch_for_shape(const GemmProblem& p, cudaStream_t stream) {
  vectorizable(p) ? launch_for_transposes<WM, WN, true>(p, stream)
                  : launch_for_transposes<WM, WN, false>(p, stream);
}

}  // namespace

void launch_blocked(const GemmProblem& p, int tile, cudaStream_t stream) {
  switch (tile) {
    case 128: launch_for_shape<4, 2>(p, stream); break;  // 128 x 128, 256 threads
    case 64: launch_for_shape<2, 1>(p, stream); break;   //  64 x  64,  64 threads
    default: throw Error(Status::Internal, "blocked kernel: unsupported tile");
  }
  check_cuda(cudaGetLastError(), "blocked kernel launch");
}

}  // namespace tiledmm
