// Host matrices behind the caller's functions (tmm_host_io) instead of pointers, in
// the core's terms: a canonical (row-major) problem carries, per operand, the io to
// read and write it through (GemmProblem::a_io, b_io, c_io); offsets are linear, so
// the column-major swap of A and B (gemm_problem.hpp) carries over unchanged.
//
// The streamed path calls the functions from its packing threads (cuda/streamed/); every
// other path runs on whole operands read first into buffers of its own
// (run_materialized), then writes C back.
#pragma once

#include <cassert>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "core/gemm_problem.hpp"
#include "core/precision.hpp"

namespace tiledmm {

// The caller's two functions for matrices of T (tmm_host_io's for float).
template <class T>
struct IoFunctions {
  int (*read)(void* user, int64_t offset, int64_t count, T* dst) = nullptr;
  int (*write)(void* user, int64_t offset, int64_t count, const T* src) = nullptr;
};

// One operand's io. Only the pair of its precision is set (the problem's: make one
// with host_io below).
struct HostIo {
  Precision precision = Precision::F32;
  IoFunctions<float> f32;
  IoFunctions<double> f64;
  void* user = nullptr;
  const char* name = nullptr;  // "A", "B" or "C" as the caller named it, for messages

  template <class T>
  const IoFunctions<T>& functions() const {
    assert(precision == precision_of<T>);
    if constexpr (std::is_same_v<T, double>) {
      return f64;
    } else {
      return f32;
    }
  }
};

template <class T>
HostIo host_io(IoFunctions<T> functions, void* user, const char* name) {
  HostIo io;
  io.precision = precision_of<T>;
  if constexpr (std::is_same_v<T, double>) {
    io.f64 = functions;
  } else {
    io.f32 = functions;
  }
  io.user = user;
  io.name = name;
  return io;
}

// rows runs of cols elements, the run r at offset + r * ld of `io`, to or from
// dst/src (runs dst_ld apart). T must be the io's precision. Throws Error(Callback)
// naming the operand when the function fails. Thread-safe as the functions are.
template <class T>
void io_read(const HostIo& io, int64_t offset, int64_t ld, int64_t rows, int64_t cols, T* dst,
             int64_t dst_ld);
template <class T>
void io_write(const HostIo& io, int64_t offset, int64_t ld, int64_t rows, int64_t cols,
              const T* src, int64_t src_ld);

extern template void io_read(const HostIo&, int64_t, int64_t, int64_t, int64_t, float*, int64_t);
extern template void io_read(const HostIo&, int64_t, int64_t, int64_t, int64_t, double*, int64_t);
extern template void io_write(const HostIo&, int64_t, int64_t, int64_t, int64_t, const float*,
                              int64_t);
extern template void io_write(const HostIo&, int64_t, int64_t, int64_t, int64_t, const double*,
                              int64_t);

// Reads the operands `p` uses through their io into host buffers (dense, of p's
// precision), runs `run` on that pointer problem, and writes C's m x n part back.
// Allocation happens before the first read: out of memory leaves C untouched.
void run_materialized(const GemmProblem& p, const std::function<void(const GemmProblem&)>& run);

}  // namespace tiledmm
