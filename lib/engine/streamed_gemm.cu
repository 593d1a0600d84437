#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "../cuda/cuda_objects.hpp"
#include "../cuda/device_buffer.hpp"
#include "../cuda/kernels.hpp"
#include "streamed_gemm.hpp"

namespace tiledmm {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void record(const Event& e, cudaStream_t s) {
  check_cuda(cudaEventRecord(e.get(), s), "cudaEventRecord");
}
void wait(cudaStream_t s, const Event& e) {
  check_cuda(cudaStreamWaitEvent(s, e.get(), 0), "cudaStreamWaitEvent");
}
void sync(const Event& e) { check_cuda(cudaEventSynchronize(e.get()), "streamed sgemm"); }
float elapsed(const Event& a, const Event& b) {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, a.get(), b.get()), "cudaEventElapsedTime");
  return ms;
}

// A block of `rows` runs of `cols` floats, `src_ld` apart in the source and `dst_ld`
// apart in the destination, copied by the pool's threads (each takes whole rows).
void copy_rows(WorkerPool& pool, int threads, float* dst, int64_t dst_ld, const float* src,
               int64_t src_ld, int64_t rows, int64_t cols) {
  const int64_t bytes = rows * cols * int64_t(sizeof(float));
  // At least 256 KiB a task (handing out less costs more than it saves), at most one
  // task a row.
  const int tasks =
      int(std::max<int64_t>(1, std::min<int64_t>({int64_t(threads), bytes >> 18, rows})));
  auto task = [&](int t) {
    const int64_t r0 = rows * t / tasks, r1 = rows * (t + 1) / tasks;
    for (int64_t r = r0; r < r1; ++r)
      std::memcpy(dst + r * dst_ld, src + r * src_ld, size_t(cols) * sizeof(float));
  };
  pool.run(tasks, task);
}

void poison(float* p, size_t n) { std::fill(p, p + n, std::numeric_limits<float>::quiet_NaN()); }

// One device copy slot fed from one staging slot: the copy's start and end, and
// the event after which the device slot's last reader (a kernel) is done.
struct CopySlot {
  Event start, end, consumed;
  bool used = false;
};

}  // namespace

struct StreamedGemm::State {
  Stream h2d{cudaStreamNonBlocking}, compute{cudaStreamNonBlocking}, d2h{cudaStreamNonBlocking};
  DeviceBuffer a[2], b_panel, acc[2], cin[2];
  PinnedBuffer a_stage[2], b_stage[2], c_up[2], c_down[2];
  CopySlot a_slot[2], b_slot[2], c_up_slot[2];
  Event panel_consumed;
  Event tile_start[2], epilogue_done[2], down_start[2], down_done[2];
  bool panel_used = false;
};

StreamedGemm::StreamedGemm() : state_(std::make_unique<State>()) {}
StreamedGemm::~StreamedGemm() = default;

Timing StreamedGemm::run(const GemmProblem& p, const Settings& settings,
                         const DeviceProfile& device, const StreamPlan& plan, WorkerPool& pool) {
  State& s = *state_;
  const auto t0 = Clock::now();
  const bool reads_c = p.beta != 0.0f;
  const int threads = host_thread_count(settings.host_threads);

  // Device layouts: each operand as it is stored, rows padded to 4 floats.
  const StreamBuffers sizes = stream_buffers(p, plan);
  const int64_t a_ld = sizes.a_ld, b_ld = sizes.b_ld, c_ld = sizes.c_ld;

  // The kernel for the chunk products: the user's algorithm settings, no split-K
  // (chunks already give the device work, and split-K would need a workspace).
  Settings chunk_settings = settings;
  chunk_settings.max_splits = 1;

  // Every allocation before the first write to C.
  float* a_dev[2];
  float* acc[2];
  float* cin[2] = {nullptr, nullptr};
  float* a_st[2];
  float* b_st[2];
  float* up_st[2] = {nullptr, nullptr};
  float* down_st[2];
  for (int i = 0; i < 2; ++i) {
    a_dev[i] = s.a[i].reserve(size_t(sizes.a_slot));
    acc[i] = s.acc[i].reserve(size_t(sizes.c_tile));
    if (reads_c) cin[i] = s.cin[i].reserve(size_t(sizes.c_tile));
    a_st[i] = s.a_stage[i].reserve(size_t(plan.tile_m * plan.chunk_k));
    b_st[i] = s.b_stage[i].reserve(size_t(plan.chunk_k * plan.tile_n));
    if (reads_c) up_st[i] = s.c_up[i].reserve(size_t(plan.tile_m * plan.tile_n));
    down_st[i] = s.c_down[i].reserve(size_t(plan.tile_m * plan.tile_n));
  }
  float* panel = s.b_panel.reserve(size_t(sizes.b_panel));
  if (settings.poison_staging) {
    for (int i = 0; i < 2; ++i) {
      poison(a_st[i], s.a_stage[i].capacity());
      poison(b_st[i], s.b_stage[i].capacity());
      if (reads_c) poison(up_st[i], s.c_up[i].capacity());
      poison(down_st[i], s.c_down[i].capacity());
    }
  }

  Timing t;
  double pack_ms = 0, link_ms = 0, compute_ms = 0;
  cudaStream_t h2d = s.h2d.get(), comp = s.compute.get(), d2h = s.d2h.get();

  // Waits until staging slot `slot` is free (its last copy is done), adding that
  // copy's time to the link's.
  auto claim = [&](CopySlot& slot) {
    if (!slot.used) return;
    sync(slot.end);
    link_ms += elapsed(slot.start, slot.end);
    slot.used = false;
  };
  auto upload = [&](CopySlot& slot, float* dst, int64_t dst_ld, const float* src, int64_t rows,
                    int64_t cols) {
    wait(h2d, slot.consumed);  // the device slot's last reader is done (a no-op the first time)
    record(slot.start, h2d);
    check_cuda(
        cudaMemcpy2DAsync(dst, size_t(dst_ld) * sizeof(float), src, size_t(cols) * sizeof(float),
                          size_t(cols) * sizeof(float), size_t(rows), cudaMemcpyHostToDevice, h2d),
        "cudaMemcpy2DAsync");
    record(slot.end, h2d);
    slot.used = true;
  };
  // Prime the "consumed" events so the first waits on them pass at once.
  for (CopySlot* slot :
       {&s.a_slot[0], &s.a_slot[1], &s.b_slot[0], &s.b_slot[1], &s.c_up_slot[0], &s.c_up_slot[1]})
    record(slot->consumed, comp);
  record(s.panel_consumed, comp);
  for (int i = 0; i < 2; ++i) record(s.down_done[i], d2h);

  // A finished tile waiting to be unpacked into C, per C slot.
  struct Pending {
    bool live = false;
    int64_t m0, n0, rows, cols;
  } pending[2];
  auto finish = [&](int cs) {
    Pending& tile = pending[cs];
    if (!tile.live) return;
    sync(s.down_done[cs]);
    link_ms += elapsed(s.down_start[cs], s.down_done[cs]);
    compute_ms += elapsed(s.tile_start[cs], s.epilogue_done[cs]);
    const auto u0 = Clock::now();
    copy_rows(pool, threads, p.c + tile.m0 * p.ldc + tile.n0, p.ldc, down_st[cs], tile.cols,
              tile.rows, tile.cols);
    if (settings.poison_staging) poison(down_st[cs], size_t(tile.rows * tile.cols));
    pack_ms += ms_since(u0);
    tile.live = false;
  };

  int a_next = 0, b_next = 0, c_next = 0;
  for (int64_t tj = 0; tj < plan.tiles_n; ++tj) {
    const int64_t n0 = tj * plan.tile_n, nn = std::min(plan.tile_n, p.n - n0);
    // The panel of op(B) for these columns goes up chunk by chunk inside the first
    // row tile's loop, each chunk just before the chunk of A that meets it, so the
    // first products start after one chunk instead of the whole panel. Every reader
    // of the previous panel must be done first.
    wait(h2d, s.panel_consumed);
    auto upload_b_chunk = [&](int64_t k0, int64_t kk) {
      CopySlot& slot = s.b_slot[b_next];
      float* st = b_st[b_next];
      b_next ^= 1;
      claim(slot);
      const auto u0 = Clock::now();
      if (p.trans_b) {  // B stored n x k: rows n0.. of it, columns k0..
        copy_rows(pool, threads, st, kk, p.b + n0 * p.ldb + k0, p.ldb, nn, kk);
        pack_ms += ms_since(u0);
        upload(slot, panel + k0, b_ld, st, nn, kk);
      } else {  // B stored k x n: rows k0.., columns n0..
        copy_rows(pool, threads, st, nn, p.b + k0 * p.ldb + n0, p.ldb, kk, nn);
        pack_ms += ms_since(u0);
        upload(slot, panel + k0 * b_ld, b_ld, st, kk, nn);
      }
    };

    for (int64_t ti = 0; ti < plan.tiles_m; ++ti) {
      const int64_t m0 = ti * plan.tile_m, mm = std::min(plan.tile_m, p.m - m0);
      const int cs = c_next;
      c_next ^= 1;
      finish(cs);  // the tile that last used this C slot is unpacked; its buffers are free
      if (reads_c) {
        CopySlot& slot = s.c_up_slot[cs];
        claim(slot);
        const auto u0 = Clock::now();
        copy_rows(pool, threads, up_st[cs], nn, p.c + m0 * p.ldc + n0, p.ldc, mm, nn);
        pack_ms += ms_since(u0);
        upload(slot, cin[cs], c_ld, up_st[cs], mm, nn);
      }
      wait(comp, s.down_done[cs]);  // acc[cs] and cin[cs] were downloaded from
      record(s.tile_start[cs], comp);
      for (int64_t c = 0; c < plan.chunks; ++c) {
        const int64_t k0 = c * plan.chunk_k, kk = std::min(plan.chunk_k, p.k - k0);
        if (ti == 0) upload_b_chunk(k0, kk);  // h2d runs in order: before A's chunk
        const int as = a_next;
        a_next ^= 1;
        CopySlot& slot = s.a_slot[as];
        claim(slot);
        const auto u0 = Clock::now();
        if (p.trans_a) {  // A stored k x m: rows k0.., columns m0..
          copy_rows(pool, threads, a_st[as], mm, p.a + k0 * p.lda + m0, p.lda, kk, mm);
          pack_ms += ms_since(u0);
          upload(slot, a_dev[as], a_ld, a_st[as], kk, mm);
        } else {  // A stored m x k: rows m0.., columns k0..
          copy_rows(pool, threads, a_st[as], kk, p.a + m0 * p.lda + k0, p.lda, mm, kk);
          pack_ms += ms_since(u0);
          upload(slot, a_dev[as], a_ld, a_st[as], mm, kk);
        }
        wait(comp, slot.end);  // this chunk of A, and (same stream, earlier) of B
        // acc (+)= op(A) chunk * op(B) chunk: raw sums, alpha comes in the epilogue.
        GemmProblem chunk = p;
        chunk.m = mm;
        chunk.n = nn;
        chunk.k = kk;
        chunk.alpha = 1.0f;
        chunk.beta = c == 0 ? 0.0f : 1.0f;
        chunk.a = a_dev[as];
        chunk.lda = a_ld;
        chunk.b = p.trans_b ? panel + k0 : panel + k0 * b_ld;
        chunk.ldb = b_ld;
        chunk.c = acc[cs];
        chunk.ldc = c_ld;
        const KernelChoice kernel = choose_kernel(chunk, chunk_settings, device);
        launch_gemm(kernel, chunk, nullptr, comp);
        record(slot.consumed, comp);
        if (t.kernel == nullptr || std::strcmp(t.kernel, "none") == 0) {
          t.kernel = kernel.kernel->name;
          t.algorithm = kernel.kernel->algorithm;
          t.tile_size = kernel.kernel->tile;
          t.coarsening = kernel.kernel->outputs_per_thread;
        }
      }
      if (reads_c) wait(comp, s.c_up_slot[cs].end);
      float* out = reads_c ? cin[cs] : acc[cs];
      launch_epilogue(mm, nn, p.alpha, acc[cs], c_ld, p.beta, cin[cs], c_ld, out, c_ld, comp);
      if (reads_c) record(s.c_up_slot[cs].consumed, comp);
      record(s.epilogue_done[cs], comp);
      wait(d2h, s.epilogue_done[cs]);
      record(s.down_start[cs], d2h);
      check_cuda(cudaMemcpy2DAsync(down_st[cs], size_t(nn) * sizeof(float), out,
                                   size_t(c_ld) * sizeof(float), size_t(nn) * sizeof(float),
                                   size_t(mm), cudaMemcpyDeviceToHost, d2h),
                 "cudaMemcpy2DAsync");
      record(s.down_done[cs], d2h);
      pending[cs] = Pending{true, m0, n0, mm, nn};
    }
    record(s.panel_consumed, comp);
  }
  finish(c_next);  // the older of the two tiles still in flight first
  finish(c_next ^ 1);
  for (CopySlot& slot : s.a_slot) claim(slot);
  for (CopySlot& slot : s.b_slot) claim(slot);
  for (CopySlot& slot : s.c_up_slot) claim(slot);
  check_cuda(cudaStreamSynchronize(comp), "streamed sgemm");

  t.host_path = HostPath::Streamed;
  t.tiles = plan.tiles();
  t.k_chunks = plan.chunks;
  t.pack_ms = pack_ms;
  t.link_ms = link_ms;
  t.compute_ms = compute_ms;
  t.splits = 1;
  t.host_threads = threads;
  t.total_ms = ms_since(t0);
  return t;
}

}  // namespace tiledmm
