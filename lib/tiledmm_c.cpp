// The C entry points of tiledmm. Each one has the same shape: check the arguments
// that are C's business (NULL pointers, enum values), lock the handle, call the C++
// core, and turn every exception into a status code plus a message kept in the
// handle. No exception crosses this boundary, and nothing here prints or exits.
#include <cstring>
#include <mutex>
#include <new>
#include <string>

#include "backend.hpp"
#include "error.hpp"
#include "gemm_problem.hpp"
#include "tiledmm/tiledmm.h"

struct tmm_context_s {
  std::mutex mutex;  // serialises calls on one handle
  std::string error;
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
    case Status::InvalidValue: return TMM_ERROR_INVALID_VALUE;
    case Status::NoDevice: return TMM_ERROR_NO_DEVICE;
    case Status::OutOfMemory: return TMM_ERROR_OUT_OF_MEMORY;
    case Status::NotSupported: return TMM_ERROR_NOT_SUPPORTED;
    case Status::Cuda: return TMM_ERROR_CUDA;
    case Status::Internal: return TMM_ERROR_INTERNAL;
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
template <class Body>
tmm_status on_handle(tmm_handle h, Body&& body) noexcept {
  if (h == nullptr) {
    set_message(g_thread_error, "handle is NULL");
    return TMM_ERROR_INVALID_VALUE;
  }
  try {
    std::lock_guard<std::mutex> lock(h->mutex);
    return guarded(h->error, [&] { body(*h); });
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
  tiledmm::require(out != nullptr, Status::InvalidValue, std::string(name) + " is NULL");
}

Algorithm to_algorithm(int a) {
  switch (a) {
    case TMM_ALGO_AUTO: return Algorithm::Auto;
    case TMM_ALGO_NAIVE: return Algorithm::Naive;
    case TMM_ALGO_TILED: return Algorithm::Tiled;
    case TMM_ALGO_COARSENED: return Algorithm::Coarsened;
    case TMM_ALGO_BLOCKED: return Algorithm::Blocked;
  }
  throw Error(Status::InvalidValue, "unknown algorithm " + std::to_string(a));
}

tmm_algorithm from_algorithm(Algorithm a) {
  switch (a) {
    case Algorithm::Auto: return TMM_ALGO_AUTO;
    case Algorithm::Naive: return TMM_ALGO_NAIVE;
    case Algorithm::Tiled: return TMM_ALGO_TILED;
    case Algorithm::Coarsened: return TMM_ALGO_COARSENED;
    case Algorithm::Blocked: return TMM_ALGO_BLOCKED;
  }
  return TMM_ALGO_AUTO;
}

tiledmm::BackendKind to_backend(int b) {
  switch (b) {
    case TMM_BACKEND_AUTO: return tiledmm::BackendKind::Auto;
    case TMM_BACKEND_CUDA: return tiledmm::BackendKind::Cuda;
    case TMM_BACKEND_CPU: return tiledmm::BackendKind::Cpu;
  }
  throw Error(Status::InvalidValue, "unknown backend " + std::to_string(b));
}

tiledmm::Layout to_layout(int l) {
  if (l == TMM_ROW_MAJOR) return tiledmm::Layout::RowMajor;
  if (l == TMM_COL_MAJOR) return tiledmm::Layout::ColMajor;
  throw Error(Status::InvalidValue, "unknown layout " + std::to_string(l));
}

bool to_trans(int t, const char* name) {
  if (t == TMM_NO_TRANS) return false;
  if (t == TMM_TRANS) return true;
  throw Error(Status::InvalidValue, std::string("unknown ") + name + " " + std::to_string(t));
}

// Enum arguments arrive as raw() ints (see raw()).
tiledmm::GemmProblem problem(int layout, int ta, int tb, int64_t m, int64_t n, int64_t k,
                             float alpha, const float* A, int64_t lda, const float* B,
                             int64_t ldb, float beta, float* C, int64_t ldc) {
  return tiledmm::make_problem(to_layout(layout), to_trans(ta, "trans_a"),
                               to_trans(tb, "trans_b"), m, n, k, alpha, A, lda, B, ldb,
                               beta, C, ldc);
}

}  // namespace

extern "C" {

int tmm_version(void) { return TILEDMM_VERSION; }

const char* tmm_status_string(tmm_status status) {
  switch (raw(status)) {
    case TMM_SUCCESS: return "TMM_SUCCESS: success";
    case TMM_ERROR_INVALID_VALUE: return "TMM_ERROR_INVALID_VALUE: an argument is invalid";
    case TMM_ERROR_NO_DEVICE: return "TMM_ERROR_NO_DEVICE: no usable CUDA device";
    case TMM_ERROR_OUT_OF_MEMORY: return "TMM_ERROR_OUT_OF_MEMORY: out of memory";
    case TMM_ERROR_NOT_SUPPORTED:
      return "TMM_ERROR_NOT_SUPPORTED: not supported by this backend or build";
    case TMM_ERROR_CUDA: return "TMM_ERROR_CUDA: the CUDA runtime reported an error";
    case TMM_ERROR_INTERNAL: return "TMM_ERROR_INTERNAL: internal error in tiledmm";
  }
  return "unknown tmm_status value";
}

const char* tmm_get_error_message(tmm_handle h) {
  return h ? h->error.c_str() : g_thread_error.c_str();
}

tmm_status tmm_create_with_backend(tmm_handle* out, tmm_backend backend, int device) {
  return guarded(g_thread_error, [&] {
    require_out(out, "out");
    auto ctx = std::make_unique<tmm_context_s>();
    ctx->backend = tiledmm::make_backend(to_backend(raw(backend)), device);
    *out = ctx.release();
  });
}

tmm_status tmm_create(tmm_handle* out) {
  return tmm_create_with_backend(out, TMM_BACKEND_AUTO, 0);
}

void tmm_destroy(tmm_handle h) { delete h; }

tmm_status tmm_get_backend(tmm_handle h, tmm_backend* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = c.backend->kind() == tiledmm::BackendKind::Cuda ? TMM_BACKEND_CUDA
                                                           : TMM_BACKEND_CPU;
  });
}

tmm_status tmm_set_algorithm(tmm_handle h, tmm_algorithm algorithm) {
  return on_handle(h, [&](tmm_context_s& c) {
    const Algorithm a = to_algorithm(raw(algorithm));
    c.backend->check_algorithm(a);
    c.settings.algorithm = a;
  });
}

tmm_status tmm_get_algorithm(tmm_handle h, tmm_algorithm* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = from_algorithm(c.settings.algorithm);
  });
}

tmm_status tmm_set_tile_size(tmm_handle h, int tile_size) {
  return on_handle(h, [&](tmm_context_s& c) {
    const bool known = tile_size == 0 || tile_size == 8 || tile_size == 16 ||
                       tile_size == 32 || tile_size == 64 || tile_size == 128 ||
                       tile_size == 256;
    tiledmm::require(known, Status::InvalidValue,
                     "tile size must be 0, 8, 16, 32, 64, 128 or 256 (got " +
                         std::to_string(tile_size) + ")");
    c.settings.tile_size = tile_size;
  });
}

tmm_status tmm_get_tile_size(tmm_handle h, int* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = c.settings.tile_size;
  });
}

tmm_status tmm_set_coarsening(tmm_handle h, int coarsening) {
  return on_handle(h, [&](tmm_context_s& c) {
    tiledmm::require(coarsening == 0 || coarsening == 1 || coarsening == 2 || coarsening == 4,
                     Status::InvalidValue,
                     "coarsening must be 0, 1, 2 or 4 (got " + std::to_string(coarsening) + ")");
    c.settings.coarsening = coarsening;
  });
}

tmm_status tmm_get_coarsening(tmm_handle h, int* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = c.settings.coarsening;
  });
}

tmm_status tmm_sgemm(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                     tmm_transpose trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                     const float* A, int64_t lda, const float* B, int64_t ldb, float beta,
                     float* C, int64_t ldc) {
  return on_handle(h, [&](tmm_context_s& c) {
    const auto p = problem(raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, B,
                           ldb, beta, C, ldc);
    c.backend->gemm_host(p, c.settings);
  });
}

tmm_status tmm_sgemm_device(tmm_handle h, tmm_layout layout, tmm_transpose trans_a,
                            tmm_transpose trans_b, int64_t m, int64_t n, int64_t k,
                            float alpha, const float* A, int64_t lda, const float* B,
                            int64_t ldb, float beta, float* C, int64_t ldc) {
  return on_handle(h, [&](tmm_context_s& c) {
    const auto p = problem(raw(layout), raw(trans_a), raw(trans_b), m, n, k, alpha, A, lda, B,
                           ldb, beta, C, ldc);
    c.backend->gemm_device(p, c.settings);
  });
}

tmm_status tmm_set_stream(tmm_handle h, void* stream) {
  return on_handle(h, [&](tmm_context_s& c) { c.backend->set_stream(stream); });
}

tmm_status tmm_get_stream(tmm_handle h, void** out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    *out = c.backend->stream();
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
    *out = tmm_timing{t.upload_ms, t.compute_ms,  t.download_ms, t.total_ms,
                      from_algorithm(t.algorithm), t.tile_size, t.coarsening};
  });
}

tmm_status tmm_get_device_info(tmm_handle h, tmm_device_info* out) {
  return on_handle(h, [&](tmm_context_s& c) {
    require_out(out, "out");
    const tiledmm::DeviceInfo d = c.backend->device_info();
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
    *out = info;
  });
}

}  // extern "C"
