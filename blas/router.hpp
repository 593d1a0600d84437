// Where a checked BLAS call runs: tiledmm or the fallback BLAS, and what happens
// when tiledmm fails. shim.cpp turns each exported entry point into a GemmCall (in
// column-major terms) after checking its arguments the reference way; everything
// after that is here.
#pragma once

#include <cstdint>
#include <string>

#include "counters.hpp"

namespace tiledmm::blas {

// One product with valid arguments, column-major: a row-major CBLAS call is turned
// around first (C^T = op(B)^T op(A)^T), as the reference CBLAS does.
struct GemmCall {
  Routine routine = Routine::kSgemm;
  bool row_major = false;  // as the caller made it (for the log only)
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const float* a = nullptr;
  int64_t lda = 1;
  const float* b = nullptr;
  int64_t ldb = 1;
  float* c = nullptr;
  int64_t ldc = 1;
};

// Runs the call: a quick return, tiledmm, or the fallback. Never throws.
void run_gemm(const GemmCall& call) noexcept;

// pilaenv_: the widened PBLAS panel for single precision while tiledmm is on, else
// ScaLAPACK's own answer.
int pilaenv(const int* ictxt, const char* prec) noexcept;

// While the library calls into the fallback, on this thread. A fallback whose
// routines call sgemm_ through the PLT (the reference CBLAS does) reaches this
// library again; such inner calls go straight back to the fallback.
class FallbackScope {
 public:
  FallbackScope();
  ~FallbackScope();
  FallbackScope(const FallbackScope&) = delete;
  FallbackScope& operator=(const FallbackScope&) = delete;
  static bool active();
};

// The text of tmm_blas_describe.
std::string describe();

}  // namespace tiledmm::blas
