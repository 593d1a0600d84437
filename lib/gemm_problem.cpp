// Argument checking for SGEMM calls, and the reduction of both layouts to the
// canonical row-major form (see gemm_problem.hpp).
#include "gemm_problem.hpp"

#include <string>

#include "error.hpp"

namespace tiledmm {
namespace {

void check_size(int64_t value, const char* name) {
  require(value >= 0, Status::InvalidValue,
          std::string(name) + " must be >= 0 (got " + std::to_string(value) + ")");
}

// A stored matrix of `rows` x `cols` with leading dimension `ld` (row-major view).
void check_matrix(const char* name, const char* ld_name, const void* ptr,
                  int64_t rows, int64_t cols, int64_t ld, bool needed) {
  const int64_t min_ld = cols > 1 ? cols : 1;
  require(ld >= min_ld, Status::InvalidValue,
          std::string(ld_name) + " must be >= " + std::to_string(min_ld) + " (got " +
              std::to_string(ld) + ")");
  if (!needed) return;
  require(ptr != nullptr, Status::InvalidValue, std::string(name) + " is NULL");
  // The last element touched is (rows - 1) * ld + cols - 1; its byte offset must
  // fit in 64 bits so that every address computation in the library is exact.
  int64_t elements = 0;
  int64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(rows - 1, ld, &elements) ||
                        __builtin_add_overflow(elements, cols, &elements) ||
                        __builtin_mul_overflow(elements, int64_t(sizeof(float)), &bytes);
  require(!overflow, Status::InvalidValue,
          std::string(name) + " is too large: its byte size overflows 64 bits");
}

}  // namespace

GemmProblem make_problem(Layout layout, bool trans_a, bool trans_b, int64_t m,
                         int64_t n, int64_t k, float alpha, const float* a,
                         int64_t lda, const float* b, int64_t ldb, float beta,
                         float* c, int64_t ldc) {
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
  check_matrix(col ? "B" : "A", col ? "ldb" : "lda", p.a, stored_rows_a(p),
               stored_cols_a(p), p.lda, uses_ab);
  check_matrix(col ? "A" : "B", col ? "lda" : "ldb", p.b, stored_rows_b(p),
               stored_cols_b(p), p.ldb, uses_ab);
  check_matrix("C", "ldc", p.c, p.m, p.n, p.ldc, !empty);
  return p;
}

}  // namespace tiledmm
