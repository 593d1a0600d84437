#include "host_io.hpp"

#include <algorithm>
#include <vector>

#include "error.hpp"

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

void run_materialized(const GemmProblem& p, const std::function<void(const GemmProblem&)>& run) {
  const bool uses_c = !is_empty(p);
  const bool uses_ab = uses_c && !is_scale_only(p);
  const int64_t a_rows = stored_rows_a(p), a_cols = stored_cols_a(p);
  const int64_t b_rows = stored_rows_b(p), b_cols = stored_cols_b(p);
  std::vector<float> a, b, c;  // dense: leading dimension = columns
  if (uses_ab) {
    a.resize(size_t(a_rows * a_cols));
    b.resize(size_t(b_rows * b_cols));
  }
  if (uses_c) c.resize(size_t(p.m * p.n));
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
    if (p.beta != 0.0f) io_read(*p.c_io, 0, p.ldc, p.m, p.n, c.data(), p.n);
    q.c = c.data();
    q.ldc = std::max<int64_t>(1, p.n);
  }
  run(q);
  if (uses_c) io_write(*p.c_io, 0, p.ldc, p.m, p.n, c.data(), p.n);
}

}  // namespace tiledmm
