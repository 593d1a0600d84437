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
#include "blocked_shapes.hpp"
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

// A block's shape: WARPS_M x WARPS_N warps; each warp is 4 x 8 threads and each
// thread owns RG x CG groups of 4 x 4 outputs (groups 16 rows and 32 columns
// apart), so a warp owns (16 RG) x (32 CG) of C. Tiles of k have depth BK, and at
// least MIN_BLOCKS blocks stay resident per SM (which caps registers).
template <int WARPS_M_, int WARPS_N_, int RG_, int CG_, int BK_, int MIN_BLOCKS_>
struct BlockShape {
  static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, RG = RG_, CG = CG_;
  static constexpr int BK = BK_, MIN_BLOCKS = MIN_BLOCKS_;
  static constexpr int WM = 16 * RG, WN = 32 * CG;  // a warp's tile
  static constexpr int BM = WARPS_M * WM, BN = WARPS_N * WN, THREADS = 32 * WARPS_M * WARPS_N;
  static constexpr int TM = 4 * RG, TN = 4 * CG;  // a thread's outputs
};

// With splits > 1 (split-K), block row y of the grid computes the slice
// [y * k_per_split, (y + 1) * k_per_split) of k and writes its raw sums to
// partial[y][m][ldp]; reduce_splits() then applies alpha and beta.
template <class S, bool KContigA, bool KContigB, bool Vec, bool Split>
__global__ void __launch_bounds__(S::THREADS, S::MIN_BLOCKS)
    blocked_kernel(GemmProblem p, int64_t k_per_split, float* partial, int64_t ldp) {
  constexpr int WARPS_N = S::WARPS_N, BK = S::BK, BM = S::BM, BN = S::BN;
  constexpr int RG = S::RG, CG = S::CG, TM = S::TM, TN = S::TN;
  constexpr int THREADS = S::THREADS;
  constexpr int A_STRIDE = BM + (KContigA ? 4 : 0);  // padded where the loader transposes
  constexpr int B_STRIDE = BN + (KContigB ? 4 : 0);
  __shared__ __align__(16) float a_tile[2][BK * A_STRIDE];
  __shared__ __align__(16) float b_tile[2][BK * B_STRIDE];

  if (Split) {  // this block's slice of k: shift A and B to its start, shorten k
    const int64_t k_begin = blockIdx.y * k_per_split;
    p.a += KContigA ? k_begin : k_begin * p.lda;
    p.b += KContigB ? k_begin : k_begin * p.ldb;
    p.k = min(p.k - k_begin, k_per_split);
  }

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
  const int thr_row = (warp / WARPS_N) * S::WM + (lane / 8) * 4;  // + 16 g + i
  const int thr_col = (warp % WARPS_N) * S::WN + (lane % 8) * 4;  // + 32 h + j

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

  float acc[TM][TN] = {};
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
      float a[TM], b[TN];
#pragma unroll
      for (int g = 0; g < RG; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&as[kk * A_STRIDE + thr_row + 16 * g]);
        a[4 * g] = v.x, a[4 * g + 1] = v.y, a[4 * g + 2] = v.z, a[4 * g + 3] = v.w;
      }
#pragma unroll
      for (int h = 0; h < CG; ++h) {
        const float4 v = *reinterpret_cast<const float4*>(&bs[kk * B_STRIDE + thr_col + 32 * h]);
        b[4 * h] = v.x, b[4 * h + 1] = v.y, b[4 * h + 2] = v.z, b[4 * h + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
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

  // Visits this thread's outputs four adjacent columns at a time: f(row, col, v).
  auto each_group = [&](auto&& f) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
      const int64_t row = row0 + thr_row + (i / 4) * 16 + (i % 4);
#pragma unroll
      for (int h = 0; h < CG; ++h) f(row, col0 + thr_col + h * 32, &acc[i][h * 4]);
    }
  };

  if (Split) {  // raw sums for reduce_splits()
    float* out = partial + blockIdx.y * p.m * ldp;
    each_group([&](int64_t row, int64_t col, const float* v) {
      if (interior) {
        *reinterpret_cast<float4*>(out + row * ldp + col) = make_float4(v[0], v[1], v[2], v[3]);
      } else if (row < p.m) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < p.n) out[row * ldp + col + j] = v[j];
      }
    });
    return;
  }

  // C = alpha * acc + beta * C, with 16-byte accesses where the tile is interior.
  const bool vec_c = Vec && interior;
  each_group([&](int64_t row, int64_t col, const float* v) {
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

// 16-byte vector access needs every pointer 16-byte aligned and every leading
// dimension a multiple of 4 floats.
bool vectorizable(const GemmProblem& p) {
  auto aligned = [](const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0; };
  return aligned(p.a) && aligned(p.b) && aligned(p.c) && p.lda % 4 == 0 && p.ldb % 4 == 0 &&
         p.ldc % 4 == 0;
}

template <class S, bool KA, bool KB, bool Vec>
void launch(const GemmProblem& p, const KernelPlan& plan, float* workspace,
            cudaStream_t stream) {
  static_assert(!Vec || S::BM % 4 == 0, "vector paths need tiles of whole float4");
  const int64_t blocks = ceil_div(p.m, S::BM) * ceil_div(p.n, S::BN);
  require(blocks <= int64_t(0x7fffffff), Status::NotSupported,
          "blocked kernel: too many tiles for one launch");
  const int64_t k_per_split = ceil_div(ceil_div(p.k, plan.splits), S::BK) * S::BK;
  const dim3 grid(unsigned(blocks), unsigned(plan.splits));
  if (plan.splits > 1) {
    blocked_kernel<S, KA, KB, Vec, true>
        <<<grid, S::THREADS, 0, stream>>>(p, k_per_split, workspace, partial_ld(p));
  } else {
    blocked_kernel<S, KA, KB, Vec, false><<<grid, S::THREADS, 0, stream>>>(p, p.k, nullptr, 0);
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
__global__ void reduce_splits(GemmProblem p, const float* partial, int64_t ldp, int splits) {
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
using Shape256 = BlockShape<2, 4, 4, 2, 8, 1>;  // 128 x 256, 256 threads, 1 block per SM
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

size_t blocked_workspace(const GemmProblem& p, const KernelPlan& plan) {
  return plan.splits > 1 ? size_t(plan.splits) * size_t(p.m) * size_t(partial_ld(p)) : 0;
}

void launch_blocked(const GemmProblem& p, const KernelPlan& plan, float* workspace,
                    void* stream_ptr) {
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  switch (plan.tile) {
    case 256: launch_for_shape<Shape256>(p, plan, workspace, stream); break;
    case 128: launch_for_shape<Shape128>(p, plan, workspace, stream); break;
    case 64: launch_for_shape<Shape64>(p, plan, workspace, stream); break;
    default: throw Error(Status::Internal, "blocked kernel: unsupported tile");
  }
  check_cuda(cudaGetLastError(), "blocked kernel launch");
  if (plan.splits > 1) {
    const dim3 block(32, 8);
    const dim3 grid(unsigned(ceil_div(p.n, 32)), unsigned(ceil_div(p.m, 8)));
    require(grid.y <= 65535, Status::NotSupported, "split-K reduction: too many rows");
    reduce_splits<<<grid, block, 0, stream>>>(p, workspace, partial_ld(p), plan.splits);
    check_cuda(cudaGetLastError(), "split-K reduction launch");
  }
}

}  // namespace tiledmm
