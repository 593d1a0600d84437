#!/usr/bin/env bash
# The names pip's NumPy and SciPy wheels call (scipy_sgemm_, scipy_cblas_dgemm64_, ...:
# blas/support/wheel_names.hpp), each called by wheel_client through libtiledmm_blas
# preloaded, with the system's BLAS as fallback (the reference libblas.so.3 for the LP64
# names, the ILP64 libblas64.so.3 for the 64 ones), as a wheel's extension module calls
# them:
#   1. every call routed to tiledmm (CPU backend): right results, counted on tiledmm
#      under each name's own counters;
#   2. every call to the fallback, no wheel loaded: the twin's fallback (the system
#      BLAS) computes them, and invalid calls are reported as the twins report them;
#   3. wheel_stub.so (a stand-in for the wheel's own OpenBLAS, defining the eight
#      names) preloaded after the library: every call, invalid ones too, goes to the
#      next definition of the same name, not to the system BLAS;
#   4. the same with every call routed to tiledmm: the stub sees no valid call (the
#      invalid ones still go to it, as the wheel reports them);
#   5. the stub opened by the program with RTLD_LOCAL, as Python opens a wheel's
#      libraries (out of dlsym(RTLD_NEXT)'s reach): found all the same;
#   6. the stub opened only after the ILP64 names' first calls (which fell back to the
#      system BLAS): the LP64 names still find it, as SciPy's wheel imported after
#      NumPy's first product must be found.
# Usage: run_wheel_names.sh LIBTILEDMM_BLAS WHEEL_CLIENT WHEEL_STUB REFERENCE_BLAS
#        REFERENCE_BLAS64 WORKDIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
shim=$1 client=$2 stub=$3 blas=$4 blas64=$5 work=$6
[ -f "$blas" ] || missing "the reference BLAS (libblas3): $blas"
[ -f "$blas64" ] || missing "the ILP64 reference BLAS (libblas64-3): $blas64"
mkdir -p "$work"
log=$work/wheel.log
fallbacks=(TILEDMM_BLAS_FALLBACK="$blas" TILEDMM_BLAS_FALLBACK64="$blas64" TILEDMM_BLAS_BACKEND=cpu)

echo "== 1. every call routed to tiledmm"
rm -f "$log"
env LD_PRELOAD="$shim" "${fallbacks[@]}" TILEDMM_BLAS_THRESHOLD=all TILEDMM_BLAS_LOG="$log" \
  "$client" tiledmm
grep -q "scipy_cblas_dgemm64_ row NN m=7 n=5 k=6 .* -> tiledmm cpu" "$log" ||
  fail "no scipy_cblas_dgemm64_ line on tiledmm in the log"
grep -q "scipy_sgemm_ col NN m=7 n=5 k=6 .* -> tiledmm cpu" "$log" ||
  fail "no scipy_sgemm_ line on tiledmm in the log"

echo "== 2. the fallback, no wheel loaded: the system BLAS"
rm -f "$log"
env LD_PRELOAD="$shim" "${fallbacks[@]}" TILEDMM_BLAS_THRESHOLD=never TILEDMM_BLAS_LOG="$log" \
  "$client" fallback
for width in LP64 ILP64; do
  grep -q "prefixed $width names fall back to their twins' fallback" "$log" ||
    fail "the log does not say the $width wheel names use their twins' fallback: $(cat "$log")"
done

echo "== 3. the wheel's own routines (wheel_stub.so after the library)"
rm -f "$log"
env LD_PRELOAD="$shim $stub" "${fallbacks[@]}" TILEDMM_BLAS_THRESHOLD=never \
  TILEDMM_BLAS_LOG="$log" "$client" stub
for width in LP64 ILP64; do
  grep -q "prefixed $width names fall back to .*wheel_stub" "$log" ||
    fail "the log does not name wheel_stub as the $width wheel names' fallback: $(cat "$log")"
done

echo "== 4. routed to tiledmm with the wheel's routines there"
env LD_PRELOAD="$shim $stub" "${fallbacks[@]}" TILEDMM_BLAS_THRESHOLD=all "$client" stub-untouched

echo "== 5. the wheel's routines opened RTLD_LOCAL, as Python opens them"
env LD_PRELOAD="$shim" WHEEL_STUB_DLOPEN="$stub" "${fallbacks[@]}" TILEDMM_BLAS_THRESHOLD=never \
  "$client" stub

echo "== 6. opened after the ILP64 names' first call (SciPy imported after NumPy's product)"
env LD_PRELOAD="$shim" WHEEL_STUB_DLOPEN="$stub" "${fallbacks[@]}" TILEDMM_BLAS_THRESHOLD=never \
  "$client" stub-late
echo "PASS"
