#!/usr/bin/env bash
# Runs one benchmark command under several environments in turn, round after round, so
# that each side meets the same machine: on the device machines the clock under the
# power cap and the host's copy rate change from minute to minute, and a side timed
# only before or after another is compared with a different machine state.
#
#   scripts/bench/alternate.sh ROUNDS LABEL=[VAR=VALUE ...] [LABEL=...] -- COMMAND [ARG ...]
#
# Each LABEL=... names a side and the environment it runs COMMAND with (assignments
# separated by spaces; nothing after = runs it as it is). Every round runs each side
# once, in the order given, and prints "=== round R of N: LABEL" before its output;
# the script stops at the first failure. Examples, as docs/benchmarks/ uses them:
#
#   # two library builds, one tmm_bench (A/B of a kernel change)
#   scripts/bench/alternate.sh 2 before=LD_LIBRARY_PATH=build-old/lib \
#     after=LD_LIBRARY_PATH=build-dev/lib -- \
#     build-dev/examples/tmm_bench --math fp32_accurate --no-host --square 8192,16384,4096
#
#   # three drop-in BLAS libraries in front of one OpenBLAS (per-call cost)
#   scripts/bench/alternate.sh 4 old=LD_PRELOAD=build-old/blas/libtiledmm_blas.so.1 \
#     new=LD_PRELOAD=build-dev/blas/libtiledmm_blas.so.1 -- \
#     build-dev/examples/blas_bench --ab-small --fortran --sizes 2,4,8,16,32,64
set -euo pipefail

usage() {
  echo "usage: scripts/bench/alternate.sh ROUNDS LABEL=[VAR=VALUE ...] ... -- COMMAND [ARG ...]" >&2
  exit 2
}

[ $# -ge 3 ] || usage
rounds=$1
shift
[[ $rounds =~ ^[1-9][0-9]*$ ]] || usage
labels=()
envs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  [[ $1 == *=* ]] || usage
  labels+=("${1%%=*}")
  envs+=("${1#*=}")
  shift
done
if [ $# -lt 2 ] || [ ${#labels[@]} -eq 0 ]; then usage; fi
shift  # the --

for ((round = 1; round <= rounds; ++round)); do
  for i in "${!labels[@]}"; do
    echo "=== round $round of $rounds: ${labels[$i]}${envs[$i]:+ (${envs[$i]})}"
    read -r -a assignments <<<"${envs[$i]}"
    env "${assignments[@]}" "$@"
  done
done
