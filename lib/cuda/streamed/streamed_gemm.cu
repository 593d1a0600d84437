#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <map>

#include "core/host_copy.hpp"
#include "core/host_io.hpp"
#include "cuda/kernels/kernels.hpp"
#include "cuda/launch/dispatch.hpp"
#include "cuda/runtime/cuda_objects.hpp"
#include "cuda/runtime/device_buffer.hpp"
#include "cuda/runtime/host_memory.hpp"
#include "cuda/streamed/streamed_gemm.hpp"

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

void poison(float* p, int64_t n) {
  if (p != nullptr) std::fill(p, p + n, std::numeric_limits<float>::quiet_NaN());
}

// One device copy slot fed from one staging slot: the copy's start and end, and
// the event after which the device slot's last reader (a kernel) is done.
struct CopySlot {
  Event start, end, consumed;
  bool used = false;
};

// Hands out consecutive pieces of one allocation, each on a 256-byte boundary
// (aligned_floats), or none for a buffer the call does not need.
class Carver {
 public:
  explicit Carver(float* base) : base_(base) {}
  float* take(int64_t floats, bool needed = true) {
    if (!needed) return nullptr;
    float* p = base_ ? base_ + used_ : nullptr;
    used_ += aligned_floats(floats);
    return p;
  }
  int64_t used() const { return used_; }

 private:
  float* base_;
  int64_t used_ = 0;
};

// Where one operand comes from or goes to: the caller's memory, read or written by
// the DMA engines in place when it is pinned over its whole range, else through
// staging; or the caller's functions (tmm_sgemm_io), through staging.
struct Operand {
  const float* ptr;
  int64_t ld;
  bool pinned;
  const HostIo* io;
};
Operand operand(const float* ptr, int64_t ld, int64_t rows, int64_t cols, const HostIo* io) {
  if (io != nullptr) return Operand{nullptr, ld, false, io};
  const size_t bytes = size_t((rows - 1) * ld + cols) * sizeof(float);
  return Operand{ptr, ld, is_pinned_range(ptr, bytes), nullptr};
}

// rows x cols of an operand behind the caller's functions, between `buf` (dense)
// and the operand at `offset`, split by rows over the pool's threads. The first
// failure is thrown once every task has ended.
void io_block(WorkerPool& pool, int threads, bool write, const HostIo& io, int64_t offset,
              int64_t ld, float* buf, int64_t rows, int64_t cols) {
  const int tasks =
      int(std::max<int64_t>(1, std::min<int64_t>({int64_t(threads), rows, (rows * cols) >> 14})));
  std::mutex mutex;
  std::exception_ptr failure;
  auto task = [&](int t) {
    const int64_t r0 = rows * t / tasks, r1 = rows * (t + 1) / tasks;
    try {
      if (write) {
        io_write(io, offset + r0 * ld, ld, r1 - r0, cols, buf + r0 * cols, cols);
      } else {
        io_read(io, offset + r0 * ld, ld, r1 - r0, cols, buf + r0 * cols, cols);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  if (tasks == 1) {
    task(0);
  } else {
    pool.run(tasks, task);
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

// The most C slots a plan has (groups of up to 8 row tiles, plus one).
constexpr int kMaxCSlots = 9;

struct StreamedGemm::State {
  Stream h2d{cudaStreamNonBlocking}, compute{cudaStreamNonBlocking}, d2h{cudaStreamNonBlocking};
  DeviceBuffer device;   // carved into the device slots
  PinnedBuffer staging;  // carved into the staging slots
  CopySlot a_slot[kASlots], b_slot[2], c_up_slot[kMaxCSlots];
  Event panel_consumed[2], first_product, last_epilogue;
  Event epilogue_done[kMaxCSlots], down_start[kMaxCSlots], down_done[kMaxCSlots];
  WorkerPool pool;  // the packing threads
};

StreamedGemm::StreamedGemm() : state_(std::make_unique<State>()) {}
StreamedGemm::~StreamedGemm() = default;

void StreamedGemm::reserve_staging(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_->staging.reserve(size_t(aligned_floats(bytes / 4 + (bytes % 4 != 0))));
}

int64_t StreamedGemm::staging_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return int64_t(state_->staging.capacity() * sizeof(float));
}

Timing StreamedGemm::run(const GemmProblem& p, const Settings& settings,
                         const DeviceProfile& device, const StreamPlan& plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  State& s = *state_;
  const auto t0 = Clock::now();
  const bool reads_c = p.beta != 0.0f;
  const int threads = packing_thread_count(settings.host_threads);

  // Device layouts: each operand as it is stored, rows padded to 4 floats.
  const StreamBuffers sizes = stream_buffers(p, plan);
  const int64_t a_ld = sizes.a_ld, b_ld = sizes.b_ld, c_ld = sizes.c_ld;
  const Operand a = operand(p.a, p.lda, stored_rows_a(p), stored_cols_a(p), p.a_io);
  const Operand b = operand(p.b, p.ldb, stored_rows_b(p), stored_cols_b(p), p.b_io);
  const Operand c = operand(p.c, p.ldc, p.m, p.n, p.c_io);

  // The kernel for the chunk products: the user's algorithm settings, no split-K
  // (chunks already give the device work, and split-K would need a workspace), and
  // no kernel that needs a workspace for the chunk (the Hopper kernels' packing).
  Settings chunk_settings = settings;
  chunk_settings.max_splits = 1;

  // Every allocation before the first write to C: one device and one pinned
  // allocation, carved (a first pass measures, the second hands out pointers).
  const int64_t a_chunk = plan.tile_m * plan.chunk_k, b_chunk = plan.chunk_k * plan.tile_n;
  const int64_t c_tile = plan.tile_m * plan.tile_n;
  const int c_slots = int(plan.c_slots());
  require(c_slots <= kMaxCSlots, Status::Internal, "a plan with ", c_slots, " C slots");
  float* a_dev[kASlots];
  float* acc[kMaxCSlots];
  float* cin[kMaxCSlots];
  float* panels[2] = {nullptr, nullptr};
  float* a_st[kASlots];
  float* b_st[2];
  float* up_st[kMaxCSlots];
  float* down_st[kMaxCSlots];
  auto carve_device = [&](float* base) {
    Carver d(base);
    for (int i = 0; i < kASlots; ++i) a_dev[i] = d.take(sizes.a_slot);
    for (int i = 0; i < c_slots; ++i) {
      acc[i] = d.take(sizes.c_tile);
      cin[i] = d.take(sizes.c_tile, reads_c);
    }
    for (int i = 0; i < plan.panels(); ++i) panels[i] = d.take(sizes.b_panel);
    return d.used();
  };
  auto carve_staging = [&](float* base) {
    Carver h(base);
    for (int i = 0; i < kASlots; ++i) a_st[i] = h.take(a_chunk, !a.pinned);
    for (int i = 0; i < 2; ++i) b_st[i] = h.take(b_chunk, !b.pinned);
    for (int i = 0; i < c_slots; ++i) {
      up_st[i] = h.take(c_tile, reads_c && !c.pinned);
      down_st[i] = h.take(c_tile, !c.pinned);
    }
    return h.used();
  };
  carve_device(s.device.reserve(size_t(carve_device(nullptr))));
  const int64_t staging_floats = carve_staging(nullptr);
  if (staging_floats > 0) carve_staging(s.staging.reserve(size_t(staging_floats)));

  Timing t;
  double pack_ms = 0, link_ms = 0;
  bool first_product = true;
  cudaStream_t h2d = s.h2d.get(), comp = s.compute.get(), d2h = s.d2h.get();
  // From the first enqueue on, every exit leaves none of this call's work in flight:
  // a failure (a callback's, a CUDA error's) waits for the three streams before it
  // returns, so no copy of this call writes the caller's C or reads staging after
  // it, and the next call finds every slot free. (The success path below waits for
  // each copy itself.) Declared in this order, they drain downloads last.
  const DrainOnThrow drain_d2h(d2h), drain_compute(comp), drain_h2d(h2d);

  // Waits until staging slot `slot` is free (its last copy is done), adding that
  // copy's time to the link's.
  auto claim = [&](CopySlot& slot) {
    if (!slot.used) return;
    sync(slot.end);
    link_ms += elapsed(slot.start, slot.end);
    slot.used = false;
  };
  // rows x cols of the operand stored at (src, src_ld) up to (dst, dst_ld), through
  // `stage` (packed densely by the packing threads) unless the source is pinned.
  auto upload = [&](CopySlot& slot, float* dst, int64_t dst_ld, const Operand& from, int64_t offset,
                    float* stage, int64_t slot_floats, int64_t rows, int64_t cols) {
    const float* src = from.io ? nullptr : from.ptr + offset;
    int64_t src_ld = from.ld;
    if (!from.pinned) {
      // Debug: NaN in the whole slot first, so a packing step that misses part of
      // the block, or a copy that reads the slot before or after it, shows in C.
      if (settings.poison_staging) poison(stage, slot_floats);
      const auto u0 = Clock::now();
      if (from.io) {
        io_block(s.pool, threads, false, *from.io, offset, from.ld, stage, rows, cols);
      } else {
        copy_block(s.pool, threads, stage, cols, src, src_ld, rows, cols);
      }
      pack_ms += ms_since(u0);
      src = stage;
      src_ld = cols;
    }
    wait(h2d, slot.consumed);  // the device slot's last reader is done (a no-op the first time)
    record(slot.start, h2d);
    copy_2d(dst, dst_ld, src, src_ld, rows, cols, cudaMemcpyHostToDevice, h2d);
    record(slot.end, h2d);
    slot.used = true;
  };
  // Prime the "consumed" events so the first waits on them pass at once.
  for (CopySlot& slot : s.a_slot) {
    slot.used = false;
    record(slot.consumed, comp);
  }
  for (CopySlot& slot : s.b_slot) {
    slot.used = false;
    record(slot.consumed, comp);
  }
  for (int i = 0; i < c_slots; ++i) {
    s.c_up_slot[i].used = false;
    record(s.c_up_slot[i].consumed, comp);
    record(s.down_done[i], d2h);
  }
  for (Event& e : s.panel_consumed) record(e, comp);

  // A finished tile waiting to be unpacked into C, per C slot.
  struct Pending {
    bool live = false;
    int64_t m0, n0, rows, cols;
  } pending[kMaxCSlots];
  auto finish = [&](int cs) {
    Pending& tile = pending[cs];
    if (!tile.live) return;
    sync(s.down_done[cs]);
    link_ms += elapsed(s.down_start[cs], s.down_done[cs]);
    if (!c.pinned) {
      const auto u0 = Clock::now();
      if (c.io) {
        io_block(s.pool, threads, true, *c.io, tile.m0 * p.ldc + tile.n0, p.ldc, down_st[cs],
                 tile.rows, tile.cols);
      } else {
        copy_block(s.pool, threads, p.c + tile.m0 * p.ldc + tile.n0, p.ldc, down_st[cs], tile.cols,
                   tile.rows, tile.cols);
      }
      pack_ms += ms_since(u0);
    }
    tile.live = false;
  };

  int a_next = 0, b_next = 0, c_next = 0;
  for (int64_t tj = 0; tj < plan.tiles_n; ++tj) {
    const int64_t n0 = tj * plan.tile_n, nn = std::min(plan.tile_n, p.n - n0);
    // The panel of op(B) for these columns goes up chunk by chunk inside the first
    // group's loop, each chunk just before the chunks of A that meet it, so the
    // first products start after one chunk instead of the whole panel. Every reader
    // of the panel that last used this buffer (two column tiles ago) must be done.
    // Streaming B (any k), each group uploads its chunks of B into the two device
    // slots, each waiting for the products that last read its slot.
    const int pb = int(tj % plan.panels());
    float* panel = panels[pb];
    if (plan.b_resident) wait(h2d, s.panel_consumed[pb]);
    // Uploads the chunk of op(B) for k0..k0+kk and returns where op(B)'s chunk starts
    // on the device (leading dimension b_ld), and its slot.
    auto upload_b_chunk = [&](int64_t k0, int64_t kk, int& bs) -> const float* {
      bs = b_next;
      b_next ^= 1;
      claim(s.b_slot[bs]);
      float* dst = plan.b_resident ? panel : panels[bs];
      const int64_t at = plan.b_resident ? k0 : 0;  // the chunk's first row of op(B)
      if (p.trans_b) {                              // B stored n x k: rows n0.. of it, columns k0..
        upload(s.b_slot[bs], dst + at, b_ld, b, n0 * p.ldb + k0, b_st[bs], b_chunk, nn, kk);
        return dst + at;
      }
      // B stored k x n: rows k0.., columns n0..
      upload(s.b_slot[bs], dst + at * b_ld, b_ld, b, k0 * p.ldb + n0, b_st[bs], b_chunk, kk, nn);
      return dst + at * b_ld;
    };

    // Row tiles [t0, t1): the plan's groups (plan.next_row_tile).
    for (int64_t t0 = 0; t0 < plan.tiles_m;) {
      const int64_t t1 = plan.next_row_tile(t0);
      int slot_of[kMaxCSlots];  // the C slot of each tile of the group
      for (int64_t ti = t0; ti < t1; ++ti) {
        const int64_t m0 = ti * plan.tile_m, mm = std::min(plan.tile_m, p.m - m0);
        const int cs = c_next;
        c_next = (c_next + 1) % c_slots;
        slot_of[ti - t0] = cs;
        finish(cs);  // the tile that last used this C slot is unpacked; its buffers are free
        if (reads_c) {
          claim(s.c_up_slot[cs]);
          upload(s.c_up_slot[cs], cin[cs], c_ld, c, m0 * p.ldc + n0, up_st[cs], c_tile, mm, nn);
        }
        wait(comp, s.down_done[cs]);  // acc[cs] and cin[cs] were downloaded from
      }
      for (int64_t ci = 0; ci < plan.chunks; ++ci) {
        const int64_t k0 = ci * plan.chunk_k, kk = std::min(plan.chunk_k, p.k - k0);
        // h2d runs in order: B's chunk goes up before A's chunks that meet it.
        int bs = -1;
        const float* b_chunk_dev = t0 == 0 || !plan.b_resident
                                       ? upload_b_chunk(k0, kk, bs)
                                       : (p.trans_b ? panel + k0 : panel + k0 * b_ld);
        for (int64_t ti = t0; ti < t1; ++ti) {
          const int64_t m0 = ti * plan.tile_m, mm = std::min(plan.tile_m, p.m - m0);
          const int cs = slot_of[ti - t0];
          const int as = a_next;
          a_next = (a_next + 1) % kASlots;
          CopySlot& slot = s.a_slot[as];
          claim(slot);
          if (p.trans_a) {  // A stored k x m: rows k0.., columns m0..
            upload(slot, a_dev[as], a_ld, a, k0 * p.lda + m0, a_st[as], a_chunk, kk, mm);
          } else {  // A stored m x k: rows m0.., columns k0..
            upload(slot, a_dev[as], a_ld, a, m0 * p.lda + k0, a_st[as], a_chunk, mm, kk);
          }
          wait(comp, slot.end);  // this chunk of A, and (same stream, earlier) of B
          if (first_product) record(s.first_product, comp);
          first_product = false;
          // acc (+)= op(A) chunk * op(B) chunk: raw sums, alpha comes in the epilogue.
          GemmProblem chunk = p;
          chunk.m = mm;
          chunk.n = nn;
          chunk.k = kk;
          chunk.alpha = 1.0f;
          chunk.beta = ci == 0 ? 0.0f : 1.0f;
          chunk.a = a_dev[as];
          chunk.lda = a_ld;
          chunk.b = b_chunk_dev;
          chunk.ldb = b_ld;
          chunk.c = acc[cs];
          chunk.ldc = c_ld;
          const KernelChoice kernel = choose_kernel(chunk, chunk_settings, device, false);
          launch_gemm(kernel, chunk, nullptr, comp);
          record(slot.consumed, comp);
          if (t.kernel == nullptr || std::strcmp(t.kernel, "none") == 0) {
            t.kernel = kernel.kernel->name;
            t.algorithm = kernel.kernel->algorithm;
            t.tile_size = kernel.kernel->tile;
            t.coarsening = kernel.kernel->outputs_per_thread;
            t.math_mode = kernel.kernel->math_mode;
          }
        }
        // Streaming B: the group's products are this slot's last readers.
        if (!plan.b_resident) record(s.b_slot[bs].consumed, comp);
      }
      for (int64_t ti = t0; ti < t1; ++ti) {
        const int64_t m0 = ti * plan.tile_m, mm = std::min(plan.tile_m, p.m - m0);
        const int cs = slot_of[ti - t0];
        if (reads_c) wait(comp, s.c_up_slot[cs].end);
        float* out = reads_c ? cin[cs] : acc[cs];
        launch_epilogue(mm, nn, p.alpha, acc[cs], c_ld, p.beta, cin[cs], c_ld, out, c_ld, comp);
        if (reads_c) record(s.c_up_slot[cs].consumed, comp);
        record(s.epilogue_done[cs], comp);
        wait(d2h, s.epilogue_done[cs]);
        record(s.down_start[cs], d2h);
        if (c.pinned) {  // straight into the caller's C, m x n part only
          copy_2d(p.c + m0 * p.ldc + n0, p.ldc, out, c_ld, mm, nn, cudaMemcpyDeviceToHost, d2h);
        } else {
          if (settings.poison_staging) poison(down_st[cs], c_tile);  // its unpack is done
          copy_2d(down_st[cs], nn, out, c_ld, mm, nn, cudaMemcpyDeviceToHost, d2h);
        }
        record(s.down_done[cs], d2h);
        pending[cs] = Pending{true, m0, n0, mm, nn};
      }
      t0 = t1;
    }
    if (plan.b_resident) record(s.panel_consumed[pb], comp);
  }
  for (int i = 0; i < c_slots; ++i) finish((c_next + i) % c_slots);  // oldest first
  for (CopySlot& slot : s.a_slot) claim(slot);
  for (CopySlot& slot : s.b_slot) claim(slot);
  for (int i = 0; i < c_slots; ++i) claim(s.c_up_slot[i]);
  record(s.last_epilogue, comp);
  check_cuda(cudaStreamSynchronize(comp), "streamed sgemm");

  t.host_path = HostPath::Streamed;
  t.tiles = plan.tiles();
  t.k_chunks = plan.chunks;
  t.pack_ms = pack_ms;
  t.link_ms = link_ms;
  t.compute_ms = elapsed(s.first_product, s.last_epilogue);
  t.splits = 1;
  t.host_threads = threads;
  t.total_ms = ms_since(t0);
  return t;
}

std::shared_ptr<StreamedGemm> shared_streamed_gemm(int device) {
  // Never destroyed (a static destructor would run after the CUDA runtime's): the
  // engines it points to are owned by their holders.
  static std::mutex* mutex = new std::mutex;
  static auto* engines = new std::map<int, std::weak_ptr<StreamedGemm>>;
  std::lock_guard<std::mutex> lock(*mutex);
  std::weak_ptr<StreamedGemm>& slot = (*engines)[device];
  std::shared_ptr<StreamedGemm> engine = slot.lock();
  if (!engine) {
    engine = std::make_shared<StreamedGemm>();
    slot = engine;
  }
  return engine;
}

}  // namespace tiledmm
