// The small calls' fast path of the Fortran entry points, in two halves: a
// trampoline that keeps the caller's arguments where they are, and a decision, in
// plain C++, of where they go.
//
// Most BLAS calls are small, and the library must add next to nothing to them: it
// checks the arguments, counts the call, and hands it to the fallback's routine of
// the same name. For sgemm_ a C++ tail call costs more than the rest together: GCC 12
// keeps the six register arguments in callee-saved registers and copies the nine
// stack arguments out and back (117 instructions, counted by callgrind; 6.2 ns of a
// 45 ns call on the development machine). So on x86-64 the exported sgemm_ and
// sgemm_64_ are trampolines in assembly (trampolines.cpp). Each
//   1. pushes its six register arguments, so that they lie right below the return
//      address and the caller's stack arguments, forming a FortranFrame;
//   2. calls its decision function (shim.cpp) with the frame's address;
//   3. restores the registers and jumps to the function the decision returned, with
//      every argument, the stack ones included, exactly as the caller passed them.
// The decision returns the fallback's routine for a small valid call (having counted
// it), or the library's general way (shim.cpp), which has the entry point's own
// signature (4.0 ns in all on the same machine). Elsewhere (TMM_BLAS_ASM_ENTRIES 0)
// shim.cpp defines them in C++: they fill a frame, ask the same decision, and call
// what it returns.
//
// cblas_sgemm and cblas_sgemm64_ stay C++ (shim.cpp): their sizes come in registers,
// and the same trampoline (with alpha and beta kept from xmm0 and xmm1) measured
// 0.5 ns slower than GCC's tail call with its six copied stack slots.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fallback.hpp"

#if defined(__x86_64__) && defined(__ELF__) && !defined(TMM_BLAS_PORTABLE_ENTRIES)
#define TMM_BLAS_ASM_ENTRIES 1
#else
#define TMM_BLAS_ASM_ENTRIES 0
#endif

namespace tiledmm::blas {

// sgemm_ and sgemm_64_: the six register arguments as the trampoline pushed them,
// the return address, then the caller's stack arguments (the hidden lengths of the
// character arguments, which C callers mostly do not pass, are not read).
template <class Int>
struct FortranFrame {
  const char* transa;  // %rdi
  const char* transb;  // %rsi
  const Int* m;        // %rdx
  const Int* n;        // %rcx
  const Int* k;        // %r8
  const float* alpha;  // %r9
  const void* return_address;
  const float* a;
  const Int* lda;
  const float* b;
  const Int* ldb;
  const float* beta;
  float* c;
  const Int* ldc;
};

// The offsets trampolines.cpp relies on.
static_assert(offsetof(FortranFrame<int>, return_address) == 48);
static_assert(offsetof(FortranFrame<int>, ldc) == 104);
static_assert(sizeof(int) == 4 && sizeof(void*) == 8);

}  // namespace tiledmm::blas

// The decisions (shim.cpp), named in the trampolines' assembly: the function to jump
// to with the caller's arguments. Never nullptr; nothing is thrown. `used`: only the
// assembly refers to them, which link-time optimisation does not read.
extern "C" {
__attribute__((visibility("hidden"), used)) tiledmm::blas::FortranSgemm<int> tmm_blas_sgemm_target(
    const tiledmm::blas::FortranFrame<int>* frame) noexcept;
__attribute__((visibility("hidden"), used)) tiledmm::blas::FortranSgemm<int64_t>
tmm_blas_sgemm64_target(const tiledmm::blas::FortranFrame<int64_t>* frame) noexcept;
}
