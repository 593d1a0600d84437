#!/usr/bin/env bash
# libtiledmm_blas preloaded into programs that were never built for it:
#   1. processes that make no BLAS call are untouched: no log file appears;
#   2. preload_client (built against the system BLAS only): nothing at load time,
#      ddot_ left to the real BLAS, sgemm_/cblas_sgemm/dgemm_/cblas_dgemm through the
#      library, fork;
#      with the default settings (auto) and with every call routed to tiledmm.
# Usage: run_preload.sh LIBTILEDMM_BLAS PRELOAD_CLIENT|NOTFOUND WORKDIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
shim=$1 client=$2 work=$3
[ -x "$client" ] || missing "the system BLAS for linking (libblas-dev) to build preload_client"
mkdir -p "$work"
log=$work/preload.log
rm -f "$log"

LD_PRELOAD=$shim TILEDMM_BLAS_LOG=$log sh -c 'exit 0' || fail "sh with the library preloaded"
LD_PRELOAD=$shim TILEDMM_BLAS_LOG=$log ls / >/dev/null || fail "ls with the library preloaded"
[ ! -e "$log" ] || fail "a process without BLAS calls wrote the log"

# Threads at start without the library (OpenBLAS starts its own when it loads).
PRELOAD_BASELINE_THREADS=$("$client" --threads)
export PRELOAD_BASELINE_THREADS

echo "== default settings"
LD_PRELOAD=$shim TILEDMM_BLAS_LOG=$log "$client" "$log"
grep -q "sgemm_ col NN m=37 n=29 k=41 .* -> " "$log" || fail "no sgemm_ line in the log"
grep -q "dgemm_ col NT m=3 n=3 k=3 .* -> " "$log" || fail "no dgemm_ line in the log"
grep -q "cblas_dgemm row TN m=3 n=3 k=3 .* -> " "$log" || fail "no cblas_dgemm line in the log"
! grep -q "ddot" "$log" || fail "ddot_ reached the library"

echo "== every call routed to tiledmm (CPU backend)"
rm -f "$log"
LD_PRELOAD=$shim TILEDMM_BLAS_LOG=$log TILEDMM_BLAS_THRESHOLD=all TILEDMM_BLAS_BACKEND=cpu \
  PRELOAD_EXPECT_ROUTE=tiledmm "$client" "$log"
grep -q "cblas_sgemm col NN m=37 n=29 k=41 .* -> tiledmm cpu" "$log" ||
  fail "cblas_sgemm did not run on tiledmm: $(cat "$log")"
grep -q "dgemm_ col NT m=3 n=3 k=3 .* -> tiledmm cpu" "$log" ||
  fail "dgemm_ did not run on tiledmm: $(cat "$log")"
[ "$(grep -c -- "-> tiledmm cpu" "$log")" -eq 5 ] ||
  fail "expected 5 calls on tiledmm (4 + the child's): $(cat "$log")"
echo "PASS"
