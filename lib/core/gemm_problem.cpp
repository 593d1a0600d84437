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

// A stored matrix of `rows` x `cols` with leading dimension `ld` (row-major view), in
// `batch` products `stride` elements apart.
void check_matrix(const char* name, const char* ld_name, const void* ptr, int64_t rows,
                  int64_t cols, int64_t ld, int element_size, bool needed, int64_t batch = 1,
                  int64_t stride = 0) {
  const int64_t min_ld = cols > 1 ? cols : 1;
  require(ld >= min_ld, Status::InvalidValue, ld_name, " must be >= ", min_ld, " (got ", ld, ")");
  if (!needed) return;
  require(ptr != nullptr, Status::InvalidValue, name, " is NULL");
  // The last element touched is (batch - 1) * stride + (rows - 1) * ld + cols - 1; its
  // byte offset must fit in 64 bits so that every address computation in the library
  // is exact.
  int64_t elements = 0, last = 0;
  int64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(rows - 1, ld, &elements) ||
                        __builtin_add_overflow(elements, cols, &elements) ||
                        __builtin_mul_overflow(elements, int64_t(element_size), &bytes);
  require(!overflow, Status::InvalidValue, name, " is too large: its byte size overflows 64 bits");
  const bool batch_overflow =
      batch > 1 && (__builtin_mul_overflow(batch - 1, stride, &last) ||
                    __builtin_add_overflow(last, elements, &last) ||
                    __builtin_mul_overflow(last, int64_t(element_size), &bytes));
  require(!batch_overflow, Status::InvalidValue, name,
          " is too large: its last product's byte offset overflows 64 bits");
}

// Whether products d apart of a matrix (rows x cols, leading dimension ld, products
// stride elements apart) share an element: a shift of x = d * stride elements, x = q ld
// + r with 0 <= r < ld, lays row i of one on row q + i of the other from column r on,
// into row q + i + 1 where r + cols > ld.
bool products_overlap(int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t d) {
  __int128 x = __int128(d) * stride;
  const __int128 q = x / ld, r = x % ld;
  return (q < rows && r < cols) || (q + 1 < rows && ld - r < cols);
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
  return make_batched_problem(precision, layout, trans_a, trans_b, m, n, k, alpha, a, lda, 0, b,
                              ldb, 0, beta, c, ldc, 0, 1);
}

GemmProblem make_batched_problem(Precision precision, Layout layout, bool trans_a, bool trans_b,
                                 int64_t m, int64_t n, int64_t k, double alpha, const void* a,
                                 int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                                 int64_t stride_b, double beta, void* c, int64_t ldc,
                                 int64_t stride_c, int64_t batch) {
  check_size(m, "m");
  check_size(n, "n");
  check_size(k, "k");
  check_size(batch, "batch");
  check_size(stride_a, "stride_a");
  check_size(stride_b, "stride_b");
  check_size(stride_c, "stride_c");

  GemmProblem p{};
  if (layout == Layout::RowMajor) {
    p = GemmProblem{trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc};
    p.stride_a = stride_a;
    p.stride_b = stride_b;
  } else {
    p = GemmProblem{trans_b, trans_a, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc};
    p.stride_a = stride_b;
    p.stride_b = stride_a;
  }
  p.stride_c = stride_c;
  p.batch = batch;

  // Names refer to the caller's arguments, whatever the layout did to them.
  const bool col = layout == Layout::ColMajor;
  const bool empty = is_empty(p);
  const bool uses_ab = !empty && !is_scale_only(p);
  const int size = element_bytes(precision);
  check_matrix(col ? "B" : "A", col ? "ldb" : "lda", p.a, stored_rows_a(p), stored_cols_a(p), p.lda,
               size, uses_ab, batch, p.stride_a);
  check_matrix(col ? "A" : "B", col ? "lda" : "ldb", p.b, stored_rows_b(p), stored_cols_b(p), p.ldb,
               size, uses_ab, batch, p.stride_b);
  check_matrix("C", "ldc", p.c, p.m, p.n, p.ldc, size, !empty, batch, p.stride_c);
  // C's products may not overlap: products d apart overlap alike, and from
  // d * stride_c >= (m - 1) * ldc + n (a product's extent) on they are apart.
  if (!empty && batch > 1) {
    require(p.stride_c > 0, Status::InvalidValue,
            "stride_c must be > 0 when batch > 1 (the products would write one C)");
    const __int128 span = __int128(p.m - 1) * p.ldc + p.n;
    for (int64_t d = 1; d < batch && __int128(d) * p.stride_c < span; ++d) {
      require(!products_overlap(p.m, p.n, p.ldc, p.stride_c, d), Status::InvalidValue,
              "C's products 0 and ", d, " share elements (stride_c ", p.stride_c, ", ldc ", p.ldc,
              ")");
    }
  }
  p.col_major = col;
  p.precision = precision;
  return p;
}

GemmProblem products_of(const GemmProblem& p, int64_t first, int64_t count) {
  GemmProblem q = p;
  const int64_t bytes = element_bytes(p.precision);
  // Only the matrices the call uses move (make_batched_problem checked their extents;
  // an unread A or B may have any stride, as it may be any pointer).
  const auto advance = [&](const void* x, int64_t stride, bool used) -> const void* {
    return x == nullptr || !used ? x : static_cast<const char*>(x) + first * stride * bytes;
  };
  const bool uses_c = !is_empty(p), uses_ab = uses_c && !is_scale_only(p);
  q.a = advance(p.a, p.stride_a, uses_ab);
  q.b = advance(p.b, p.stride_b, uses_ab);
  q.c = const_cast<void*>(advance(p.c, p.stride_c, uses_c));
  q.batch = count;
  return q;
}

GemmProblem product_of(const GemmProblem& p, int64_t b) {
  GemmProblem q = products_of(p, b, 1);
  q.stride_a = q.stride_b = q.stride_c = 0;
  return q;
}

namespace {

// The products of an input (x, `stride_bytes` apart, each its Rows from x's first) that
// some product of C (c, likewise) shares an element with: -1 where none does, else a
// pair's C product. O(1) where the two batches' address ranges are apart.
int64_t input_product_meeting_c(const Rows& c, int64_t c_stride, const Rows& x, int64_t x_stride,
                                int64_t batch) {
  if (c.rows == 0 || x.rows == 0 || c.row_bytes == 0 || x.row_bytes == 0) return -1;
  const i128 c_span = (c.rows - 1) * c.pitch + c.row_bytes;
  const i128 x_span = (x.rows - 1) * x.pitch + x.row_bytes;
  const i128 c_end = c.base + i128(batch - 1) * c_stride + c_span;
  const i128 x_end = x.base + i128(batch - 1) * x_stride + x_span;
  if (c_end <= x.base || x_end <= c.base) return -1;
  if (x_stride == c_stride) {
    // Equal strides (heads of one packed buffer, say): product i of C meets product j of
    // x as C's first meets x's shifted by d = j - i products, so each d once: O(batch x
    // rows), not batch^2. The shifts whose range meets C's first product's:
    // x.base + d s < c.base + c_span and x.base + d s + x_span > c.base.
    const i128 lo = floor_div(c.base - x_span - x.base, c_stride) + 1;
    const i128 hi = floor_div(c.base + c_span - 1 - x.base, c_stride);
    for (i128 d = std::max<i128>(lo, -(batch - 1)); d <= std::min<i128>(hi, batch - 1); ++d) {
      Rows xd = x;
      xd.base += d * c_stride;
      if (share_an_element(c, xd)) return int64_t(d < 0 ? -d : 0);  // C's product i, j = i + d
    }
    return -1;
  }
  for (int64_t i = 0; i < batch; ++i) {
    Rows ci = c;
    ci.base += i128(i) * c_stride;
    // The products j of x whose byte range meets ci's: x.base + j s < ci_end and
    // x.base + j s + x_span > ci.base.
    int64_t j0 = 0, j1 = batch - 1;
    if (x_stride > 0) {
      const i128 lo = floor_div(ci.base - x_span - x.base, x_stride) + 1;
      const i128 hi = floor_div(ci.base + c_span - 1 - x.base, x_stride);
      j0 = int64_t(std::max<i128>(0, lo));
      j1 = int64_t(std::min<i128>(batch - 1, hi));
    } else {
      j1 = 0;  // one matrix for every product
    }
    for (int64_t j = j0; j <= j1; ++j) {
      Rows xj = x;
      xj.base += i128(j) * x_stride;
      if (share_an_element(ci, xj)) return i;
    }
  }
  return -1;
}

// The first product of x (`batch` of them, `stride_bytes` apart) that shares a byte with
// y, one range for every product (a scalar, a workspace): -1 where none does.
int64_t product_meeting(const Rows& x, int64_t stride_bytes, int64_t batch, const Rows& y) {
  if (batch <= 1 || stride_bytes == 0) return share_an_element(x, y) ? 0 : -1;
  return input_product_meeting_c(x, stride_bytes, y, 0, batch);
}

}  // namespace

void check_no_alias(const GemmProblem& p) {
  if (is_empty(p)) return;
  const i128 size = element_bytes(p.precision);
  const Rows c = rows_of(p.c, p.m, p.n, p.ldc, p.precision);
  // Scalars in device memory: kernels read them while others write C (k = 0 too).
  const void* scalars[2] = {p.alpha_at, p.beta_at};
  const char* names[2] = {"alpha", "beta"};
  for (int i = 0; i < 2; ++i) {
    if (scalars[i] == nullptr) continue;
    const int64_t meets = product_meeting(c, int64_t(p.stride_c * size), p.batch,
                                          rows_of(scalars[i], 1, 1, 1, p.precision));
    if (meets < 0) continue;
    if (p.batch > 1)
      fail(Status::InvalidValue, names[i], " shares bytes with C's product ", meets,
           " (the kernels would read it while others write C)");
    fail(Status::InvalidValue, names[i],
         " shares bytes with C (the kernels would read it while others write C)");
  }
  if (is_scale_only(p)) return;
  const Rows a = rows_of(p.a, stored_rows_a(p), stored_cols_a(p), p.lda, p.precision);
  const Rows b = rows_of(p.b, stored_rows_b(p), stored_cols_b(p), p.ldb, p.precision);
  if (p.batch <= 1) {
    require(!share_an_element(c, a), Status::InvalidValue, "C shares elements with ",
            p.col_major ? "B" : "A", " (BLAS does not allow C to alias an input)");
    require(!share_an_element(c, b), Status::InvalidValue, "C shares elements with ",
            p.col_major ? "A" : "B", " (BLAS does not allow C to alias an input)");
    return;
  }
  const int64_t c_stride = int64_t(p.stride_c * size);
  const int64_t with_a =
      input_product_meeting_c(c, c_stride, a, int64_t(p.stride_a * size), p.batch);
  require(with_a < 0, Status::InvalidValue, "C's product ", with_a, " shares elements with ",
          p.col_major ? "B" : "A", " (BLAS does not allow C to alias an input)");
  const int64_t with_b =
      input_product_meeting_c(c, c_stride, b, int64_t(p.stride_b * size), p.batch);
  require(with_b < 0, Status::InvalidValue, "C's product ", with_b, " shares elements with ",
          p.col_major ? "A" : "B", " (BLAS does not allow C to alias an input)");
}

const char* operand_meeting(const GemmProblem& p, const void* at, int64_t bytes) {
  if (is_empty(p) || at == nullptr || bytes <= 0) return nullptr;
  const i128 size = element_bytes(p.precision);
  const Rows range{i128(reinterpret_cast<uintptr_t>(at)), 1, bytes, bytes};
  const auto meets = [&](const Rows& x, int64_t stride) {  // stride in elements
    return product_meeting(x, int64_t(stride * size), p.batch, range) >= 0;
  };
  if (!is_scale_only(p)) {
    if (meets(rows_of(p.a, stored_rows_a(p), stored_cols_a(p), p.lda, p.precision), p.stride_a))
      return p.col_major ? "B" : "A";
    if (meets(rows_of(p.b, stored_rows_b(p), stored_cols_b(p), p.ldb, p.precision), p.stride_b))
      return p.col_major ? "A" : "B";
  }
  if (meets(rows_of(p.c, p.m, p.n, p.ldc, p.precision), p.stride_c)) return "C";
  if (p.alpha_at != nullptr && meets(rows_of(p.alpha_at, 1, 1, 1, p.precision), 0)) return "alpha";
  if (p.beta_at != nullptr && meets(rows_of(p.beta_at, 1, 1, 1, p.precision), 0)) return "beta";
  return nullptr;
}

}  // namespace tiledmm
