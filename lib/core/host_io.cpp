#include "core/host_io.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace tiledmm {

void io_read(const HostIo& io, int64_t offset, int64_t ld, int64_t rows, int64_t cols, float* dst,
             int64_t dst_ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const int rc = io.read(io.user, offset + r * ld, cols, dst + r * dst_ld);
    require(rc == 0, Status::Callback, "the read function of ", io.name, " returned ", rc);
  }
}

void io_write(const HostIo& io, int64_t offset, int64_t ld, int64_t rows, int64_t cols,
              const float* src, int64_t src_ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const int rc = io.write(io.user, offset + r * ld, cols, src + r * src_ld);
    require(rc == 0, Status::Callback, "the write function of ", io.name, " returned ", rc);
  }
}

namespace {

// A dense host copy of an operand of `rows` x `cols` floats. make_problem bounds the
// count (rows * cols <= the operand's span, below 2^61), but not below what a vector
// may hold everywhere, and std::length_error would surface as an internal error: a
// copy too large for this host is out of memory, as a failed allocation is.
void resize_dense(std::vector<float>& v, int64_t rows, int64_t cols, const char* name) {
  const uint64_t floats = uint64_t(rows) * uint64_t(cols);
  require(floats <= v.max_size(), Status::OutOfMemory, "the host copy of ", name, " (",
          floats * sizeof(float), " bytes) is larger than this host can allocate");
  v.resize(size_t(floats));
}

}  // namespace

void run_materialized(const GemmProblem& p, const std::function<void(const GemmProblem&)>& run) {
  const bool uses_c = !is_empty(p);
  const bool uses_ab = uses_c && !is_scale_only(p);
  const int64_t a_rows = stored_rows_a(p), a_cols = stored_cols_a(p);
  const int64_t b_rows = stored_rows_b(p), b_cols = stored_cols_b(p);
  std::vector<float> a, b, c;  // dense: leading dimension = columns
  if (uses_ab) {
    resize_dense(a, a_rows, a_cols, p.a_io->name);
    resize_dense(b, b_rows, b_cols, p.b_io->name);
  }
  if (uses_c) resize_dense(c, p.m, p.n, "C");
  GemmProblem q = p;
  q.a_io = q.b_io = q.c_io = nullptr;
  if (uses_ab) {
    io_read(*p.a_io, 0, p.lda, a_rows, a_cols, a.data(), a_cols);
    io_read(*p.b_io, 0, p.ldb, b_rows, b_cols, b.data(), b_cols);
    q.a = a.data();
    q.lda = std::max<int64_t>(1, a_cols);
    q.b = b.data();
    q.ldb = std::max<int64_t>(1, b_cols);
  }
  if (uses_c) {
    if (p.beta != 0.0) io_read(*p.c_io, 0, p.ldc, p.m, p.n, c.data(), p.n);
    q.c = c.data();
    q.ldc = std::max<int64_t>(1, p.n);
  }
  run(q);
  if (uses_c) io_write(*p.c_io, 0, p.ldc, p.m, p.n, c.data(), p.n);
}

}  // namespace tiledmm
