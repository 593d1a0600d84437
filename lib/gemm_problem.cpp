// Argument checking for SGEMM calls, and the reduction of both layouts to the
// canonical row-major form (see gemm_problem.hpp).
#include "gemm_problem.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "error.hpp"

namespace tiledmm {
namespace {

void check_size(int64_t value, const char* name) {
  require(value >= 0, Status::InvalidValue, name, " must be >= 0 (got ", value, ")");
}

// A stored matrix of `rows` x `cols` with leading dimension `ld` (row-major view).
void check_matrix(const char* name, const char* ld_name, const void* ptr, int64_t rows,
                  int64_t cols, int64_t ld, bool needed) {
  const int64_t min_ld = cols > 1 ? cols : 1;
  require(ld >= min_ld, Status::InvalidValue, ld_name, " must be >= ", min_ld, " (got ", ld, ")");
  if (!needed) return;
  require(ptr != nullptr, Status::InvalidValue, name, " is NULL");
  // The last element touched is (rows - 1) * ld + cols - 1; its byte offset must
  // fit in 64 bits so that every address computation in the library is exact.
  int64_t elements = 0;
  int64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(rows - 1, ld, &elements) ||
                        __builtin_add_overflow(elements, cols, &elements) ||
                        __builtin_mul_overflow(elements, int64_t(sizeof(float)), &bytes);
  require(!overflow, Status::InvalidValue, name, " is too large: its byte size overflows 64 bits");
}

// A stored matrix as byte intervals: `rows` rows of `row_bytes` bytes, `pitch` bytes
// apart, from `base`.
struct Rows {
  uintptr_t base;
  int64_t rows, row_bytes, pitch;
};

Rows rows_of(const void* ptr, int64_t rows, int64_t cols, int64_t ld) {
  const int64_t size = int64_t(sizeof(float));
  return Rows{reinterpret_cast<uintptr_t>(ptr), rows, cols * size, ld * size};
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// True when the byte interval [s, e) meets a row of x. Row r covers
// [r * pitch, r * pitch + row_bytes) from x.base; the first row that ends after s
// and the last that starts before e bracket every row that can meet the interval,
// and since rows are in address order, one meets it exactly when first <= last.
bool meets(const Rows& x, uintptr_t s, uintptr_t e) {
  const int64_t from = int64_t(s - x.base), to = int64_t(e - x.base);
  const int64_t first = std::max<int64_t>(0, floor_div(from - x.row_bytes, x.pitch) + 1);
  const int64_t last = std::min<int64_t>(x.rows - 1, floor_div(to - 1, x.pitch));
  return first <= last;
}

// True when two stored matrices share a byte: O(rows of the shorter one), and O(1)
// when their address ranges are apart, as they almost always are.
bool share_an_element(const Rows& x, const Rows& y) {
  if (x.rows == 0 || y.rows == 0 || x.row_bytes == 0 || y.row_bytes == 0) return false;
  const uintptr_t x_end = x.base + uintptr_t((x.rows - 1) * x.pitch + x.row_bytes);
  const uintptr_t y_end = y.base + uintptr_t((y.rows - 1) * y.pitch + y.row_bytes);
  if (x_end <= y.base || y_end <= x.base) return false;
  const Rows& scan = x.rows <= y.rows ? x : y;
  const Rows& other = x.rows <= y.rows ? y : x;
  for (int64_t r = 0; r < scan.rows; ++r) {
    const uintptr_t s = scan.base + uintptr_t(r * scan.pitch);
    if (meets(other, s, s + uintptr_t(scan.row_bytes))) return true;
  }
  return false;
}

}  // namespace

GemmProblem make_problem(Layout layout, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                         float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                         float beta, float* c, int64_t ldc) {
  check_size(m, "m");
  check_size(n, "n");
  check_size(k, "k");

  GemmProblem p{};
  if (layout == Layout::RowMajor) {
    p = GemmProblem{trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
  } else {
    p = GemmProblem{trans_b, trans_a, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc};
  }

  // Names refer to the caller's arguments, whatever the layout did to them.
  const bool col = layout == Layout::ColMajor;
  const bool empty = is_empty(p);
  const bool uses_ab = !empty && !is_scale_only(p);
  check_matrix(col ? "B" : "A", col ? "ldb" : "lda", p.a, stored_rows_a(p), stored_cols_a(p), p.lda,
               uses_ab);
  check_matrix(col ? "A" : "B", col ? "lda" : "ldb", p.b, stored_rows_b(p), stored_cols_b(p), p.ldb,
               uses_ab);
  check_matrix("C", "ldc", p.c, p.m, p.n, p.ldc, !empty);
  p.col_major = col;
  return p;
}

void check_no_alias(const GemmProblem& p) {
  if (is_empty(p) || is_scale_only(p)) return;
  const Rows c = rows_of(p.c, p.m, p.n, p.ldc);
  require(!share_an_element(c, rows_of(p.a, stored_rows_a(p), stored_cols_a(p), p.lda)),
          Status::InvalidValue, "C shares elements with ", p.col_major ? "B" : "A",
          " (BLAS does not allow C to alias an input)");
  require(!share_an_element(c, rows_of(p.b, stored_rows_b(p), stored_cols_b(p), p.ldb)),
          Status::InvalidValue, "C shares elements with ", p.col_major ? "A" : "B",
          " (BLAS does not allow C to alias an input)");
}

}  // namespace tiledmm
