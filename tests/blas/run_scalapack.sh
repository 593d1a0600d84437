#!/usr/bin/env bash
# ScaLAPACK's psgemm_ (Debian's libscalapack-openmpi) on a 2 x 2 process grid with
# mpirun -np 4 on loopback, libtiledmm_blas preloaded in every rank, every call routed
# to tiledmm (CPU backend):
#   1. the single-process reference: psgemm_check on a 1 x 1 grid, ScaLAPACK and the
#      system BLAS alone, writes its C;
#   2. 4 ranks with TILEDMM_BLAS_PANEL=256: each rank's C is checked against FP64,
#      the whole C against the single-process one, each rank's counters must show
#      tiledmm computing every local sgemm_ with pilaenv_ widened, and the log must
#      show the widened k (256, 256 and the rest of K = 700: 188), never 32;
#   3. the default panel (4096 > K): one local product per rank, k = K;
#   4. widening off (TILEDMM_BLAS_PANEL=0): the local k is ScaLAPACK's 32, as
#      without the library: the effect of pilaenv_ measured;
#   5. TN: op(A) = A^T, checked against its own single-process run.
# Usage: run_scalapack.sh LIBTILEDMM_BLAS PSGEMM_CHECK|NOTFOUND WORKDIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
shim=$1 prog=$2 work=$3
command -v mpirun >/dev/null || missing "Open MPI's mpirun (openmpi-bin)"
[ -x "$prog" ] || missing "MPI and ScaLAPACK to build psgemm_check (libscalapack-openmpi-dev)"
mkdir -p "$work"
cd "$work"
size=520,456,700
common=(--size "$size" --nb 64)
shim_env=(-x "LD_PRELOAD=$shim" -x TILEDMM_BLAS_THRESHOLD=all -x TILEDMM_BLAS_BACKEND=cpu
  -x TILEDMM_BLAS_HOST_THREADS=1)

# Fails unless the 4 ranks each logged sgemm_ calls and tiledmm computed every one.
check_logs() {
  local logs=("$@")
  [ ${#logs[@]} -eq 4 ] || fail "expected 4 rank logs, found ${#logs[@]}"
  for l in "${logs[@]}"; do
    grep -q " sgemm_ col " "$l" || fail "no sgemm_ call in $l"
    awk '/ sgemm_ col / && !/-> tiledmm cpu/ { bad = 1 } END { exit bad }' "$l" ||
      fail "an sgemm_ call not on tiledmm in $l"
  done
}

# The local k of every sgemm_ the library logged, one per line, sorted.
local_k() { cat "$@" | grep " sgemm_ col " | sed -E 's/.* k=([0-9]+) .*/\1/' | sort -n; }
histogram() { local_k "$@" | uniq -c | awk '{ printf "%s x k=%s; ", $1, $2 }'; }

run_ranks() {  # NAME PANEL [psgemm_check arguments...]
  local name=$1 panel=$2
  shift 2
  rm -f "$name"-*.log
  "${mpi_launch[@]}" -np 4 "${shim_env[@]}" -x "TILEDMM_BLAS_LOG=$work/$name-%p.log" \
    ${panel:+-x TILEDMM_BLAS_PANEL=$panel} "$prog" --grid 2x2 "${common[@]}" "$@"
}

echo "== 1. single process, no libtiledmm_blas"
"${mpi_launch[@]}" -np 1 "$prog" --grid 1x1 "${common[@]}" --check none --dump ref-nn.bin

echo "== 2. 2 x 2 ranks, tiledmm, panel 256"
run_ranks p256 256 --compare ref-nn.bin --expect-tiledmm
check_logs p256-*.log
echo "local sgemm_ calls: $(histogram p256-*.log)"
[ "$(local_k p256-*.log | tail -1)" -eq 256 ] || fail "the largest local k is not the panel, 256"
[ "$(local_k p256-*.log | head -1)" -gt 32 ] || fail "a local k of 32 or less: not widened"

echo "== 3. the default panel (4096)"
run_ranks pdefault "" --compare ref-nn.bin --expect-tiledmm
check_logs pdefault-*.log
echo "local sgemm_ calls: $(histogram pdefault-*.log)"
[ "$(local_k pdefault-*.log | uniq)" = 700 ] || fail "expected every local k = K = 700"

echo "== 4. widening off: ScaLAPACK's own panel"
run_ranks p0 0 --compare ref-nn.bin
check_logs p0-*.log
echo "local sgemm_ calls: $(histogram p0-*.log)"
[ "$(local_k p0-*.log | tail -1)" -eq 32 ] || fail "expected ScaLAPACK's own k = 32"

echo "== 5. TN"
"${mpi_launch[@]}" -np 1 "$prog" --grid 1x1 "${common[@]}" --trans TN --check none --dump ref-tn.bin
run_ranks tn 256 --trans TN --compare ref-tn.bin --expect-tiledmm
echo "PASS"
