#include "core/host_io.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace tiledmm {

template <class T>
void io_read(const HostIo& io, int64_t offset, int64_t ld, int64_t rows, int64_t cols, T* dst,
             int64_t dst_ld) {
  const IoFunctions<T>& f = io.functions<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const int rc = f.read(io.user, offset + r * ld, cols, dst + r * dst_ld);
    require(rc == 0, Status::Callback, "the read function of ", io.name, " returned ", rc);
  }
}

template <class T>
void io_write(const HostIo& io, int64_t offset, int64_t ld, int64_t rows, int64_t cols,
              const T* src, int64_t src_ld) {
  const IoFunctions<T>& f = io.functions<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const int rc = f.write(io.user, offset + r * ld, cols, src + r * src_ld);
    require(rc == 0, Status::Callback, "the write function of ", io.name, " returned ", rc);
  }
}

template void io_read(const HostIo&, int64_t, int64_t, int64_t, int64_t, float*, int64_t);
template void io_read(const HostIo&, int64_t, int64_t, int64_t, int64_t, double*, int64_t);
template void io_write(const HostIo&, int64_t, int64_t, int64_t, int64_t, const float*, int64_t);
template void io_write(const HostIo&, int64_t, int64_t, int64_t, int64_t, const double*, int64_t);

namespace {

// A dense host copy of an operand of `rows` x `cols` elements. make_problem bounds the
// count (rows * cols <= the operand's span, below 2^61 bytes), but not below what a
// vector may hold everywhere, and std::length_error would surface as an internal
// error: a copy too large for this host is out of memory, as a failed allocation is.
template <class T>
void resize_dense(std::vector<T>& v, int64_t rows, int64_t cols, const char* name) {
  const uint64_t elements = uint64_t(rows) * uint64_t(cols);
  require(elements <= v.max_size(), Status::OutOfMemory, "the host copy of ", name, " (",
          elements * sizeof(T), " bytes) is larger than this host can allocate");
  v.resize(size_t(elements));
}

template <class T>
void run_materialized_as(const GemmProblem& p, const std::function<void(const GemmProblem&)>& run) {
  const bool uses_c = !is_empty(p);
  const bool uses_ab = uses_c && !is_scale_only(p);
  const int64_t a_rows = stored_rows_a(p), a_cols = stored_cols_a(p);
  const int64_t b_rows = stored_rows_b(p), b_cols = stored_cols_b(p);
  std::vector<T> a, b, c;  // dense: leading dimension = columns
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

}  // namespace

void run_materialized(const GemmProblem& p, const std::function<void(const GemmProblem&)>& run) {
  visit_precision(p.precision, [&](auto zero) { run_materialized_as<decltype(zero)>(p, run); });
}

}  // namespace tiledmm
