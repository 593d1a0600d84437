#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/host_copy.hpp"
#include "core/host_io.hpp"
#include "core/shared_chunks.hpp"
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
  CopySlot a_slot[kASlots], b_slot[2], c_up_strip[kCStrips];
  Event panel_consumed[2], first_product, last_epilogue;
  // Per C slot: its epilogue done, C's copy read by its last epilogue, its tile of C up
  // (the last strip's copy) and down (the last strip's copy).
  Event epilogue_done[kMaxCSlots], c_in_consumed[kMaxCSlots], c_up_done[kMaxCSlots],
      down_done[kMaxCSlots];
  Event strip_start[kCStrips], strip_done[kCStrips];  // per strip slot of C's downloads
  WorkerPool pool;                                    // the packing threads
};

template <class T>
T* at(T* base, int64_t offset) {
  return base != nullptr && offset >= 0 ? base + offset : nullptr;
}

// One product on the engine, as a pipeline of steps: carve() makes every allocation,
// prime() makes the events' first waits pass, walk_stream_units (stream_schedule.hpp)
// calls the steps of each column tile, group of row tiles and chunk of the units it is
// handed, in order (uploads, products, epilogues and downloads), and finish() waits for
// the rest.
// Over the element type T (float or double), so that the compiler scales every offset;
// the caller's matrices and scalars are read through the typed view v_.
template <class T>
class Call {
 public:
  Call(Resources& s, const GemmProblem& p, const Settings& settings, const StreamPlan& plan,
       const ChunkKernelChooser& kernels, Clock::time_point t0, SharedChunks* shared_a)
      : t0_(t0),
        shared_a_(shared_a),
        s_(s),
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
        c_slots_(int(plan.c_slots())),
        // Pinned, C needs no staging: a tile goes up and down whole, as one strip.
        strip_rows_(c_.pinned ? plan.tile_m : c_strip_rows(plan, int(sizeof(T)))),
        c_strip_(c_strip_rows(plan, int(sizeof(T))) * plan.tile_n),
        strips_(c_strips(plan, int(sizeof(T)))),
        up_strips_(strips_),
        h2d_(s.h2d.get()),
        comp_(s.compute.get()),
        d2h_(s.d2h.get()) {
    for (int64_t& key : shared_key_) key = -1;
  }

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
    }
    for (int i = 0; i < kCStrips; ++i) {
      up_st_[i] = at(staging, l.c_up_stage[i]);
      down_st_[i] = at(staging, l.c_down_stage[i]);
    }
    // A kernel choice that refuses (an algorithm or tile this device lacks) refuses here,
    // before anything is enqueued: the first chunk product's choice, made now. (Every
    // chunk asks for the same settings; only the last ones are smaller.)
    (void)kernels_.choose(chunk_problem(std::min(plan_.tile_m, p_.m), std::min(plan_.tile_n, p_.n),
                                        std::min(plan_.chunk_k, p_.k), true, a_dev_[0], panels_[0],
                                        acc_[0]));
  }

  // C's pages faulted in ahead of the unpacking (a fresh result array's first stores
  // would fault them a page at a time), while the device computes: its rows only, by
  // default on a quarter as many threads again as pack (at most four; none below four
  // packing threads), as the header says of TMM_OPTION_HOST_THREADS.
  void populate(int threads) {
    if (threads < 0) threads = std::min(4, threads_ / 4);
    if (!c_.pinned && c_.io == nullptr && threads > 0) {
      const int64_t size = int64_t(sizeof(T));
      populate_.emplace(v_.c, p_.m, p_.n * size, v_.ldc * size, threads);
    }
  }

  const GemmProblem& problem() const { return p_; }
  const StreamPlan& plan() const { return plan_; }

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
    for (CopySlot& slot : s_.c_up_strip) slot.used = false;
    for (int i = 0; i < c_slots_; ++i) {
      record(s_.c_in_consumed[i], comp_);
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
    ++panel_uploads_;
    if (plan_.b_resident) wait(h2d_, s_.panel_consumed[col.panel]);
  }

  // The group's C slots: every strip of the tile that last used each is enqueued
  // (pumping, and waiting for the oldest strip's download when no strip slot is free),
  // so that down_done[cs] is recorded after its last copy; then C's tile goes up (beta
  // != 0), and the products wait for that download.
  void begin_group(const StreamColumn& col, const StreamGroup& group) {
    for (int i = 0; i < group.size(); ++i) {
      const StreamRowTile& tile = group.tiles[i];
      const int cs = tile.c_slot;
      while (down_.waiting(cs)) pump_waiting();
      if (reads_c_) upload_c(col, tile);
      wait(comp_, s_.down_done[cs]);  // acc[cs] and cin[cs] were downloaded from
    }
  }

  // Uploads the chunk of op(B) for the chunk's rows, unless it is on the device
  // already. h2d runs in order: B's chunk goes up before A's chunks that meet it.
  void begin_chunk(const StreamColumn& col, const StreamGroup&, const StreamChunk& chunk) {
    if (chunk.b_slot < 0) return;
    CopySlot& slot = s_.b_slot[chunk.b_slot];
    claim(slot);
    // The device slot's last reader is done (a no-op the first time).
    wait(h2d_, slot.consumed);
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
    release_shared(as);
    // The device slot's last reader is done (a no-op the first time).
    wait(h2d_, slot.consumed);
    // A stored k x m (transposed): rows k0.., columns m0..; else m x k: rows m0.., columns k0..
    const int64_t offset = p_.trans_a ? chunk.k0 * p_.lda + tile.m0 : tile.m0 * p_.lda + chunk.k0;
    const int64_t rows = p_.trans_a ? chunk.depth : tile.rows;
    const int64_t cols = p_.trans_a ? tile.rows : chunk.depth;
    // Through the call's shared chunks where it has them (packed once for every lane).
    if (!upload_shared(slot, as, tile.index * plan_.chunks + chunk.index, offset, rows, cols))
      upload(slot, a_dev_[as], sizes_.a_ld, a_, offset, a_st_[as], a_chunk_, rows, cols);
    wait(comp_, slot.end);  // this chunk of A, and (same stream, earlier) of B
    if (first_product_) {
      record(s_.first_product, comp_);
      start_ms_ = ms_since(t0_);
    }
    first_product_ = false;
    const GemmProblem q = chunk_problem(tile.rows, col.cols, chunk.depth, chunk.index == 0,
                                        a_dev_[as], b_on_device(chunk), acc_[tile.c_slot]);
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

  // The group's epilogues (C = alpha * acc + beta * C); each tile's strips join the
  // queue of downloads, which go down as strip slots free up (pump).
  void end_group(const StreamColumn& col, const StreamGroup& group) {
    for (int i = 0; i < group.size(); ++i) {
      const StreamRowTile& tile = group.tiles[i];
      const int64_t mm = tile.rows, nn = col.cols;
      const int64_t c_ld = sizes_.c_ld;
      const int cs = tile.c_slot;
      if (reads_c_) wait(comp_, s_.c_up_done[cs]);
      T* out = reads_c_ ? cin_[cs] : acc_[cs];
      launch_epilogue(mm, nn, v_.alpha, acc_[cs], c_ld, v_.beta, cin_[cs], c_ld, out, c_ld, comp_);
      if (reads_c_) record(s_.c_in_consumed[cs], comp_);
      record(s_.epilogue_done[cs], comp_);
      down_.queue(QueuedTile{cs, tile.m0, col.n0, mm, nn, 0});
    }
    tiles_done_ += group.size();
    pump();
  }

  void end_column(const StreamColumn& col) {
    if (plan_.b_resident) record(s_.panel_consumed[col.panel], comp_);
  }

  // The success path's end: every strip of C downloaded and unpacked (in the order they
  // were queued), every upload waited for, then the compute stream.
  void finish() {
    while (down_.count > 0 || down_.tiles > 0) pump_waiting();
    for (int as = 0; as < kASlots; ++as) {
      claim(s_.a_slot[as]);
      release_shared(as);
    }
    for (CopySlot& slot : s_.b_slot) claim(slot);
    for (CopySlot& slot : s_.c_up_strip) claim(slot);
    record(s_.last_epilogue, comp_);
    check_cuda(cudaStreamSynchronize(comp_), "streamed sgemm");
    if (!first_product_) end_ms_ = ms_since(t0_);
  }

  // What ran. A lane handed no tile never recorded first_product (the event may hold
  // an earlier call's moment, or none): its compute time is 0, and its moments 0 and 0.
  Timing timing() {
    Timing t = t_;
    t.host_path = HostPath::Streamed;
    t.precision = p_.precision;
    t.tiles = tiles_done_;
    t.k_chunks = plan_.chunks;
    t.pack_ms = pack_ms_;
    t.link_ms = link_ms_;
    t.compute_ms = first_product_ ? 0.0 : elapsed(s_.first_product, s_.last_epilogue);
    t.splits = 1;
    t.host_threads = first_product_ ? 0 : threads_;
    t.host_bytes = host_bytes_;
    t.upload_bytes = upload_bytes_;
    t.download_bytes = download_bytes_;
    t.panel_uploads = first_product_ ? 0 : panel_uploads_;
    t.start_ms = start_ms_;
    t.end_ms = end_ms_;
    t.devices = first_product_ ? 0 : 1;
    t.total_ms = ms_since(t0_);
    return t;
  }

 private:
  // One strip of a finished tile's download: rows [r0, r0 + rows) of the tile in C
  // slot cs, whose row 0 is row m0 of C and whose columns are [n0, n0 + cols).
  struct Strip {
    int cs;
    int64_t m0, n0, r0, rows, cols;
    bool last;  // the tile's last strip: down_done[cs] is recorded after its copy
  };
  // A finished tile whose strips are not all enqueued yet: its rows from `next` on.
  struct QueuedTile {
    int cs;
    int64_t m0, n0, rows, cols, next;
  };
  // C's downloads, strip by strip. Finished tiles wait in a ring (in the order they
  // finished; at most one per C slot, so it never grows and a call allocates nothing
  // after its first write to C) until their strips get free strip slots; the enqueued
  // strips hold strip slots oldest, oldest + 1, ... (count of them, modulo strips_), and
  // are unpacked in that order, which frees their slots.
  struct DownStrips {
    QueuedTile tile[kMaxCSlots];
    int first = 0, tiles = 0;  // the ring of queued tiles
    Strip slot[kCStrips];
    int oldest = 0, count = 0;
    void queue(const QueuedTile& t) { tile[(first + tiles++) % kMaxCSlots] = t; }
    // True while C slot cs's tile has strips not yet enqueued.
    bool waiting(int cs) const {
      for (int i = 0; i < tiles; ++i)
        if (tile[(first + i) % kMaxCSlots].cs == cs) return true;
      return false;
    }
  };

  // A chunk product on the device: rows x cols of C's accumulator `c` += (or =, for k's
  // first chunk) a chunk of op(A) times one of op(B).
  GemmProblem chunk_problem(int64_t rows, int64_t cols, int64_t depth, bool first, const T* a,
                            const T* b, T* c) const {
    GemmProblem q = p_;
    q.m = rows;
    q.n = cols;
    q.k = depth;
    q.alpha = 1.0;
    q.beta = first ? 0.0 : 1.0;
    q.a = a;
    q.lda = sizes_.a_ld;
    q.b = b;
    q.ldb = sizes_.b_ld;
    q.c = c;
    q.ldc = sizes_.c_ld;
    return q;
  }

  // Where op(B)'s chunk is on the device (leading dimension b_ld).
  T* b_on_device(const StreamChunk& chunk) const {
    T* buffer = panels_[chunk.b_buffer];
    return p_.trans_b ? buffer + chunk.b_row : buffer + chunk.b_row * sizes_.b_ld;
  }

  // Waits until staging slot `slot` is free (its last copy is done), adding that
  // copy's time to the link's. While it is not, the host moves C's downloads on (pump):
  // unpacking is work it would otherwise do later, when a C slot is taken again or
  // after the device has finished, and a strip slot it frees takes the next strip at
  // once. It polls while strips are in flight (as cudaEventSynchronize may spin).
  void claim(CopySlot& slot) {
    if (!slot.used) return;
    while (!reached(slot.end) && (pump() || down_.count > 0)) {
    }
    sync(slot.end);
    link_ms_ += elapsed(slot.start, slot.end);
    slot.used = false;
  }

  // rows x cols of the operand stored at (src, src_ld) up to (dst, dst_ld), through
  // `stage` (packed densely by the packing threads) unless the source is pinned. The
  // caller has claimed `slot` and made h2d wait for the device buffer's last reader.
  void upload(CopySlot& slot, T* dst, int64_t dst_ld, const Operand<T>& from, int64_t offset,
              T* stage, int64_t slot_elements, int64_t rows, int64_t cols) {
    if (from.pinned) {
      copy_up(slot, dst, dst_ld, from.ptr + offset, from.ld, rows, cols);
    } else {
      pack(from, offset, stage, slot_elements, rows, cols);
      copy_up(slot, dst, dst_ld, stage, cols, rows, cols);
    }
  }

  // rows x cols of a pageable operand at `offset`, packed densely into `stage` by the
  // packing threads.
  void pack(const Operand<T>& from, int64_t offset, T* stage, int64_t slot_elements, int64_t rows,
            int64_t cols) {
    // Debug: NaN in the whole slot first, so a packing step that misses part of the
    // block, or a copy that reads the slot before or after it, shows in C.
    if (settings_.poison_staging) poison(stage, slot_elements);
    const auto u0 = Clock::now();
    if (from.io) {
      io_block(s_.pool, threads_, false, *from.io, offset, from.ld, stage, rows, cols);
    } else {
      copy_block(s_.pool, threads_, stage, cols, from.ptr + offset, from.ld, rows, cols);
    }
    pack_ms_ += ms_since(u0);
    host_bytes_ += rows * cols * int64_t(sizeof(T));
  }

  // rows x cols from pinned (src, src_ld) up to (dst, dst_ld), between the slot's events.
  void copy_up(CopySlot& slot, T* dst, int64_t dst_ld, const T* src, int64_t src_ld, int64_t rows,
               int64_t cols) {
    upload_bytes_ += rows * cols * int64_t(sizeof(T));
    record(slot.start, h2d_);
    copy_2d(dst, dst_ld, src, src_ld, rows, cols, cudaMemcpyHostToDevice, h2d_);
    record(slot.end, h2d_);
    slot.used = true;
  }

  // A lane of a call over several devices, with the call's board of shared chunks
  // (LaneOptions::shared_a) and A in pageable memory: chunk `key` of op(A) (at `offset`,
  // rows x cols) into A's slot `as` from the board, packed there by the first lane to
  // need it (by this one, if so); false where the board has no slot for it (the caller
  // packs it into its own staging).
  bool upload_shared(CopySlot& slot, int as, int64_t key, int64_t offset, int64_t rows,
                     int64_t cols) {
    if (shared_a_ == nullptr || a_.pinned || a_.io != nullptr) return false;
    const auto w0 = Clock::now();
    const SharedChunks::Lease lease = shared_a_->take(key);
    pack_ms_ += ms_since(w0);  // a wait for another lane's packing is packing time too
    if (lease.data == nullptr) return false;
    T* packed = static_cast<T*>(lease.data);
    if (lease.pack) {
      try {
        pack(a_, offset, packed, a_chunk_, rows, cols);
      } catch (...) {
        shared_a_->abandon(key);
        throw;
      }
      shared_a_->packed(key);
    }
    // From here the use is this slot's: released once its upload is done (claim).
    shared_key_[as] = key;
    copy_up(slot, a_dev_[as], sizes_.a_ld, packed, cols, rows, cols);
    return true;
  }

  // A's slot `as` was claimed (its last upload is done): the shared chunk it read, if
  // any, is one use lighter.
  void release_shared(int as) {
    if (shared_key_[as] < 0) return;
    shared_a_->release(shared_key_[as]);
    shared_key_[as] = -1;
  }

  // C's tile goes up into cin[cs] strip by strip through the ring of up strips, after
  // the epilogue that last read cin[cs] and the download that last read it (begin_group
  // enqueued all of it); the epilogue waits for c_up_done[cs], after the last strip.
  void upload_c(const StreamColumn& col, const StreamRowTile& tile) {
    const int cs = tile.c_slot;
    wait(h2d_, s_.c_in_consumed[cs]);
    wait(h2d_, s_.down_done[cs]);
    for (int64_t r0 = 0; r0 < tile.rows; r0 += strip_rows_) {
      const int j = up_strips_.take();
      CopySlot& slot = s_.c_up_strip[j];
      claim(slot);
      upload(slot, cin_[cs] + r0 * sizes_.c_ld, sizes_.c_ld, c_, (tile.m0 + r0) * p_.ldc + col.n0,
             up_st_[j], c_strip_, std::min(strip_rows_, tile.rows - r0), col.cols);
    }
    record(s_.c_up_done[cs], h2d_);
  }

  // Moves C's downloads on without waiting: unpacks the oldest strip if its download is
  // done, and enqueues queued strips into the free strip slots. True when it did either.
  bool pump() {
    const bool unpacked = down_.count > 0 && unpack_oldest(false);
    bool enqueued = false;
    while (down_.tiles > 0 && down_.count < strips_) {
      enqueue_strip();
      enqueued = true;
    }
    return unpacked || enqueued;
  }

  // Moves C's downloads on by one strip, waiting if it must: enqueues the oldest queued
  // strip if a strip slot is free, else waits for the oldest enqueued strip and unpacks
  // it. The wait ends: every strip belongs to a tile whose epilogue (and all the device
  // work before it) is already enqueued.
  void pump_waiting() {
    if (down_.tiles > 0 && down_.count < strips_) {
      enqueue_strip();
    } else {
      unpack_oldest(true);
    }
  }

  // The oldest queued strip goes down into the next strip slot (free: its last strip
  // is unpacked), after its tile's epilogue; after a tile's last strip, down_done[cs]
  // says its device slot may be written again.
  void enqueue_strip() {
    QueuedTile& tile = down_.tile[down_.first];
    const int64_t rows = std::min(strip_rows_, tile.rows - tile.next);
    const Strip strip{
        tile.cs, tile.m0, tile.n0, tile.next, rows, tile.cols, tile.next + rows == tile.rows};
    tile.next += rows;
    if (strip.last) {
      down_.first = (down_.first + 1) % kMaxCSlots;
      --down_.tiles;
    }
    const int j = (down_.oldest + down_.count) % strips_;
    down_.slot[j] = strip;
    ++down_.count;
    const int64_t c_ld = sizes_.c_ld;
    const T* from = (reads_c_ ? cin_[strip.cs] : acc_[strip.cs]) + strip.r0 * c_ld;
    // The tile's epilogue: its C slot is taken again only once all its strips are
    // enqueued (begin_group), so this record is this tile's.
    wait(d2h_, s_.epilogue_done[strip.cs]);
    record(s_.strip_start[j], d2h_);
    if (c_.pinned) {  // straight into the caller's C, m x n part only
      copy_2d(v_.c + (strip.m0 + strip.r0) * v_.ldc + strip.n0, v_.ldc, from, c_ld, strip.rows,
              strip.cols, cudaMemcpyDeviceToHost, d2h_);
    } else {
      if (settings_.poison_staging) poison(down_st_[j], c_strip_);  // its last unpack is done
      copy_2d(down_st_[j], strip.cols, from, c_ld, strip.rows, strip.cols, cudaMemcpyDeviceToHost,
              d2h_);
    }
    record(s_.strip_done[j], d2h_);
    download_bytes_ += strip.rows * strip.cols * int64_t(sizeof(T));
    if (strip.last) record(s_.down_done[strip.cs], d2h_);
  }

  // Unpacks the oldest enqueued strip into the caller's C once its download is done
  // (waiting for it when `wait_for_it`), adding the copy's time to the link's, and
  // frees its strip slot; false when it is not done. Nothing to copy when C is pinned:
  // the download wrote it.
  bool unpack_oldest(bool wait_for_it) {
    const int j = down_.oldest;
    if (wait_for_it) {
      sync(s_.strip_done[j]);
    } else if (!reached(s_.strip_done[j])) {
      return false;
    }
    link_ms_ += elapsed(s_.strip_start[j], s_.strip_done[j]);
    const Strip& strip = down_.slot[j];
    if (!c_.pinned) {
      const auto u0 = Clock::now();
      const int64_t offset = (strip.m0 + strip.r0) * p_.ldc + strip.n0;
      if (c_.io) {
        io_block(s_.pool, threads_, true, *c_.io, offset, p_.ldc, down_st_[j], strip.rows,
                 strip.cols);
      } else {
        copy_block(s_.pool, threads_, v_.c + offset, v_.ldc, down_st_[j], strip.cols, strip.rows,
                   strip.cols);
      }
      pack_ms_ += ms_since(u0);
      host_bytes_ += strip.rows * strip.cols * int64_t(sizeof(T));
    }
    down_.oldest = (j + 1) % strips_;
    --down_.count;
    return true;
  }

  const Clock::time_point t0_;    // start_ms, end_ms and total_ms count from it
  SharedChunks* const shared_a_;  // the call's shared chunks of op(A), or null
  int64_t shared_key_[kASlots];   // the shared chunk each A slot read last, or -1
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
  const int64_t a_chunk_, b_chunk_;  // staging slots' elements (dense)
  const int c_slots_;
  const int64_t strip_rows_;  // rows of a tile in one strip of C's copies
  const int64_t c_strip_;     // a staging strip's elements (dense)
  const int strips_;          // strip slots each way (stream_plan.hpp's c_strips)
  SlotRing up_strips_;        // the up strips, taken in turn
  const cudaStream_t h2d_, comp_, d2h_;

  // Carved by carve(): device slots, then staging slots (nullptr: not needed).
  T* a_dev_[kASlots];
  T* acc_[kMaxCSlots];
  T* cin_[kMaxCSlots];
  T* panels_[2];
  T* a_st_[kASlots];
  T* b_st_[2];
  T* up_st_[kCStrips];
  T* down_st_[kCStrips];

  DownStrips down_;
  std::optional<BackgroundPopulate> populate_;  // joined when the call ends
  Timing t_;                                    // what ran, filled by the first product
  double pack_ms_ = 0, link_ms_ = 0;
  double start_ms_ = 0, end_ms_ = 0;
  int64_t tiles_done_ = 0, panel_uploads_ = 0;
  int64_t host_bytes_ = 0, upload_bytes_ = 0, download_bytes_ = 0;
  bool first_product_ = true;
};

}  // namespace

// The engine's resources and the call that holds them between prepare() and end().
struct StreamedGemm::State : Resources {
  std::variant<std::monostate, Call<float>, Call<double>> call;
  int populate_threads = -1;
};

StreamedGemm::StreamedGemm() : state_(std::make_unique<State>()) {
  check_cuda(cudaGetDevice(&device_), "cudaGetDevice");
}
StreamedGemm::~StreamedGemm() = default;

void StreamedGemm::reserve_staging(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  const DeviceGuard guard(device_);
  // Whole 256-byte blocks, as the layout carves them (stream_schedule.cpp).
  state_->staging.reserve<std::byte>((size_t(bytes) + 255) / 256 * 256);
}

int64_t StreamedGemm::staging_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return int64_t(state_->staging.capacity());
}

int64_t StreamedGemm::device_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return int64_t(state_->device.capacity());
}

void StreamedGemm::prepare(const GemmProblem& p, const Settings& settings, const StreamPlan& plan,
                           const ChunkKernelChooser& kernels, const LaneOptions& options) {
  std::unique_lock<std::mutex> lock(mutex_);
  const Clock::time_point t0 = options.t0 == Clock::time_point{} ? Clock::now() : options.t0;
  try {
    const DeviceGuard guard(device_);
    const RelaxedCaptureMode relaxed;  // allocations and waits while others capture
    // The one switch from the tag to the element type.
    visit_precision(p.precision, [&](auto zero) {
      using T = decltype(zero);
      state_->call.emplace<Call<T>>(*state_, p, settings, plan, kernels, t0, options.shared_a)
          .carve();
    });
  } catch (...) {
    state_->call.emplace<std::monostate>();
    throw;
  }
  state_->populate_threads = options.populate_threads;
  held_ = std::move(lock);
}

Timing StreamedGemm::work(UnitSource& source) {
  const DeviceGuard guard(device_);
  // Its waits (and the drains below) on the engine's own streams, whichever thread runs
  // it (a lane's), may go on while another stream captures a graph.
  const RelaxedCaptureMode relaxed;
  return std::visit(
      [&](auto& call) -> Timing {
        if constexpr (std::is_same_v<std::decay_t<decltype(call)>, std::monostate>) {
          fail(Status::Internal, "the streamed engine's work() ran without a prepared call");
        } else {
          const GemmProblem& p = call.problem();
          // From the first enqueue on, every exit leaves none of this call's work in
          // flight: a failure (a callback's, a CUDA error's) waits for the three streams
          // before it returns, so no copy of this call writes the caller's C or reads
          // staging after it, and the next call finds every slot free. (The success path,
          // finish(), waits for each copy itself.) Declared in this order, they drain
          // downloads last.
          const DrainOnThrow drain_d2h(state_->d2h.get()), drain_compute(state_->compute.get()),
              drain_h2d(state_->h2d.get());
          call.populate(state_->populate_threads);
          call.prime();
          walk_stream_units(call.plan(), p.m, p.n, p.k, source, call);
          call.finish();
          return call.timing();
        }
      },
      state_->call);
}

void StreamedGemm::end() noexcept {
  state_->call.emplace<std::monostate>();  // joins the call's page-faulting threads
  // Moved out while the mutex is still held: the next prepare() assigns held_ as soon as
  // it has the mutex, so nothing here may touch held_ after the unlock.
  std::unique_lock<std::mutex> lock = std::move(held_);
}

Timing StreamedGemm::run(const GemmProblem& p, const Settings& settings, const StreamPlan& plan,
                         const ChunkKernelChooser& kernels) {
  prepare(p, settings, plan, kernels);
  struct End {
    StreamedGemm& engine;
    ~End() { engine.end(); }
  } end{*this};
  WholePlanSource source(plan);
  return work(source);
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
