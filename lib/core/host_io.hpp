// Host matrices behind the caller's functions (tmm_host_io) instead of pointers, in
// the core's terms: a canonical (row-major) problem carries, per operand, the io to
// read and write it through (GemmProblem::a_io, b_io, c_io); offsets are linear, so
// the column-major swap of A and B (gemm_problem.hpp) carries over unchanged.
//
// The streamed path calls the functions from its packing threads (cuda/streamed/); every
// other path runs on whole operands read first into buffers of its own
// (run_materialized), then writes C back.
#pragma once

#include <cstdint>
#include <functional>

#include "core/gemm_problem.hpp"

namespace tiledmm {

struct HostIo {
  int (*read)(void* user, int64_t offset, int64_t count, float* dst);
  int (*write)(void* user, int64_t offset, int64_t count, const float* src);
  void* user;
  const char* name;  // "A", "B" or "C" as the caller named it, for messages
};

// rows runs of cols floats, the run r at offset + r * ld of `io`, to or from dst/src
// (runs dst_ld apart). Throws Error(Callback) naming the operand when the function
// fails. Thread-safe as the functions are.
void io_read(const HostIo& io, int64_t offset, int64_t ld, int64_t rows, int64_t cols, float* dst,
             int64_t dst_ld);
void io_write(const HostIo& io, int64_t offset, int64_t ld, int64_t rows, int64_t cols,
              const float* src, int64_t src_ld);

// Reads the operands `p` uses through their io into host buffers (dense), runs `run`
// on that pointer problem, and writes C's m x n part back. Allocation happens before
// the first read: out of memory leaves C untouched.
void run_materialized(const GemmProblem& p, const std::function<void(const GemmProblem&)>& run);

}  // namespace tiledmm
