// The CUDA backend: one device, a stream, CUDA events for timing, and the
// grow-only device buffers that the host API copies through.
//
// Host API: A, B (and C when beta != 0) are copied into dense device buffers with
// 2D copies (so leading dimensions cost no device memory), the kernel runs, and C
// is copied back with a 2D copy that never writes the caller's padding. All
// allocation happens before the first copy, so a failure leaves C untouched.
//
// Device API: the kernel is enqueued on the handle's stream with two events around
// it; its time is read, waiting if needed, only when the caller asks for it.
//
// The handle's one device workspace (split-K partial sums, the Hopper kernels'
// packed operands) is ordered across streams: every call that uses it records an
// event after its last use, and the next call waits for that event on its own
// stream before its first use (OrderedWorkspace). So a handle whose stream changes
// between calls (tmm_set_stream) never lets two products share the workspace at
// once, whatever either stream still has queued; growing it waits for the last
// user on the host first. The warm path allocates nothing: one event record and
// one stream wait per call that needs a workspace.
//
// CUDA graphs: a device call on a stream that is being captured enqueues only its
// kernels (no allocation, event or wait; no timing events), with no workspace but one
// the caller gave (tmm_set_workspace), and the graph replays them with the pointers of
// the call. A host call on a capturing
// stream is refused before it does anything (it waits for its copies). The calls
// that allocate or wait on the host run in relaxed capture mode (RelaxedCaptureMode),
// so a capture on another stream, by any thread, neither fails them nor is spoiled.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/host_copy.hpp"
#include "core/host_io.hpp"
#include "cuda/backend/cuda_backend.hpp"
#include "cuda/kernels/kernels.hpp"
#include "cuda/launch/dispatch.hpp"
#include "cuda/runtime/cuda_objects.hpp"
#include "cuda/runtime/device_buffer.hpp"
#include "cuda/runtime/host_memory.hpp"
#include "cuda/streamed/streamed_gemm.hpp"
#include "plan/measured_rates.hpp"

namespace tiledmm {
namespace {

// The four moments of one call: start, inputs uploaded, computed, result downloaded.
struct EventSet {
  Event start, uploaded, computed, stop;
};

// Everything the backend owns on its device. Built and destroyed with that device
// current, under a DeviceGuard.
// A device buffer shared by the calls of one handle, whichever stream each call
// is enqueued on. acquire() orders the caller's stream after the buffer's last
// user; release() marks the end of this call's use on that stream.
class OrderedWorkspace {
 public:
  // The caller's memory instead of a buffer of its own (tmm_set_workspace): `bytes` at
  // `memory`, never grown; nullptr: none given. The order of uses stays across changes
  // (the next use of any memory given waits for the last use of the one before, which
  // the new one may overlap).
  void give(void* memory, size_t bytes) {
    given_ = memory;
    given_bytes_ = memory ? bytes : 0;
  }
  bool given() const { return given_ != nullptr; }
  size_t given_bytes() const { return given_bytes_; }
  const void* given_memory() const { return given_; }

  // At least `bytes`, usable by work enqueued on `stream` from now on. Captured (the
  // stream captures a graph): the caller's memory alone, with no wait (an event
  // recorded outside the capture cannot be waited for in it); the caller orders the
  // graph's replays.
  void* acquire(size_t bytes, cudaStream_t stream, bool captured) {
    if (given_ != nullptr) {
      require(bytes <= given_bytes_, Status::OutOfMemory, "the workspace given to the handle (",
              uint64_t(given_bytes_), " bytes, tmm_set_workspace) is smaller than the ",
              uint64_t(bytes), " bytes the kernel needs");
      if (used_ && !captured) {
        check_cuda(cudaStreamWaitEvent(stream, last_use_.get(), 0), "cudaStreamWaitEvent");
      }
      return given_;
    }
    require(!captured, Status::Internal, "a captured call asked for the handle's own workspace");
    if (used_) {
      if (bytes > buffer_.capacity()) {
        // Growing frees the old buffer: its last user must be done with it.
        const RelaxedCaptureMode relaxed;
        check_cuda(cudaEventSynchronize(last_use_.get()), "sgemm workspace");
      } else {
        // Always waited for, even on the same stream: a stream handle can be
        // destroyed and its value handed out again for a new stream.
        check_cuda(cudaStreamWaitEvent(stream, last_use_.get(), 0), "cudaStreamWaitEvent");
      }
    }
    return buffer_.reserve<std::byte>(bytes);
  }
  // After the last work using the buffer was enqueued on `stream` (or an attempt
  // to enqueue it failed: what was enqueued before the failure still runs). A
  // record that fails leaves the context broken, and every later call fails.
  void release(cudaStream_t stream, bool captured) noexcept {
    if (captured) return;  // replays are the caller's to order
    if (cudaEventRecord(last_use_.get(), stream) == cudaSuccess) used_ = true;
  }
  // Waits on the host until the last user is done (before the buffer is freed).
  void drain() noexcept {
    const RelaxedCaptureMode relaxed;
    if (used_) cudaEventSynchronize(last_use_.get());
  }

 private:
  DeviceBuffer buffer_;
  void* given_ = nullptr;  // the caller's memory, used instead of buffer_
  size_t given_bytes_ = 0;
  Event last_use_{cudaEventDisableTiming};
  bool used_ = false;  // last_use_ has been recorded
};

// Marks the end of one call's use of the workspace when the call leaves its scope,
// by return or by throw.
class WorkspaceUse {
 public:
  WorkspaceUse(OrderedWorkspace* workspace, cudaStream_t stream, bool captured = false)
      : workspace_(workspace), stream_(stream), captured_(captured) {}
  ~WorkspaceUse() {
    if (workspace_ != nullptr) workspace_->release(stream_, captured_);
  }
  WorkspaceUse(const WorkspaceUse&) = delete;
  WorkspaceUse& operator=(const WorkspaceUse&) = delete;

 private:
  OrderedWorkspace* workspace_;
  cudaStream_t stream_;
  bool captured_;
};

struct DeviceState {
  Stream own_stream;
  EventSet events[2];
  DeviceBuffer a, b, c;
  OrderedWorkspace workspace;  // split-K partial sums, packed operands
  // The caller's memory for the device calls' workspace (tmm_set_workspace), if given.
  OrderedWorkspace given;
};

float elapsed_ms(const Event& from, const Event& to) {
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, from.get(), to.get()), "cudaEventElapsedTime");
  return ms;
}

void check_device_pointer(const void* ptr, const char* name) {
  if (ptr == nullptr) return;  // not needed by this call (checked before)
  cudaPointerAttributes attr{};
  const LastErrorScope scope;
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) scope.clear_if_ours();
  require(err == cudaSuccess && attr.type != cudaMemoryTypeUnregistered, Status::InvalidValue, name,
          " is not a device, managed or registered host pointer");
}

// A row of `cols` elements of `bytes` bytes (4 or 8) padded to whole 16 bytes: 4 floats
// or 2 doubles (saturated: a matrix that wide is never copied).
int64_t padded_ld(int64_t cols, int bytes) {
  const int64_t per = 16 / bytes;
  if (cols <= 0) return per;
  return cols > INT64_MAX - (per - 1) ? INT64_MAX : (cols + per - 1) / per * per;
}

int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  check_cuda(cudaDeviceGetAttribute(&value, what, device), "cudaDeviceGetAttribute");
  return value;
}

}  // namespace

// What the planner needs, read once per handle. CUDA 13 gives clocks and the memory
// bus only as attributes (cudaDeviceProp lost them).
DeviceProfile read_profile(int device) {
  DeviceProfile d;
  d.multiprocessors = attribute(cudaDevAttrMultiProcessorCount, device);
  d.cc_major = attribute(cudaDevAttrComputeCapabilityMajor, device);
  d.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor, device);
  d.clock_hz = 1e3 * attribute(cudaDevAttrClockRate, device);
  d.memory_bandwidth = 2.0 * 1e3 * attribute(cudaDevAttrMemoryClockRate, device) *
                       attribute(cudaDevAttrGlobalMemoryBusWidth, device) / 8.0;
  d.shared_memory_per_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
  d.shared_memory_per_block_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  d.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device);
  d.registers_per_sm = attribute(cudaDevAttrMaxRegistersPerMultiprocessor, device);
  return d;
}

DeviceInfo read_device_info(int device) {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  DeviceInfo info;
  info.name = prop.name;
  info.device = device;
  info.major = prop.major;
  info.minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.global_memory = prop.totalGlobalMem;
  info.shared_memory_per_block = prop.sharedMemPerBlock;
  info.shared_memory_per_multiprocessor = prop.sharedMemPerMultiprocessor;
  info.l2_cache = uint64_t(prop.l2CacheSize);
  return info;
}

int64_t host_path_device_budget(const Settings& s) {
  if (s.device_budget > 0) return s.device_budget;
  size_t free = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  const int64_t margin = int64_t(free / 16) + (int64_t(64) << 20);
  return std::max<int64_t>(0, int64_t(free) - margin);
}

double host_path_kernel_rate(const DeviceProfile& profile, Precision precision) {
  return precision == Precision::F64 ? kF64MmaEfficiency * profile.fp64_peak()
                                     : kBlockedEfficiency128x256 * profile.fp32_peak();
}

// Bytes the direct path copies to the device: dense A and B (when the call reads
// them) and C, rows padded to 16 bytes (not counting a kernel's workspace). In 128
// bits, saturated at 2^62 bytes (more than any device holds), so that the caller can
// add a workspace.
int64_t direct_bytes(const GemmProblem& p) {
  if (is_empty(p)) return 0;
  const int bytes = element_bytes(p.precision);
  const auto dense = [&](int64_t rows, int64_t cols) {
    return __int128(rows) * padded_ld(cols, bytes);
  };
  __int128 elements = dense(p.m, p.n);
  if (!is_scale_only(p)) {
    elements +=
        dense(stored_rows_a(p), stored_cols_a(p)) + dense(stored_rows_b(p), stored_cols_b(p));
  }
  return int64_t(std::min<__int128>(elements * element_bytes(p.precision), __int128(1) << 62));
}

namespace {

class CudaBackend final : public Backend {
 public:
  CudaBackend(int device, std::shared_ptr<StreamedGemm> engine)
      : device_(device), streamed_(std::move(engine)) {
    DeviceGuard guard(device_);
    state_ = std::make_unique<DeviceState>();
    stream_ = state_->own_stream.get();
    info_ = read_device_info(device);
    profile_ = read_profile(device);
    // The device may have been reset since a handle last set its kernels' attributes.
    forget_shared_memory_opt_ins(device);
  }

  ~CudaBackend() override {
    try {
      DeviceGuard guard(device_);
      const RelaxedCaptureMode relaxed;
      // Work this handle queued must finish first; a stream being captured cannot be
      // waited for (the wait would spoil the capture), and holds only captured work.
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(stream_, &status) != cudaSuccess ||
          status == cudaStreamCaptureStatusNone)
        cudaStreamSynchronize(stream_);
      state_->workspace.drain();  // also on the streams it used before
      state_->given.drain();
      streamed_.reset();  // this handle's share of the device's engine
      state_.reset();
    } catch (const Error&) {
      // No device can be made current: the context is gone, and its resources too.
    }
  }

  BackendKind kind() const override { return BackendKind::Cuda; }

  void check_algorithm(Algorithm algorithm) const override {
    Settings s;
    s.algorithm = algorithm;
    GemmProblem p{};
    p.m = p.n = p.k = 1;
    choose_kernel(p, s, profile_);  // throws NotSupported if no kernel exists
  }

  void gemm_host(const GemmProblem& p, const Settings& settings) override {
    if (p.batch > 1 && !is_empty(p)) {  // an empty batch: one quick return below
      gemm_host_products(p, settings);
      return;
    }
    check_context(device_);
    DeviceGuard guard(device_);
    require(!capturing(), Status::NotSupported,
            "the handle's stream is capturing a CUDA graph: a call on host memory waits for its "
            "copies and cannot be captured (capture tmm_sgemm_device or tmm_dgemm_device)");
    const RelaxedCaptureMode relaxed;  // another stream may be capturing
    if (!is_empty(p) && !is_scale_only(p)) {
      if (const std::optional<StreamPlan> plan = streamed_plan(p, settings)) {
        // Reads and writes through tmm_sgemm_io's functions too.
        commit(engine().run(p, settings, *plan, DispatchChunkKernels(settings, profile_)),
               /*pending=*/false);
        return;
      }
    }
    if (has_io(p)) {  // tmm_sgemm_io on the direct path: on whole operands read first
      run_materialized(p, [&](const GemmProblem& q) { gemm_direct(q, settings); });
      return;
    }
    gemm_direct(p, settings);
  }

  // Host pointers through the direct path (whole copies, one kernel).
  void gemm_direct(const GemmProblem& p, const Settings& settings) {
    const bool uses_ab = !is_empty(p) && !is_scale_only(p);
    const bool reads_c = !is_empty(p) && p.beta != 0.0;
    const int64_t a_rows = stored_rows_a(p), a_cols = stored_cols_a(p);
    const int64_t b_rows = stored_rows_b(p), b_cols = stored_cols_b(p);

    // Everything that can fail for lack of memory happens before any copy.
    // Device copies are dense, with rows padded to a multiple of 16 bytes (4 floats, 2
    // doubles) so that kernels can always use 16-byte accesses. Nothing here touches an
    // element: the leading dimensions are in elements of the call, the buffers and
    // copies in its bytes.
    const int bytes = element_bytes(p.precision);
    GemmProblem d = p;
    d.lda = padded_ld(a_cols, bytes);
    d.ldb = padded_ld(b_cols, bytes);
    d.ldc = padded_ld(p.n, bytes);
    // The kernel is chosen for the copies it will read (256-byte aligned, padded rows),
    // not for the caller's host layout: an odd host lda must not change the plan. Null
    // stands for the aligned buffers, reserved after the choice.
    d.a = d.b = nullptr;
    d.c = nullptr;
    KernelChoice config = choices_.get(d, settings, profile_);
    d.a = uses_ab ? state_->a.reserve<std::byte>(size_t(a_rows * d.lda) * bytes) : nullptr;
    d.b = uses_ab ? state_->b.reserve<std::byte>(size_t(b_rows * d.ldb) * bytes) : nullptr;
    if (settings.device_budget > 0) {  // the budget bounds what this call may hold
      const auto need = [&](const KernelChoice& c) {
        return int64_t(size_t(direct_bytes(p)) + workspace_bytes(c, d));
      };
      // A kernel whose workspace the budget cannot hold runs unsplit, or gives way to
      // one needing none.
      if (need(config) > settings.device_budget && workspace_bytes(config, d) > 0) {
        const KernelChoice unsplit = without_splits(config);
        if (need(unsplit) <= settings.device_budget) {
          config = unsplit;
        } else {
          const KernelChoice without = choose_kernel(d, settings, profile_, false);
          if (need(without) <= settings.device_budget) config = without;
        }
      }
      require(need(config) <= settings.device_budget, Status::OutOfMemory, "the direct path needs ",
              uint64_t(need(config) >> 20), " MiB of device memory, over the budget of ",
              settings.device_budget >> 20,
              " MiB (TMM_OPTION_DEVICE_MEMORY_BUDGET); the streamed path fits any budget");
    }
    d.c = is_empty(p) ? nullptr : state_->c.reserve<std::byte>(size_t(p.m * d.ldc) * bytes);
    void* workspace = reserve_workspace(config, d, settings, state_->workspace, false);
    const WorkspaceUse use(workspace ? &state_->workspace : nullptr, stream_);
    const DrainOnThrow drain(stream_);  // declared after `use`: the drain runs first

    EventSet& ev = next_events();
    check_cuda(cudaEventRecord(ev.start.get(), stream_), "cudaEventRecord");
    if (uses_ab) {
      copy_2d(const_cast<void*>(d.a), d.lda, p.a, p.lda, a_rows, a_cols, bytes,
              cudaMemcpyHostToDevice, stream_);
      copy_2d(const_cast<void*>(d.b), d.ldb, p.b, p.ldb, b_rows, b_cols, bytes,
              cudaMemcpyHostToDevice, stream_);
    }
    if (reads_c) {
      copy_2d(d.c, d.ldc, p.c, p.ldc, p.m, p.n, bytes, cudaMemcpyHostToDevice, stream_);
    }
    check_cuda(cudaEventRecord(ev.uploaded.get(), stream_), "cudaEventRecord");
    if (!is_empty(p)) launch_gemm(config, d, workspace, stream_);
    check_cuda(cudaEventRecord(ev.computed.get(), stream_), "cudaEventRecord");
    if (!is_empty(p)) {
      copy_2d(p.c, p.ldc, d.c, d.ldc, p.m, p.n, bytes, cudaMemcpyDeviceToHost, stream_);
    }
    check_cuda(cudaEventRecord(ev.stop.get(), stream_), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(ev.stop.get()), "sgemm");

    Timing t = describe(config, p);
    t.workspace_bytes = int64_t(workspace_bytes(config, d));
    t.host_path = HostPath::Direct;
    t.upload_ms = elapsed_ms(ev.start, ev.uploaded);
    t.compute_ms = elapsed_ms(ev.uploaded, ev.computed);
    t.download_ms = elapsed_ms(ev.computed, ev.stop);
    t.total_ms = elapsed_ms(ev.start, ev.stop);
    commit(t, /*pending=*/false);
  }

  void gemm_device(const GemmProblem& p, const Settings& settings) override {
    check_no_alias(p);
    check_context(device_);
    DeviceGuard guard(device_);
    const bool graph = capturing();
    // Captured: a kernel needing no workspace (a graph must not hold the handle's own,
    // which later calls share and may free), unless the caller gave one.
    OrderedWorkspace& space = state_->given.given() ? state_->given : state_->workspace;
    KernelChoice config =
        choices_.get(p, settings, profile_, /*with_workspace=*/!graph || state_->given.given());
    if (!is_empty(p)) {
      if (!is_scale_only(p)) {
        check_device_pointer(p.a, "A");
        check_device_pointer(p.b, "B");
      }
      check_device_pointer(p.c, "C");
      check_device_pointer(p.alpha_at, "alpha");  // null (scalars by value): no check
      check_device_pointer(p.beta_at, "beta");
      // The kernels write a given workspace while they read the operands.
      if (const OrderedWorkspace& given = state_->given; given.given()) {
        const char* name = operand_meeting(p, given.given_memory(), int64_t(given.given_bytes()));
        require(name == nullptr, Status::InvalidValue, name ? name : "",
                " shares bytes with the workspace given by tmm_set_workspace, which the "
                "kernels write");
      }
    }
    void* workspace = reserve_workspace(config, p, settings, space, graph);
    const WorkspaceUse use(workspace ? &space : nullptr, stream_, graph);
    Timing t = describe(config, p);
    t.workspace_bytes = int64_t(workspace_bytes(config, p));
    if (graph) {  // only the kernels: no events to read later, no times in the report
      if (!is_empty(p)) launch_gemm(config, p, workspace, stream_);
      commit(t, /*pending=*/false);
      return;
    }
    EventSet& ev = next_events();
    check_cuda(cudaEventRecord(ev.uploaded.get(), stream_), "cudaEventRecord");
    if (!is_empty(p)) launch_gemm(config, p, workspace, stream_);
    check_cuda(cudaEventRecord(ev.computed.get(), stream_), "cudaEventRecord");
    commit(t, /*pending=*/true);
  }

  Timing last_timing() override {
    require(current_ >= 0, Status::InvalidValue,
            "no sgemm or dgemm has succeeded on this handle yet");
    if (pending_) {
      check_context(device_);
      DeviceGuard guard(device_);
      const RelaxedCaptureMode relaxed;  // another stream may be capturing
      EventSet& ev = state_->events[current_];
      check_cuda(cudaEventSynchronize(ev.computed.get()), "sgemm");
      timing_.compute_ms = elapsed_ms(ev.uploaded, ev.computed);
      timing_.total_ms = timing_.compute_ms;
      pending_ = false;
    }
    return timing_;
  }

  void reserve_host_staging(int64_t bytes) override {
    check_context(device_);
    DeviceGuard guard(device_);
    engine().reserve_staging(bytes);
  }

  void set_stream(void* stream) override {
    if (stream != nullptr) {  // a destroyed or foreign handle must fail here, not later
      check_context(device_);
      DeviceGuard guard(device_);
      // A stream that is capturing is a valid stream too (a program forks work onto
      // it and calls again): its capture status is legal to ask for and says so.
      // cudaStreamGetFlags, the check of any other stream, would invalidate a
      // capture (on the H100, driver 580, even in relaxed mode).
      const LastErrorScope scope;
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      cudaError_t err = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture);
      if (err == cudaSuccess && capture == cudaStreamCaptureStatusNone) {
        unsigned flags = 0;
        err = cudaStreamGetFlags(static_cast<cudaStream_t>(stream), &flags);
      }
      if (err != cudaSuccess) scope.clear_if_ours();
      require(err == cudaSuccess, Status::InvalidValue,
              "stream is not a valid CUDA stream: ", cudaGetErrorName(err));
    }
    stream_ = stream ? static_cast<cudaStream_t>(stream) : state_->own_stream.get();
  }
  void* stream() const override { return stream_; }

  void set_workspace(void* memory, size_t bytes) override {
    require((memory == nullptr) == (bytes == 0), Status::InvalidValue, "workspace is ",
            memory ? "not NULL" : "NULL", " with bytes ", uint64_t(bytes),
            ": give both, or NULL and 0 for the handle's own");
    check_context(device_);
    DeviceGuard guard(device_);
    if (memory == nullptr) {
      state_->given.give(nullptr, 0);  // work queued on it still runs: the caller keeps it
      return;
    }
    require(reinterpret_cast<uintptr_t>(memory) % 256 == 0, Status::InvalidValue,
            "workspace must be 256-byte aligned (as cudaMalloc returns it)");
    cudaPointerAttributes attr{};
    const LastErrorScope scope;
    const cudaError_t err = cudaPointerGetAttributes(&attr, memory);
    if (err != cudaSuccess) scope.clear_if_ours();
    require(err == cudaSuccess && attr.type == cudaMemoryTypeDevice && attr.device == device_,
            Status::InvalidValue, "workspace is not device memory of the handle's device (",
            device_, ")");
    require(within_one_allocation(memory, bytes), Status::InvalidValue,
            "workspace: ", uint64_t(bytes), " bytes from it run past the end of its allocation");
    state_->given.give(memory, bytes);
  }

  void synchronize() override {
    check_context(device_);
    DeviceGuard guard(device_);
    require(!capturing(), Status::NotSupported,
            "the handle's stream is capturing a CUDA graph: it cannot be waited for until the "
            "capture ends");
    const RelaxedCaptureMode relaxed;  // another stream may be capturing
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

  DeviceInfo device_info() const override { return info_; }
  int device() const override { return device_; }

 private:
  // The streamed path's cut when it runs: when asked for, or (AUTO) when the direct
  // path does not fit the budget or the model says streaming wins; nothing for the
  // direct path. The plan is made once per call (the budget reads cudaMemGetInfo).
  std::optional<StreamPlan> streamed_plan(const GemmProblem& p, const Settings& s) const {
    if (s.host_path == HostPath::Direct) return std::nullopt;
    const int64_t budget = host_path_device_budget(s);
    const double rate = host_path_kernel_rate(profile_, p.precision);
    const int threads = packing_thread_count(s.host_threads);
    const StreamPlan plan = plan_stream(p, budget, staging_budget(s), rate, threads);
    if (s.host_path == HostPath::Streamed || direct_bytes(p) > budget) return plan;
    const HostRates rates;
    if (streamed_seconds(p, plan, rate, threads, rates) < direct_seconds(p, rate, rates))
      return plan;
    return std::nullopt;
  }

  // Whether the handle's stream is capturing a CUDA graph now (or was, and the
  // capture failed: cudaStreamCaptureStatusInvalidated).
  bool capturing() const {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check_cuda(cudaStreamIsCapturing(stream_, &status), "cudaStreamIsCapturing");
    return status != cudaStreamCaptureStatusNone;
  }

  // The device's streamed engine, shared with the process's other handles on it (or the
  // one the handle was made with).
  StreamedGemm& engine() {
    if (!streamed_) streamed_ = shared_streamed_gemm(device_);
    return *streamed_;
  }

  // A strided batch of host products: one host call per product, in order (each
  // finished before the next starts), so that after a failure the products before it are
  // final and the rest untouched. The report: the last product's kernel and path, the
  // times summed over the products. (Copies of whole groups of products: step 8 of
  // docs/design/batched.md.)
  void gemm_host_products(const GemmProblem& p, const Settings& settings) {
    // A failure leaves the last successful call's report, not a product's of this one.
    const Timing before = timing_;
    const int before_current = current_;
    const bool before_pending = pending_;
    Timing sum;
    for (int64_t b = 0; b < p.batch; ++b) {
      try {
        gemm_host(product_of(p, b), settings);
      } catch (...) {
        timing_ = before;
        current_ = before_current;
        pending_ = before_pending;
        throw;
      }
      sum = add_product(sum, timing_, false);  // timing_: the product's, just committed
    }
    sum.batch = p.batch;
    timing_ = sum;  // the last product's call committed it, not pending
  }

  static Timing describe(const KernelChoice& choice, const GemmProblem& p) {
    Timing t;
    t.batch = p.batch;
    t.algorithm = choice.kernel->algorithm;
    t.tile_size = choice.kernel->tile;
    t.coarsening = choice.kernel->outputs_per_thread;
    t.splits = choice.plan.splits;
    t.kernel = kernel_name(choice, p);
    t.math_mode = math_mode_of(choice, p);
    t.precision = p.precision;
    return t;
  }

  // The chosen kernel's workspace. Where the device cannot hold it (the Hopper
  // tensor-core rows split or pack their operands there: 2 (m + n) k floats for
  // FP32_ACCURATE), the kernel gives way to the planner's choice among those needing
  // none (the mma.sync row of the mode, or strict FP32): the call runs, somewhat
  // slower, instead of failing, and the report names the kernel that ran.
  // From `space`: the handle's own, or the caller's (which a kernel needing more than it
  // holds gives way the same), without waits where the call is captured.
  void* reserve_workspace(KernelChoice& config, const GemmProblem& p, const Settings& settings,
                          OrderedWorkspace& space, bool captured) {
    const size_t bytes = workspace_bytes(config, p);
    if (bytes == 0) return nullptr;
    try {
      return space.acquire(bytes, stream_, captured);
    } catch (const Error& e) {
      if (e.status() != Status::OutOfMemory) throw;
    }
    // The same kernel without its split of k (partial sums), if it needs less.
    const KernelChoice unsplit = without_splits(config);
    const size_t unsplit_bytes = workspace_bytes(unsplit, p);
    if (unsplit_bytes < bytes) {
      try {
        void* w = unsplit_bytes > 0 ? space.acquire(unsplit_bytes, stream_, captured) : nullptr;
        config = unsplit;
        return w;
      } catch (const Error& e) {
        if (e.status() != Status::OutOfMemory) throw;
      }
    }
    KernelChoice without = choose_kernel(p, settings, profile_, false);
    require(workspace_bytes(without, p) == 0, Status::OutOfMemory,
            "cannot allocate the kernel's workspace");
    config = without;
    return nullptr;
  }

  // The event set not holding the last successful call's timing, so a failed call
  // cannot clobber it.
  EventSet& next_events() { return state_->events[current_ == 0 ? 1 : 0]; }

  void commit(const Timing& t, bool pending) {
    current_ = current_ == 0 ? 1 : 0;
    timing_ = t;
    pending_ = pending;
  }

  int device_;
  std::unique_ptr<DeviceState> state_;
  cudaStream_t stream_ = nullptr;           // the own stream, or one the caller set
  DeviceProfile profile_;                   // read once, for the planner
  KernelChoiceCache choices_;               // its last choices (under the handle's lock)
  std::shared_ptr<StreamedGemm> streamed_;  // the streamed engine, the device's on first use
  int current_ = -1;                        // event set of the last successful call
  bool pending_ = false;                    // its compute time is not read yet
  Timing timing_;
  DeviceInfo info_;
};

}  // namespace

int cuda_device_count() {
  int count = 0;
  const LastErrorScope scope;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    scope.clear_if_ours();
    return 0;
  }
  return count;
}

std::unique_ptr<Backend> make_cuda_backend(int device) {
  const int count = cuda_device_count();
  require(count > 0, Status::NoDevice, "no usable CUDA device or driver");
  require(device >= 0 && device < count, Status::NoDevice, "CUDA device ", device,
          " does not exist (", count, " device(s))");
  check_context(device);
  return std::make_unique<CudaBackend>(device, nullptr);
}

std::unique_ptr<Backend> make_cuda_backend_on(int device, std::shared_ptr<StreamedGemm> engine) {
  check_context(device);
  return std::make_unique<CudaBackend>(device, std::move(engine));
}

}  // namespace tiledmm
