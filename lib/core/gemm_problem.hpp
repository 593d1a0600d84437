// One GEMM call, reduced to a single canonical form that every backend and kernel
// consumes: row-major storage, C (m x n) = alpha * op(A) (m x k) * op(B) (k x n)
// + beta * C.
//
// A column-major call is the row-major call on the transposed problem: a column-major
// matrix read as row-major is its transpose, and C^T = op(B)^T * op(A)^T, so the
// operands and their flags swap and m and n swap. Kernels therefore see one layout.
//
// The problem carries its element type as a tag (Precision) with untyped pointers and
// double scalars, so that every layer above the kernels has one signature for both
// precisions; kernels see a GemmView<T>, its typed copy (docs/design/double-precision.md).
//
// This header is plain data, shared by host C++ and CUDA code.
#pragma once

#include <cassert>
#include <cstdint>

#include "core/precision.hpp"

namespace tiledmm {

enum class Layout { RowMajor, ColMajor };

struct HostIo;  // host_io.hpp

struct GemmProblem {
  bool trans_a;  // op(A) = A^T: A is stored k x m
  bool trans_b;  // op(B) = B^T: B is stored n x k
  int64_t m, n, k;
  double alpha;  // exact for a float alpha: float -> double -> float round-trips
  const void* a;
  int64_t lda;
  const void* b;
  int64_t ldb;
  double beta;
  void* c;
  int64_t ldc;
  bool col_major = false;  // the caller's layout, for messages naming A and B
  // tmm_sgemm_io: the functions that read and write each operand (its pointer above
  // is then a stand-in that must not be dereferenced); null for pointer calls.
  const HostIo* a_io = nullptr;
  const HostIo* b_io = nullptr;
  const HostIo* c_io = nullptr;
  Precision precision = Precision::F32;  // the element type of a, b and c
  // A strided batch (make_batched_problem): `batch` products, the b-th on the matrices
  // b * stride_x elements past a, b and c. A single call: 1 and strides 0.
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  // tmm_?gemm_device_scalars: alpha and beta in device memory (one element of the
  // problem's precision each), read by the kernels when they run; null for a call
  // that passes them by value. Where set, `alpha` and `beta` above are 1, so that
  // every host decision is the general one (A, B and C read, no quick return but k = 0).
  const void* alpha_at = nullptr;
  const void* beta_at = nullptr;

  // The matrices as elements of T, which must be the problem's precision.
  template <class T>
  const T* a_as() const {
    assert(precision == precision_of<T>);
    return static_cast<const T*>(a);
  }
  template <class T>
  const T* b_as() const {
    assert(precision == precision_of<T>);
    return static_cast<const T*>(b);
  }
  template <class T>
  T* c_as() const {
    assert(precision == precision_of<T>);
    return static_cast<T*>(c);
  }
};

// What a kernel reads of a problem, typed: the fields of GemmProblem that kernels use,
// in its order, with the scalars and matrices as T. Kernels take a view, never a
// GemmProblem, so a float kernel cannot compute with the problem's double alpha, and
// for float the fields (and so the kernels' parameters and code) are what they were
// when GemmProblem itself was float.
template <class T>
struct GemmView {
  bool trans_a, trans_b;
  int64_t m, n, k;
  T alpha;
  const T* a;
  int64_t lda;
  const T* b;
  int64_t ldb;
  T beta;
  T* c;
  int64_t ldc;
  int64_t stride_a, stride_b, stride_c;  // a strided batch's, in elements (select_product)
  // Where not null, the kernels take alpha and beta from here (device memory) rather
  // than from the fields above (GemmProblem::alpha_at; kernel_common.cuh's scalars_of).
  const T* alpha_at;
  const T* beta_at;
};

// The view of p in its own precision T; the scalars are rounded to T once, here.
template <class T>
GemmView<T> view_of(const GemmProblem& p) {
  return {p.trans_a,
          p.trans_b,
          p.m,
          p.n,
          p.k,
          T(p.alpha),
          p.a_as<T>(),
          p.lda,
          p.b_as<T>(),
          p.ldb,
          T(p.beta),
          p.c_as<T>(),
          p.ldc,
          p.stride_a,
          p.stride_b,
          p.stride_c,
          static_cast<const T*>(p.alpha_at),
          static_cast<const T*>(p.beta_at)};
}

inline bool has_io(const GemmProblem& p) { return p.a_io || p.b_io || p.c_io; }

// Checks a CBLAS-style call (sizes, leading dimensions, pointers, sizes whose byte
// counts overflow) on matrices of `precision` and returns its canonical row-major form.
// Throws Error(Status::InvalidValue) naming the offending argument.
GemmProblem make_problem(Precision precision, Layout layout, bool trans_a, bool trans_b, int64_t m,
                         int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
                         const void* b, int64_t ldb, double beta, void* c, int64_t ldc);

// The same for a strided batch of `batch` products, X_b = X + b * stride_x elements
// (tmm_?gemm_strided_batched): also batch and strides >= 0; the last product of every
// matrix the call uses (its byte offset from the first element) within 64 bits; C's
// products sharing no
// element (stride_c 0 with more than one product, or products that overlap: rejected,
// in O(batch) at most). Inputs may overlap one another (stride 0: one matrix for every
// product). A column-major call swaps the strides with their operands. batch 1 is
// make_problem's problem, whatever the strides (>= 0).
GemmProblem make_batched_problem(Precision precision, Layout layout, bool trans_a, bool trans_b,
                                 int64_t m, int64_t n, int64_t k, double alpha, const void* a,
                                 int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                                 int64_t stride_b, double beta, void* c, int64_t ldc,
                                 int64_t stride_c, int64_t batch);

// Products [first, first + count) of a batch, as a batch of their own: the pointers
// advanced by first * stride elements. No check: first + count <= p.batch.
GemmProblem products_of(const GemmProblem& p, int64_t first, int64_t count);
// Product b alone, a single problem (batch 1, strides 0).
GemmProblem product_of(const GemmProblem& p, int64_t b);

// The same for a float call (tmm_sgemm's).
inline GemmProblem make_problem(Layout layout, bool trans_a, bool trans_b, int64_t m, int64_t n,
                                int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                                int64_t ldb, float beta, float* c, int64_t ldc) {
  return make_problem(Precision::F32, layout, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb,
                      beta, c, ldc);
}

// Throws Error(InvalidValue) when C shares an element (a byte) with A or B in a call
// that reads them, or with scalars in device memory (alpha_at, beta_at: any k). Interleaved
// submatrices of one array that share no element pass. `p` comes from make_problem (or
// make_batched_problem: then no product's C may share an element with any product's A or B; O(1)
// where their address ranges are apart, O(batch x rows) where an input's stride is C's, else
// O(batch x the products of the input whose range meets a C's x rows)), whose checks keep the
// arithmetic exact.
void check_no_alias(const GemmProblem& p);

// The first operand of p that shares a byte with [at, at + bytes), over every product
// of the batch the call reads or writes: "A", "B" (as the caller named them), "C",
// "alpha" or "beta" (scalars in device memory); nullptr where none does. O(1) where the
// ranges are apart, O(batch x rows) at most. (tmm_set_workspace's memory, which the
// kernels write.) p comes from make_problem or make_batched_problem.
const char* operand_meeting(const GemmProblem& p, const void* at, int64_t bytes);

// Rows and columns of a matrix as stored (row-major canonical form).
inline int64_t stored_rows_a(const GemmProblem& p) { return p.trans_a ? p.k : p.m; }
inline int64_t stored_cols_a(const GemmProblem& p) { return p.trans_a ? p.m : p.k; }
inline int64_t stored_rows_b(const GemmProblem& p) { return p.trans_b ? p.n : p.k; }
inline int64_t stored_cols_b(const GemmProblem& p) { return p.trans_b ? p.k : p.n; }

// True when every row of a matrix at `ptr` with leading dimension `ld`, of elements of
// `bytes` bytes (a divisor of 16), starts on a 16-byte boundary: 16-byte vector
// accesses (and the copy engine's boxes) along the rows are then aligned. (ld alone
// may be near INT64_MAX, so ld * bytes could overflow.)
inline bool rows_16_byte_aligned(const void* ptr, int64_t ld, int bytes) {
  return (reinterpret_cast<uintptr_t>(ptr) & 15) == 0 && ld % (16 / bytes) == 0;
}
template <class T>
bool rows_16_byte_aligned(const T* ptr, int64_t ld) {
  return rows_16_byte_aligned(ptr, ld, int(sizeof(T)));
}
// The same for every product of a batch of `batch` products `stride` elements apart.
inline bool rows_16_byte_aligned(const void* ptr, int64_t ld, int64_t stride, int64_t batch,
                                 int bytes) {
  return rows_16_byte_aligned(ptr, ld, bytes) && (batch <= 1 || stride % (16 / bytes) == 0);
}

// True when the call changes nothing: an empty C (or no product).
inline bool is_empty(const GemmProblem& p) { return p.m == 0 || p.n == 0 || p.batch == 0; }

// True when A and B take no part: C = beta * C. (Scalars in device memory: k = 0 only;
// alpha is 1 here, and a kernel that reads 0 there leaves beta * C.)
inline bool is_scale_only(const GemmProblem& p) { return p.k == 0 || p.alpha == 0.0; }

}  // namespace tiledmm
