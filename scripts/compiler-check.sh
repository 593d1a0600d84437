#!/usr/bin/env bash
# The sources against a compiler and a standard library other than GCC 12's; CI runs
# it after scripts/config-check.sh:
#   1. scripts/include-check.py: every source includes the standard headers it uses.
#      A standard library may bring one header with another, and the next release
#      may not (GCC 13's libstdc++ no longer brings <system_error> with <mutex>);
#      no compiler here can see that, so the script reads the sources.
#   2. scripts/layering-check.sh: every include of lib/ goes to the file's own layer or
#      one below it, and blas/ includes only its own files and the public headers
#      (docs/ARCHITECTURE.md); the build refuses most back-includes too, but only in
#      the configuration it builds.
#   3. Clang 16 with LLVM's libc++ (Debian's clang-16, libc++-16-dev, libc++abi-16-dev),
#      warnings as errors, libc++'s compatibility includes removed
#      (_LIBCPP_REMOVE_TRANSITIVE_INCLUDES): the CPU backend, libtiledmm_blas, the
#      tests and the examples built in build-libcxx/, then every test. GoogleTest is
#      built there from Debian's sources (the googletest package's /usr/src/googletest,
#      TILEDMM_GTEST_FROM_SOURCE), with libc++: the installed libgtest is built with
#      libstdc++ and does not link with it. No test is left out: the BLAS tests load
#      Debian's reference BLAS and OpenBLAS (C and Fortran), and NumPy, mpirun and
#      the C clients load libtiledmm_blas, with its libc++, beside their own libraries
#      (libstdc++ included: the two do not share a symbol). The CUDA backend is not
#      built here (nvcc with libc++ is not what users run); scripts/test.sh builds it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
# Only check() is wanted from env.sh: this build has no CUDA, so CI's demand for nvcc
# does not apply (CI itself stays set: the BLAS tests fail instead of skipping).
CI=false source scripts/env.sh

check include_check scripts/include-check.py
check layering_check scripts/layering-check.sh

libcxx_build() {
  cmake -S . -B build-libcxx -G Ninja -DCMAKE_C_COMPILER=clang-16 \
    -DCMAKE_CXX_COMPILER=clang++-16 \
    "-DCMAKE_CXX_FLAGS=-stdlib=libc++ -D_LIBCPP_REMOVE_TRANSITIVE_INCLUDES" \
    -DTILEDMM_ENABLE_CUDA=OFF -DTILEDMM_BUILD_BINDINGS=OFF -DTILEDMM_WARNINGS_AS_ERRORS=ON \
    -DTILEDMM_GTEST_FROM_SOURCE=/usr/src/googletest >/dev/null || return 1
  cmake --build build-libcxx || return 1
  # The build really is on libc++: libstdc++ is nowhere in the libraries' or the tests'
  # dependencies.
  local f deps
  for f in build-libcxx/lib/libtiledmm.so build-libcxx/blas/libtiledmm_blas.so \
           build-libcxx/tests/test_correctness; do
    deps=$(ldd "$f") || return 1
    grep -q "libc++\.so" <<<"$deps" || { echo "$f does not load libc++"; return 1; }
    if grep "libstdc++" <<<"$deps"; then echo "$f loads libstdc++"; return 1; fi
  done
  ctest --test-dir build-libcxx --output-on-failure || return 1
}
check clang16_libcxx libcxx_build

echo "compilers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
