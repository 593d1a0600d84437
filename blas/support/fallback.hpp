// The real BLAS underneath: the library that computes every call tiledmm does not
// take, found at run time (dlopen/dlsym), never at link time, and never this library
// itself. fallback.cpp says where it looks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tiledmm::blas {

// Fortran SGEMM: every argument by reference, then the hidden lengths of the two
// character arguments (gfortran's convention; reference BLAS ignores them).
// noexcept: C and Fortran code never throws, and a call through a pointer that may
// throw cannot be a tail call from the library's noexcept entry points.
template <class Int>
using FortranSgemm = void (*)(const char*, const char*, const Int*, const Int*, const Int*,
                              const float*, const float*, const Int*, const float*, const Int*,
                              const float*, float*, const Int*, size_t, size_t) noexcept;
// CBLAS enum values (CBLAS_LAYOUT, CBLAS_TRANSPOSE).
constexpr int kRowMajor = 101, kColMajor = 102;
constexpr int kNoTrans = 111, kTrans = 112, kConjTrans = 113;

// CBLAS sgemm: the enums are ints; Int is int, or int64_t for the *64_ names.
template <class Int>
using CblasSgemm = void (*)(int, int, int, Int, Int, Int, float, const float*, Int, const float*,
                            Int, float, float*, Int) noexcept;

struct Fallback {
  FortranSgemm<int> sgemm = nullptr;
  CblasSgemm<int> cblas_sgemm = nullptr;  // for CBLAS calls (route/router.cpp, entry/shim.cpp)
  std::string path;                       // the library sgemm comes from; empty: none
  std::string refused;                    // candidates refused, and why
};

// ILP64 (64-bit integer) routines: OpenBLAS's suffixed names (sgemm_64_,
// cblas_sgemm64_) in the fallback above, else the library TILEDMM_BLAS_FALLBACK64
// names (default libblas64.so.3, Debian's ILP64 BLAS, whose sgemm_ takes 64-bit
// integers).
struct Fallback64 {
  FortranSgemm<int64_t> sgemm = nullptr;
  CblasSgemm<int64_t> cblas_sgemm = nullptr;  // a suffixed cblas_sgemm64_ only
  std::string path;
};

// Found on first use (thread-safe), then fixed for the life of the process.
const Fallback& fallback();
const Fallback64& fallback64();

// The process's xerbla_ and cblas_xerbla as the reference BLAS would reach them
// (the program's own, else the fallback's), for errors no fallback routine can
// report; nullptr when there is none.
using Xerbla = void (*)(const char*, const int*, size_t);
using CblasXerbla = void (*)(int, const char*, const char*, ...);
Xerbla find_xerbla();
CblasXerbla find_cblas_xerbla();

// pilaenv_ as ScaLAPACK defines it (the next definition after this library), or
// nullptr.
using Pilaenv = int (*)(const int*, const char*);
Pilaenv next_pilaenv();

// True when `address` lies in this library, or in any library that is a copy of it
// (it exports tmm_blas_version): such a "fallback" would call back into tiledmm.
bool is_tiledmm_blas(const void* address);

}  // namespace tiledmm::blas
