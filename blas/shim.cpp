// The exported entry points of libtiledmm_blas: sgemm_, cblas_sgemm, their ILP64
// twins sgemm_64_ and cblas_sgemm64_, pilaenv_, and the query API of
// tiledmm/tiledmm_blas.h. Each checks its arguments in the reference BLAS's order,
// hands invalid ones to the fallback's own routine (so that xerbla reports them
// exactly as the reference does, with the same routine name and parameter number),
// and turns valid ones into a column-major GemmCall for router.cpp. No exception
// leaves this file; nothing here prints, aborts or exits.
//
// The reference SGEMM's checks, in order (INFO = the parameter number):
//   TRANSA not N/T/C: 1; TRANSB: 2; M < 0: 3; N < 0: 4; K < 0: 5;
//   LDA < max(1, rows of A as stored): 8; LDB: 10; LDC < max(1, M): 13.
// CBLAS adds the layout in front: layout 1, TransA 2, TransB 3, M 4, N 5, K 6,
// lda 9, ldb 11, ldc 14 (what the fallback's cblas_sgemm reports is its own affair:
// the reference reports the Fortran routine's numbers for the sizes).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>

#include "config.hpp"
#include "counters.hpp"
#include "fallback.hpp"
#include "log.hpp"
#include "router.hpp"
#include "tiledmm/tiledmm_blas.h"

namespace {

using tiledmm::blas::Counter;
using tiledmm::blas::Counters;
using tiledmm::blas::fallback;
using tiledmm::blas::fallback64;
using tiledmm::blas::FallbackScope;
using tiledmm::blas::GemmCall;
using tiledmm::blas::Log;
using tiledmm::blas::Routine;
using tiledmm::blas::routine_name;

// CBLAS enum values.
constexpr int kRowMajor = 101, kColMajor = 102;
constexpr int kNoTrans = 111, kTrans = 112, kConjTrans = 113;

// LSAME's rule: ASCII letters, either case (no locale, no call).
char upper(const char* c) { return *c >= 'a' && *c <= 'z' ? char(*c - 'a' + 'A') : *c; }

template <class Int>
bool fits_int(Int v) {
  return int64_t(v) >= INT_MIN && int64_t(v) <= INT_MAX;
}

template <class Int>
int fortran_info(char ta, char tb, Int m, Int n, Int k, Int lda, Int ldb, Int ldc) {
  const bool nota = ta == 'N', notb = tb == 'N';
  const Int rows_a = nota ? m : k, rows_b = notb ? k : n;
  if (!nota && ta != 'C' && ta != 'T') return 1;
  if (!notb && tb != 'C' && tb != 'T') return 2;
  if (m < 0) return 3;
  if (n < 0) return 4;
  if (k < 0) return 5;
  if (lda < std::max<Int>(1, rows_a)) return 8;
  if (ldb < std::max<Int>(1, rows_b)) return 10;
  if (ldc < std::max<Int>(1, m)) return 13;
  return 0;
}

template <class Int>
int cblas_info(int layout, int ta, int tb, Int m, Int n, Int k, Int lda, Int ldb, Int ldc) {
  auto valid_trans = [](int t) { return t == kNoTrans || t == kTrans || t == kConjTrans; };
  if (layout != kRowMajor && layout != kColMajor) return 1;
  if (!valid_trans(ta)) return 2;
  if (!valid_trans(tb)) return 3;
  if (m < 0) return 4;
  if (n < 0) return 5;
  if (k < 0) return 6;
  const bool row = layout == kRowMajor, nota = ta == kNoTrans, notb = tb == kNoTrans;
  const Int a_min = row ? (nota ? k : m) : (nota ? m : k);
  const Int b_min = row ? (notb ? n : k) : (notb ? k : n);
  if (lda < std::max<Int>(1, a_min)) return 9;
  if (ldb < std::max<Int>(1, b_min)) return 11;
  if (ldc < std::max<Int>(1, row ? n : m)) return 14;
  return 0;
}

void report_xerbla(const char* name, int info) {
  if (auto x = tiledmm::blas::find_xerbla()) {
    x(name, &info, std::strlen(name));
  } else {
    Log::line("note: %s: parameter %d is invalid, and there is no xerbla_ to report it", name,
              info);
  }
}

void report_cblas_xerbla(int info) {
  if (auto x = tiledmm::blas::find_cblas_xerbla()) {
    x(info, "cblas_sgemm", "");
  } else {
    report_xerbla("cblas_sgemm", info);
  }
}

void log_invalid(Routine r, int info) {
  Counters::add(r, Counter::kInvalid);
  Log::line("%s: parameter %d is invalid -> xerbla", routine_name(r), info);
}

// ---- Fortran ------------------------------------------------------------------

template <class Int>
struct FortranArgs {
  const char *ta, *tb;
  const Int *m, *n, *k;
  const float* alpha;
  const float* a;
  const Int* lda;
  const float* b;
  const Int* ldb;
  const float* beta;
  float* c;
  const Int* ldc;
};

// The LP64 fallback's SGEMM on the same arguments (the hidden lengths: 1).
void lp64_sgemm(const FortranArgs<int>& x) {
  FallbackScope scope;
  fallback().sgemm(x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c, x.ldc,
                   1, 1);
}

// Invalid arguments: the fallback's own SGEMM reports them through xerbla.
void report_fortran(const FortranArgs<int>& x, int info) {
  if (fallback().sgemm != nullptr) {
    lp64_sgemm(x);
  } else {
    report_xerbla("SGEMM ", info);
  }
}

void report_fortran(const FortranArgs<int64_t>& x, int info) {
  if (fallback64().sgemm != nullptr) {
    FallbackScope scope;
    fallback64().sgemm(x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb, x.beta, x.c,
                       x.ldc, 1, 1);
    return;
  }
  if (fallback().sgemm != nullptr && fits_int(*x.m) && fits_int(*x.n) && fits_int(*x.k) &&
      fits_int(*x.lda) && fits_int(*x.ldb) && fits_int(*x.ldc)) {
    const int m = int(*x.m), n = int(*x.n), k = int(*x.k), lda = int(*x.lda), ldb = int(*x.ldb),
              ldc = int(*x.ldc);
    lp64_sgemm({x.ta, x.tb, &m, &n, &k, x.alpha, x.a, &lda, x.b, &ldb, x.beta, x.c, &ldc});
    return;
  }
  report_xerbla("SGEMM ", info);
}

template <class Int>
void fortran_entry(Routine r, const FortranArgs<Int>& x) noexcept {
  try {
    if constexpr (sizeof(Int) == sizeof(int)) {
      // An inner call from the fallback itself (its CBLAS calling its SGEMM).
      if (FallbackScope::active() && fallback().sgemm != nullptr) {
        lp64_sgemm(x);
        return;
      }
    }
    const char ta = upper(x.ta), tb = upper(x.tb);
    const int info = fortran_info<Int>(ta, tb, *x.m, *x.n, *x.k, *x.lda, *x.ldb, *x.ldc);
    if (info != 0) {
      log_invalid(r, info);
      report_fortran(x, info);
      return;
    }
    GemmCall call;
    call.routine = r;
    call.trans_a = ta != 'N';
    call.trans_b = tb != 'N';
    call.m = *x.m;
    call.n = *x.n;
    call.k = *x.k;
    call.alpha = *x.alpha;
    call.beta = *x.beta;
    call.a = x.a;
    call.lda = *x.lda;
    call.b = x.b;
    call.ldb = *x.ldb;
    call.c = x.c;
    call.ldc = *x.ldc;
    tiledmm::blas::run_gemm(call);
  } catch (...) {
  }
}

// ---- CBLAS --------------------------------------------------------------------

template <class Int>
struct CblasArgs {
  int layout, ta, tb;
  Int m, n, k;
  float alpha;
  const float* a;
  Int lda;
  const float* b;
  Int ldb;
  float beta;
  float* c;
  Int ldc;
};

char trans_char(int t) { return t == kNoTrans ? 'N' : t == kTrans ? 'T' : 'C'; }

void report_cblas(const CblasArgs<int>& x, int info) {
  if (fallback().cblas_sgemm != nullptr) {
    FallbackScope scope;
    fallback().cblas_sgemm(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb,
                           x.beta, x.c, x.ldc);
  } else if (info > 3 && fallback().sgemm != nullptr) {
    // Layout and transposes are valid: the Fortran routine reports the sizes, as the
    // reference CBLAS lets it.
    const bool row = x.layout == kRowMajor;
    const char ta = trans_char(row ? x.tb : x.ta), tb = trans_char(row ? x.ta : x.tb);
    const int m = row ? x.n : x.m, n = row ? x.m : x.n;
    lp64_sgemm({&ta, &tb, &m, &n, &x.k, &x.alpha, row ? x.b : x.a, row ? &x.ldb : &x.lda,
                row ? x.a : x.b, row ? &x.lda : &x.ldb, &x.beta, x.c, &x.ldc});
  } else {
    report_cblas_xerbla(info);
  }
}

void report_cblas(const CblasArgs<int64_t>& x, int info) {
  if (fallback64().cblas_sgemm != nullptr) {
    FallbackScope scope;
    fallback64().cblas_sgemm(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, x.a, x.lda, x.b, x.ldb,
                             x.beta, x.c, x.ldc);
  } else if (fits_int(x.m) && fits_int(x.n) && fits_int(x.k) && fits_int(x.lda) &&
             fits_int(x.ldb) && fits_int(x.ldc)) {
    const CblasArgs<int> narrow{x.layout,   x.ta,    x.tb, int(x.m),   int(x.n),
                                int(x.k),   x.alpha, x.a,  int(x.lda), x.b,
                                int(x.ldb), x.beta,  x.c,  int(x.ldc)};
    report_cblas(narrow, info);
  } else {
    report_cblas_xerbla(info);
  }
}

template <class Int>
void cblas_entry(Routine r, const CblasArgs<Int>& x) noexcept {
  try {
    const int info = cblas_info<Int>(x.layout, x.ta, x.tb, x.m, x.n, x.k, x.lda, x.ldb, x.ldc);
    if (info != 0) {
      log_invalid(r, info);
      report_cblas(x, info);
      return;
    }
    // Row-major: C^T = op(B)^T op(A)^T, a column-major product with A and B swapped.
    const bool row = x.layout == kRowMajor;
    GemmCall call;
    call.routine = r;
    call.row_major = row;
    call.trans_a = (row ? x.tb : x.ta) != kNoTrans;
    call.trans_b = (row ? x.ta : x.tb) != kNoTrans;
    call.m = row ? x.n : x.m;
    call.n = row ? x.m : x.n;
    call.k = x.k;
    call.alpha = x.alpha;
    call.beta = x.beta;
    call.a = row ? x.b : x.a;
    call.lda = row ? x.ldb : x.lda;
    call.b = row ? x.a : x.b;
    call.ldb = row ? x.lda : x.ldb;
    call.c = x.c;
    call.ldc = x.ldc;
    tiledmm::blas::run_gemm(call);
  } catch (...) {
  }
}

}  // namespace

extern "C" {

TMM_BLAS_API void sgemm_(const char* transa, const char* transb, const int* m, const int* n,
                         const int* k, const float* alpha, const float* a, const int* lda,
                         const float* b, const int* ldb, const float* beta, float* c,
                         const int* ldc) noexcept {
  fortran_entry<int>(Routine::kSgemm,
                     {transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

TMM_BLAS_API void sgemm_64_(const char* transa, const char* transb, const int64_t* m,
                            const int64_t* n, const int64_t* k, const float* alpha, const float* a,
                            const int64_t* lda, const float* b, const int64_t* ldb,
                            const float* beta, float* c, const int64_t* ldc) noexcept {
  fortran_entry<int64_t>(Routine::kSgemm64,
                         {transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

TMM_BLAS_API void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                              const float* a, int lda, const float* b, int ldb, float beta,
                              float* c, int ldc) noexcept {
  cblas_entry<int>(Routine::kCblasSgemm,
                   {layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

TMM_BLAS_API void cblas_sgemm64_(int layout, int transa, int transb, int64_t m, int64_t n,
                                 int64_t k, float alpha, const float* a, int64_t lda,
                                 const float* b, int64_t ldb, float beta, float* c,
                                 int64_t ldc) noexcept {
  cblas_entry<int64_t>(Routine::kCblasSgemm64,
                       {layout, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc});
}

TMM_BLAS_API int pilaenv_(const int* ictxt, const char* prec) noexcept {
  return tiledmm::blas::pilaenv(ictxt, prec);
}

TMM_BLAS_API int tmm_blas_version(void) { return TILEDMM_VERSION; }

TMM_BLAS_API tmm_status tmm_blas_get_counters(tmm_blas_routine routine, tmm_blas_counters* out) {
  if (out == nullptr || out->struct_size < sizeof(tmm_blas_counters))
    return TMM_ERROR_INVALID_VALUE;
  tmm_blas_counters all{};
  if (!Counters::read(int(routine), all)) return TMM_ERROR_INVALID_VALUE;
  all.struct_size = sizeof(tmm_blas_counters);
  std::memcpy(out, &all, sizeof all);
  return TMM_SUCCESS;
}

TMM_BLAS_API void tmm_blas_reset_counters(void) { Counters::reset(); }

TMM_BLAS_API size_t tmm_blas_describe(char* buffer, size_t size) {
  try {
    const std::string text = tiledmm::blas::describe();
    if (buffer != nullptr && size > 0) {
      const size_t n = std::min(size - 1, text.size());
      std::memcpy(buffer, text.data(), n);
      buffer[n] = '\0';
    }
    return text.size();
  } catch (...) {
    if (buffer != nullptr && size > 0) buffer[0] = '\0';
    return 0;
  }
}

}  // extern "C"
