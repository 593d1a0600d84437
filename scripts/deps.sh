#!/usr/bin/env bash
# Installs the Debian packages tiledmm builds with, if any is missing: with apt-get
# when run as root, otherwise it prints the exact command and fails.
# The CUDA toolkit is not a Debian package here; scripts/env.sh finds it.
set -euo pipefail

packages=(cmake ninja-build g++ pkg-config libgtest-dev
  swig default-jdk-headless junit5 mono-mcs mono-runtime libmono-system-core4.0-cil
  dpkg-dev file rpm cpio lintian clang libclang-rt-14-dev valgrind clang-format abigail-tools
  # libtiledmm_blas's tests (tests/blas/): the reference BLAS (LP64 and ILP64) and
  # OpenBLAS as fallbacks, -lblas for the clients, Debian's NumPy, ScaLAPACK with Open MPI
  libblas3 libblas-dev libblas64-3 libopenblas0-pthread python3-numpy
  libscalapack-openmpi-dev libopenmpi-dev openmpi-bin
  # The build on a second compiler and standard library (scripts/compiler-check.sh):
  # Clang 16 with LLVM's libc++, and GoogleTest's sources to build against it
  clang-16 libc++-16-dev libc++abi-16-dev googletest)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "deps: missing Debian packages; install them with:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
