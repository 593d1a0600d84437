#!/usr/bin/env bash
# Debian's NumPy (python3-numpy, which calls cblas_sgemm and cblas_dgemm from the system
# libblas.so.3), float32 and float64,
# with libtiledmm_blas preloaded and every call routed to tiledmm (CPU backend):
# numpy_client.py checks the products against float64 NumPy and that the library
# computed them (its counters and its log).
# Usage: run_numpy.sh LIBTILEDMM_BLAS WORKDIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
shim=$1 work=$2
python=/usr/bin/python3  # Debian's: its NumPy is the system one
[ -x "$python" ] || missing "Debian's python3 (python3-numpy)"
"$python" -c "import numpy" 2>/dev/null || missing "Debian's NumPy (python3-numpy)"
mkdir -p "$work"
log=$work/numpy.log
rm -f "$log"
LD_PRELOAD=$shim TILEDMM_BLAS_THRESHOLD=all TILEDMM_BLAS_BACKEND=cpu TILEDMM_BLAS_LOG=$log \
  "$python" "$(dirname "$0")/numpy_client.py" "$shim" "$log"
