// Cache-blocked, multi-threaded GEMM (float and double) for machines without a GPU.
//
// The classic three-level blocking: a KC x NC block of op(B) is packed into
// NR-column panels (it stays in L2), an MC x KC block of op(A) into MR-row panels
// (L1), and a micro-kernel keeps an MR x NR block of C in registers while it walks
// KC. Threads own interleaved MC-row blocks of C, so no two threads write the same
// element. Each thread first scales its rows of C by beta, then adds
// alpha * (its partial products) block by block: alpha multiplies the accumulated
// sums, never A or B, as in every other kernel (see tmm_sgemm in the header).
//
// All memory is allocated before C is touched, so an allocation failure leaves the
// caller's C unchanged; the worker pool never fails once started (a thread it cannot
// start has its share run by the caller).
#include <algorithm>

#include "core/worker_pool.hpp"
#include "cpu/cpu_kernels.hpp"

namespace tiledmm {
namespace {

constexpr int64_t kMR = 4;    // rows of the register block
constexpr int64_t kNR = 8;    // columns of the register block (two SSE vectors of float)
constexpr int64_t kMC = 64;   // rows of a packed A block
constexpr int64_t kKC = 256;  // depth of packed blocks
constexpr int64_t kNC = 512;  // columns of a packed B block

struct Block {
  int64_t row, col, depth;     // origin in C / op(A) / op(B)
  int64_t rows, cols, depths;  // extent, at most kMC, kNC, kKC
};

// op(B)[depth.., col..] into panels of kNR columns: panel-major, then depth, then
// column. Columns past the edge are zero so the micro-kernel needs no edge case.
template <class T>
void pack_b(const GemmView<T>& p, const Block& blk, T* out) {
  for (int64_t j0 = 0; j0 < blk.cols; j0 += kNR) {
    for (int64_t q = 0; q < blk.depths; ++q) {
      for (int64_t j = 0; j < kNR; ++j) {
        const int64_t col = j0 + j;
        *out++ = col < blk.cols ? element_b(p, blk.depth + q, blk.col + col) : T(0);
      }
    }
  }
}

// op(A)[row.., depth..] into panels of kMR rows, zero past the edge.
template <class T>
void pack_a(const GemmView<T>& p, const Block& blk, T* out) {
  for (int64_t i0 = 0; i0 < blk.rows; i0 += kMR) {
    for (int64_t q = 0; q < blk.depths; ++q) {
      for (int64_t i = 0; i < kMR; ++i) {
        const int64_t row = i0 + i;
        *out++ = row < blk.rows ? element_a(p, blk.row + row, blk.depth + q) : T(0);
      }
    }
  }
}

// C[rows x cols] += alpha * A panel (kMR x depth) * B panel (depth x kNR).
template <class T>
void micro_kernel(int64_t depth, const T* a, const T* b, T alpha, T* c, int64_t ldc, int64_t rows,
                  int64_t cols) {
  T acc[kMR][kNR] = {};
  for (int64_t q = 0; q < depth; ++q) {
    for (int64_t i = 0; i < kMR; ++i) {
      const T ai = a[q * kMR + i];
      for (int64_t j = 0; j < kNR; ++j) acc[i][j] += ai * b[q * kNR + j];
    }
  }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) c[i * ldc + j] += alpha * acc[i][j];
}

// C = beta * C on the rows this thread owns.
template <class T>
void scale_rows(const GemmView<T>& p, int thread, int threads) {
  for (int64_t row = thread * kMC; row < p.m; row += threads * kMC) {
    GemmView<T> rows = p;
    rows.c = p.c + row * p.ldc;
    rows.m = std::min(kMC, p.m - row);
    cpu_scale_c(rows);
  }
}

template <class T>
void worker(const GemmView<T>& p, int thread, int threads, BlockedWorkspace<T>& ws) {
  scale_rows(p, thread, threads);
  for (int64_t col = 0; col < p.n; col += kNC) {
    for (int64_t depth = 0; depth < p.k; depth += kKC) {
      Block blk{0, col, depth, 0, std::min(kNC, p.n - col), std::min(kKC, p.k - depth)};
      pack_b(p, blk, ws.b.data());
      for (int64_t row = thread * kMC; row < p.m; row += threads * kMC) {
        blk.row = row;
        blk.rows = std::min(kMC, p.m - row);
        pack_a(p, blk, ws.a.data());
        for (int64_t j = 0; j < blk.cols; j += kNR) {
          for (int64_t i = 0; i < blk.rows; i += kMR) {
            micro_kernel(blk.depths, ws.a.data() + i * blk.depths, ws.b.data() + j * blk.depths,
                         p.alpha, p.c + (row + i) * p.ldc + col + j, p.ldc,
                         std::min(kMR, blk.rows - i), std::min(kNR, blk.cols - j));
          }
        }
      }
    }
  }
}

int64_t round_up(int64_t v, int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

template <class T>
int thread_count(const GemmView<T>& p, int host_threads) {
  const double flops = 2.0 * double(p.m) * double(p.n) * double(p.k);
  if (flops < 4.0e6) return 1;  // handing work to a thread costs more than the product
  const int64_t row_blocks = (p.m + kMC - 1) / kMC;
  const int64_t cores = host_thread_count(host_threads);
  return int(std::min(cores, row_blocks));
}

// Everything that can fail happens here, before C is touched: `threads` workspaces with
// packing buffers as large as p's blocks (a 4 x 4 product needs 64 elements, not the
// full 576 KiB of floats); they only grow, so a warm call allocates nothing.
template <class T>
void grow_workspaces(const GemmView<T>& p, int threads,
                     std::vector<BlockedWorkspace<T>>& workspaces) {
  if (workspaces.size() < size_t(threads)) workspaces.resize(size_t(threads));
  const int64_t depth = std::min(kKC, p.k);
  const size_t a_elements = size_t(round_up(std::min(kMC, p.m), kMR) * depth);
  const size_t b_elements = size_t(round_up(std::min(kNC, p.n), kNR) * depth);
  for (BlockedWorkspace<T>& ws : workspaces) {
    if (ws.a.size() < a_elements) ws.a.resize(a_elements);
    if (ws.b.size() < b_elements) ws.b.resize(b_elements);
  }
}

}  // namespace

template <class T>
int cpu_blocked_gemm(const GemmView<T>& p, int host_threads,
                     std::vector<BlockedWorkspace<T>>& workspaces, WorkerPool& pool) {
  if (p.k == 0 || p.alpha == T(0)) {  // C = beta * C
    cpu_scale_c(p);
    return 1;
  }
  const int threads = thread_count(p, host_threads);
  grow_workspaces(p, threads, workspaces);
  auto task = [&](int t) { worker(p, t, threads, workspaces[size_t(t)]); };
  pool.run(threads, task);  // never fails: threads it cannot start run inline
  return threads;
}

template <class T>
int cpu_blocked_threads(const GemmView<T>& p, int host_threads) {
  return thread_count(p, host_threads);
}

template <class T>
int cpu_blocked_gemm_batch(const GemmView<T>& p, int64_t batch, int host_threads,
                           std::vector<BlockedWorkspace<T>>& workspaces, WorkerPool& pool) {
  const int threads = int(std::min<int64_t>(host_thread_count(host_threads), batch));
  grow_workspaces(p, threads, workspaces);
  auto task = [&](int t) {  // a run of consecutive products each
    const int64_t first = batch * t / threads, last = batch * (t + 1) / threads;
    for (int64_t b = first; b < last; ++b) {
      GemmView<T> product = p;
      product.a += b * p.stride_a;
      product.b += b * p.stride_b;
      product.c += b * p.stride_c;
      worker(product, 0, 1, workspaces[size_t(t)]);
    }
  };
  pool.run(threads, task);  // never fails: threads it cannot start run inline
  return threads;
}

template int cpu_blocked_gemm(const GemmView<float>&, int, std::vector<BlockedWorkspace<float>>&,
                              WorkerPool&);
template int cpu_blocked_gemm(const GemmView<double>&, int, std::vector<BlockedWorkspace<double>>&,
                              WorkerPool&);
template int cpu_blocked_threads(const GemmView<float>&, int);
template int cpu_blocked_threads(const GemmView<double>&, int);
template int cpu_blocked_gemm_batch(const GemmView<float>&, int64_t, int,
                                    std::vector<BlockedWorkspace<float>>&, WorkerPool&);
template int cpu_blocked_gemm_batch(const GemmView<double>&, int64_t, int,
                                    std::vector<BlockedWorkspace<double>>&, WorkerPool&);

}  // namespace tiledmm
