/* The exported sgemm_, cblas_sgemm, sgemm_64_, dgemm_ and dgemm_64_ on x86-64
 * (System V AMD64 ABI, ELF), in GNU as, AT&T syntax; entry/fast_path.hpp says why
 * they are assembly. Built only where blas/CMakeLists.txt sets TMM_BLAS_ASM_ENTRIES
 * (x86-64 ELF, and not TILEDMM_BLAS_PORTABLE_ENTRIES); elsewhere entry/shim.cpp
 * defines them in C++.
 *
 * Calling convention, as the caller made the call:
 *   sgemm_, sgemm_64_  every argument by reference: transa, transb, m, n, k, alpha in
 *   (dgemm_, dgemm_64_) %rdi, %rsi, %rdx, %rcx, %r8, %r9; at the first instruction
 *                      8(%rsp) .. 56(%rsp) hold a, lda, b, ldb, beta, c, ldc (then
 *                      the hidden lengths of transa and transb, never read here).
 *                      m, n, k, lda, ldb, ldc point to int (sgemm_, dgemm_) or
 *                      int64_t; alpha, beta, a, b, c to float or double.
 *   cblas_sgemm        layout, transa, transb, m, n, k in %edi, %esi, %edx, %ecx,
 *                      %r8d, %r9d; alpha in %xmm0; 8(%rsp) .. 48(%rsp) hold a, lda,
 *                      b, ldb, c, ldc, each int in the low half of its 8-byte slot
 *                      (beta is in %xmm1).
 * From C++ they read g_route (tmm_blas_g_route: the address of the Route), this
 * thread's counter block (tmm_blas_t_counter_block) and fallback depth
 * (tmm_blas_t_fallback_depth, initial-exec TLS), at the offsets of
 * entry/entry_offsets.h, and they call or jump to tmm_blas_sgemm_target,
 * tmm_blas_sgemm64_target, tmm_blas_dgemm_target, tmm_blas_dgemm64_target and
 * tmm_blas_cblas_sgemm_cxx (entry/shim.cpp).
 *
 * sgemm_ and cblas_sgemm start with the small calls' fast path itself, in the scratch
 * registers only (%rax, %r10, %r11; no call, nothing on the stack): the test of
 * sgemm_target / cblas_target (entry/shim.cpp) for a call the Route sends straight to
 * the fallback's routine (RouteOf::sgemm_direct, cblas_direct), the counts, the jump.
 * Its argument check is a conservative subset of the rule entry/args.hpp states
 * once (gemm_info): it proves a call valid cheaply, and only where that is easy, for
 * the sizes fast_sizes takes (1 <= m, n, k <= 65536, where the rule's tests of the
 * sizes and its max(1, .) fall away: fortran_valid, cblas_valid). It never
 * decides that a call is invalid: every call it does not take (invalid or not, a
 * quick return, a size it does not handle, anything it is not sure of) goes to the
 * C++ decision, which makes every test again by the whole rule:
 *   sgemm_      falls through to the trampoline below;
 *   cblas_sgemm jumps to tmm_blas_cblas_sgemm_cxx, its arguments in place.
 * So the assembly only ever takes calls the C++ would take, and counts them as it
 * would: BlasConformance.EveryFortranAndCblasCallCountedAsTheReferenceChecksSay checks
 * each call's counters over a grid of valid and invalid arguments against the tests'
 * own statement of the reference's rule (tests/blas/reference_checks.hpp, which
 * BlasArgs.InfoIsTheReferencesNumber shows is args.hpp's), and
 * BlasThreshold.BothSidesOfTheBound the flop bound, through the exported entry points.
 *
 * The Fortran trampoline (all of sgemm_64_, dgemm_ and dgemm_64_; sgemm_ after its
 * fast path), at its first
 * instruction (%rsp = the caller's %rsp - 8, which the ABI makes 8 mod 16):
 *     push %r9 .. %rdi      the frame's first six words: FortranFrame at %rsp
 *     mov  %rsp, %rdi       its address, the decision's argument
 *     sub  $8, %rsp         %rsp 16-byte aligned at the call
 *     call <decision>       ordinary C++: may use every caller-saved register
 *     add  $8, %rsp
 *     pop  %rdi .. %r9      the arguments as they came
 *     jmp  *%rax            the chosen routine returns to our caller
 * The stack arguments are never moved. The CFI directives let a debugger or
 * profiler unwind through the frame while the decision runs; endbr64 starts each
 * entry when the library is built for CET's indirect-branch tracking (the PLT
 * reaches it by an indirect jump). */
#include "entry/entry_offsets.h"

        .macro TMM_ENTRY_START name
        .globl \name
        .type \name, @function
        .p2align 4
\name:
        .cfi_startproc
#if defined(__CET__) && (__CET__ & 1)
        endbr64
#endif
        .endm

        .macro TMM_ENTRY_END name
        .cfi_endproc
        .size \name, .-\name
        .endm

/* The trampoline to the C++ decision (see the top of the file). */
        .macro TMM_FORTRAN_TRAMPOLINE decision
        pushq %r9
        .cfi_adjust_cfa_offset 8
        pushq %r8
        .cfi_adjust_cfa_offset 8
        pushq %rcx
        .cfi_adjust_cfa_offset 8
        pushq %rdx
        .cfi_adjust_cfa_offset 8
        pushq %rsi
        .cfi_adjust_cfa_offset 8
        pushq %rdi
        .cfi_adjust_cfa_offset 8
        movq %rsp, %rdi
        subq $8, %rsp
        .cfi_adjust_cfa_offset 8
        call \decision
        addq $8, %rsp
        .cfi_adjust_cfa_offset -8
        popq %rdi
        .cfi_adjust_cfa_offset -8
        popq %rsi
        .cfi_adjust_cfa_offset -8
        popq %rdx
        .cfi_adjust_cfa_offset -8
        popq %rcx
        .cfi_adjust_cfa_offset -8
        popq %r8
        .cfi_adjust_cfa_offset -8
        popq %r9
        .cfi_adjust_cfa_offset -8
        jmpq *%rax
        .endm

/* The fast path of a call whose Route byte `jump` (a *_direct flag) is set: %rax the
 * Route, %r10 this thread's counter block; `bail` the label of the C++ way. */
        .macro TMM_ROUTE_AND_BLOCK jump, bail
        movq tmm_blas_g_route(%rip), %rax
        cmpb $0, \jump(%rax)
        je \bail
        movq tmm_blas_t_counter_block@gottpoff(%rip), %r10
        movq %fs:(%r10), %r10
        testq %r10, %r10
        je \bail
        .endm

/* The end of both fast paths, given m, n and k (1 to 65536) as 32-bit operands `m`,
 * `n`, `k` (registers or memory; moved zero-extended): 2 m n k against the Route's
 * bound, then the call and its flops counted at `calls`/`flops` in the block, and
 * the jump to the Route's routine at `slot`. */
        .macro TMM_COUNT_AND_JUMP m, n, k, bail, calls, flops, slot
        movl \m, %r11d
        movl \n, %eax
        imulq %rax, %r11
        movl \k, %eax
        imulq %rax, %r11
        addq %r11, %r11
        movq tmm_blas_g_route(%rip), %rax
        cmpq TMM_ROUTE_MAX_FLOPS(%rax), %r11
        ja \bail
        addq $1, \calls(%r10)
        addq %r11, \flops(%r10)
        jmpq *\slot(%rax)
        .endm

/* sgemm_'s checks, fortran_valid (entry/args.hpp) for fast_sizes: 1 <= m, n, k <= 65536;
 * TRANSA and TRANSB N, T or C in either case (bit 5 set maps exactly each letter's
 * two cases onto the lower one); lda >= rows of A, ldb >= rows of B, ldc >= m;
 * alpha's bits but the sign not all zero; 2 m n k within the bound. */
        .macro TMM_FORTRAN_SIZE reg
        movl (\reg), %r11d
        decl %r11d
        cmpl $0xffff, %r11d
        ja .Lsgemm_decide
        .endm

/* rows = (trans at `ch` is N) ? *if_n : *if_t; then *(ld at `ld_slot`) >= rows. */
        .macro TMM_FORTRAN_LD ch, if_n, if_t, ld_slot
        movzbl (\ch), %r11d
        orl $0x20, %r11d
        cmpl $0x6e, %r11d
        je 1f
        cmpl $0x74, %r11d
        je 2f
        cmpl $0x63, %r11d
        jne .Lsgemm_decide
2:      movl (\if_t), %r11d
        jmp 3f
1:      movl (\if_n), %r11d
3:      movq \ld_slot(%rsp), %rax
        cmpl %r11d, (%rax)
        jl .Lsgemm_decide
        .endm

/* cblas_sgemm's checks, cblas_valid (entry/args.hpp) for fast_sizes: the sizes; the
 * transposes 111 to 113; alpha nonzero; the layout 101 or 102, each with its own
 * leading-dimension tests. */
        .macro TMM_CBLAS_SIZE reg
        leal -1(\reg), %r11d
        cmpl $0xffff, %r11d
        ja .Lcblas_cxx
        .endm

        .macro TMM_CBLAS_TRANS reg
        leal -111(\reg), %r11d
        cmpl $2, %r11d
        ja .Lcblas_cxx
        .endm

/* *(ld at `slot`) >= ((trans in `t` is NoTrans) ? if_n : if_t). */
        .macro TMM_CBLAS_LD t, if_n, if_t, slot
        movl \if_n, %r11d
        cmpl $111, \t
        cmovnel \if_t, %r11d
        cmpl %r11d, \slot(%rsp)
        jl .Lcblas_cxx
        .endm

        .text

TMM_ENTRY_START sgemm_
        TMM_ROUTE_AND_BLOCK TMM_ROUTE_SGEMM_DIRECT, .Lsgemm_decide
        movq tmm_blas_t_fallback_depth@gottpoff(%rip), %r11
        cmpl $0, %fs:(%r11)
        jne .Lsgemm_decide
        TMM_FORTRAN_SIZE %rdx
        TMM_FORTRAN_SIZE %rcx
        TMM_FORTRAN_SIZE %r8
        movq 56(%rsp), %r11
        movl (%r11), %r11d
        cmpl (%rdx), %r11d
        jl .Lsgemm_decide
        TMM_FORTRAN_LD %rdi, %rdx, %r8, 16
        TMM_FORTRAN_LD %rsi, %r8, %rcx, 32
        movl (%r9), %r11d
        addl %r11d, %r11d
        je .Lsgemm_decide
        TMM_COUNT_AND_JUMP (%rdx), (%rcx), (%r8), .Lsgemm_decide, \
                           TMM_SGEMM_CALLS, TMM_SGEMM_FLOPS, TMM_ROUTE_SGEMM
.Lsgemm_decide:
        TMM_FORTRAN_TRAMPOLINE tmm_blas_sgemm_target
TMM_ENTRY_END sgemm_

TMM_ENTRY_START cblas_sgemm
        TMM_ROUTE_AND_BLOCK TMM_ROUTE_CBLAS_DIRECT, .Lcblas_cxx
        TMM_CBLAS_SIZE %rcx
        TMM_CBLAS_SIZE %r8
        TMM_CBLAS_SIZE %r9
        TMM_CBLAS_TRANS %rsi
        TMM_CBLAS_TRANS %rdx
        movd %xmm0, %r11d
        addl %r11d, %r11d
        je .Lcblas_cxx
        cmpl $102, %edi
        je .Lcblas_col
        cmpl $101, %edi
        jne .Lcblas_cxx
        TMM_CBLAS_LD %esi, %r9d, %ecx, 16
        TMM_CBLAS_LD %edx, %r8d, %r9d, 32
        cmpl %r8d, 48(%rsp)
        jl .Lcblas_cxx
        jmp .Lcblas_count
.Lcblas_col:
        TMM_CBLAS_LD %esi, %ecx, %r9d, 16
        TMM_CBLAS_LD %edx, %r9d, %r8d, 32
        cmpl %ecx, 48(%rsp)
        jl .Lcblas_cxx
.Lcblas_count:
        TMM_COUNT_AND_JUMP %ecx, %r8d, %r9d, .Lcblas_cxx, \
                           TMM_CBLAS_CALLS, TMM_CBLAS_FLOPS, TMM_ROUTE_CBLAS
.Lcblas_cxx:
        jmp tmm_blas_cblas_sgemm_cxx
TMM_ENTRY_END cblas_sgemm

TMM_ENTRY_START sgemm_64_
        TMM_FORTRAN_TRAMPOLINE tmm_blas_sgemm64_target
TMM_ENTRY_END sgemm_64_

/* The double-precision Fortran entry points: the trampoline alone (no fast path in
 * assembly); their decisions make the fast path's tests in C++. The frame is the
 * same, every argument by reference (alpha and beta point to double). */
TMM_ENTRY_START dgemm_
        TMM_FORTRAN_TRAMPOLINE tmm_blas_dgemm_target
TMM_ENTRY_END dgemm_

TMM_ENTRY_START dgemm_64_
        TMM_FORTRAN_TRAMPOLINE tmm_blas_dgemm64_target
TMM_ENTRY_END dgemm_64_

/* No executable stack; and, under CET, the property note that says this object
 * supports it (the linker marks the library only if every object does). */
        .section .note.GNU-stack, "", @progbits
#if defined(__CET__)
        .section .note.gnu.property, "a"
        .p2align 3
        .long 4          /* name size */
        .long 16         /* descriptor size */
        .long 5          /* NT_GNU_PROPERTY_TYPE_0 */
        .asciz "GNU"
        .long 0xc0000002 /* GNU_PROPERTY_X86_FEATURE_1_AND */
        .long 4
        .long __CET__    /* IBT = 1, SHSTK = 2 */
        .p2align 3
#endif
