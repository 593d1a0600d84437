#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <optional>

#include "core/host_copy.hpp"
#include "core/host_io.hpp"
#include "cuda/kernels/kernels.hpp"
#include "cuda/launch/dispatch.hpp"
#include "cuda/runtime/cuda_objects.hpp"
#include "cuda/runtime/device_buffer.hpp"
#include "cuda/runtime/host_memory.hpp"
#include "cuda/streamed/streamed_gemm.hpp"
#include "plan/stream_schedule.hpp"

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
// True when everything before the event's last record has run (a query: never waits).
bool reached(const Event& e) {
  const cudaError_t err = cudaEventQuery(e.get());
  if (err == cudaErrorNotReady) return false;
  check_cuda(err, "streamed sgemm");
  return true;
}
float elapsed(const Event& a, const Event& b) {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, a.get(), b.get()), "cudaEventElapsedTime");
  return ms;
}

template <class T>
void poison(T* p, int64_t n) {
  if (p != nullptr) std::fill(p, p + n, std::numeric_limits<T>::quiet_NaN());
}

// One device copy slot fed from one staging slot: the copy's start and end, and
// the event after which the device slot's last reader (a kernel) is done.
struct CopySlot {
  Event start, end, consumed;
  bool used = false;
};

// Where one operand comes from or goes to: the caller's memory, read or written by
// the DMA engines in place when it is pinned over its whole range, else through
// staging; or the caller's functions (tmm_sgemm_io), through staging.
template <class T>
struct Operand {
  const T* ptr;
  int64_t ld;
  bool pinned;
  const HostIo* io;
};
template <class T>
Operand<T> operand(const T* ptr, int64_t ld, int64_t rows, int64_t cols, const HostIo* io) {
  if (io != nullptr) return Operand<T>{nullptr, ld, false, io};
  const size_t bytes = size_t((rows - 1) * ld + cols) * sizeof(T);
  return Operand<T>{ptr, ld, is_pinned_range(ptr, bytes), nullptr};
}

// rows x cols of an operand behind the caller's functions, between `buf` (dense)
// and the operand at `offset`, split by rows over the pool's threads. The first
// failure is thrown once every task has ended.
template <class T>
void io_block(WorkerPool& pool, int threads, bool write, const HostIo& io, int64_t offset,
              int64_t ld, T* buf, int64_t rows, int64_t cols) {
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

// The engine's streams, events, buffers and packing threads, kept from call to call
// (StreamedGemm::State). Untyped: the buffers hold bytes, and a call of either
// precision carves them.
struct Resources {
  Stream h2d{cudaStreamNonBlocking}, compute{cudaStreamNonBlocking}, d2h{cudaStreamNonBlocking};
  DeviceBuffer device;   // carved into the device slots
  PinnedBuffer staging;  // carved into the staging slots
  CopySlot a_slot[kASlots], b_slot[2], c_up_slot[kMaxCSlots];
  Event panel_consumed[2], first_product, last_epilogue;
  Event epilogue_done[kMaxCSlots], down_start[kMaxCSlots], down_done[kMaxCSlots];
  WorkerPool pool;  // the packing threads
};

template <class T>
T* at(T* base, int64_t offset) {
  return base != nullptr && offset >= 0 ? base + offset : nullptr;
}

// One product on the engine, as a pipeline of steps: carve() makes every allocation,
// prime() makes the events' first waits pass, walk_stream_plan (stream_schedule.hpp)
// calls the steps of each column tile, group of row tiles and chunk in order
// (uploads, products, epilogues and downloads), and finish() waits for the rest.
// Over the element type T (float or double), so that the compiler scales every offset;
// the caller's matrices and scalars are read through the typed view v_.
template <class T>
class Call {
 public:
  Call(Resources& s, const GemmProblem& p, const Settings& settings, const StreamPlan& plan,
       const ChunkKernelChooser& kernels)
      : s_(s),
        p_(p),
        settings_(settings),
        plan_(plan),
        kernels_(kernels),
        v_(view_of<T>(p)),
        reads_c_(p.beta != 0.0),
        threads_(packing_thread_count(settings.host_threads)),
        // Device layouts: each operand as it is stored, rows padded to 16 bytes.
        sizes_(stream_buffers(p, plan)),
        a_(operand(v_.a, p.lda, stored_rows_a(p), stored_cols_a(p), p.a_io)),
        b_(operand(v_.b, p.ldb, stored_rows_b(p), stored_cols_b(p), p.b_io)),
        c_(operand(v_.c, p.ldc, p.m, p.n, p.c_io)),
        a_chunk_(plan.tile_m * plan.chunk_k),
        b_chunk_(plan.chunk_k * plan.tile_n),
        c_tile_(plan.tile_m * plan.tile_n),
        c_slots_(int(plan.c_slots())),
        h2d_(s.h2d.get()),
        comp_(s.compute.get()),
        d2h_(s.d2h.get()) {}

  // Every allocation before the first write to C (and before any enqueue): one device
  // and one pinned allocation, carved as stream_layout says.
  void carve() {
    const StreamLayout l =
        stream_layout(plan_, sizes_, reads_c_, !a_.pinned, !b_.pinned, !c_.pinned, int(sizeof(T)));
    T* device = s_.device.reserve<T>(size_t(l.device_elements));
    T* staging =
        l.staging_elements > 0 ? s_.staging.reserve<T>(size_t(l.staging_elements)) : nullptr;
    for (int i = 0; i < kASlots; ++i) {
      a_dev_[i] = at(device, l.a_chunk[i]);
      a_st_[i] = at(staging, l.a_stage[i]);
    }
    for (int i = 0; i < 2; ++i) {
      panels_[i] = at(device, l.panel[i]);
      b_st_[i] = at(staging, l.b_stage[i]);
    }
    for (int i = 0; i < kMaxCSlots; ++i) {
      acc_[i] = at(device, l.acc[i]);
      cin_[i] = at(device, l.c_in[i]);
      up_st_[i] = at(staging, l.c_up_stage[i]);
      down_st_[i] = at(staging, l.c_down_stage[i]);
    }
    // C's pages faulted in ahead of the unpacking (a fresh result array's first stores
    // would fault them a page at a time), while the device computes.
    if (!c_.pinned && c_.io == nullptr) {
      const int64_t span = (p_.m - 1) * p_.ldc + p_.n;
      populate_.emplace(v_.c, span * int64_t(sizeof(T)), kPopulateThreads);
    }
  }

  // Primes the "consumed" events so the first waits on them pass at once.
  void prime() {
    for (CopySlot& slot : s_.a_slot) {
      slot.used = false;
      record(slot.consumed, comp_);
    }
    for (CopySlot& slot : s_.b_slot) {
      slot.used = false;
      record(slot.consumed, comp_);
    }
    for (int i = 0; i < c_slots_; ++i) {
      s_.c_up_slot[i].used = false;
      record(s_.c_up_slot[i].consumed, comp_);
      record(s_.down_done[i], d2h_);
    }
    for (Event& e : s_.panel_consumed) record(e, comp_);
  }

  // The panel of op(B) for these columns goes up chunk by chunk inside the first
  // group's loop, each chunk just before the chunks of A that meet it, so the first
  // products start after one chunk instead of the whole panel. Every reader of the
  // panel that last used this buffer (two column tiles ago) must be done. Streaming B
  // (any k), each group uploads its chunks of B into the two device slots, each
  // waiting for the products that last read its slot.
  void begin_column(const StreamColumn& col) {
    if (plan_.b_resident) wait(h2d_, s_.panel_consumed[col.panel]);
  }

  // The group's C slots: the tile that last used each is unpacked (its buffers are
  // free), C's tile goes up (beta != 0), and the products wait for the last download.
  void begin_group(const StreamColumn& col, const StreamGroup& group) {
    for (int i = 0; i < group.size(); ++i) {
      const StreamRowTile& tile = group.tiles[i];
      const int cs = tile.c_slot;
      unpack(cs);
      if (reads_c_) {
        claim(s_.c_up_slot[cs]);
        upload(s_.c_up_slot[cs], cin_[cs], sizes_.c_ld, c_, tile.m0 * p_.ldc + col.n0, up_st_[cs],
               c_tile_, tile.rows, col.cols);
      }
      wait(comp_, s_.down_done[cs]);  // acc[cs] and cin[cs] were downloaded from
    }
  }

  // Uploads the chunk of op(B) for the chunk's rows, unless it is on the device
  // already. h2d runs in order: B's chunk goes up before A's chunks that meet it.
  void begin_chunk(const StreamColumn& col, const StreamGroup&, const StreamChunk& chunk) {
    if (chunk.b_slot < 0) return;
    CopySlot& slot = s_.b_slot[chunk.b_slot];
    claim(slot);
    T* dst = b_on_device(chunk);
    T* stage = b_st_[chunk.b_slot];
    if (p_.trans_b) {  // B stored n x k: rows n0.. of it, columns k0..
      upload(slot, dst, sizes_.b_ld, b_, col.n0 * p_.ldb + chunk.k0, stage, b_chunk_, col.cols,
             chunk.depth);
    } else {  // B stored k x n: rows k0.., columns n0..
      upload(slot, dst, sizes_.b_ld, b_, chunk.k0 * p_.ldb + col.n0, stage, b_chunk_, chunk.depth,
             col.cols);
    }
  }

  // Uploads the tile's chunk of op(A) into A's slot `as`, then accumulates
  // acc (+)= op(A) chunk * op(B) chunk: raw sums, alpha comes in the epilogue.
  void product(const StreamColumn& col, const StreamGroup&, const StreamChunk& chunk,
               const StreamRowTile& tile, int as) {
    CopySlot& slot = s_.a_slot[as];
    claim(slot);
    if (p_.trans_a) {  // A stored k x m: rows k0.., columns m0..
      upload(slot, a_dev_[as], sizes_.a_ld, a_, chunk.k0 * p_.lda + tile.m0, a_st_[as], a_chunk_,
             chunk.depth, tile.rows);
    } else {  // A stored m x k: rows m0.., columns k0..
      upload(slot, a_dev_[as], sizes_.a_ld, a_, tile.m0 * p_.lda + chunk.k0, a_st_[as], a_chunk_,
             tile.rows, chunk.depth);
    }
    wait(comp_, slot.end);  // this chunk of A, and (same stream, earlier) of B
    if (first_product_) record(s_.first_product, comp_);
    first_product_ = false;
    GemmProblem q = p_;
    q.m = tile.rows;
    q.n = col.cols;
    q.k = chunk.depth;
    q.alpha = 1.0;
    q.beta = chunk.index == 0 ? 0.0 : 1.0;
    q.a = a_dev_[as];
    q.lda = sizes_.a_ld;
    q.b = b_on_device(chunk);
    q.ldb = sizes_.b_ld;
    q.c = acc_[tile.c_slot];
    q.ldc = sizes_.c_ld;
    const KernelChoice kernel = kernels_.choose(q);
    launch_gemm(kernel, q, nullptr, comp_);
    record(slot.consumed, comp_);
    if (t_.kernel == nullptr || std::strcmp(t_.kernel, "none") == 0) {
      t_.kernel = kernel.kernel->name;
      t_.algorithm = kernel.kernel->algorithm;
      t_.tile_size = kernel.kernel->tile;
      t_.coarsening = kernel.kernel->outputs_per_thread;
      t_.math_mode = kernel.kernel->math_mode;
    }
  }

  // Streaming B: the group's products are this slot's last readers.
  void end_chunk(const StreamColumn&, const StreamGroup&, const StreamChunk& chunk) {
    if (!plan_.b_resident) record(s_.b_slot[chunk.b_slot].consumed, comp_);
  }

  // The group's epilogues (C = alpha * acc + beta * C), and its tiles' downloads.
  void end_group(const StreamColumn& col, const StreamGroup& group) {
    for (int i = 0; i < group.size(); ++i) {
      const StreamRowTile& tile = group.tiles[i];
      const int64_t m0 = tile.m0, mm = tile.rows, n0 = col.n0, nn = col.cols;
      const int64_t c_ld = sizes_.c_ld;
      const int cs = tile.c_slot;
      if (reads_c_) wait(comp_, s_.c_up_slot[cs].end);
      T* out = reads_c_ ? cin_[cs] : acc_[cs];
      launch_epilogue(mm, nn, v_.alpha, acc_[cs], c_ld, v_.beta, cin_[cs], c_ld, out, c_ld, comp_);
      if (reads_c_) record(s_.c_up_slot[cs].consumed, comp_);
      record(s_.epilogue_done[cs], comp_);
      wait(d2h_, s_.epilogue_done[cs]);
      record(s_.down_start[cs], d2h_);
      if (c_.pinned) {  // straight into the caller's C, m x n part only
        copy_2d(v_.c + m0 * v_.ldc + n0, v_.ldc, out, c_ld, mm, nn, cudaMemcpyDeviceToHost, d2h_);
      } else {
        if (settings_.poison_staging) poison(down_st_[cs], c_tile_);  // its unpack is done
        copy_2d(down_st_[cs], nn, out, c_ld, mm, nn, cudaMemcpyDeviceToHost, d2h_);
      }
      record(s_.down_done[cs], d2h_);
      pending_[cs] = Pending{true, m0, n0, mm, nn, false, 0};
    }
  }

  void end_column(const StreamColumn& col) {
    if (plan_.b_resident) record(s_.panel_consumed[col.panel], comp_);
  }

  // The success path's end: the last tiles unpacked (oldest first, as `c_slots` ended),
  // every upload waited for, then the compute stream.
  void finish(const SlotRing& c_slots) {
    for (int i = 0; i < c_slots_; ++i) unpack(c_slots.oldest(i));
    for (CopySlot& slot : s_.a_slot) claim(slot);
    for (CopySlot& slot : s_.b_slot) claim(slot);
    for (int i = 0; i < c_slots_; ++i) claim(s_.c_up_slot[i]);
    record(s_.last_epilogue, comp_);
    check_cuda(cudaStreamSynchronize(comp_), "streamed sgemm");
  }

  Timing timing(Clock::time_point t0) {
    Timing t = t_;
    t.host_path = HostPath::Streamed;
    t.precision = p_.precision;
    t.tiles = plan_.tiles();
    t.k_chunks = plan_.chunks;
    t.pack_ms = pack_ms_;
    t.link_ms = link_ms_;
    t.compute_ms = elapsed(s_.first_product, s_.last_epilogue);
    t.splits = 1;
    t.host_threads = threads_;
    t.total_ms = ms_since(t0);
    return t;
  }

 private:
  // A finished tile waiting to be unpacked into C, per C slot.
  struct Pending {
    bool live = false;
    int64_t m0, n0, rows, cols;
    bool downloaded;   // its download is done (and counted in the link's time)
    int64_t unpacked;  // its first rows already in the caller's C
  };

  // Where op(B)'s chunk is on the device (leading dimension b_ld).
  T* b_on_device(const StreamChunk& chunk) const {
    T* buffer = panels_[chunk.b_buffer];
    return p_.trans_b ? buffer + chunk.b_row : buffer + chunk.b_row * sizes_.b_ld;
  }

  // Waits until staging slot `slot` is free (its last copy is done), adding that
  // copy's time to the link's. While it is not, the host unpacks downloaded tiles a strip
  // at a time: work it would otherwise do later, when the tile's C slot is taken again
  // or (the last c_slots() tiles) after the device has finished.
  void claim(CopySlot& slot) {
    if (!slot.used) return;
    while (!reached(slot.end) && unpack_strip()) {
    }
    sync(slot.end);
    link_ms_ += elapsed(slot.start, slot.end);
    slot.used = false;
  }

  // rows x cols of the operand stored at (src, src_ld) up to (dst, dst_ld), through
  // `stage` (packed densely by the packing threads) unless the source is pinned.
  void upload(CopySlot& slot, T* dst, int64_t dst_ld, const Operand<T>& from, int64_t offset,
              T* stage, int64_t slot_elements, int64_t rows, int64_t cols) {
    const T* src = from.io ? nullptr : from.ptr + offset;
    int64_t src_ld = from.ld;
    if (!from.pinned) {
      // Debug: NaN in the whole slot first, so a packing step that misses part of
      // the block, or a copy that reads the slot before or after it, shows in C.
      if (settings_.poison_staging) poison(stage, slot_elements);
      const auto u0 = Clock::now();
      if (from.io) {
        io_block(s_.pool, threads_, false, *from.io, offset, from.ld, stage, rows, cols);
      } else {
        copy_block(s_.pool, threads_, stage, cols, src, src_ld, rows, cols);
      }
      pack_ms_ += ms_since(u0);
      src = stage;
      src_ld = cols;
    }
    wait(h2d_, slot.consumed);  // the device slot's last reader is done (a no-op the first time)
    record(slot.start, h2d_);
    copy_2d(dst, dst_ld, src, src_ld, rows, cols, cudaMemcpyHostToDevice, h2d_);
    record(slot.end, h2d_);
    slot.used = true;
  }

  // Unpacks what is left of the tile that C slot `cs` last downloaded, if any, into the
  // caller's C, waiting for its download.
  void unpack(int cs) {
    Pending& tile = pending_[cs];
    if (!tile.live) return;
    downloaded(cs, true);
    unpack_rows(cs, tile.rows - tile.unpacked);
  }

  // Unpacks the next strip (about kStripBytes) of a tile whose download is done, if one
  // is; false when none is.
  bool unpack_strip() {
    constexpr int64_t kStripBytes = int64_t(8) << 20;
    for (int cs = 0; cs < c_slots_; ++cs) {
      Pending& tile = pending_[cs];
      if (!tile.live || !downloaded(cs, false)) continue;
      const int64_t row_bytes = tile.cols * int64_t(sizeof(T));
      unpack_rows(
          cs, std::min(tile.rows - tile.unpacked, std::max<int64_t>(1, kStripBytes / row_bytes)));
      return true;
    }
    return false;
  }

  // True when slot `cs`'s last download is done (waiting for it when `wait_for_it`),
  // adding its time to the link's the first time.
  bool downloaded(int cs, bool wait_for_it) {
    Pending& tile = pending_[cs];
    if (tile.downloaded) return true;
    if (wait_for_it) {
      sync(s_.down_done[cs]);
    } else if (!reached(s_.down_done[cs])) {
      return false;
    }
    link_ms_ += elapsed(s_.down_start[cs], s_.down_done[cs]);
    tile.downloaded = true;
    return true;
  }

  // Rows [unpacked, unpacked + count) of slot `cs`'s downloaded tile into the caller's
  // C (nothing to copy when C is pinned: the download wrote it).
  void unpack_rows(int cs, int64_t count) {
    Pending& tile = pending_[cs];
    const int64_t r0 = tile.unpacked;
    if (!c_.pinned && count > 0) {
      const auto u0 = Clock::now();
      T* from = down_st_[cs] + r0 * tile.cols;
      const int64_t offset = (tile.m0 + r0) * p_.ldc + tile.n0;
      if (c_.io) {
        io_block(s_.pool, threads_, true, *c_.io, offset, p_.ldc, from, count, tile.cols);
      } else {
        copy_block(s_.pool, threads_, v_.c + offset, v_.ldc, from, tile.cols, count, tile.cols);
      }
      pack_ms_ += ms_since(u0);
    }
    tile.unpacked = r0 + count;
    if (tile.unpacked == tile.rows) tile.live = false;
  }

  Resources& s_;
  const GemmProblem& p_;
  const Settings& settings_;
  const StreamPlan& plan_;
  const ChunkKernelChooser& kernels_;
  const GemmView<T> v_;  // p_'s matrices and scalars as T
  const bool reads_c_;
  const int threads_;
  const StreamBuffers sizes_;
  const Operand<T> a_, b_, c_;
  const int64_t a_chunk_, b_chunk_, c_tile_;  // staging slots' elements (dense)
  const int c_slots_;
  const cudaStream_t h2d_, comp_, d2h_;

  // Carved by carve(): device slots, then staging slots (nullptr: not needed).
  T* a_dev_[kASlots];
  T* acc_[kMaxCSlots];
  T* cin_[kMaxCSlots];
  T* panels_[2];
  T* a_st_[kASlots];
  T* b_st_[2];
  T* up_st_[kMaxCSlots];
  T* down_st_[kMaxCSlots];

  Pending pending_[kMaxCSlots];
  static constexpr int kPopulateThreads = 4;
  std::optional<BackgroundPopulate> populate_;  // joined when the call ends
  Timing t_;                                    // what ran, filled by the first product
  double pack_ms_ = 0, link_ms_ = 0;
  bool first_product_ = true;
};

// One product of element type T on the engine's resources `s`.
template <class T>
Timing run_call(Resources& s, const GemmProblem& p, const Settings& settings,
                const StreamPlan& plan, const ChunkKernelChooser& kernels) {
  const auto t0 = Clock::now();
  Call<T> call(s, p, settings, plan, kernels);
  call.carve();
  // From the first enqueue on, every exit leaves none of this call's work in flight:
  // a failure (a callback's, a CUDA error's) waits for the three streams before it
  // returns, so no copy of this call writes the caller's C or reads staging after
  // it, and the next call finds every slot free. (The success path, finish(), waits
  // for each copy itself.) Declared in this order, they drain downloads last.
  const DrainOnThrow drain_d2h(s.d2h.get()), drain_compute(s.compute.get()), drain_h2d(s.h2d.get());
  call.prime();
  const SlotRing c_slots = walk_stream_plan(plan, p.m, p.n, p.k, call);
  call.finish(c_slots);
  return call.timing(t0);
}

}  // namespace

struct StreamedGemm::State : Resources {};

StreamedGemm::StreamedGemm() : state_(std::make_unique<State>()) {}
StreamedGemm::~StreamedGemm() = default;

void StreamedGemm::reserve_staging(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Whole 256-byte blocks, as the layout carves them (stream_schedule.cpp).
  state_->staging.reserve<std::byte>((size_t(bytes) + 255) / 256 * 256);
}

int64_t StreamedGemm::staging_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return int64_t(state_->staging.capacity());
}

Timing StreamedGemm::run(const GemmProblem& p, const Settings& settings, const StreamPlan& plan,
                         const ChunkKernelChooser& kernels) {
  std::lock_guard<std::mutex> lock(mutex_);
  // The one switch from the tag to the element type.
  return visit_precision(p.precision, [&](auto zero) -> Timing {
    return run_call<decltype(zero)>(*state_, p, settings, plan, kernels);
  });
}

// The chunk products: the caller's algorithm settings, no split-K (chunks already give
// the device work, and split-K would need a workspace), and no kernel that needs a
// workspace for the chunk (the Hopper kernels' packing).
DispatchChunkKernels::DispatchChunkKernels(const Settings& settings, const DeviceProfile& device)
    : settings_(settings), device_(device) {
  settings_.max_splits = 1;
}

KernelChoice DispatchChunkKernels::choose(const GemmProblem& chunk) const {
  return choose_kernel(chunk, settings_, device_, false);
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
