# Sourced by the other scripts.
#   TMM_CMAKE_CUDA   CMake arguments for the CUDA backend (or to build without it)
#   tmm_configure    configures build/ the one way every script shares, so that
#                    switching between them never rebuilds (extra arguments appended)
#   check NAME CMD   runs a check, prints PASS/FAIL, counts into $passed / $failed
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if command -v nvcc >/dev/null 2>&1; then
  TMM_CMAKE_CUDA=(-DTILEDMM_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
else
  echo "note: no CUDA toolkit (nvcc) found: building the CPU backend only" >&2
  TMM_CMAKE_CUDA=(-DTILEDMM_ENABLE_CUDA=OFF)
fi

tmm_configure() {
  cmake -S . -B build -G Ninja -DTILEDMM_WARNINGS_AS_ERRORS=ON "${TMM_CMAKE_CUDA[@]}" "$@" >/dev/null
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
