// The exported sgemm_, cblas_sgemm and sgemm_64_ on x86-64, in assembly (System V
// AMD64 ABI); fast_path.hpp says why. On other targets this file is empty and
// shim.cpp defines them in C++.
//
// sgemm_ and cblas_sgemm start with the small calls' fast path itself, in the scratch
// registers only (%rax, %r10, %r11; no call, nothing on the stack): the test of
// sgemm_target / cblas_target (shim.cpp) for a call the Route sends straight to the
// fallback's routine (RouteOf::sgemm_direct, cblas_direct), the counts, the jump. Any
// other call, or any test it is not sure of, leaves it for the C++ decision, which
// makes every test again:
//   sgemm_      falls through to the trampoline below;
//   cblas_sgemm jumps to tmm_blas_cblas_sgemm_cxx (shim.cpp), its arguments in place.
// So the assembly only ever takes calls the C++ would take, and counts them as it
// would: BlasConformance.EveryFortranAndCblasCallCountedAsTheReferenceChecksSay checks
// each call's counters over a grid of valid and invalid arguments, and
// BlasThreshold.BothSidesOfTheBound the flop bound, through the exported entry points.
//
// The Fortran trampoline (all of sgemm_64_; sgemm_ after its fast path), at its first
// instruction (%rsp = the caller's %rsp - 8, which the ABI makes 8 mod 16):
//     push %r9 .. %rdi      the frame's first six words: FortranFrame at %rsp
//     mov  %rsp, %rdi       its address, the decision's argument
//     sub  $8, %rsp         %rsp 16-byte aligned at the call
//     call <decision>       ordinary C++: may use every caller-saved register
//     add  $8, %rsp
//     pop  %rdi .. %r9      the arguments as they came
//     jmp  *%rax            the chosen routine returns to our caller
// The stack arguments are never moved. The CFI directives let a debugger or
// profiler unwind through the frame while the decision runs; endbr64 starts each
// entry when the library is built for CET's indirect-branch tracking (the PLT
// reaches it by an indirect jump).
#include <cstddef>

#include "entry/fast_path.hpp"
#include "route/router.hpp"
#include "support/counters.hpp"

#if TMM_BLAS_ASM_ENTRIES

namespace tiledmm::blas {

// The offsets the assembly reads, as numbers it can spell.
#define TMM_ROUTE_MAX_FLOPS 8
#define TMM_ROUTE_SGEMM 16
#define TMM_ROUTE_CBLAS 24
#define TMM_ROUTE_CBLAS_DIRECT 2
#define TMM_ROUTE_SGEMM_DIRECT 3
#define TMM_SGEMM_CALLS 16
#define TMM_SGEMM_FLOPS 24
#define TMM_CBLAS_CALLS 80
#define TMM_CBLAS_FLOPS 88
static_assert(offsetof(Route, fallback_max_flops) == TMM_ROUTE_MAX_FLOPS);
static_assert(offsetof(Route, sgemm) == TMM_ROUTE_SGEMM);
static_assert(offsetof(Route, cblas_sgemm) == TMM_ROUTE_CBLAS);
static_assert(offsetof(Route, cblas_direct) == TMM_ROUTE_CBLAS_DIRECT);
static_assert(offsetof(Route, sgemm_direct) == TMM_ROUTE_SGEMM_DIRECT);
static_assert(sizeof(bool) == 1 && sizeof(int) == 4 && sizeof(uint64_t) == 8);
// g_route is the Route's address, t_counter_block a pointer, t_fallback_depth an int.
static_assert(sizeof(std::atomic<const Route*>) == 8 &&
              std::atomic<const Route*>::is_always_lock_free);
constexpr size_t counter_offset(Routine r, Counter c) {
  return (size_t(r) * CounterBlock::kCounters + size_t(c)) * sizeof(uint64_t);
}
static_assert(offsetof(CounterBlock, value) == 0);
static_assert(counter_offset(Routine::kSgemm, Counter::kFallbackCalls) == TMM_SGEMM_CALLS);
static_assert(counter_offset(Routine::kSgemm, Counter::kFallbackFlops) == TMM_SGEMM_FLOPS);
static_assert(counter_offset(Routine::kCblasSgemm, Counter::kFallbackCalls) == TMM_CBLAS_CALLS);
static_assert(counter_offset(Routine::kCblasSgemm, Counter::kFallbackFlops) == TMM_CBLAS_FLOPS);

}  // namespace tiledmm::blas

#define TMM_STR(x) #x
#define TMM_NUM(x) TMM_STR(x)

#if defined(__CET__) && (__CET__ & 1)
#define TMM_ENDBR "endbr64\n"
#else
#define TMM_ENDBR ""
#endif

#define TMM_PUSH(reg) "pushq %" reg "\n.cfi_adjust_cfa_offset 8\n"
#define TMM_POP(reg) "popq %" reg "\n.cfi_adjust_cfa_offset -8\n"

#define TMM_ENTRY_START(name) \
  ".globl " name              \
  "\n"                        \
  ".type " name               \
  ", @function\n"             \
  ".p2align 4\n" name         \
  ":\n"                       \
  ".cfi_startproc\n" TMM_ENDBR

#define TMM_ENTRY_END(name) \
  ".cfi_endproc\n"          \
  ".size " name ", .-" name "\n"

// The trampoline to the C++ decision (see the top of the file).
#define TMM_FORTRAN_TRAMPOLINE(decision) \
  TMM_PUSH("r9") TMM_PUSH("r8") TMM_PUSH("rcx") TMM_PUSH("rdx") TMM_PUSH("rsi")            \
  TMM_PUSH("rdi")                                                                          \
  "movq %rsp, %rdi\n"                                                                      \
  "subq $8, %rsp\n.cfi_adjust_cfa_offset 8\n"                                              \
  "call " decision "\n"                                                                    \
  "addq $8, %rsp\n.cfi_adjust_cfa_offset -8\n" TMM_POP("rdi") TMM_POP("rsi") TMM_POP("rdx") \
  TMM_POP("rcx") TMM_POP("r8") TMM_POP("r9")                                               \
  "jmpq *%rax\n"

// The fast path of a call whose Route byte `jump` (a *_direct flag) is set: %rax the
// Route, %r10 this thread's counter block; `bail` the label of the C++ way.
#define TMM_ROUTE_AND_BLOCK(jump, bail) \
  "movq tmm_blas_g_route(%rip), %rax\n"                      \
  "cmpb $0, " TMM_NUM(jump) "(%rax)\n"                       \
  "je " bail "\n"                                            \
  "movq tmm_blas_t_counter_block@gottpoff(%rip), %r10\n"     \
  "movq %fs:(%r10), %r10\n"                                  \
  "testq %r10, %r10\n"                                       \
  "je " bail "\n"

// The end of both fast paths, given m, n and k (1 to 65536) as 32-bit operands `m`,
// `n`, `k` (registers or memory; moved zero-extended): 2 m n k against the Route's bound,
// then the call and its flops counted at `calls`/`flops` in the block, and the jump
// to the Route's routine at `slot`.
#define TMM_COUNT_AND_JUMP(m, n, k, bail, calls, flops, slot) \
  "movl " m ", %r11d\n"                                        \
  "movl " n ", %eax\n"                                         \
  "imulq %rax, %r11\n"                                         \
  "movl " k ", %eax\n"                                         \
  "imulq %rax, %r11\n"                                         \
  "addq %r11, %r11\n"                                          \
  "movq tmm_blas_g_route(%rip), %rax\n"                        \
  "cmpq " TMM_NUM(TMM_ROUTE_MAX_FLOPS) "(%rax), %r11\n"        \
  "ja " bail "\n"                                              \
  "addq $1, " TMM_NUM(calls) "(%r10)\n"                        \
  "addq %r11, " TMM_NUM(flops) "(%r10)\n"                      \
  "jmpq *" TMM_NUM(slot) "(%rax)\n"

// sgemm_: every argument by reference. Stack arguments (from 8(%rsp)): a, lda, b,
// ldb, beta, c, ldc. Checks in fortran_valid's terms (args.hpp): 1 <= m, n, k <=
// 65536; TRANSA and TRANSB N, T or C in either case (bit 5 set maps exactly each
// letter's two cases onto the lower one); lda >= rows of A, ldb >= rows of B,
// ldc >= m; alpha's bits but the sign not all zero; 2 m n k within the bound.
#define TMM_FORTRAN_SIZE(reg) \
  "movl (" reg                \
  "), %r11d\n"                \
  "decl %r11d\n"              \
  "cmpl $0xffff, %r11d\n"     \
  "ja .Lsgemm_decide\n"

// rows = (trans at `ch` is N) ? *if_n : *if_t; then *(ld at `ld_slot`) >= rows.
#define TMM_FORTRAN_LD(ch, if_n, if_t, ld_slot) \
  "movzbl (" ch                                 \
  "), %r11d\n"                                  \
  "orl $0x20, %r11d\n"                          \
  "cmpl $0x6e, %r11d\n"                         \
  "je 1f\n"                                     \
  "cmpl $0x74, %r11d\n"                         \
  "je 2f\n"                                     \
  "cmpl $0x63, %r11d\n"                         \
  "jne .Lsgemm_decide\n"                        \
  "2: movl (" if_t                              \
  "), %r11d\n"                                  \
  "jmp 3f\n"                                    \
  "1: movl (" if_n                              \
  "), %r11d\n"                                  \
  "3: movq " ld_slot                            \
  "(%rsp), %rax\n"                              \
  "cmpl %r11d, (%rax)\n"                        \
  "jl .Lsgemm_decide\n"

#define TMM_SGEMM                                               \
  TMM_ENTRY_START("sgemm_")                                     \
  TMM_ROUTE_AND_BLOCK(TMM_ROUTE_SGEMM_DIRECT, ".Lsgemm_decide") \
  "movq tmm_blas_t_fallback_depth@gottpoff(%rip), %r11\n"                          \
  "cmpl $0, %fs:(%r11)\n"                                                          \
  "jne .Lsgemm_decide\n" TMM_FORTRAN_SIZE("%rdx") TMM_FORTRAN_SIZE("%rcx")         \
      TMM_FORTRAN_SIZE("%r8")                                                      \
  "movq 56(%rsp), %r11\n"                                                          \
  "movl (%r11), %r11d\n"                                                           \
  "cmpl (%rdx), %r11d\n"                                                           \
  "jl .Lsgemm_decide\n" TMM_FORTRAN_LD("%rdi", "%rdx", "%r8", "16")                \
      TMM_FORTRAN_LD("%rsi", "%r8", "%rcx", "32")                                  \
  "movl (%r9), %r11d\n"                                                            \
  "addl %r11d, %r11d\n"                                                            \
  "je .Lsgemm_decide\n"                                                            \
  TMM_COUNT_AND_JUMP("(%rdx)", "(%rcx)", "(%r8)", ".Lsgemm_decide", TMM_SGEMM_CALLS,      \
                     TMM_SGEMM_FLOPS, TMM_ROUTE_SGEMM)                                  \
  ".Lsgemm_decide:\n" TMM_FORTRAN_TRAMPOLINE("tmm_blas_sgemm_target")              \
      TMM_ENTRY_END("sgemm_")

// cblas_sgemm: layout, transa, transb, m, n, k in %edi .. %r9d, alpha in %xmm0;
// stack arguments (from 8(%rsp)): a, lda, b, ldb, c, ldc, an int in the low half of
// its 8-byte slot. Checks in cblas_valid's terms (args.hpp).
#define TMM_CBLAS_SIZE(reg) \
  "leal -1(" reg            \
  "), %r11d\n"              \
  "cmpl $0xffff, %r11d\n"   \
  "ja .Lcblas_cxx\n"

#define TMM_CBLAS_TRANS(reg) \
  "leal -111(" reg           \
  "), %r11d\n"               \
  "cmpl $2, %r11d\n"         \
  "ja .Lcblas_cxx\n"

// *(ld at `slot`) >= ((trans in `t` is NoTrans) ? if_n : if_t).
#define TMM_CBLAS_LD(t, if_n, if_t, slot) \
  "movl " if_n                            \
  ", %r11d\n"                             \
  "cmpl $111, " t                         \
  "\n"                                    \
  "cmovnel " if_t                         \
  ", %r11d\n"                             \
  "cmpl %r11d, " slot                     \
  "(%rsp)\n"                              \
  "jl .Lcblas_cxx\n"

#define TMM_CBLAS                                            \
  TMM_ENTRY_START("cblas_sgemm")                             \
  TMM_ROUTE_AND_BLOCK(TMM_ROUTE_CBLAS_DIRECT, ".Lcblas_cxx") \
  TMM_CBLAS_SIZE("%rcx") TMM_CBLAS_SIZE("%r8") TMM_CBLAS_SIZE("%r9")               \
      TMM_CBLAS_TRANS("%rsi") TMM_CBLAS_TRANS("%rdx")                              \
  "movd %xmm0, %r11d\n"                                                            \
  "addl %r11d, %r11d\n"                                                            \
  "je .Lcblas_cxx\n"                                                               \
  "cmpl $102, %edi\n"                                                              \
  "je .Lcblas_col\n"                                                               \
  "cmpl $101, %edi\n"                                                              \
  "jne .Lcblas_cxx\n" TMM_CBLAS_LD("%esi", "%r9d", "%ecx", "16")                   \
      TMM_CBLAS_LD("%edx", "%r8d", "%r9d", "32")                                   \
  "cmpl %r8d, 48(%rsp)\n"                                                          \
  "jl .Lcblas_cxx\n"                                                               \
  "jmp .Lcblas_count\n"                                                            \
  ".Lcblas_col:\n" TMM_CBLAS_LD("%esi", "%ecx", "%r9d", "16")                      \
      TMM_CBLAS_LD("%edx", "%r9d", "%r8d", "32")                                   \
  "cmpl %ecx, 48(%rsp)\n"                                                          \
  "jl .Lcblas_cxx\n"                                                               \
  ".Lcblas_count:\n"                                                               \
  TMM_COUNT_AND_JUMP("%ecx", "%r8d", "%r9d", ".Lcblas_cxx", TMM_CBLAS_CALLS,             \
                     TMM_CBLAS_FLOPS, TMM_ROUTE_CBLAS)                                  \
  ".Lcblas_cxx:\n"                                                                 \
  "jmp tmm_blas_cblas_sgemm_cxx\n" TMM_ENTRY_END("cblas_sgemm")

// In .text, and back to the section the compiler was in.
asm(".pushsection .text\n" TMM_SGEMM TMM_CBLAS TMM_ENTRY_START("sgemm_64_")
        TMM_FORTRAN_TRAMPOLINE("tmm_blas_sgemm64_target")
            TMM_ENTRY_END("sgemm_64_") ".popsection\n");

#endif  // TMM_BLAS_ASM_ENTRIES
