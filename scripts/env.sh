# Sourced by the other scripts.
#   TMM_CMAKE_CUDA   CMake arguments for the CUDA backend (or to build without it)
#   TMM_CMAKE_BINDINGS  CMake arguments for the Java and C# bindings
#   tmm_configure    configures build/ the one way every script shares, so that
#                    switching between them never rebuilds (extra arguments appended);
#                    an existing build/ keeps its generator
#   check NAME CMD   runs a check, prints PASS/FAIL, counts into $passed / $failed
#
# Without nvcc the scripts build the CPU backend only, and say so. In CI (CI set to
# anything but false or 0) or with TMM_REQUIRE_CUDA=1, a missing nvcc is an error
# instead, and CI asks CMake for the bindings explicitly (-DTILEDMM_BUILD_BINDINGS=ON),
# so that missing tools fail the build rather than silently shrink it.
# Builds use every core, with either generator (make alone would use one).
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
tmm_ci=0
case "${CI:-}" in "" | false | 0) ;; *) tmm_ci=1 ;; esac
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if command -v nvcc >/dev/null 2>&1; then
  TMM_CMAKE_CUDA=(-DTILEDMM_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
elif [ "$tmm_ci" = 1 ] || [ "${TMM_REQUIRE_CUDA:-0}" = 1 ]; then
  echo "error: no CUDA toolkit (nvcc on the PATH or in /usr/local/cuda/bin), and CI (or" \
    "TMM_REQUIRE_CUDA=1) requires the CUDA backend: install the CUDA toolkit" >&2
  return 1 2>/dev/null || exit 1
else
  echo "note: no CUDA toolkit (nvcc) found: building the CPU backend only" >&2
  TMM_CMAKE_CUDA=(-DTILEDMM_ENABLE_CUDA=OFF)
fi
TMM_CMAKE_BINDINGS=()
if [ "$tmm_ci" = 1 ]; then
  TMM_CMAKE_BINDINGS=(-DTILEDMM_BUILD_BINDINGS=ON)
fi

# Ninja for a new build/; a build/ made before, e.g. by the README's plain "cmake -S .
# -B build" (Unix Makefiles), keeps its generator: CMake refuses to change it.
tmm_configure() {
  local generator=Ninja
  if [ -f build/CMakeCache.txt ]; then
    generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' build/CMakeCache.txt)
  fi
  cmake -S . -B build -G "${generator:-Ninja}" -DTILEDMM_WARNINGS_AS_ERRORS=ON \
    "${TMM_CMAKE_CUDA[@]}" "${TMM_CMAKE_BINDINGS[@]}" "$@" >/dev/null
}

passed=0
failed=0
check() {
  local name=$1
  shift
  local log
  log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    sed 's/^/    /' "$log" | tail -40
    failed=$((failed + 1))
  fi
  cp "$log" "${CHECK_LOG:-/dev/null}" 2>/dev/null || true
  rm -f "$log"
}
