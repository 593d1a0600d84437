// The exported sgemm_ and sgemm_64_ on x86-64: the trampolines fast_path.hpp
// describes, in assembly (System V AMD64 ABI). On other targets this file is empty
// and shim.cpp defines them in C++.
//
// A Fortran entry, at its first instruction (%rsp = the caller's %rsp - 8, which the
// ABI makes 8 mod 16):
//     push %r9 .. %rdi      the frame's first six words: FortranFrame at %rsp
//     mov  %rsp, %rdi       its address, the decision's argument
//     sub  $8, %rsp         %rsp 16-byte aligned at the call
//     call <decision>       ordinary C++: may use every caller-saved register
//     add  $8, %rsp
//     pop  %rdi .. %r9      the arguments as they came
//     jmp  *%rax            the chosen routine returns to our caller
// The stack arguments are never moved. The CFI directives let a debugger or
// profiler unwind through the frame while the decision runs; endbr64 starts each entry when the
// library is built for CET's indirect-branch tracking (the PLT reaches it by an indirect jump).
#include "fast_path.hpp"

#if TMM_BLAS_ASM_ENTRIES

#if defined(__CET__) && (__CET__ & 1)
#define TMM_ENDBR "endbr64\n"
#else
#define TMM_ENDBR ""
#endif

#define TMM_PUSH(reg) "pushq %" reg "\n.cfi_adjust_cfa_offset 8\n"
#define TMM_POP(reg) "popq %" reg "\n.cfi_adjust_cfa_offset -8\n"

#define TMM_FORTRAN_ENTRY(name, decision) \
  ".globl " name "\n"                                                                       \
  ".type " name ", @function\n"                                                             \
  ".p2align 4\n" name ":\n"                                                                 \
  ".cfi_startproc\n" TMM_ENDBR TMM_PUSH("r9") TMM_PUSH("r8") TMM_PUSH("rcx") TMM_PUSH("rdx") \
      TMM_PUSH("rsi") TMM_PUSH("rdi")                                                        \
  "movq %rsp, %rdi\n"                                                                       \
  "subq $8, %rsp\n.cfi_adjust_cfa_offset 8\n"                                               \
  "call " decision "\n"                                                                     \
  "addq $8, %rsp\n.cfi_adjust_cfa_offset -8\n" TMM_POP("rdi") TMM_POP("rsi") TMM_POP("rdx")  \
      TMM_POP("rcx") TMM_POP("r8") TMM_POP("r9")                                             \
  "jmpq *%rax\n"                                                                            \
  ".cfi_endproc\n"                                                                          \
  ".size " name ", .-" name "\n"

// In .text, and back to the section the compiler was in.
asm(".pushsection .text\n" TMM_FORTRAN_ENTRY("sgemm_", "tmm_blas_sgemm_target")
        TMM_FORTRAN_ENTRY("sgemm_64_", "tmm_blas_sgemm64_target") ".popsection\n");

#endif  // TMM_BLAS_ASM_ENTRIES
