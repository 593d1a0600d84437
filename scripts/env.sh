# Sourced by the other scripts: finds nvcc and sets TMM_CMAKE_CUDA to the CMake
# arguments for the CUDA backend (or to build without it, saying so).
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if command -v nvcc >/dev/null 2>&1; then
  TMM_CMAKE_CUDA=(-DTILEDMM_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
else
  echo "note: no CUDA toolkit (nvcc) found: building the CPU backend only" >&2
  TMM_CMAKE_CUDA=(-DTILEDMM_ENABLE_CUDA=OFF)
fi
