#!/usr/bin/env bash
# The GPU check: run on a machine with an NVIDIA GPU, from the repository root.
#
#   scripts/gpu-check.sh [BUILD_DIR]      (default: build-gpu)
#
# Uses BUILD_DIR if it holds a build (e.g. one made elsewhere with
# -DCMAKE_CUDA_ARCHITECTURES=90 and carried here), else builds one. Then:
#   1. every test binary with TMM_REQUIRE_GPU=1 (a missing GPU fails, never skips);
#   2. compute-sanitizer memcheck, initcheck, synccheck and racecheck on the whole
#      GPU suite (TMM_SANITIZERS chooses; TMM_SKIP_SANITIZERS=1 skips them);
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

for t in test_internals test_api_contract test_alloc_faults test_correctness test_threads test_host_io \
         test_cuda_backend test_cuda_faults test_streamed test_tensor_cores test_cuda_sticky test_header_c \
         test_header_cxx; do
  step "$t" 900 "$build/tests/$t"
done

# compute-sanitizer over the whole GPU suite. Faults the tests provoke on purpose
# (allocation failure, a destroyed stream) are CUDA API errors by design, so API
# error reports are off; memory, race, initialisation and synchronisation errors
# are what must be zero. TMM_TEST_SANITIZER=1 shortens k of the largest shape.
# TMM_SANITIZERS picks the tools (default: all four). On the H100 memcheck,
# initcheck and synccheck take about 3 minutes together over the suite; racecheck
# about 15 (test_correctness alone about 12), so give it a run of its own:
# TMM_SANITIZERS=racecheck TMM_SKIP_DEMO=1 TMM_SKIP_BENCH=1 scripts/gpu-check.sh.
[ "${TMM_SKIP_SANITIZERS:-0}" = 1 ] && TMM_SANITIZERS=" "
# test_cuda_sticky faults on purpose (an illegal address): not under the sanitizers.
suite=(test_correctness test_cuda_backend test_cuda_faults test_streamed test_tensor_cores test_host_io test_threads
       test_api_contract test_alloc_faults)
for tool in ${TMM_SANITIZERS:-memcheck initcheck synccheck racecheck}; do
  for t in "${suite[@]}"; do
    step "${tool}_$t" 1200 env TMM_TEST_SANITIZER=1 compute-sanitizer --tool "$tool" \
      --report-api-errors no --error-exitcode 1 "$build/tests/$t"
  done
done

[ "${TMM_SKIP_DEMO:-0}" = 1 ] || step demo 900 "$build/examples/tmm_demo" --budget "${TMM_DEMO_BUDGET:-240}" --csv "$out/demo.csv"
if [ -x "$build/examples/tmm_bench" ] && [ "${TMM_SKIP_BENCH:-0}" != 1 ]; then
  step bench 900 "$build/examples/tmm_bench" --csv "$out/bench.csv" ${TMM_BENCH_ARGS:-}
fi

echo
[ -f "$out/demo.log" ] && { echo "=== demo ==="; cat "$out/demo.log"; }
if [ -f "$out/bench.log" ]; then echo; echo "=== bench ==="; cat "$out/bench.log"; fi
echo
echo "=== summary ($(head -2 "$out/gpu.txt" | tail -1)) ==="
printf '%s\n' "${summary[@]}"
exit $failed
