// The C entry points of tiledmm. Each one has the same shape: check the arguments
// that are C's business (NULL pointers, enum values), lock the handle, call the C++
// core, and turn every exception into a status code plus a message kept in the
// handle for the calling thread. No exception crosses this boundary, and nothing here
// prints or exits.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "api/backend_select.hpp"
#include "core/backend.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/host_io.hpp"
#include "registry/kernel_registry.hpp"
#include "tiledmm/tiledmm.h"

struct tmm_context_s {
  std::mutex mutex;  // serialises calls on one handle, and guards `errors`
  // The message of each thread's last failed call on this handle. A thread's entry
  // is written only by that thread's calls, so the text it reads stays put while
  // other threads fail; an entry is erased when its thread's next call succeeds.
  // Map nodes never move, so insertions for other threads keep it valid.
  std::map<std::thread::id, std::string> errors;
  std::unique_ptr<tiledmm::Backend> backend;
  tiledmm::Settings settings;
};

namespace {

using tiledmm::Algorithm;
using tiledmm::Error;
using tiledmm::Status;

// The message of failures that have no handle to keep it in.
thread_local std::string g_thread_error;

tmm_status to_c(Status s) {
  switch (s) {
    case Status::InvalidValue:
      return TMM_ERROR_INVALID_VALUE;
    case Status::NoDevice:
      return TMM_ERROR_NO_DEVICE;
    case Status::OutOfMemory:
      return TMM_ERROR_OUT_OF_MEMORY;
    case Status::NotSupported:
      return TMM_ERROR_NOT_SUPPORTED;
    case Status::Cuda:
      return TMM_ERROR_CUDA;
    case Status::Internal:
      return TMM_ERROR_INTERNAL;
    case Status::Callback:
      return TMM_ERROR_CALLBACK;
  }
  return TMM_ERROR_INTERNAL;
}

void set_message(std::string& slot, const char* text) noexcept {
  try {
    slot = text;
  } catch (...) {
    slot.clear();  // no memory for the message; the status still tells
  }
}

// Runs `body`, mapping every exception to a status and a message in `slot`.
template <class Body>
tmm_status guarded(std::string& slot, Body&& body) noexcept {
  try {
    body();
    slot.clear();
    return TMM_SUCCESS;
  } catch (const Error& e) {
    set_message(slot, e.what());
    return to_c(e.status());
  } catch (const std::bad_alloc&) {
    set_message(slot, "out of host memory");
    return TMM_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_message(slot, e.what());
    return TMM_ERROR_INTERNAL;
  } catch (...) {
    set_message(slot, "unknown exception");
    return TMM_ERROR_INTERNAL;
  }
}

// The same, on a handle: NULL is rejected, and the call holds the handle's lock.
// The message goes to the calling thread's entry of the handle; a success erases it
// (erasing allocates nothing, so a successful call stays allocation-free).
template <class Body>
tmm_status on_handle(tmm_handle h, Body&& body) noexcept {
  if (h == nullptr) {
    set_message(g_thread_error, "handle is NULL");
    return TMM_ERROR_INVALID_VALUE;
  }
  try {
    std::lock_guard<std::mutex> lock(h->mutex);
    std::string text;
    const tmm_status status = guarded(text, [&] { body(*h); });
    const std::thread::id self = std::this_thread::get_id();
    if (status == TMM_SUCCESS) {
      h->errors.erase(self);
    } else {
      try {
        h->errors[self] = std::move(text);
      } catch (...) {
        h->errors.erase(self);  // no memory for the message; the status still tells
      }
    }
    return status;
  } catch (const std::system_error&) {
    return TMM_ERROR_INTERNAL;  // the lock itself failed
  }
}

// The int a C caller passed for an enum parameter. C lets any int through; reading
// one outside the enumerators through the C++ enum type would be undefined, so every
// enum argument is read as its bytes and checked as an int.
template <class Enum>
int raw(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

void require_out(const void* out, const char* name) {
  tiledmm::require(out != nullptr, Status::InvalidValue, name, " is NULL");
}

Algorithm to_algorithm(int a) {
  switch (a) {
    case TMM_ALGO_AUTO:
      return Algorithm::Auto;
    case TMM_ALGO_NAIVE:
      return Algorithm::Naive;
    case TMM_ALGO_TILED:
      return Algorithm::Tiled;
    case TMM_ALGO_COARSENED:
      return Algorithm::Coarsened;
    case TMM_ALGO_BLOCKED:
      return Algorithm::Blocked;
  }
  tiledmm::fail(Status::InvalidValue, "unknown algorithm ", a);
}

tmm_algorithm from_algorithm(Algorithm a) {
  switch (a) {
    case Algorithm::Auto:
      return TMM_ALGO_AUTO;
    case Algorithm::Naive:
      return TMM_ALGO_NAIVE;
    case Algorithm::Tiled:
      return TMM_ALGO_TILED;
    case Algorithm::Coarsened:
      return TMM_ALGO_COARSENED;
    case Algorithm::Blocked:
      return TMM_ALGO_BLOCKED;
  }
  return TMM_ALGO_AUTO;
}

tiledmm::BackendKind to_backend(int b) {
  switch (b) {
    case TMM_BACKEND_AUTO:
      return tiledmm::BackendKind::Auto;
    case TMM_BACKEND_CUDA:
      return tiledmm::BackendKind::Cuda;
    case TMM_BACKEND_CPU:
      return tiledmm::BackendKind::Cpu;
  }
  tiledmm::fail(Status::InvalidValue, "unknown backend ", b);
}

tiledmm::Layout to_layout(int l) {
  if (l == TMM_ROW_MAJOR) return tiledmm::Layout::RowMajor;
  if (l == TMM_COL_MAJOR) return tiledmm::Layout::ColMajor;
  tiledmm::fail(Status::InvalidValue, "unknown layout ", l);
}

bool to_trans(int t, const char* name) {
  if (t == TMM_NO_TRANS) return false;
  if (t == TMM_TRANS) return true;
  tiledmm::fail(Status::InvalidValue, "unknown ", name, " ", t);
}

// A call's problem: a strided batch (tmm_?gemm_strided_batched*), or a single product as the
// batch of one (strides 0, batch 1). Enum arguments arrive as raw() ints (see raw()). T:
// float (sgemm) or double (dgemm).
template <class T>
tiledmm::GemmProblem batched_problem(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                     T alpha, const T* A, int64_t lda, int64_t stride_a, const T* B,
                                     int64_t ldb, int64_t stride_b, T beta, T* C, int64_t ldc,
                                     int64_t stride_c, int64_t batch) {
  return tiledmm::make_batched_problem(
      tiledmm::precision_of<T>, to_layout(layout), to_trans(ta, "trans_a"), to_trans(tb, "trans_b"),
      m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch);
}

// The options table: every option the library knows, with its name, bounds and
// default. tmm_get_option_bounds and tmm_option_name read it; set_option() below
// applies a value. A new option is one row here and one case there.
struct OptionSpec {
  int id;
  const char* name;
  int64_t lower, upper, default_value;
};

constexpr OptionSpec kOptions[] = {
    {TMM_OPTION_ALGORITHM, "algorithm", TMM_ALGO_AUTO, TMM_ALGO_BLOCKED, TMM_ALGO_AUTO},
    {TMM_OPTION_TILE_SIZE, "tile_size", 0, 256, 0},
    {TMM_OPTION_COARSENING, "coarsening", 0, 4, 0},
    {TMM_OPTION_HOST_THREADS, "host_threads", 0, 4096, 0},
    {TMM_OPTION_DEVICE_MEMORY_BUDGET, "device_memory_budget", 0, INT64_MAX, 0},
    {TMM_OPTION_HOST_STAGING_BYTES, "host_staging_bytes", 0, INT64_MAX, 0},
    {TMM_OPTION_HOST_PATH, "host_path", TMM_HOST_PATH_AUTO, TMM_HOST_PATH_STREAMED,
     TMM_HOST_PATH_AUTO},
    {TMM_OPTION_DEBUG_POISON_STAGING, "debug_poison_staging", 0, 1, 0},
    {TMM_OPTION_MATH_MODE, "math_mode", TMM_MATH_FP32, int64_t(tiledmm::kLastMathMode),
     TMM_MATH_FP32},
};

const OptionSpec* find_option(int id) {
  for (const OptionSpec& o : kOptions)
    if (o.id == id) return &o;
  return nullptr;
}

const OptionSpec& option_spec(int id) {
  const OptionSpec* o = find_option(id);
  tiledmm::require(o != nullptr, Status::InvalidValue, "unknown option ", id);
  return *o;
}

void set_option(tmm_context_s& c, int id, int64_t value) {
  const OptionSpec& o = option_spec(id);
  tiledmm::require(value >= o.lower && value <= o.upper, Status::InvalidValue, o.name,
                   " must be in [", o.lower, ", ", o.upper, "] (got ", value, ")");
  switch (id) {
    case TMM_OPTION_ALGORITHM: {
      const Algorithm a = to_algorithm(int(value));
      c.backend->check_algorithm(a);
      c.settings.algorithm = a;
      return;
    }
    case TMM_OPTION_TILE_SIZE:  // some kernel in the registry must take it
      tiledmm::require(tiledmm::is_known_tile(int(value)), Status::InvalidValue,
                       "tile size must be 0 or a tile size of a kernel (tmm_get_kernel_info) "
                       "(got ",
                       value, ")");
      c.settings.tile_size = int(value);
      return;
    case TMM_OPTION_COARSENING:
      tiledmm::require(tiledmm::is_known_coarsening(int(value)), Status::InvalidValue,
                       "coarsening must be 0 or a coarsening of a COARSENED kernel (got ", value,
                       ")");
      c.settings.coarsening = int(value);
      return;
    case TMM_OPTION_HOST_THREADS:
      c.settings.host_threads = int(value);
      return;
    case TMM_OPTION_DEVICE_MEMORY_BUDGET:
      c.settings.device_budget = value;
      return;
    case TMM_OPTION_HOST_STAGING_BYTES:
      c.settings.staging_bytes = value;
      return;
    case TMM_OPTION_HOST_PATH:
      c.settings.host_path = tiledmm::HostPath(value);  // Auto, Direct, Streamed: 0, 1, 2
      return;
    case TMM_OPTION_DEBUG_POISON_STAGING:
      c.settings.poison_staging = value != 0;
      return;
    case TMM_OPTION_MATH_MODE:  // every backend takes every mode: a mode is a permission
      c.settings.math_mode = tiledmm::MathMode(value);  // the same numbers (from_math_mode)
      return;
  }
  throw Error(Status::Internal, "option without a setter");
}

int64_t get_option(const tmm_context_s& c, int id) {
  option_spec(id);
  switch (id) {
    case TMM_OPTION_ALGORITHM:
      return from_algorithm(c.settings.algorithm);
    case TMM_OPTION_TILE_SIZE:
      return c.settings.tile_size;
    case TMM_OPTION_COARSENING:
      return c.settings.coarsening;
    case TMM_OPTION_HOST_THREADS:
      return c.settings.host_threads;
    case TMM_OPTION_DEVICE_MEMORY_BUDGET:
      return c.settings.device_budget;
    case TMM_OPTION_HOST_STAGING_BYTES:
      return c.settings.staging_bytes;
    case TMM_OPTION_HOST_PATH:
      return int64_t(c.settings.host_path);
    case TMM_OPTION_DEBUG_POISON_STAGING:
      return c.settings.poison_staging ? 1 : 0;
    case TMM_OPTION_MATH_MODE:
      return int64_t(c.settings.math_mode);
  }
  throw Error(Status::Internal, "option without a getter");
}

// tmm_math_mode and MathMode number the modes alike (settings.hpp), so the option's
// value is the enumerator's.
static_assert(int(tiledmm::MathMode::Fp32) == TMM_MATH_FP32 &&
                  int(tiledmm::MathMode::Tf32) == TMM_MATH_TF32 &&
                  int(tiledmm::MathMode::Fp32Accurate) == TMM_MATH_FP32_ACCURATE,
              "tmm_math_mode and MathMode in one order");
tmm_math_mode from_math_mode(tiledmm::MathMode m) { return tmm_math_mode(int(m)); }

// The process-wide default of TMM_OPTION_MATH_MODE: the environment variable
// TMM_MATH_MODE (a name of kMathModeNames, any case) read at handle creation, so
// that programs behind the bindings or the drop-in BLAS can allow TF32 without a
// change. Anything else leaves the strict default: FP32 is always a right answer.
tiledmm::MathMode math_mode_from_environment() {
  const char* v = std::getenv("TMM_MATH_MODE");
  if (v == nullptr) return tiledmm::MathMode::Fp32;
  std::string text(v);
  for (char& ch : text) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  for (int i = 0; i <= int(tiledmm::kLastMathMode); ++i)
    if (text == tiledmm::kMathModeNames[i]) return tiledmm::MathMode(i);
  return tiledmm::MathMode::Fp32;
}

// The devices TMM_DEVICES names for tmm_create: "all" (an empty list: every device) or
// indices separated by commas (spaces around each allowed), at most 64. Throws
// Error(InvalidValue) for anything else.
std::vector<int> devices_from_environment(const char* text) {
  std::string v;
  for (const char* p = text; *p != '\0'; ++p) {
    if (!std::isspace(static_cast<unsigned char>(*p)))
      v += char(std::tolower(static_cast<unsigned char>(*p)));
  }
  std::vector<int> list;
  if (v == "all") return list;
  size_t at = 0;
  while (true) {
    size_t end = v.find(',', at);
    const std::string item = v.substr(at, end == std::string::npos ? std::string::npos : end - at);
    const bool digits = !item.empty() && item.size() <= 6 &&
                        item.find_first_not_of("0123456789") == std::string::npos;
    tiledmm::require(digits && list.size() < 64, Status::InvalidValue,
                     "TMM_DEVICES must be \"all\" or up to 64 device indices separated by "
                     "commas (got \"",
                     text, "\")");
    list.push_back(std::stoi(item));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return list;
}

// The sizes of tmm_report and tmm_kernel_info in 1.1, the first release that had
// them: the least a caller may pass. (math_mode joined both before 1.1.0 shipped.)
constexpr size_t kReportSize11 = offsetof(tmm_report, math_mode) + sizeof(tmm_math_mode);
constexpr size_t kKernelInfoSize11 = offsetof(tmm_kernel_info, math_mode) + sizeof(tmm_math_mode);
// 1.2's precision fields start past 1.1's whole structs (their tail padding included):
// a 1.1 caller's struct_size never covers part of them (docs/ABI.md).
static_assert(sizeof(void*) != 8 ||
                  (offsetof(tmm_report, precision) == 128 && offsetof(tmm_report, batch) == 136 &&
                   offsetof(tmm_kernel_info, precision) == 64),
              "tmm_report and tmm_kernel_info grew past 1.1's sizes");

int64_t from_precision(tiledmm::Precision p) {
  return p == tiledmm::Precision::F64 ? TMM_PRECISION_DOUBLE : TMM_PRECISION_SINGLE;
}

// The bodies of tmm_sgemm/tmm_dgemm, _device, _io and _strided_batched (extern "C" below), for T =
// float and double, Io = tmm_host_io and tmm_host_io_double. The enum arguments arrive as the ints
// raw() read: passing a C caller's out-of-range value on as the enum type would be undefined
// (UBSan's -fsanitize=enum sees the load).
template <class T>
tmm_status gemm_batched(tmm_handle h, bool device, int layout, int trans_a, int trans_b, int64_t m,
                        int64_t n, int64_t k, T alpha, const T* A, int64_t lda, int64_t stride_a,
                        const T* B, int64_t ldb, int64_t stride_b, T beta, T* C, int64_t ldc,
                        int64_t stride_c, int64_t batch) {
  return on_handle(h, [&](tmm_context_s& c) {
    const auto p = batched_problem(layout, trans_a, trans_b, m, n, k, alpha, A, lda, stride_a, B,
                                   ldb, stride_b, beta, C, ldc, stride_c, batch);
    if (device) {
      c.backend->gemm_device(p, c.settings);  // checks aliasing where it is supported
    } else {
      tiledmm::check_no_alias(p);
      c.backend->gemm_host(p, c.settings);
    }
  });
}

// The bodies of the _device_scalars calls: the device call with alpha and beta in device
// memory (GemmProblem::alpha_at). The problem's own scalars are 1, so that every check is
// the one for a call that reads A, B and C.
template <class T>
tmm_status gemm_scalars(tmm_handle h, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
                        int64_t k, const T* alpha, const T* A, int64_t lda, int64_t stride_a,
                        const T* B, int64_t ldb, int64_t stride_b, const T* beta, T* C, int64_t ldc,
                        int64_t stride_c, int64_t batch) {
  return on_handle(h, [&](tmm_context_s& c) {
    require(alpha != nullptr, Status::InvalidValue,
            "alpha is NULL (this call takes alpha and beta in device memory)");
    require(beta != nullptr, Status::InvalidValue,
            "beta is NULL (this call takes alpha and beta in device memory)");
    require(reinterpret_cast<uintptr_t>(alpha) % alignof(T) == 0 &&
                reinterpret_cast<uintptr_t>(beta) % alignof(T) == 0,
            Status::InvalidValue, "alpha and beta must be aligned to their type (", sizeof(T),
            " bytes)");
    auto p = batched_problem(layout, trans_a, trans_b, m, n, k, T(1), A, lda, stride_a, B, ldb,
                             stride_b, T(1), C, ldc, stride_c, batch);
    p.alpha_at = alpha;
    p.beta_at = beta;
    c.backend->gemm_device(p, c.settings);  // checks aliasing where it is supported
  });
}

// A single product is the batch of one (make_batched_problem's checks are make_problem's).
template <class T>
tmm_status gemm_host(tmm_handle h, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
                     int64_t k, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T beta,
                     T* C, int64_t ldc) {
  return gemm_batched(h, false, layout, trans_a, trans_b, m, n, k, alpha, A, lda, 0, B, ldb, 0,
                      beta, C, ldc, 0, 1);
}

template <class T>
tmm_status gemm_device(tmm_handle h, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
                       int64_t k, T alpha, const T* A, int64_t lda, const T* B, int64_t ldb, T beta,
                       T* C, int64_t ldc) {
  return gemm_batched(h, true, layout, trans_a, trans_b, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta,
                      C, ldc, 0, 1);
}

template <class T, class Io>
tmm_status gemm_io(tmm_handle h, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
                   int64_t k, T alpha, const Io* A, int64_t lda, const Io* B, int64_t ldb, T beta,
                   const Io* C, int64_t ldc) {
  return on_handle(h, [&](tmm_context_s& c) {
    // The pointer checks of tmm_sgemm on stand-ins (never dereferenced), so that a
    // missing io is the same error, with the same words, as a missing matrix.
    static T stand_in;
    auto p =
        batched_problem(layout, trans_a, trans_b, m, n, k, alpha, A ? &stand_in : nullptr, lda, 0,
                        B ? &stand_in : nullptr, ldb, 0, beta, C ? &stand_in : nullptr, ldc, 0, 1);
    tiledmm::HostIo io[3];
    const Io* given[3] = {A, B, C};
    const char* names[3] = {"A", "B", "C"};
    for (int i = 0; i < 3; ++i) {
      if (given[i] == nullptr) continue;
      require(given[i]->struct_size >= offsetof(Io, user) + sizeof(void*), Status::InvalidValue,
              names[i], "->struct_size is ", given[i]->struct_size, "; set it to sizeof(",
              std::is_same_v<T, double> ? "tmm_host_io_double" : "tmm_host_io", ")");
      io[i] = tiledmm::host_io(tiledmm::IoFunctions<T>{given[i]->read, given[i]->write},
                               given[i]->user, names[i]);
    }
    const bool uses_c = !tiledmm::is_empty(p);
    const bool uses_ab = uses_c && !tiledmm::is_scale_only(p);
    if (uses_ab) {
      require(A->read != nullptr, Status::InvalidValue, "A->read is NULL");
      require(B->read != nullptr, Status::InvalidValue, "B->read is NULL");
    }
    if (uses_c) {
      require(C->write != nullptr, Status::InvalidValue, "C->write is NULL");
      require(beta == T(0) || C->read != nullptr, Status::InvalidValue,
              "C->read is NULL, and beta != 0 reads C");
    }
    // The canonical problem swaps A and B for column-major calls (gemm_problem.hpp).
    const bool swapped = p.col_major;
    p.a_io = uses_ab ? &io[swapped ? 1 : 0] : nullptr;
    p.b_io = uses_ab ? &io[swapped ? 0 : 1] : nullptr;
    p.c_io = uses_c ? &io[2] : nullptr;
    c.backend->gemm_host(p, c.settings);
  });
}

void require_cuda_handle(const tmm_context_s& c) {
  tiledmm::require(c.backend->kind() == tiledmm::BackendKind::Cuda, Status::NotSupported,
                   "the CPU backend has no devices");
}

void require_entry(const tmm_context_s& c, int index) {
  require_cuda_handle(c);
  tiledmm::require(index >= 0 && index < c.backend->device_count(), Status::InvalidValue,
                   "index must be 0 to ", c.backend->device_count() - 1, " (got ", index, ")");
}

tmm_device_info to_device_info(const tiledmm::DeviceInfo& d) {
  tmm_device_info info{};
  d.name.copy(info.name, sizeof(info.name) - 1);
  info.device = d.device;
  info.compute_capability_major = d.major;
  info.compute_capability_minor = d.minor;
  info.multiprocessors = d.multiprocessors;
  info.global_memory_bytes = d.global_memory;
  info.shared_memory_per_block_bytes = d.shared_memory_per_block;
  info.shared_memory_per_multiprocessor_bytes = d.shared_memory_per_multiprocessor;
  info.l2_cache_bytes = d.l2_cache;
  return info;
}

}  // namespace

extern "C" {

int tmm_version(void) { return TILEDMM_VERSION; }

const char* tmm_status_string(tmm_status status) {
  switch (raw(status)) {
    case TMM_SUCCESS:
      return "TMM_SUCCESS: success";
    case TMM_ERROR_INVALID_VALUE:
      return "TMM_ERROR_INVALID_VALUE: an argument is invalid";
    case TMM_ERROR_NO_DEVICE:
      return "TMM_ERROR_NO_DEVICE: no usable CUDA device";
    case TMM_ERROR_OUT_OF_MEMORY:
      return "TMM_ERROR_OUT_OF_MEMORY: out of memory";
    case TMM_ERROR_NOT_SUPPORTED:
      return "TMM_ERROR_NOT_SUPPORTED: not supported by this backend or build";
    case TMM_ERROR_CUDA:
      return "TMM_ERROR_CUDA: the CUDA runtime reported an error";
    case TMM_ERROR_INTERNAL:
      return "TMM_ERROR_INTERNAL: internal error in tiledmm";
    case TMM_ERROR_CALLBACK:
      return "TMM_ERROR_CALLBACK: a function the caller gave reported a failure";
  }
  return "unknown tmm_status value";
}

const char* tmm_get_error_message(tmm_handle h) {
  if (h == nullptr) return g_thread_error.c_str();
  try {
    std::lock_guard<std::mutex> lock(h->mutex);
    const auto it = h->errors.find(std::this_thread::get_id());
    return it == h->errors.end() ? "" : it->second.c_str();
  } catch (const std::system_error&) {
    return "";
  }
}

tmm_status tmm_create_with_backend(tmm_handle* out, tmm_backend backend, int device) {
  return guarded(g_thread_error, [&] {
    require_out(out, "out");
    auto ctx = std::make_unique<tmm_context_s>();
    const char* poison = std::getenv("TMM_DEBUG_POISON_STAGING");
    ctx->settings.poison_staging = poison != nullptr && std::strcmp(poison, "1") == 0;
    ctx->settings.math_mode = math_mode_from_environment();
    ctx->backend = tiledmm::make_backend(to_backend(raw(backend)), device);
    *out = ctx.release();
  });
}

tmm_status tmm_create(tmm_handle* out) {
  const char* v = std::getenv("TMM_DEVICES");
  if (out == nullptr || v == nullptr || *v == '\0') {
    return tmm_create_with_backend(out, TMM_BACKEND_AUTO, 0);
  }
  std::vector<int> list;
  const tmm_status parsed = guarded(g_thread_error, [&] { list = devices_from_environment(v); });
  if (parsed != TMM_SUCCESS) return parsed;
  // AUTO without CUDA: the CPU, whatever the list says.
  if (tiledmm::cuda_device_count_or_zero() == 0) {
    return tmm_create_with_backend(out, TMM_BACKEND_AUTO, 0);
  }
  return tmm_create_with_devices(out, list.empty() ? nullptr : list.data(), int(list.size()));
}

tmm_status tmm_create_with_devices(tmm_handle* out, const int* devices, int count) {
  return guarded(g_thread_error, [&] {
    require_out(out, "out");
    tiledmm::require(count >= 0 && count <= 64, Status::InvalidValue, "count must be 0 to 64 (got ",
                     count, ")");
    tiledmm::require(devices != nullptr || count == 0, Status::InvalidValue,
                     "devices is NULL with count ", count);
    std::vector<int> list(devices, devices + count);
    if (devices == nullptr) {
      const int present = tiledmm::cuda_device_count_or_zero();
      tiledmm::require(present > 0, Status::NoDevice, "no usable CUDA device or driver");
      for (int d = 0; d < present; ++d) list.push_back(d);
    }
    tiledmm::require(!list.empty(), Status::InvalidValue, "count 0 needs devices NULL");
    auto ctx = std::make_unique<tmm_context_s>();
    const char* poison = std::getenv("TMM_DEBUG_POISON_STAGING");
    ctx->settings.poison_staging = poison != nullptr && std::strcmp(poison, "1") == 0;
    ctx->settings.math_mode = math_mode_from_environment();
    ctx->backend = tiledmm::make_backend_over(list);
    *out = ctx.release();
  });
}

void tmm_destroy(tmm_handle h) { delete h; }

tmm_status tmm_get_backend(tmm_handle h, tmm_backend* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = c.backend->kind() == tiledmm::BackendKind::Cuda ? TMM_BACKEND_CUDA : TMM_BACKEND_CPU;
  });
}

tmm_status tmm_set_option(tmm_handle h, tmm_option option, int64_t value) {
  return on_handle(h, [&](tmm_context_s& c) { set_option(c, raw(option), value); });
}

tmm_status tmm_get_option(tmm_handle h, tmm_option option, int64_t* value) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(value, "value");
    *value = get_option(c, raw(option));
  });
}

tmm_status tmm_get_option_bounds(tmm_option option, int64_t* lower, int64_t* upper,
                                 int64_t* default_value) {
  return guarded(g_thread_error, [&] {
    const OptionSpec& o = option_spec(raw(option));
    if (lower) *lower = o.lower;
    if (upper) *upper = o.upper;
    if (default_value) *default_value = o.default_value;
  });
}

const char* tmm_option_name(tmm_option option) {
  const OptionSpec* o = find_option(raw(option));
  return o ? o->name : nullptr;
}

// The 1.0 setters and getters: the options above under their own names.
tmm_status tmm_set_algorithm(tmm_handle h, tmm_algorithm algorithm) {
  return tmm_set_option(h, TMM_OPTION_ALGORITHM, raw(algorithm));
}

tmm_status tmm_get_algorithm(tmm_handle h, tmm_algorithm* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = from_algorithm(c.settings.algorithm);
  });
}

tmm_status tmm_set_tile_size(tmm_handle h, int tile_size) {
  return tmm_set_option(h, TMM_OPTION_TILE_SIZE, tile_size);
}

tmm_status tmm_get_tile_size(tmm_handle h, int* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = c.settings.tile_size;
  });
}

tmm_status tmm_set_coarsening(tmm_handle h, int coarsening) {
  return tmm_set_option(h, TMM_OPTION_COARSENING, coarsening);
}

tmm_status tmm_get_coarsening(tmm_handle h, int* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = c.settings.coarsening;
  });
}

tmm_status tmm_sgemm(tmm_handle h, tmm_layout layout, tmm_transpose trans_a, tmm_transpose trans_b,
                     int64_t m, int64_t n, int64_t k, float alpha, const float* A, int64_t lda,
                     const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  return gemm_host(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, B, ldb, beta,
                   C, ldc);
}

tmm_status tmm_dgemm(tmm_handle h, tmm_layout layout, tmm_transpose trans_a, tmm_transpose trans_b,
                     int64_t m, int64_t n, int64_t k, double alpha, const double* A, int64_t lda,
                     const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  return gemm_host(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, B, ldb, beta,
                   C, ldc);
}

tmm_status tmm_sgemm_io(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                        tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                        const tmm_host_io* A, int64_t lda, const tmm_host_io* B, int64_t ldb,
                        float beta, const tmm_host_io* C, int64_t ldc) {
  return gemm_io(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, B, ldb, beta,
                 C, ldc);
}

tmm_status tmm_dgemm_io(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                        tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                        const tmm_host_io_double* A, int64_t lda, const tmm_host_io_double* B,
                        int64_t ldb, double beta, const tmm_host_io_double* C, int64_t ldc) {
  return gemm_io(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, B, ldb, beta,
                 C, ldc);
}

tmm_status tmm_sgemm_device(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                            tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                            const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                            float* C, int64_t ldc) {
  return gemm_device(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, B, ldb,
                     beta, C, ldc);
}

tmm_status tmm_dgemm_device(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                            tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                            const double* A, int64_t lda, const double* B, int64_t ldb, double beta,
                            double* C, int64_t ldc) {
  return gemm_device(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, B, ldb,
                     beta, C, ldc);
}

tmm_status tmm_sgemm_strided_batched(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                                     tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                     float alpha, const float* A, int64_t lda, int64_t stride_a,
                                     const float* B, int64_t ldb, int64_t stride_b, float beta,
                                     float* C, int64_t ldc, int64_t stride_c, int64_t batch) {
  return gemm_batched(h, false, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda,
                      stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch);
}

tmm_status tmm_dgemm_strided_batched(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                                     tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                     double alpha, const double* A, int64_t lda, int64_t stride_a,
                                     const double* B, int64_t ldb, int64_t stride_b, double beta,
                                     double* C, int64_t ldc, int64_t stride_c, int64_t batch) {
  return gemm_batched(h, false, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda,
                      stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch);
}

tmm_status tmm_sgemm_strided_batched_device(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                                            tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                            float alpha, const float* A, int64_t lda,
                                            int64_t stride_a, const float* B, int64_t ldb,
                                            int64_t stride_b, float beta, float* C, int64_t ldc,
                                            int64_t stride_c, int64_t batch) {
  return gemm_batched(h, true, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda,
                      stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch);
}

tmm_status tmm_dgemm_strided_batched_device(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                                            tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                            double alpha, const double* A, int64_t lda,
                                            int64_t stride_a, const double* B, int64_t ldb,
                                            int64_t stride_b, double beta, double* C, int64_t ldc,
                                            int64_t stride_c, int64_t batch) {
  return gemm_batched(h, true, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda,
                      stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch);
}

tmm_status tmm_sgemm_device_scalars(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                                    tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                    const float* alpha, const float* A, int64_t lda, const float* B,
                                    int64_t ldb, const float* beta, float* C, int64_t ldc) {
  return gemm_scalars(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, 0, B, ldb,
                      0, beta, C, ldc, 0, 1);
}

tmm_status tmm_dgemm_device_scalars(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                                    tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                                    const double* alpha, const double* A, int64_t lda,
                                    const double* B, int64_t ldb, const double* beta, double* C,
                                    int64_t ldc) {
  return gemm_scalars(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, 0, B, ldb,
                      0, beta, C, ldc, 0, 1);
}

tmm_status tmm_sgemm_strided_batched_device_scalars(tmm_handle h, tmm_layout layout,
                                                    tmm_transpose trans_a, tmm_transpose trans_b,
                                                    int64_t m, int64_t n, int64_t k,
                                                    const float* alpha, const float* A, int64_t lda,
                                                    int64_t stride_a, const float* B, int64_t ldb,
                                                    int64_t stride_b, const float* beta, float* C,
                                                    int64_t ldc, int64_t stride_c, int64_t batch) {
  return gemm_scalars(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, stride_a,
                      B, ldb, stride_b, beta, C, ldc, stride_c, batch);
}

tmm_status tmm_dgemm_strided_batched_device_scalars(
    tmm_handle h, tmm_layout layout, tmm_transpose trans_a, tmm_transpose trans_b, int64_t m,
    int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda, int64_t stride_a,
    const double* B, int64_t ldb, int64_t stride_b, const double* beta, double* C, int64_t ldc,
    int64_t stride_c, int64_t batch) {
  return gemm_scalars(h, raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, stride_a,
                      B, ldb, stride_b, beta, C, ldc, stride_c, batch);
}

tmm_status tmm_set_stream(tmm_handle h, void* stream) {
  return on_handle(h, [&](tmm_context_s& c) { c.backend->set_stream(stream); });
}

tmm_status tmm_set_workspace(tmm_handle h, void* workspace, size_t bytes) {
  return on_handle(h, [&](tmm_context_s& c) { c.backend->set_workspace(workspace, bytes); });
}

tmm_status tmm_get_stream(tmm_handle h, void** out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = c.backend->stream();
  });
}

tmm_status tmm_reserve_host_staging(tmm_handle h, int64_t bytes) {
  return on_handle(h, [&](tmm_context_s& c) {
    const int64_t budget = tiledmm::staging_budget(c.settings);
    require(bytes >= 0 && bytes <= budget, Status::InvalidValue, "bytes is ", bytes,
            "; it must be 0 (the staging budget) or at most the budget, ", budget,
            " (TMM_OPTION_HOST_STAGING_BYTES)");
    c.backend->reserve_host_staging(bytes > 0 ? bytes : budget);
  });
}

tmm_status tmm_synchronize(tmm_handle h) {
  return on_handle(h, [&](tmm_context_s& c) { c.backend->synchronize(); });
}

tmm_status tmm_get_last_time(tmm_handle h, double* ms) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(ms, "ms");
    *ms = c.backend->last_timing().compute_ms;
  });
}

tmm_status tmm_get_last_timing(tmm_handle h, tmm_timing* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    const tiledmm::Timing t = c.backend->last_timing();
    *out = tmm_timing{
        t.upload_ms, t.compute_ms, t.download_ms, t.total_ms, from_algorithm(t.algorithm),
        t.tile_size, t.coarsening};
  });
}

tmm_status tmm_get_last_report(tmm_handle h, tmm_report* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    tiledmm::require(out->struct_size >= kReportSize11, Status::InvalidValue,
                     "out->struct_size must be set to sizeof(tmm_report) (got ",
                     uint64_t(out->struct_size), ")");
    const tiledmm::Timing t = c.backend->last_timing();
    tmm_report r{};
    r.struct_size = std::min(out->struct_size, sizeof(tmm_report));
    r.total_ms = t.total_ms;
    r.upload_ms = t.upload_ms;
    r.compute_ms = t.compute_ms;
    r.download_ms = t.download_ms;
    r.backend =
        c.backend->kind() == tiledmm::BackendKind::Cuda ? TMM_BACKEND_CUDA : TMM_BACKEND_CPU;
    r.device = c.backend->device();
    r.algorithm = from_algorithm(t.algorithm);
    r.tile_size = t.tile_size;
    r.coarsening = t.coarsening;
    r.splits = t.splits;
    r.host_threads = t.host_threads;
    r.kernel = t.kernel;
    r.host_path = t.host_path == tiledmm::HostPath::Streamed ? TMM_HOST_PATH_STREAMED
                  : t.host_path == tiledmm::HostPath::Direct ? TMM_HOST_PATH_DIRECT
                                                             : TMM_HOST_PATH_AUTO;
    r.tiles = t.tiles > 0 ? t.tiles : 1;
    r.k_chunks = t.k_chunks > 0 ? t.k_chunks : 1;
    r.pack_ms = t.pack_ms;
    r.link_ms = t.link_ms;
    r.math_mode = from_math_mode(t.math_mode);
    r.precision = from_precision(t.precision);
    r.batch = t.batch;
    r.device_count = c.backend->kind() == tiledmm::BackendKind::Cuda ? t.devices : 0;
    r.host_bytes = t.host_bytes;
    r.workspace_bytes = t.workspace_bytes;
    std::memcpy(out, &r, r.struct_size);
  });
}

tmm_status tmm_get_kernel_info(int index, tmm_kernel_info* out) {
  return guarded(g_thread_error, [&] {
    require_out(out, "out");
    tiledmm::require(out->struct_size >= kKernelInfoSize11, Status::InvalidValue,
                     "out->struct_size must be set to sizeof(tmm_kernel_info) (got ",
                     uint64_t(out->struct_size), ")");
    // A caller whose struct ends before `precision` (built against 1.1) cannot tell a
    // double-precision row from a single one: it sees the single rows alone, indexed
    // 0, 1, ... as 1.1 listed them, each selectable through tmm_sgemm.
    const bool sees_precision = out->struct_size >= offsetof(tmm_kernel_info, precision) +
                                                        sizeof(tmm_kernel_info::precision);
    const tiledmm::KernelEntry* k = nullptr;
    for (size_t i = 0, seen = 0; index >= 0 && (k = tiledmm::kernel_at(i)) != nullptr; ++i) {
      if (!sees_precision && k->precision != tiledmm::Precision::F32) continue;
      if (seen++ == size_t(index)) break;
    }
    tiledmm::require(k != nullptr, Status::InvalidValue, "no kernel of index ", index);
    tmm_kernel_info info{};
    info.struct_size = std::min(out->struct_size, sizeof(tmm_kernel_info));
    info.name = k->name;
    info.description = k->description;
    info.backend = k->backend == tiledmm::BackendKind::Cuda ? TMM_BACKEND_CUDA : TMM_BACKEND_CPU;
    info.algorithm = from_algorithm(k->algorithm);
    info.tile_size = k->tile;
    info.coarsening = k->coarsening;
    info.is_default = k->is_default ? 1 : 0;
    info.min_compute_capability = k->min_cc;
    info.max_compute_capability = k->max_cc;
    info.outputs_per_thread = k->outputs_per_thread;
    info.math_mode = from_math_mode(k->math_mode);
    info.precision = from_precision(k->precision);
    std::memcpy(out, &info, info.struct_size);
  });
}

tmm_status tmm_get_device_info(tmm_handle h, tmm_device_info* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = to_device_info(c.backend->device_info());
  });
}

tmm_status tmm_get_device_count(tmm_handle h, int* count) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(count, "count");
    require_cuda_handle(c);
    *count = c.backend->device_count();
  });
}

tmm_status tmm_get_device_info_at(tmm_handle h, int index, tmm_device_info* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    require_entry(c, index);
    *out = to_device_info(c.backend->device_info_at(index));
  });
}

tmm_status tmm_get_last_device_report(tmm_handle h, int index, tmm_device_report* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    constexpr size_t kMinSize =
        offsetof(tmm_device_report, panel_uploads) + sizeof(tmm_device_report::panel_uploads);
    tiledmm::require(out->struct_size >= kMinSize, Status::InvalidValue,
                     "out->struct_size must be set to sizeof(tmm_device_report) (got ",
                     uint64_t(out->struct_size), ")");
    require_entry(c, index);
    const tiledmm::Timing t = c.backend->last_share(index);
    tmm_device_report r{};
    r.struct_size = std::min(out->struct_size, sizeof(tmm_device_report));
    r.device = c.backend->device_info_at(index).device;
    r.host_threads = t.host_threads;
    // A device that computed the call off the streamed path computed it as one tile.
    r.tiles = t.tiles == 0 && t.devices > 0 ? 1 : t.tiles;
    r.panel_uploads = t.panel_uploads;
    r.upload_bytes = t.upload_bytes;
    r.download_bytes = t.download_bytes;
    r.host_bytes = t.host_bytes;
    r.start_ms = t.start_ms;
    r.end_ms = t.end_ms;
    r.compute_ms = t.compute_ms;
    r.link_ms = t.link_ms;
    r.pack_ms = t.pack_ms;
    std::memcpy(out, &r, r.struct_size);
  });
}

}  // extern "C"
