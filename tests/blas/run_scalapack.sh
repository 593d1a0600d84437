#!/usr/bin/env bash
# ScaLAPACK's psgemm_ and pdgemm_ (Debian's libscalapack-openmpi) on a 2 x 2 process
# grid with mpirun -np 4 on loopback, libtiledmm_blas preloaded in every rank, every
# call routed to tiledmm (CPU backend). For each precision (psgemm_check, whose local
# products are sgemm_; pdgemm_check, the same source built for double, dgemm_):
#   1. the single-process reference: the check on a 1 x 1 grid, ScaLAPACK and the
#      system BLAS alone, writes its C;
#   2. 4 ranks with TILEDMM_BLAS_PANEL=256: each rank's C is checked against FP64,
#      the whole C against the single-process one, each rank's counters must show
#      tiledmm computing every local xgemm_ with pilaenv_ widened, and the log must
#      show the widened k (256, 256 and the rest of K = 700: 188), never 32;
#   3. the default panel (4096 > K): one local product per rank, k = K;
#   4. widening off (TILEDMM_BLAS_PANEL=0): the local k is ScaLAPACK's 32, as
#      without the library: the effect of pilaenv_ measured;
#   5. TN: op(A) = A^T, checked against its own single-process run.
# Usage: run_scalapack.sh LIBTILEDMM_BLAS PSGEMM_CHECK|NOTFOUND PDGEMM_CHECK|NOTFOUND WORKDIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
shim=$1 psgemm=$2 pdgemm=$3 work=$4
command -v mpirun >/dev/null || missing "Open MPI's mpirun (openmpi-bin)"
for prog in "$psgemm" "$pdgemm"; do
  [ -x "$prog" ] ||
    missing "MPI and ScaLAPACK to build psgemm_check and pdgemm_check (libscalapack-openmpi-dev)"
done
mkdir -p "$work"
cd "$work"
size=520,456,700
common=(--size "$size" --nb 64)
shim_env=(-x "LD_PRELOAD=$shim" -x TILEDMM_BLAS_THRESHOLD=all -x TILEDMM_BLAS_BACKEND=cpu
  -x TILEDMM_BLAS_HOST_THREADS=1)

# Fails unless the 4 ranks each logged $local calls and tiledmm computed every one.
check_logs() {
  local logs=("$@")
  [ ${#logs[@]} -eq 4 ] || fail "expected 4 rank logs, found ${#logs[@]}"
  for l in "${logs[@]}"; do
    grep -q " $local col " "$l" || fail "no $local call in $l"
    awk -v pat=" $local col " 'index($0, pat) && !/-> tiledmm cpu/ { bad = 1 } END { exit bad }' \
      "$l" || fail "a $local call not on tiledmm in $l"
  done
}

# The local k of every $local the library logged, one per line, sorted.
local_k() { cat "$@" | grep " $local col " | sed -E 's/.* k=([0-9]+) .*/\1/' | sort -n; }
histogram() { local_k "$@" | uniq -c | awk '{ printf "%s x k=%s; ", $1, $2 }'; }
# pilaenv_'s answers for this precision, from the same logs.
widened() { cat "$@" | grep -c "pilaenv_ $letter -> .*widened" || true; }

run_ranks() {  # NAME PANEL [check arguments...]
  local name=$1 panel=$2
  shift 2
  rm -f "$name"-*.log
  "${mpi_launch[@]}" -np 4 "${shim_env[@]}" -x "TILEDMM_BLAS_LOG=$work/$name-%p.log" \
    ${panel:+-x TILEDMM_BLAS_PANEL=$panel} "$prog" --grid 2x2 "${common[@]}" "$@"
}

for precision in single double; do
  if [ "$precision" = single ]; then
    prog=$psgemm local=sgemm_ letter=S p=s
  else
    prog=$pdgemm local=dgemm_ letter=D p=d
  fi
  echo "==== ${p}gemm: $prog"
  echo "== 1. single process, no libtiledmm_blas"
  "${mpi_launch[@]}" -np 1 "$prog" --grid 1x1 "${common[@]}" --check none --dump "$p-ref-nn.bin"

  echo "== 2. 2 x 2 ranks, tiledmm, panel 256"
  run_ranks "$p-p256" 256 --compare "$p-ref-nn.bin" --expect-tiledmm
  check_logs "$p"-p256-*.log
  echo "local $local calls: $(histogram "$p"-p256-*.log)"
  [ "$(local_k "$p"-p256-*.log | tail -1)" -eq 256 ] ||
    fail "the largest local k is not the panel, 256"
  [ "$(local_k "$p"-p256-*.log | head -1)" -gt 32 ] || fail "a local k of 32 or less: not widened"
  [ "$(widened "$p"-p256-*.log)" -ge 4 ] || fail "no rank logged pilaenv_ $letter widened"
  echo "pilaenv_ $letter widened (logged): $(widened "$p"-p256-*.log) answers"

  echo "== 3. the default panel (4096)"
  run_ranks "$p-pdefault" "" --compare "$p-ref-nn.bin" --expect-tiledmm
  check_logs "$p"-pdefault-*.log
  echo "local $local calls: $(histogram "$p"-pdefault-*.log)"
  [ "$(local_k "$p"-pdefault-*.log | uniq)" = 700 ] || fail "expected every local k = K = 700"

  echo "== 4. widening off: ScaLAPACK's own panel"
  run_ranks "$p-p0" 0 --compare "$p-ref-nn.bin"
  check_logs "$p"-p0-*.log
  echo "local $local calls: $(histogram "$p"-p0-*.log)"
  [ "$(local_k "$p"-p0-*.log | tail -1)" -eq 32 ] || fail "expected ScaLAPACK's own k = 32"

  echo "== 5. TN"
  "${mpi_launch[@]}" -np 1 "$prog" --grid 1x1 "${common[@]}" --trans TN --check none \
    --dump "$p-ref-tn.bin"
  run_ranks "$p-tn" 256 --trans TN --compare "$p-ref-tn.bin" --expect-tiledmm
done
echo "PASS"
