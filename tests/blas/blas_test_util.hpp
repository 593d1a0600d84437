// Helpers of the libtiledmm_blas tests: the BLAS entry points as a client declares
// them, the xerbla reports a test captures (xerbla_capture.cpp), the library's
// counters and log, and the rule for what a test needs: missing on a developer's
// machine, the test skips; in CI (CI set, not false or 0), it fails.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"
#include "tiledmm/tiledmm_blas.h"

extern "C" {
// As a client sees them (a Fortran caller adds hidden lengths, which are ignored).
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
            const float* beta, float* c, const int* ldc);
void sgemm_64_(const char* transa, const char* transb, const int64_t* m, const int64_t* n,
               const int64_t* k, const float* alpha, const float* a, const int64_t* lda,
               const float* b, const int64_t* ldb, const float* beta, float* c, const int64_t* ldc);
void cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                 const float* a, int lda, const float* b, int ldb, float beta, float* c, int ldc);
void cblas_sgemm64_(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                    float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                    float beta, float* c, int64_t ldc);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
            const double* alpha, const double* a, const int* lda, const double* b, const int* ldb,
            const double* beta, double* c, const int* ldc);
void dgemm_64_(const char* transa, const char* transb, const int64_t* m, const int64_t* n,
               const int64_t* k, const double* alpha, const double* a, const int64_t* lda,
               const double* b, const int64_t* ldb, const double* beta, double* c,
               const int64_t* ldc);
void cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                 const double* a, int lda, const double* b, int ldb, double beta, double* c,
                 int ldc);
void cblas_dgemm64_(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                    double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                    double beta, double* c, int64_t ldc);
// The names pip's NumPy and SciPy wheels call, each with its twin's signature.
void scipy_sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                  const float* alpha, const float* a, const int* lda, const float* b,
                  const int* ldb, const float* beta, float* c, const int* ldc);
void scipy_sgemm_64_(const char* transa, const char* transb, const int64_t* m, const int64_t* n,
                     const int64_t* k, const float* alpha, const float* a, const int64_t* lda,
                     const float* b, const int64_t* ldb, const float* beta, float* c,
                     const int64_t* ldc);
void scipy_cblas_sgemm(int layout, int transa, int transb, int m, int n, int k, float alpha,
                       const float* a, int lda, const float* b, int ldb, float beta, float* c,
                       int ldc);
void scipy_cblas_sgemm64_(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                          float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                          float beta, float* c, int64_t ldc);
void scipy_dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                  const double* alpha, const double* a, const int* lda, const double* b,
                  const int* ldb, const double* beta, double* c, const int* ldc);
void scipy_dgemm_64_(const char* transa, const char* transb, const int64_t* m, const int64_t* n,
                     const int64_t* k, const double* alpha, const double* a, const int64_t* lda,
                     const double* b, const int64_t* ldb, const double* beta, double* c,
                     const int64_t* ldc);
void scipy_cblas_dgemm(int layout, int transa, int transb, int m, int n, int k, double alpha,
                       const double* a, int lda, const double* b, int ldb, double beta, double* c,
                       int ldc);
void scipy_cblas_dgemm64_(int layout, int transa, int transb, int64_t m, int64_t n, int64_t k,
                          double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
                          double beta, double* c, int64_t ldc);
}

namespace tmm_blas_test {

constexpr int kRowMajor = 101, kColMajor = 102, kNoTrans = 111, kTrans = 112, kConjTrans = 113;

// The entry points of one precision, for the tests written once over the element
// type T (typed tests over float and double): the four names, their routines in the
// counters, the names xerbla reports, and the test case of T with its FP64 (float)
// or double-double (double) reference (tests/gemm_reference*.hpp: check_case).
//
// Built with TMM_TEST_WHEEL_NAMES=1 (test_blas_conformance_wheel), the entry points and
// their counters are the wheels' prefixed twins (scipy_sgemm_, scipy_cblas_dgemm64_,
// ...) instead, which must behave exactly as the standard names: the same tests run
// on them unchanged. The k*Name strings stay the standard names: the tests look them
// up in the fallback library (which the twins fall back to when no wheel is loaded)
// and read them in tmm_blas_describe's fast-path text.
#ifndef TMM_TEST_WHEEL_NAMES
#define TMM_TEST_WHEEL_NAMES 0
#endif
template <class T>
struct Blas;

template <>
struct Blas<float> {
  using Case = tmm_test::GemmCase;
#if TMM_TEST_WHEEL_NAMES
  static constexpr auto gemm = scipy_sgemm_;
  static constexpr auto gemm64 = scipy_sgemm_64_;
  static constexpr auto cblas = scipy_cblas_sgemm;
  static constexpr auto cblas64 = scipy_cblas_sgemm64_;
  static constexpr tmm_blas_routine kFortran = TMM_BLAS_SCIPY_SGEMM,
                                    kCblas = TMM_BLAS_SCIPY_CBLAS_SGEMM,
                                    kFortran64 = TMM_BLAS_SCIPY_SGEMM_64,
                                    kCblas64 = TMM_BLAS_SCIPY_CBLAS_SGEMM_64;
#else
  static constexpr auto gemm = sgemm_;
  static constexpr auto gemm64 = sgemm_64_;
  static constexpr auto cblas = cblas_sgemm;
  static constexpr auto cblas64 = cblas_sgemm64_;
  static constexpr tmm_blas_routine kFortran = TMM_BLAS_SGEMM, kCblas = TMM_BLAS_CBLAS_SGEMM,
                                    kFortran64 = TMM_BLAS_SGEMM_64,
                                    kCblas64 = TMM_BLAS_CBLAS_SGEMM_64;
#endif
  static constexpr const char* kFortranName = "sgemm_";
  static constexpr const char* kFortran64Name = "sgemm_64_";
  static constexpr const char* kCblasName = "cblas_sgemm";
  static constexpr const char* kCblas64Name = "cblas_sgemm64_";
  static constexpr const char* kXerbla = "SGEMM";  // the Fortran routine, trailing blank cut
};

template <>
struct Blas<double> {
  using Case = tmm_test::DgemmCase;
#if TMM_TEST_WHEEL_NAMES
  static constexpr auto gemm = scipy_dgemm_;
  static constexpr auto gemm64 = scipy_dgemm_64_;
  static constexpr auto cblas = scipy_cblas_dgemm;
  static constexpr auto cblas64 = scipy_cblas_dgemm64_;
  static constexpr tmm_blas_routine kFortran = TMM_BLAS_SCIPY_DGEMM,
                                    kCblas = TMM_BLAS_SCIPY_CBLAS_DGEMM,
                                    kFortran64 = TMM_BLAS_SCIPY_DGEMM_64,
                                    kCblas64 = TMM_BLAS_SCIPY_CBLAS_DGEMM_64;
#else
  static constexpr auto gemm = dgemm_;
  static constexpr auto gemm64 = dgemm_64_;
  static constexpr auto cblas = cblas_dgemm;
  static constexpr auto cblas64 = cblas_dgemm64_;
  static constexpr tmm_blas_routine kFortran = TMM_BLAS_DGEMM, kCblas = TMM_BLAS_CBLAS_DGEMM,
                                    kFortran64 = TMM_BLAS_DGEMM_64,
                                    kCblas64 = TMM_BLAS_CBLAS_DGEMM_64;
#endif
  static constexpr const char* kFortranName = "dgemm_";
  static constexpr const char* kFortran64Name = "dgemm_64_";
  static constexpr const char* kCblasName = "cblas_dgemm";
  static constexpr const char* kCblas64Name = "cblas_dgemm64_";
  static constexpr const char* kXerbla = "DGEMM";
};

// The typed tests' instances, named Single and Double (BlasConformance/Double.*).
using Precisions = ::testing::Types<float, double>;
struct PrecisionName {
  template <class T>
  static std::string GetName(int) {
    return sizeof(T) == sizeof(float) ? "Single" : "Double";
  }
};

// The counters' GEMM routines, both precisions, the wheels' names included.
constexpr tmm_blas_routine kGemmRoutines[] = {
    TMM_BLAS_SGEMM,          TMM_BLAS_CBLAS_SGEMM,
    TMM_BLAS_SGEMM_64,       TMM_BLAS_CBLAS_SGEMM_64,
    TMM_BLAS_DGEMM,          TMM_BLAS_CBLAS_DGEMM,
    TMM_BLAS_DGEMM_64,       TMM_BLAS_CBLAS_DGEMM_64,
    TMM_BLAS_SCIPY_SGEMM,    TMM_BLAS_SCIPY_CBLAS_SGEMM,
    TMM_BLAS_SCIPY_SGEMM_64, TMM_BLAS_SCIPY_CBLAS_SGEMM_64,
    TMM_BLAS_SCIPY_DGEMM,    TMM_BLAS_SCIPY_CBLAS_DGEMM,
    TMM_BLAS_SCIPY_DGEMM_64, TMM_BLAS_SCIPY_CBLAS_DGEMM_64};

// One error report: through xerbla_ (Fortran) or cblas_xerbla.
struct Report {
  bool cblas = false;
  std::string routine;  // trailing blanks removed
  int info = 0;
  bool operator==(const Report& o) const {
    return cblas == o.cblas && routine == o.routine && info == o.info;
  }
};
inline std::ostream& operator<<(std::ostream& os, const Report& r) {
  return os << (r.cblas ? "cblas_xerbla(" : "xerbla_(") << r.routine << ", " << r.info << ")";
}
// The reports since the last call (xerbla_capture.cpp), and clears them.
std::vector<Report> take_reports();

inline bool in_ci() {
  const char* v = std::getenv("CI");
  return v != nullptr && *v != '\0' && std::strcmp(v, "false") != 0 && std::strcmp(v, "0") != 0;
}

inline bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// For a test body: skip without `path`, or fail in CI.
#define TMM_BLAS_NEED_FILE(path, what)                                                \
  do {                                                                                \
    const std::string need_ = (path);                                                 \
    if (need_.empty() || !::tmm_blas_test::file_exists(need_)) {                      \
      if (::tmm_blas_test::in_ci()) FAIL() << "CI needs " << (what) << ": " << need_; \
      GTEST_SKIP() << "missing " << (what) << ": " << need_;                          \
    }                                                                                 \
  } while (0)

inline std::string env_or(const char* name, const char* otherwise = "") {
  const char* v = std::getenv(name);
  return v != nullptr ? v : otherwise;
}

inline tmm_blas_counters counters(tmm_blas_routine routine) {
  tmm_blas_counters c{};
  c.struct_size = sizeof c;
  EXPECT_EQ(tmm_blas_get_counters(routine, &c), TMM_SUCCESS);
  return c;
}

inline std::string describe() {
  std::vector<char> text(tmm_blas_describe(nullptr, 0) + 1);
  tmm_blas_describe(text.data(), text.size());
  return text.data();
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Lines of the text containing every one of `parts`.
inline int count_lines(const std::string& text, std::initializer_list<const char*> parts) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    bool all = true;
    for (const char* p : parts) all = all && line.find(p) != std::string::npos;
    n += all;
  }
  return n;
}

// With TILEDMM_BLAS_BACKEND=cuda: skip when this machine has no usable CUDA device,
// or fail when TMM_REQUIRE_GPU=1. Asked of the CUDA runtime (gemm_reference.hpp), not
// of the library under test: a library that can no longer make CUDA handles must
// fail these tests, not skip them.
#define TMM_BLAS_SKIP_WITHOUT_GPU()                                  \
  do {                                                               \
    if (::tmm_blas_test::env_or("TILEDMM_BLAS_BACKEND") == "cuda") { \
      TMM_SKIP_OR_FAIL_WITHOUT_GPU();                                \
    }                                                                \
  } while (0)

// The route the settings of this run give to calls with work in them.
enum class Route { kTiledmm, kFallback, kByFlops };
inline Route expected_route() {
  const std::string t = env_or("TILEDMM_BLAS_THRESHOLD", "auto");
  if (t == "all" || t == "0") return Route::kTiledmm;
  if (t == "never") return Route::kFallback;
  return Route::kByFlops;
}

}  // namespace tmm_blas_test
