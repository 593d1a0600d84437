// One SGEMM call, reduced to a single canonical form that every backend and kernel
// consumes: row-major storage, C (m x n) = alpha * op(A) (m x k) * op(B) (k x n)
// + beta * C.
//
// A column-major call is the row-major call on the transposed problem: a column-major
// matrix read as row-major is its transpose, and C^T = op(B)^T * op(A)^T, so the
// operands and their flags swap and m and n swap. Kernels therefore see one layout.
//
// This header is plain data, shared by host C++ and CUDA code.
#pragma once

#include <cstdint>

namespace tiledmm {

enum class Layout { RowMajor, ColMajor };

struct HostIo;  // host_io.hpp

struct GemmProblem {
  bool trans_a;  // op(A) = A^T: A is stored k x m
  bool trans_b;  // op(B) = B^T: B is stored n x k
  int64_t m, n, k;
  float alpha;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float beta;
  float* c;
  int64_t ldc;
  bool col_major = false;  // the caller's layout, for messages naming A and B
  // tmm_sgemm_io: the functions that read and write each operand (its pointer above
  // is then a stand-in that must not be dereferenced); null for pointer calls.
  const HostIo* a_io = nullptr;
  const HostIo* b_io = nullptr;
  const HostIo* c_io = nullptr;
};

inline bool has_io(const GemmProblem& p) { return p.a_io || p.b_io || p.c_io; }

// Checks a CBLAS-style call (sizes, leading dimensions, pointers, sizes whose byte
// counts overflow) and returns its canonical row-major form. Throws
// Error(Status::InvalidValue) naming the offending argument.
GemmProblem make_problem(Layout layout, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                         float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                         float beta, float* c, int64_t ldc);

// Throws Error(InvalidValue) when C shares an element (a byte) with A or B in a call
// that reads them. Interleaved submatrices of one array that share no element pass.
// `p` comes from make_problem, whose checks keep the arithmetic exact.
void check_no_alias(const GemmProblem& p);

// Rows and columns of a matrix as stored (row-major canonical form).
inline int64_t stored_rows_a(const GemmProblem& p) { return p.trans_a ? p.k : p.m; }
inline int64_t stored_cols_a(const GemmProblem& p) { return p.trans_a ? p.m : p.k; }
inline int64_t stored_rows_b(const GemmProblem& p) { return p.trans_b ? p.n : p.k; }
inline int64_t stored_cols_b(const GemmProblem& p) { return p.trans_b ? p.k : p.n; }

// True when every row of a matrix at `ptr` with leading dimension `ld` starts on a
// 16-byte boundary: 16-byte vector accesses (and the copy engine's boxes) along the
// rows are then aligned.
inline bool rows_16_byte_aligned(const float* ptr, int64_t ld) {
  return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0 && ld % 4 == 0;
}

// True when the call changes nothing: an empty C.
inline bool is_empty(const GemmProblem& p) { return p.m == 0 || p.n == 0; }

// True when A and B take no part: C = beta * C.
inline bool is_scale_only(const GemmProblem& p) { return p.k == 0 || p.alpha == 0.0f; }

}  // namespace tiledmm
