// The small calls' fast path: how the entry points hand a small call to the fallback
// BLAS while adding next to nothing to it.
//
// Most BLAS calls are small. For each, the library checks the arguments, counts the
// call, and hands it to the fallback's routine of the same name with the caller's
// own arguments. In C++ that hand-over cost more than the rest together: GCC 12's
// tail call keeps the register arguments in callee-saved registers and copies the
// stack arguments out and back (117 instructions per sgemm_, counted by callgrind).
// So on x86-64 the exported entry points are written in assembly (trampolines_x86_64.S):
//   - sgemm_ and cblas_sgemm first make the fast path's tests themselves, in
//     scratch registers only, and jump straight to the fallback's routine (about 55
//     instructions). Any call they do not take goes to the C++ below, which makes
//     every test again: the assembly never takes a call the C++ would not.
//   - The Fortran trampoline (sgemm_64_, dgemm_, dgemm_64_, and sgemm_ after its
//     fast path)
//     1. pushes its six register arguments, so that they lie right below the return
//        address and the caller's stack arguments, forming a FortranFrame;
//     2. calls its decision function (shim.cpp) with the frame's address;
//     3. restores the registers and jumps to the function the decision returned,
//        with every argument, the stack ones included, exactly as the caller passed
//        them: the fallback's routine for a small valid call (counted), or the
//        library's general way (shim.cpp), which has the entry point's signature.
//   - cblas_sgemm's C++ half is tmm_blas_cblas_sgemm_cxx (shim.cpp), reached by a
//     jump; cblas_sgemm64_, cblas_dgemm and cblas_dgemm64_ are C++ only (the same
//     decision, then one jump with the caller's arguments).
// The double-precision entry points (dgemm_, dgemm_64_, cblas_dgemm, cblas_dgemm64_)
// have no fast path of their own in assembly: the trampoline, or the C++, asks the
// same decision as the single-precision ones (shim.cpp, written once over the
// element type), so they take the same calls and count them alike.
// Elsewhere (TMM_BLAS_ASM_ENTRIES 0) shim.cpp defines the entry points in C++: they
// fill a frame, ask the same decisions, and call what they return.
#pragma once

#include <cstddef>
#include <cstdint>

#include "support/fallback.hpp"

// 1 where blas/CMakeLists.txt builds entry/trampolines_x86_64.S (x86-64 ELF, unless
// TILEDMM_BLAS_PORTABLE_ENTRIES), which then defines sgemm_, cblas_sgemm, sgemm_64_,
// dgemm_ and dgemm_64_.
#ifndef TMM_BLAS_ASM_ENTRIES
#define TMM_BLAS_ASM_ENTRIES 0
#endif

namespace tiledmm::blas {

// The arguments of sgemm_ and sgemm_64_ (T float), dgemm_ and dgemm_64_ (T double),
// the one description of them in C++: as the trampoline lays them out, the six register arguments
// it pushed, the return address, then the caller's stack arguments (the hidden lengths of the
// character arguments, which C callers mostly do not pass, are not read). Where C++ fills one (the
// portable entry points, the general way in shim.cpp) return_address is nullptr; nothing reads it,
// it only keeps the stack arguments at their offsets.
template <class T, class Int>
struct FortranFrame {
  const char* transa;  // %rdi
  const char* transb;  // %rsi
  const Int* m;        // %rdx
  const Int* n;        // %rcx
  const Int* k;        // %r8
  const T* alpha;      // %r9
  const void* return_address;
  const T* a;
  const Int* lda;
  const T* b;
  const Int* ldb;
  const T* beta;
  T* c;
  const Int* ldc;
};

// The offsets the trampolines rely on (checked here: the frame is the ABI's).
using SgemmFrame = FortranFrame<float, int>;
using Dgemm64Frame = FortranFrame<double, int64_t>;
static_assert(offsetof(SgemmFrame, return_address) == 48);
static_assert(offsetof(SgemmFrame, ldc) == 104);
static_assert(offsetof(Dgemm64Frame, ldc) == 104);
static_assert(sizeof(int) == 4 && sizeof(void*) == 8);

}  // namespace tiledmm::blas

// The decisions (shim.cpp), named in the trampolines' assembly: the function to jump
// to with the caller's arguments. Never nullptr; nothing is thrown. `used`: only the
// assembly refers to them, which link-time optimisation does not read.
extern "C" {
__attribute__((visibility("hidden"), used)) tiledmm::blas::FortranSgemm<int> tmm_blas_sgemm_target(
    const tiledmm::blas::FortranFrame<float, int>* frame) noexcept;
__attribute__((visibility("hidden"), used)) tiledmm::blas::FortranSgemm<int64_t>
tmm_blas_sgemm64_target(const tiledmm::blas::FortranFrame<float, int64_t>* frame) noexcept;
__attribute__((visibility("hidden"), used)) tiledmm::blas::FortranDgemm<int> tmm_blas_dgemm_target(
    const tiledmm::blas::FortranFrame<double, int>* frame) noexcept;
__attribute__((visibility("hidden"), used)) tiledmm::blas::FortranDgemm<int64_t>
tmm_blas_dgemm64_target(const tiledmm::blas::FortranFrame<double, int64_t>* frame) noexcept;
// cblas_sgemm's C++ half (shim.cpp), reached by a jump with the caller's arguments.
__attribute__((visibility("hidden"), used)) void tmm_blas_cblas_sgemm_cxx(
    int layout, int transa, int transb, int m, int n, int k, float alpha, const float* a, int lda,
    const float* b, int ldb, float beta, float* c, int ldc) noexcept;
}
