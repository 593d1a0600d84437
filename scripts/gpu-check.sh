#!/usr/bin/env bash
# The GPU check: run on a machine with an NVIDIA GPU, from the repository root.
#
#   scripts/gpu-check.sh [BUILD_DIR]      (default: build-gpu)
#
# Uses BUILD_DIR if it holds a build (e.g. one made elsewhere with
# -DCMAKE_CUDA_ARCHITECTURES=90 and carried here), else builds one. Then:
#   1. every test binary with TMM_REQUIRE_GPU=1 (a missing GPU fails, never skips);
#   2. compute-sanitizer memcheck and racecheck on a subset of the GPU suite;
#   3. the demo (the seed reports' experiment) and, if built, the benchmark.
# Logs go to $OUT (or /tmp/tmm-gpu-check); a summary table is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
out=${OUT:-/tmp/tmm-gpu-check}
mkdir -p "$out"

if [ ! -x "$build/tests/test_correctness" ]; then
  source scripts/env.sh
  cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=native "${TMM_CMAKE_CUDA[@]}" &&
    cmake --build "$build" || { echo "build failed"; exit 1; }
fi

# The benchmark links cuBLAS from the toolkit, which may not be on the loader path.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$out/gpu.txt"
export TMM_REQUIRE_GPU=1
summary=()
failed=0

# step NAME TIMEOUT COMMAND...: runs it, logs to $out/NAME.log, records the outcome.
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local tail
  tail=$(grep -E "^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY|passed, " "$out/$name.log" | tr '\n' ' ')
  summary+=("$(printf '%-26s rc=%-3s %4ss  %s' "$name" "$rc" "$((SECONDS - t0))" "$tail")")
  [ "$rc" -eq 0 ] || failed=1
}

for t in test_api_contract test_correctness test_threads test_cuda_backend test_header_c test_header_cxx; do
  step "$t" 900 "$build/tests/$t"
done

cuda_subset='AllConfigs/Correctness.*/cuda_*_row_NN:AllConfigs/Correctness.*/cuda_*_col_TN:AllConfigs/Correctness.*/cuda_*_row_NT'
step memcheck_correctness 900 compute-sanitizer --tool memcheck --error-exitcode 1 \
  "$build/tests/test_correctness" --gtest_filter="$cuda_subset"
step memcheck_cuda_backend 900 compute-sanitizer --tool memcheck --error-exitcode 1 \
  "$build/tests/test_cuda_backend" --gtest_filter='-*OutOfMemory*'
step racecheck_correctness 900 compute-sanitizer --tool racecheck --error-exitcode 1 \
  "$build/tests/test_correctness" \
  --gtest_filter='AllConfigs/Correctness.*/cuda_tiled_*_row_NN:AllConfigs/Correctness.*/cuda_coarsened_t*_c2_col_TT:AllConfigs/Correctness.*/cuda_blocked_*'

step demo 900 "$build/examples/tmm_demo" --budget "${TMM_DEMO_BUDGET:-240}" --csv "$out/demo.csv"
if [ -x "$build/examples/tmm_bench" ]; then
  step bench 900 "$build/examples/tmm_bench" --csv "$out/bench.csv" ${TMM_BENCH_ARGS:-}
fi

echo
echo "=== demo ==="
cat "$out/demo.log"
if [ -f "$out/bench.log" ]; then echo; echo "=== bench ==="; cat "$out/bench.log"; fi
echo
echo "=== summary ($(head -2 "$out/gpu.txt" | tail -1)) ==="
printf '%s\n' "${summary[@]}"
exit $failed
