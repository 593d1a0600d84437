// The streamed host path: a product on host memory cut into tiles (stream_plan.hpp)
// that flow through one device, copies overlapped with compute, so that any
// product whose matrices fit in host memory runs, whatever the device has.
//
// Per step the host packs the next chunk of op(A) (or op(B), or a tile of C) from
// the caller's memory into pinned staging with the engine's packing threads
// (host_copy.hpp), in the layout the operand is stored in (so each row is one copy,
// whatever the transposes and leading dimensions), while the device uploads the
// previous chunk on one stream and multiplies the one before on another; finished
// tiles of C come back on a third stream and are unpacked into the caller's C, m x n
// part only. An operand the caller already pinned (cudaHostAlloc, cudaHostRegister)
// over its whole range skips staging: the DMA engines read or write it in place.
// kASlots slots for chunks of A, two for chunks of B, group + 1 for tiles of C
// (stream_plan.hpp), ordered by events; the host waits only for the copy that last
// used the staging slot it is about to refill. Every allocation happens before the
// first write to C. The buffers' layout and the order of the pieces, with the slot
// each takes, are host logic in plan/stream_schedule.hpp; the engine's steps enqueue
// them (streamed_gemm.cu).
//
// One engine per device and process (shared_streamed_gemm): every handle on that
// device shares its pinned staging, device buffers and packing threads, so many
// handles (a handle per thread, several ranks through the BLAS front end) do not
// multiply them. Its products run one at a time: the host's memory bus and the link,
// not the GPU, bound this path, so two at once would only split them. A handle over
// several devices has an engine of its own per device it lists (multi_device_backend),
// each a "lane" that walks the units of a TileQueue (plan/tile_queue.hpp) shared with
// the others: prepare() on every lane first (every allocation), then work(), then end().
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "core/device_profile.hpp"
#include "core/gemm_problem.hpp"
#include "core/settings.hpp"
#include "core/shared_chunks.hpp"
#include "core/worker_pool.hpp"
#include "cuda/launch/dispatch.hpp"
#include "plan/stream_plan.hpp"
#include "plan/stream_schedule.hpp"

namespace tiledmm {

// The kernel of each chunk product (a chunk of op(A) times one of op(B), into a tile's
// accumulator: device pointers, alpha 1, beta 0 or 1). The engine asks once per
// product, in order, and launches the answer without a workspace: a chooser returns no
// row that needs one. The caller passes it in, so the engine knows no policy of its own.
class ChunkKernelChooser {
 public:
  virtual ~ChunkKernelChooser() = default;
  virtual KernelChoice choose(const GemmProblem& chunk) const = 0;
};

// Dispatch's choice (choose_kernel) for the chunks, with the caller's settings.
class DispatchChunkKernels final : public ChunkKernelChooser {
 public:
  DispatchChunkKernels(const Settings& settings, const DeviceProfile& device);
  KernelChoice choose(const GemmProblem& chunk) const override;

 private:
  Settings settings_;
  DeviceProfile device_;
};

// How one lane's product runs beside the others (StreamedGemm::prepare).
struct LaneOptions {
  // Threads that fault C's pages in ahead of the unpacking: -1, as a product alone does
  // (a quarter of the packing threads, at most four); 0, none (another lane does it).
  int populate_threads = -1;
  // The moment Timing's start_ms and end_ms count from (the multi-device call's start,
  // so that lanes on different devices compare); {}: when prepare() took the engine.
  std::chrono::steady_clock::time_point t0{};
  // The call's board of chunks of op(A) packed once for every lane (a multi-device call,
  // A in pageable memory): a chunk another lane packed is uploaded from there; null: each
  // lane packs its own. It must outlive end().
  SharedChunks* shared_a = nullptr;
};

class StreamedGemm {
 public:
  StreamedGemm();  // on the device current at construction: its streams and events
  ~StreamedGemm();
  StreamedGemm(const StreamedGemm&) = delete;
  StreamedGemm& operator=(const StreamedGemm&) = delete;

  // Runs `p` (host pointers; a call that reads A and B) as `plan` cuts it, each chunk
  // product with the kernel `kernels` chooses: prepare, work over every tile in the plan's
  // order, end. Throws Error(OutOfMemory) before writing C if a buffer cannot be had; a later
  // failure (a CUDA error, OUT_OF_MEMORY from the runtime, a caller's function) may leave tiles
  // of C written (documented in the header). Whichever way it returns, none of its copies or
  // kernels is still in flight: a failure waits for the engine's three streams first.
  // Thread-safe: products run one at a time.
  Timing run(const GemmProblem& p, const Settings& settings, const StreamPlan& plan,
             const ChunkKernelChooser& kernels);

  // One lane of a product that several engines share, in three calls from one thread.
  // prepare() takes the engine (waiting while another product holds it) and makes every
  // allocation; it enqueues nothing and writes nothing of C. If it throws, the engine is
  // free again; else it stays taken until end(). `p`, `settings`, `plan` and `kernels`
  // must live until end().
  void prepare(const GemmProblem& p, const Settings& settings, const StreamPlan& plan,
               const ChunkKernelChooser& kernels, const LaneOptions& options = {});
  // Computes the units `source` hands out (until it has none) and waits for them: every
  // tile it was handed is final in C on return. On a throw, none of this lane's work is
  // in flight (tiles it was handed may be partly written: each element old or final).
  // The Timing's tiles are the tiles it computed; a lane handed no unit reports zeros and
  // kernel "none". Once per prepare().
  Timing work(UnitSource& source);
  // Drops the call (joins its page-faulting threads) and frees the engine: always after a
  // prepare() that succeeded, on the thread that called it, whether work() ran or threw.
  void end() noexcept;

  // Grows the pinned staging to at least `bytes` now (cudaHostAlloc is slow: the
  // first product need not pay for it). Thread-safe.
  void reserve_staging(int64_t bytes);
  int64_t staging_bytes();
  // The device memory it holds now (grow-only, kept between products). Thread-safe.
  int64_t device_bytes();

 private:
  struct State;
  int device_;
  std::mutex mutex_;                   // one product (or reservation) at a time
  std::unique_lock<std::mutex> held_;  // from prepare() to end(): the preparing thread's
  std::unique_ptr<State> state_;
};

// The engine of `device` (current), shared by every holder of the pointer; made on
// first use, freed with its last holder.
std::shared_ptr<StreamedGemm> shared_streamed_gemm(int device);

}  // namespace tiledmm
