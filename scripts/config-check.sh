#!/usr/bin/env bash
# The ways to configure tiledmm besides scripts/test.sh's (Ninja, everything asked
# for), each in its own build folder; CI runs them after the tests:
#   1. the README's commands, in that order, in a fresh copy of the tree: the plain
#      "cmake -S . -B build && cmake --build build" (the default generator, Unix
#      Makefiles, and every option at its default), then scripts/test.sh in the same
#      copy, which reuses that build/ (its generator and architectures) with warnings
#      as errors and runs every test. The CUDAARCHS environment variable, which a
#      plain cmake reads, keeps it to one GPU architecture (TMM_CONFIG_CUDA_ARCH,
#      default 80-real): the default five take three times as long on 2 cores, and
#      scripts/test.sh builds them in CI already. 80-real is also the one build in CI
#      without the Hopper kernels (TILEDMM_SM90A off), and its configure log must say
#      so;
#   2. no optional tools: nvcc and SWIG hidden, everything AUTO: the CUDA backend and
#      both bindings turn off with a warning saying what is missing; the rest builds
#      and its tests pass. libtiledmm_blas is built here with its C++ entry points
#      (TILEDMM_BLAS_PORTABLE_ENTRIES), as on targets other than x86-64;
#   3. the JDK hidden: the Java binding turns off, the C# binding and its example
#      still build;
#   4. ON means required: TILEDMM_ENABLE_CUDA=ON without nvcc and
#      TILEDMM_BUILD_BINDINGS=ON without SWIG each fail to configure, saying why;
#   5. the CUDA toolkit and architectures (configure only; nvcc needed): a toolkit
#      older than the minimum (nvcc wrapped to report 12.4) leaves the CUDA backend
#      out with a warning under AUTO and fails under ON; CMAKE_CUDA_ARCHITECTURES=native
#      on this machine without a GPU fails, saying so. Every form of the architectures
#      (native on an H100 included) is checked against the kernel families it builds
#      by tests/cuda_architectures_test.cmake, a CTest test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# check() runs each function as an if-condition, where set -e does not apply: every
# step below ends in `|| return 1`.

# A PATH without nvcc, and no other way for CMake to find it.
path_without_nvcc() {
  local dirs d out=""
  IFS=: read -ra dirs <<<"$PATH"
  for d in "${dirs[@]}"; do [ -x "$d/nvcc" ] || out=${out:+$out:}$d; done
  echo "$out"
}
hide_nvcc=(env -u CUDACXX CUDA_PATH=/nonexistent PATH="$(path_without_nvcc)")

# says LOG TEXT: the configure output LOG contains TEXT (CMake wraps warnings, so
# white space is compared loosely).
says() {
  tr -s '[:space:]' ' ' <"$1" | grep -qF -- "$2" || { echo "expected in $1: $2"; cat "$1"; return 1; }
}

plain_then_test_sh() {
  local copy=$work/copy
  mkdir -p "$copy"
  # What a clone of this commit holds, with any uncommitted work: the files git lists.
  git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$copy" || return 1
  (
    cd "$copy" || exit 1
    CUDAARCHS=${TMM_CONFIG_CUDA_ARCH:-80-real} cmake -S . -B build >"$work/make.log" 2>&1 ||
      { cat "$work/make.log"; exit 1; }
    grep -q "^CMAKE_GENERATOR:INTERNAL=Unix Makefiles$" build/CMakeCache.txt ||
      { echo "the default generator is not Unix Makefiles here"; exit 1; }
    says "$work/make.log" "-- tiledmm: building the Java binding" || exit 1
    says "$work/make.log" "-- tiledmm: building the C# binding" || exit 1
    if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
      says "$work/make.log" "-- tiledmm: building the CUDA backend" || exit 1
      grep -qE "^-- tiledmm: CUDA toolkit [0-9.]+ \(tiledmm needs [0-9.]+ or later\)$" \
        "$work/make.log" || { echo "no toolkit versions in the log"; cat "$work/make.log"; exit 1; }
      says "$work/make.log" "the CUDAARCHS environment variable" || exit 1
      if [ -z "${TMM_CONFIG_CUDA_ARCH:-}" ]; then
        says "$work/make.log" "Hopper wgmma TF32 tensor cores (sm_90a): not built" || exit 1
        says "$work/make.log" "mma.sync TF32 tensor cores (sm_80 and later): built for sm_80" ||
          exit 1
      fi
    fi
    cmake --build build || exit 1  # in parallel: CMAKE_BUILD_PARALLEL_LEVEL (env.sh)
    scripts/test.sh || exit 1
    grep -q "^CMAKE_GENERATOR:INTERNAL=Unix Makefiles$" build/CMakeCache.txt ||
      { echo "scripts/test.sh changed the generator of build/"; exit 1; }
  ) || return 1
  rm -rf "$copy"
}

no_optional_tools() {
  rm -rf build-cfg-notools
  "${hide_nvcc[@]}" cmake -S . -B build-cfg-notools -G Ninja \
    -DCMAKE_DISABLE_FIND_PACKAGE_SWIG=TRUE -DTILEDMM_BLAS_PORTABLE_ENTRIES=ON \
    >"$work/notools.log" 2>&1 ||
    { cat "$work/notools.log"; return 1; }
  says "$work/notools.log" "no CUDA compiler (nvcc) found: building the CPU backend only" ||
    return 1
  says "$work/notools.log" "not building the Java binding: missing SWIG 4" || return 1
  says "$work/notools.log" "not building the C# binding: missing SWIG 4" || return 1
  cmake --build build-cfg-notools || return 1
  ctest --test-dir build-cfg-notools --output-on-failure || return 1
  if ctest --test-dir build-cfg-notools -N | grep -E "java|csharp"; then
    echo "binding tests registered without the bindings"
    return 1
  fi
}

no_jdk() {
  rm -rf build-cfg-nojdk
  cmake -S . -B build-cfg-nojdk -G Ninja -DTILEDMM_ENABLE_CUDA=OFF \
    -DCMAKE_DISABLE_FIND_PACKAGE_Java=TRUE >"$work/nojdk.log" 2>&1 ||
    { cat "$work/nojdk.log"; return 1; }
  says "$work/nojdk.log" "not building the Java binding: missing a JDK 11" || return 1
  says "$work/nojdk.log" "-- tiledmm: building the C# binding" || return 1
  cmake --build build-cfg-nojdk --target csharp_example || return 1
}

# fails_to_configure LOG TEXT CMAKE_ARGS...: configure must fail, saying TEXT.
fails_to_configure() {
  local log=$1 text=$2
  shift 2
  rm -rf build-cfg-required
  if "$@" -S . -B build-cfg-required >"$log" 2>&1; then
    echo "configure succeeded; expected it to fail"
    cat "$log"
    return 1
  fi
  says "$log" "$text" || return 1
  rm -rf build-cfg-required
}

check plain_cmake_then_test_sh plain_then_test_sh
check no_optional_tools no_optional_tools
check no_jdk no_jdk
check cuda_on_requires_nvcc fails_to_configure "$work/cuda-on.log" \
  "TILEDMM_ENABLE_CUDA=ON but no CUDA compiler (nvcc) was found" \
  "${hide_nvcc[@]}" cmake -G Ninja -DTILEDMM_ENABLE_CUDA=ON
check bindings_on_require_tools fails_to_configure "$work/bindings-on.log" \
  "TILEDMM_BUILD_BINDINGS=ON but the Java binding cannot be built: missing SWIG 4" \
  cmake -G Ninja -DTILEDMM_ENABLE_CUDA=OFF -DTILEDMM_BUILD_BINDINGS=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_SWIG=TRUE

# The CUDA toolkit and architectures: these need nvcc itself.
real_nvcc=$(command -v nvcc || true)
if [ -n "$real_nvcc" ]; then
  # nvcc, except that it reports release 12.4, one below the minimum.
  mkdir -p "$work/old-cuda/bin"
  printf '#!/bin/sh\nif [ "$1" = --version ]; then\n  %s\n  exit 0\nfi\nexec "%s" "$@"\n' \
    'echo "Cuda compilation tools, release 12.4, V12.4.131"' "$real_nvcc" \
    >"$work/old-cuda/bin/nvcc"
  chmod +x "$work/old-cuda/bin/nvcc"
  old_toolkit_auto() {
    rm -rf build-cfg-oldcuda
    CUDACXX=$work/old-cuda/bin/nvcc cmake -S . -B build-cfg-oldcuda -G Ninja \
      -DTILEDMM_BUILD_BINDINGS=OFF >"$work/oldcuda.log" 2>&1 ||
      { cat "$work/oldcuda.log"; return 1; }
    says "$work/oldcuda.log" "is 12.4; the CUDA backend needs" || return 1
    says "$work/oldcuda.log" "-- tiledmm: building the CPU backend only" || return 1
    rm -rf build-cfg-oldcuda
  }
  check cuda_toolkit_too_old_auto old_toolkit_auto
  check cuda_toolkit_too_old_on fails_to_configure "$work/oldcuda-on.log" \
    "is 12.4; the CUDA backend needs" \
    env CUDACXX="$work/old-cuda/bin/nvcc" cmake -G Ninja -DTILEDMM_ENABLE_CUDA=ON
  if nvidia-smi -L >/dev/null 2>&1; then
    echo "note: a GPU is here: CMAKE_CUDA_ARCHITECTURES=native without one is not checked"
  else
    check cuda_native_without_gpu fails_to_configure "$work/native.log" \
      "CMAKE_CUDA_ARCHITECTURES is native, but CMake found no GPU on this machine" \
      cmake -G Ninja -DTILEDMM_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$real_nvcc" \
      -DCMAKE_CUDA_ARCHITECTURES=native -DTILEDMM_BUILD_BINDINGS=OFF
  fi
else
  echo "note: no nvcc: the CUDA toolkit and architecture checks are left out"
fi

echo "configurations: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
