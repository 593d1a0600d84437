// A CUDA handle over several devices (tmm_create_with_devices): its host calls cut C
// into the streamed path's tiles (plan/stream_plan.hpp's plan_shared_stream) and hand
// them out through one TileQueue (plan/tile_queue.hpp) to a lane per listed device, each
// lane a StreamedGemm of its own (streams, device buffer, pinned staging, packing
// threads) on a host thread of its own (core/lanes.hpp), so that a device that finishes
// early takes the next tile. Every lane prepares (all its allocations) before any writes
// C; a lane that fails cancels the queue, the others finish the tiles they hold, and the
// call returns once every lane is idle, with the first failure. Where the model says
// sharing does not pay (or the caller asks for the direct path, or the product is empty
// or only scales C) the first listed device runs the call alone, as a single-device
// handle would, on the first lane's engine.
//
// Every entry has an engine of its own, none shared with the process's single-device
// handles (docs/design/multi-gpu.md §5.2): a lane then holds only its own engine's lock,
// so two multi-device handles over the same devices cannot each hold one engine and wait
// for the other's, and a device listed twice is two engines that overlap.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/host_copy.hpp"
#include "core/lanes.hpp"
#include "core/shared_chunks.hpp"
#include "core/worker_pool.hpp"
#include "cuda/backend/cuda_backend.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_objects.hpp"
#include "cuda/runtime/host_memory.hpp"
#include "cuda/streamed/streamed_gemm.hpp"
#include "plan/stream_plan.hpp"
#include "plan/tile_queue.hpp"

namespace tiledmm {
namespace {

using Clock = std::chrono::steady_clock;

// The pinned memory a handle of several devices keeps for the chunks of op(A) its lanes
// share in a call (SharedChunks): a few row tiles of A, enough for lanes that walk their
// columns down side by side a few tiles apart; besides each entry's staging.
constexpr int64_t kSharedChunkBytes = int64_t(256) << 20;

// One listed device: what the planner needs of it and its engine.
struct Lane {
  int device = 0;
  DeviceProfile profile;
  std::shared_ptr<StreamedGemm> engine;
};

class MultiDeviceBackend final : public Backend {
 public:
  explicit MultiDeviceBackend(const std::vector<int>& devices) {
    lanes_.reserve(devices.size());
    for (const int device : devices) {
      check_context(device);
      const DeviceGuard guard(device);
      Lane lane;
      lane.device = device;
      lane.profile = read_profile(device);
      // The device may have been reset since a handle last set its kernels' attributes.
      forget_shared_memory_opt_ins(device);
      lane.engine = std::make_shared<StreamedGemm>();  // on `device`, current
      lanes_.push_back(std::move(lane));
    }
    first_ = make_cuda_backend_on(devices.front(), lanes_.front().engine);
    for (const Lane& lane : lanes_) infos_.push_back(read_device_info(lane.device));
    shares_.resize(lanes_.size());
    chunk_kernels_.reserve(lanes_.size());
  }

  ~MultiDeviceBackend() override {
    first_.reset();
    for (Lane& lane : lanes_) {
      try {
        const DeviceGuard guard(lane.device);
        lane.engine.reset();
      } catch (const Error&) {
        // No device can be made current: the context is gone, and its resources too.
      }
    }
  }

  BackendKind kind() const override { return BackendKind::Cuda; }
  void check_algorithm(Algorithm algorithm) const override { first_->check_algorithm(algorithm); }

  void gemm_host(const GemmProblem& p, const Settings& settings) override {
    if (p.batch > 1 && !is_empty(p)) {
      gemm_host_products(p, settings);
      return;
    }
    for (const Lane& lane : lanes_) check_context(lane.device);
    std::vector<StreamLane> budgets;
    if (!is_empty(p) && !is_scale_only(p) && settings.host_path != HostPath::Direct) {
      budgets.reserve(lanes_.size());
      for (const Lane& lane : lanes_) budgets.push_back(lane_budget(lane, p, settings));
    }
    const int threads = packing_thread_count(settings.host_threads);
    if (!budgets.empty()) {
      // TMM_HOST_PATH_STREAMED: every device, whatever the model says.
      const SharedStreamPlan shared = plan_shared_stream(p, budgets, threads, HostRates(),
                                                         settings.host_path == HostPath::Streamed);
      if (shared.lanes > 1 && !direct_is_faster(p, settings, budgets[0], shared)) {
        run_shared(p, settings, shared, threads);
        return;
      }
    }
    // The first device alone: the single-device handle's choice of path.
    first_->gemm_host(p, settings);
    last_ = first_->last_timing();
    shares_.assign(lanes_.size(), Timing{});
    for (Timing& share : shares_) share.devices = 0;  // the others computed nothing
    shares_[0] = last_;
    has_last_ = true;
  }

  void gemm_device(const GemmProblem&, const Settings&) override {
    not_one_device("device pointers");
  }
  void set_stream(void*) override { not_one_device("a stream"); }
  void* stream() const override { not_one_device("a stream"); }

  Timing last_timing() override {
    require(has_last_, Status::InvalidValue, "no sgemm or dgemm has succeeded on this handle yet");
    return last_;
  }
  Timing last_share(int index) override {
    (void)last_timing();
    return shares_.at(size_t(index));
  }

  void reserve_host_staging(int64_t bytes) override {
    for (Lane& lane : lanes_) {
      check_context(lane.device);
      const DeviceGuard guard(lane.device);
      lane.engine->reserve_staging(bytes);
    }
  }

  // Host calls return done: nothing of this handle is in flight between calls.
  void synchronize() override {
    for (const Lane& lane : lanes_) check_context(lane.device);
  }

  DeviceInfo device_info() const override { return infos_.front(); }
  int device() const override { return lanes_.front().device; }
  int device_count() const override { return int(lanes_.size()); }
  DeviceInfo device_info_at(int index) const override { return infos_.at(size_t(index)); }

 private:
  [[noreturn]] static void not_one_device(const char* what) {
    fail(Status::NotSupported, "a handle of several devices takes host pointers only (", what,
         " belongs to one device: use a handle per device)");
  }

  // What lane i may use: the budget option per device, or (the default) the device's free
  // memory shared evenly by the entries that list it (each entry's engine already holds
  // part of what would be free), and the pinned staging option per entry.
  StreamLane lane_budget(const Lane& lane, const GemmProblem& p, const Settings& settings) const {
    StreamLane out;
    out.staging_bytes = staging_budget(settings);
    out.flops_per_s = host_path_kernel_rate(lane.profile, p.precision);
    if (settings.device_budget > 0) {
      out.device_bytes = settings.device_budget;
      return out;
    }
    const DeviceGuard guard(lane.device);
    int entries = 0;
    int64_t held = 0;
    for (const Lane& other : lanes_) {
      if (other.device != lane.device) continue;
      ++entries;
      held += other.engine->device_bytes();
    }
    out.device_bytes = (host_path_device_budget(settings) + held) / entries;
    return out;
  }

  // AUTO: whether the first device's direct path (whole copies, one kernel), where it
  // fits, beats sharing (the model of plan/stream_plan.hpp for both).
  static bool direct_is_faster(const GemmProblem& p, const Settings& settings,
                               const StreamLane& first, const SharedStreamPlan& shared) {
    if (settings.host_path != HostPath::Auto || direct_bytes(p) > first.device_bytes) return false;
    return direct_seconds(p, first.flops_per_s, HostRates()) < shared.shared_seconds;
  }

  // The product over every lane, each on a host thread of its own.
  void run_shared(const GemmProblem& p, const Settings& settings, const SharedStreamPlan& shared,
                  int threads) {
    const int lanes = int(lanes_.size());
    const Clock::time_point t0 = Clock::now();
    const StreamPlan& plan = shared.plan;
    TileQueue queue(plan, lanes, shared.steal);
    std::vector<Settings> lane_settings(size_t(lanes), settings);
    chunk_kernels_.clear();
    for (int i = 0; i < lanes; ++i) {
      lane_settings[size_t(i)].host_threads = lane_threads(threads, lanes, i);
      chunk_kernels_.emplace_back(lane_settings[size_t(i)], lanes_[size_t(i)].profile);
    }
    std::unique_ptr<SharedChunks> shared_a = shared_chunks_of_a(p, plan);
    std::vector<Timing> times(static_cast<size_t>(lanes));
    std::vector<char> prepared(size_t(lanes), 0);
    auto prepare = [&](int i) {
      LaneOptions options;
      options.t0 = t0;
      options.shared_a = shared_a.get();
      // C's pages are faulted in once, by the first lane's threads.
      options.populate_threads = i == 0 ? std::min(4, threads / 4) : 0;
      lanes_[size_t(i)].engine->prepare(p, lane_settings[size_t(i)], plan,
                                        chunk_kernels_[size_t(i)], options);
      prepared[size_t(i)] = 1;
    };
    auto work = [&](int i) {
      LaneSource source(queue, i);
      times[size_t(i)] = lanes_[size_t(i)].engine->work(source);
    };
    auto end = [&](int i) noexcept {
      if (prepared[size_t(i)]) lanes_[size_t(i)].engine->end();
    };
    auto stop = [&]() noexcept { queue.cancel(); };
    LaneResults results;
    run_lanes(pool_, lanes, prepare, work, end, stop, results);
    if (results.first_failed >= 0) {
      const int lane = results.first_failed;
      try {
        std::rethrow_exception(results.errors[size_t(lane)]);
      } catch (const Error& e) {
        throw Error(e.status(), "device " + std::to_string(lanes_[size_t(lane)].device) +
                                    " (entry " + std::to_string(lane) + "): " + e.what());
      }
    }
    last_ = merge(times, t0);
    last_.host_threads = threads;
    shares_ = std::move(times);
    has_last_ = true;
  }

  // The board of chunks of op(A) the lanes share (each chunk packed once for the
  // plan's tiles_n column tiles that need it), in up to kSharedChunkBytes of pinned memory
  // the handle keeps; null where A needs no packing (pinned) or comes through callbacks,
  // where each chunk serves one column tile, where fewer than two chunks fit, or where the
  // pinned memory cannot be had (the lanes then pack their own, as without a board).
  std::unique_ptr<SharedChunks> shared_chunks_of_a(const GemmProblem& p, const StreamPlan& plan) {
    if (plan.tiles_n < 2 || p.a_io != nullptr) return nullptr;
    const int64_t size = int64_t(element_bytes(p.precision));
    const int64_t rows = stored_rows_a(p), cols = stored_cols_a(p);
    if (rows > 0 && is_pinned_range(p.a, size_t(((rows - 1) * p.lda + cols) * size)))
      return nullptr;
    const int64_t slot_bytes = plan.tile_m * plan.chunk_k * size;
    const int64_t all = plan.tiles_m * plan.chunks;  // every chunk of op(A)
    const int64_t slots = std::min(all, kSharedChunkBytes / std::max<int64_t>(1, slot_bytes));
    if (slots < 2) return nullptr;
    void* memory = nullptr;
    try {
      memory = shared_a_memory_.reserve<std::byte>(size_t(slots * slot_bytes));
    } catch (const Error& e) {
      if (e.status() != Status::OutOfMemory) throw;
      return nullptr;
    }
    return std::make_unique<SharedChunks>(memory, slot_bytes, int(slots), plan.tiles_n);
  }

  // The call's report from its lanes': what ran (the first lane that computed a tile),
  // the sums of the tiles, bytes and host times, the longest device span.
  static Timing merge(const std::vector<Timing>& times, Clock::time_point t0) {
    Timing t;
    const auto ran =
        std::find_if(times.begin(), times.end(), [](const Timing& lane) { return lane.tiles > 0; });
    if (ran != times.end()) {  // what ran: its kernel, mode, precision and cut
      t.kernel = ran->kernel;
      t.algorithm = ran->algorithm;
      t.tile_size = ran->tile_size;
      t.coarsening = ran->coarsening;
      t.math_mode = ran->math_mode;
      t.precision = ran->precision;
      t.k_chunks = ran->k_chunks;
    }
    t.devices = 0;
    for (const Timing& lane : times) {
      t.tiles += lane.tiles;
      t.devices += lane.tiles > 0 ? 1 : 0;
      t.host_bytes += lane.host_bytes;
      t.upload_bytes += lane.upload_bytes;
      t.download_bytes += lane.download_bytes;
      t.panel_uploads += lane.panel_uploads;
      t.pack_ms += lane.pack_ms;
      t.link_ms += lane.link_ms;
      t.compute_ms = std::max(t.compute_ms, lane.compute_ms);
    }
    t.host_path = HostPath::Streamed;
    t.start_ms = 0;
    t.end_ms = 0;
    t.total_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    return t;
  }

  // A strided batch of host products: one call per product, in order, as the single-device
  // handle runs them; a failure keeps the previous call's report. The device reports add
  // up the products' tiles, bytes and times.
  void gemm_host_products(const GemmProblem& p, const Settings& settings) {
    const Timing before = last_;
    const std::vector<Timing> before_shares = shares_;
    const bool before_has = has_last_;
    Timing sum;
    std::vector<Timing> share_sums(lanes_.size());
    for (int64_t b = 0; b < p.batch; ++b) {
      try {
        gemm_host(product_of(p, b), settings);
      } catch (...) {
        last_ = before;
        shares_ = before_shares;
        has_last_ = before_has;
        throw;
      }
      sum = add_product(sum, last_, false);
      for (size_t i = 0; i < lanes_.size(); ++i)
        share_sums[i] = add_product(share_sums[i], shares_[i], true);
    }
    sum.batch = p.batch;
    last_ = sum;
    shares_ = std::move(share_sums);
  }

  std::vector<Lane> lanes_;
  std::vector<DeviceInfo> infos_;
  std::unique_ptr<Backend> first_;  // the first device alone, on the first lane's engine
  std::vector<DispatchChunkKernels> chunk_kernels_;
  WorkerPool pool_;               // the lanes' threads
  PinnedBuffer shared_a_memory_;  // the shared chunks' slots (kSharedChunkBytes at most)
  Timing last_;
  std::vector<Timing> shares_;  // per lane, the last call's
  bool has_last_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_multi_device_backend(const std::vector<int>& devices) {
  const int count = cuda_device_count();
  require(count > 0, Status::NoDevice, "no usable CUDA device or driver");
  require(!devices.empty(), Status::InvalidValue, "a handle needs at least one device");
  for (const int device : devices) {
    require(device >= 0 && device < count, Status::NoDevice, "CUDA device ", device,
            " does not exist (", count, " device(s))");
  }
  return std::make_unique<MultiDeviceBackend>(devices);
}

}  // namespace tiledmm
