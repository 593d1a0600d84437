// Argument checking for GEMM calls, and the reduction of both layouts to the
// canonical row-major form (see gemm_problem.hpp).
#include "core/gemm_problem.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace tiledmm {
namespace {

void check_size(int64_t value, const char* name) {
  require(value >= 0, Status::InvalidValue, name, " must be >= 0 (got ", value, ")");
}

// A stored matrix of `rows` x `cols` with leading dimension `ld` (row-major view).
void check_matrix(const char* name, const char* ld_name, const void* ptr, int64_t rows,
                  int64_t cols, int64_t ld, int element_size, bool needed) {
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
                        __builtin_mul_overflow(elements, int64_t(element_size), &bytes);
  require(!overflow, Status::InvalidValue, name, " is too large: its byte size overflows 64 bits");
}

// Aliasing is decided in 128-bit arithmetic, which is exact for every matrix that
// make_problem accepts and every address: a needed matrix spans at most INT64_MAX
// bytes, but its leading dimension alone may be up to INT64_MAX elements (a single
// row), 8 * INT64_MAX bytes, and an address plus a span may pass 2^64.
using i128 = __int128;

// A stored matrix as byte intervals: `rows` rows of `row_bytes` bytes, `pitch` bytes
// apart, from `base`.
struct Rows {
  i128 base, rows, row_bytes, pitch;
};

Rows rows_of(const void* ptr, int64_t rows, int64_t cols, int64_t ld, Precision precision) {
  const i128 size = element_bytes(precision);
  return Rows{i128(reinterpret_cast<uintptr_t>(ptr)), rows, cols * size, ld * size};
}

// Rounds towards minus infinity; b > 0.
i128 floor_div(i128 a, i128 b) { return a / b - (a % b != 0 && a < 0); }

// True when the byte interval [s, e) meets a row of x. Row r covers
// [r * pitch, r * pitch + row_bytes) from x.base; the first row that ends after s
// and the last that starts before e bracket every row that can meet the interval,
// and since rows are in address order, one meets it exactly when first <= last.
bool meets(const Rows& x, i128 s, i128 e) {
  const i128 from = s - x.base, to = e - x.base;
  const i128 first = std::max<i128>(0, floor_div(from - x.row_bytes, x.pitch) + 1);
  const i128 last = std::min<i128>(x.rows - 1, floor_div(to - 1, x.pitch));
  return first <= last;
}

// True when two stored matrices share a byte: O(rows of the shorter one), and O(1)
// when their address ranges are apart, as they almost always are. Both come from
// make_problem: (rows - 1) * pitch + row_bytes <= INT64_MAX, and pitch >= 4.
bool share_an_element(const Rows& x, const Rows& y) {
  if (x.rows == 0 || y.rows == 0 || x.row_bytes == 0 || y.row_bytes == 0) return false;
  const i128 x_end = x.base + (x.rows - 1) * x.pitch + x.row_bytes;
  const i128 y_end = y.base + (y.rows - 1) * y.pitch + y.row_bytes;
  if (x_end <= y.base || y_end <= x.base) return false;
  const Rows& scan = x.rows <= y.rows ? x : y;
  const Rows& other = x.rows <= y.rows ? y : x;
  for (i128 r = 0; r < scan.rows; ++r) {
    const i128 s = scan.base + r * scan.pitch;
    if (meets(other, s, s + scan.row_bytes)) return true;
  }
  return false;
}

}  // namespace

GemmProblem make_problem(Precision precision, Layout layout, bool trans_a, bool trans_b, int64_t m,
                         int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
                         const void* b, int64_t ldb, double beta, void* c, int64_t ldc) {
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
  const int size = element_bytes(precision);
  check_matrix(col ? "B" : "A", col ? "ldb" : "lda", p.a, stored_rows_a(p), stored_cols_a(p), p.lda,
               size, uses_ab);
  check_matrix(col ? "A" : "B", col ? "lda" : "ldb", p.b, stored_rows_b(p), stored_cols_b(p), p.ldb,
               size, uses_ab);
  check_matrix("C", "ldc", p.c, p.m, p.n, p.ldc, size, !empty);
  p.col_major = col;
  p.precision = precision;
  return p;
}

void check_no_alias(const GemmProblem& p) {
  if (is_empty(p) || is_scale_only(p)) return;
  const Rows c = rows_of(p.c, p.m, p.n, p.ldc, p.precision);
  require(
      !share_an_element(c, rows_of(p.a, stored_rows_a(p), stored_cols_a(p), p.lda, p.precision)),
      Status::InvalidValue, "C shares elements with ", p.col_major ? "B" : "A",
      " (BLAS does not allow C to alias an input)");
  require(
      !share_an_element(c, rows_of(p.b, stored_rows_b(p), stored_cols_b(p), p.ldb, p.precision)),
      Status::InvalidValue, "C shares elements with ", p.col_major ? "A" : "B",
      " (BLAS does not allow C to alias an input)");
}

}  // namespace tiledmm
