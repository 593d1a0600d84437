#!/usr/bin/env bash
# The GPU check: run by hand on a machine with an NVIDIA GPU, from the repository root.
#
#   scripts/gpu-check.sh [BUILD_DIR]      (default: build-gpu)
#
# A machine without GoogleTest or Debian's BLAS libraries (e.g. Ubuntu's, no network)
# takes them from a folder made here by scripts/device-bundle.sh and carried along:
#
#   TMM_DEVICE_BUNDLE=.private/gpu-bundle scripts/gpu-check.sh
#
# 1. builds the whole tree in BUILD_DIR with this machine's own compilers, for its own
#    GPUs (CMAKE_CUDA_ARCHITECTURES=native), tests included, bindings off, warnings as
#    errors: GoogleTest from the bundle's sources (else the installed one, else
#    /usr/src/googletest), and the bundle's BLAS libraries for libtiledmm_blas's
#    tests. On a GPU of compute capability 9.0 the configure log must say that the
#    Hopper (sm_90a) kernels are built;
# 2. every test (ctest: each with its own settings, the BLAS tests with their fallback
#    libraries, including their CUDA runs) with TMM_REQUIRE_GPU=1, so a missing GPU
#    fails instead of skipping. A test that skips fails the check too (ctest's
#    Skipped, and GoogleTest's "[  SKIPPED ]" inside a passing program), except the
#    by-design skips in allowed_skips below. Left out: blas_preload, blas_numpy and
#    blas_scalapack, CPU programs that preload libtiledmm_blas and need Debian's
#    -dev packages, NumPy and Open MPI (CI runs them; the library's CUDA runs are
#    the blas_*_cuda tests). TMM_TESTS (a ctest -R regular expression) and
#    TMM_TESTS_EXCLUDE (names joined by |) split the tests over several runs of a
#    time-limited machine: the build directory is reused;
# 3. compute-sanitizer: memcheck, initcheck and synccheck over every GPU program (each
#    ctest test that runs a program of the build, with its settings, but the BLAS runs
#    on the CPU backend, test_cuda_sticky, whose kernel faults on purpose, and the
#    programs labelled "host", which test a unit of lib/ without a GPU), and racecheck
#    over the unit tests of tests/ (test_streamed_gemm and test_kernel_table
#    included). Faults the tests provoke on purpose (allocation failure, a destroyed
#    stream) are CUDA API errors by design, so API error reports are off; memory,
#    race, initialisation and synchronisation errors must be zero.
#    TMM_TEST_SANITIZER=1 shortens the largest shapes. TMM_SANITIZERS picks the tools
#    (default: all four); TMM_SKIP_SANITIZERS=1 skips them. On the H100 memcheck,
#    initcheck and synccheck take about 3 minutes together over the kernel tests,
#    racecheck about 15 (test_correctness about 12): run it on its own with
#    TMM_SANITIZERS=racecheck TMM_SKIP_TESTS=1 TMM_SKIP_DEMO=1 TMM_SKIP_BENCH=1.
#    TMM_PROGRAMS (an extended regular expression) keeps the programs whose test name
#    matches, and GoogleTest's own GTEST_TOTAL_SHARDS and GTEST_SHARD_INDEX split each
#    program, to fit a run into a time limit;
# 4. the demo (the seed reports' experiment) and, if built, the benchmark against
#    cuBLAS (TMM_SKIP_DEMO=1, TMM_SKIP_BENCH=1 skip them).
# Logs go to $OUT (or /tmp/tmm-gpu-check); a summary table is printed last, and the
# exit status is 1 if any step failed. TMM_WERROR=OFF builds without warnings as
# errors (a new compiler's new warning then does not stop the run; fix it after);
# TMM_CUDA_ARCHITECTURES replaces native (e.g. where CMake cannot query the GPU).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
out=${OUT:-/tmp/tmm-gpu-check}
bundle=${TMM_DEVICE_BUNDLE:-}
mkdir -p "$out"
rm -f "$out/summary.txt"

# GoogleTest skips that are by design: test_blas_conformance runs several times with
# different settings (tests/blas/CMakeLists.txt), and each run skips the tests meant
# for another (their messages, as GTEST_SKIP gives them).
# And test_alloc_faults' allocation counts (CPU tests) where the machine's g++ links
# libstdc++ into libtiledmm statically, as the device tool's /opt/gcc does: nothing
# there can count the library's allocations (CI runs them).
allowed_skips=(
  "the fallback is not the reference BLAS"
  "run with TILEDMM_BLAS_FALLBACK naming libtiledmm_blas"
  "the library's allocations do not reach this program's operator new (libstdc++ linked into libtiledmm statically?): nothing to count"
)

export TMM_REQUIRE_CUDA=1  # env.sh: no nvcc is an error here, not a CPU-only build
source scripts/env.sh || exit 1
summary=()
failed=0

# step NAME TIMEOUT COMMAND...: runs it, logs to $out/NAME.log, records the outcome.
# A shell function runs without the time limit (timeout runs programs only).
step() {
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS rc=0
  if declare -F "$1" >/dev/null; then
    "$@" </dev/null >"$out/$name.log" 2>&1 || rc=$?
  else
    timeout "$limit" "$@" </dev/null >"$out/$name.log" 2>&1 || rc=$?
  fi
  local tail
  tail=$(grep -E "^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY|RACECHECK SUMMARY|passed, |tests passed|Hopper wgmma" \
    "$out/$name.log" | tr '\n' ' ')
  summary+=("$(printf '%-44s rc=%-3s %5ss  %s' "$name" "$rc" "$((SECONDS - t0))" "$tail")")
  # Also as it goes, so that a run cut off by a time limit still says what it did.
  printf '%s\n' "${summary[-1]}" >>"$out/summary.txt"
  [ "$rc" -eq 0 ] || failed=1
  return "$rc"
}

# ---- 1. the build -------------------------------------------------------------
cmake_args=(-DCMAKE_CUDA_ARCHITECTURES="${TMM_CUDA_ARCHITECTURES:-native}" "${TMM_CMAKE_CUDA[@]}"
            -DTILEDMM_BUILD_BINDINGS=OFF -DTILEDMM_WARNINGS_AS_ERRORS="${TMM_WERROR:-ON}")
command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ] && cmake_args+=(-G Ninja)
if [ -n "$bundle" ]; then
  bundle=$(cd "$bundle" && pwd) || { echo "no bundle folder $TMM_DEVICE_BUNDLE"; exit 1; }
  # shellcheck disable=SC1091
  source "$bundle/env.sh"  # the Fortran runtime of its BLAS libraries
  cmake_args=(-C "$bundle/bundle.cmake" "${cmake_args[@]}")
elif [ ! -f /usr/lib/x86_64-linux-gnu/cmake/GTest/GTestConfig.cmake ] &&
     [ ! -f /usr/lib/cmake/GTest/GTestConfig.cmake ] && [ -d /usr/src/googletest ]; then
  cmake_args+=(-DTILEDMM_GTEST_FROM_SOURCE=/usr/src/googletest)
fi
configure() {
  cmake -S . -B "$build" "${cmake_args[@]}" || return 1
  # Where a GPU of compute capability 9.0 is, native must have built the Hopper kernels.
  if nvidia-smi --query-gpu=compute_cap --format=csv,noheader | grep -qx "9.0" &&
     ! grep -q "Hopper wgmma TF32 tensor cores (sm_90a): built" "$out/configure.log"; then
    echo "FAIL: a GPU of compute capability 9.0 is here, but the Hopper kernels are not built"
    return 1
  fi
}
stop() { printf '%s\n' "${summary[@]}"; tail -40 "$out/$1.log"; exit 1; }
step configure 600 configure || stop configure
step build 3600 cmake --build "$build" || stop build

# The benchmark links cuBLAS from the toolkit, which may not be on the loader path.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$d"
done

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_cap --format=csv |
  tee "$out/gpu.txt"
export TMM_REQUIRE_GPU=1

# ---- 2. every test, none skipped ----------------------------------------------
# skips LOG: the GoogleTest and CTest skips in a verbose ctest LOG that are not by
# design; fails if there is any.
skips() {
  local unexpected
  unexpected=$(awk -v allowed="$(printf '%s\n' "${allowed_skips[@]}")" '
    BEGIN { n = split(allowed, a, "\n"); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
    { num = ""; if (match($0, /^[0-9]+: /)) num = substr($0, 1, RLENGTH - 2); sub(/^[0-9]+: /, "") }
    want { if ($0 in ok) mine[num] = 1; else { print "skipped: " $0 " (" where ")"; bad[num] = 1 }
           want = 0; next }
    / Skipped$/ { where = $0; sub(/: Skipped$/, "", where); want = 1 }
    # A ctest test skipped as a whole is allowed only where every skip in it was.
    /\(Skipped\)$/ { n = $0; sub(/^[ \t]*/, "", n); sub(/ .*/, "", n)
                      if (!(n in mine) || (n in bad)) print "ctest: " $0 }' "$1")
  [ -z "$unexpected" ] || { echo "$unexpected"; return 1; }
  echo "no skips but the allowed ones ($(grep -c "\[  SKIPPED \] [^ ]* (" "$1") GoogleTest skips)"
}
run_tests() {
  local keep=()
  [ -n "${TMM_TESTS:-}" ] && keep=(-R "$TMM_TESTS")
  ctest --test-dir "$build" -V --timeout 1200 "${keep[@]}" \
    -E "^(blas_preload|blas_numpy|blas_scalapack${TMM_TESTS_EXCLUDE:+|$TMM_TESTS_EXCLUDE})$"
}
if [ "${TMM_SKIP_TESTS:-0}" != 1 ]; then
  step tests 5400 run_tests
  step tests_skip_nothing 60 skips "$out/tests.log"
fi

# ---- 3. compute-sanitizer -----------------------------------------------------
# The ctest tests that run a program of the build, with their settings, one per line:
# NAME<TAB>a shell command line (env SETTINGS... PROGRAM ARGUMENTS...). Tests labelled
# "host" (tests/CMakeLists.txt: units of lib/ tested without a GPU) are left out:
# compute-sanitizer fails a program that never calls CUDA.
list_programs() {
  ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, os, shlex, sys
build = os.path.realpath(sys.argv[1])
for t in json.load(sys.stdin)["tests"]:
    cmd = t.get("command") or []
    if not cmd or not os.path.realpath(cmd[0]).startswith(build + os.sep):
        continue
    env, labels = [], []
    for p in t.get("properties", []):
        if p["name"] == "ENVIRONMENT":
            env = p["value"]
        elif p["name"] == "LABELS":
            labels = p["value"]
    if "host" in labels:
        continue
    print(t["name"] + "\t" + shlex.join(["env"] + env + cmd))
' "$build"
}
tools=${TMM_SANITIZERS:-memcheck initcheck synccheck racecheck}
[ "${TMM_SKIP_SANITIZERS:-0}" = 1 ] && tools=""
if [ -n "$tools" ] && ! command -v compute-sanitizer >/dev/null; then
  for d in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer; do
    [ -x "$d/compute-sanitizer" ] && export PATH=$PATH:$d && break
  done
fi
sanitizer_ready() {
  command -v compute-sanitizer || { echo "no compute-sanitizer (the CUDA toolkit has it)"; return 1; }
  list_programs >"$out/programs.txt" && cat "$out/programs.txt"
}
if [ -n "$tools" ] && ! step sanitizer_programs 60 sanitizer_ready; then
  tools=""
fi
for tool in $tools; do
  while IFS=$'\t' read -r name cmdline; do
    case $name in test_cuda_sticky | test_blas_internals) continue ;; esac
    [[ $name =~ ${TMM_PROGRAMS:-.} ]] || continue
    # The BLAS runs on the CPU backend use no GPU, nor do the host halves of programs
    # whose GPU tests have an entry of their own (NAME_cuda beside NAME, NAME_host):
    # compute-sanitizer fails a program that never calls CUDA.
    case $cmdline in *TILEDMM_BLAS_BACKEND=cpu*) continue ;; esac
    case $name in *_host) continue ;; esac
    grep -q "^${name}_cuda"$'\t' "$out/programs.txt" && continue
    if [ "$tool" = racecheck ]; then
      case $name in test_header_* | test_blas_*) continue ;; test_*) ;; *) continue ;; esac
    fi
    # env SETTINGS... compute-sanitizer ... PROGRAM ARGUMENTS...
    eval "set -- $cmdline"
    shift  # env
    settings=()
    while [ $# -gt 0 ] && [[ $1 == *=* ]]; do settings+=("$1"); shift; done
    step "${tool}_$name" 1200 env TMM_TEST_SANITIZER=1 "${settings[@]}" compute-sanitizer \
      --tool "$tool" --report-api-errors no --error-exitcode 1 "$@"
  done <"$out/programs.txt"
done

# ---- 4. the demo and the benchmark ---------------------------------------------
[ "${TMM_SKIP_DEMO:-0}" = 1 ] ||
  step demo 900 "$build/examples/tmm_demo" --budget "${TMM_DEMO_BUDGET:-240}" --csv "$out/demo.csv"
if [ -x "$build/examples/tmm_bench" ] && [ "${TMM_SKIP_BENCH:-0}" != 1 ]; then
  # shellcheck disable=SC2086
  step bench 900 "$build/examples/tmm_bench" --csv "$out/bench.csv" ${TMM_BENCH_ARGS:-}
fi

echo
[ -f "$out/demo.log" ] && { echo "=== demo ==="; cat "$out/demo.log"; }
if [ -f "$out/bench.log" ]; then echo; echo "=== bench ==="; cat "$out/bench.log"; fi
[ -f "$out/tests_skip_nothing.log" ] && { echo; cat "$out/tests_skip_nothing.log"; }
echo
echo "=== summary ($(sed -n 2p "$out/gpu.txt")) ==="
printf '%s\n' "${summary[@]}"
exit $failed
