# Which kernel families each form of CMAKE_CUDA_ARCHITECTURES builds
# (cmake/TiledmmCuda.cmake), in script mode: no toolkit or GPU needed, so that the
# forms a build machine cannot try (native on an H100, or on no GPU at all) are
# checked everywhere. Run: cmake -P tests/cuda_architectures_test.cmake
cmake_minimum_required(VERSION 3.24)
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/TiledmmCuda.cmake)

set(failures 0)

# expect(ARCHS SM90A MMA_BUILT [NATIVE list] [ALL list] [ALL_MAJOR list] [NVCC list]):
# ARCHS as given to CMAKE_CUDA_ARCHITECTURES, resolved with CMake's lists (NATIVE,
# ALL, ALL_MAJOR) or nvcc's (NVCC: nvcc --list-gpu-code), gives TILEDMM_SM90A
# = SM90A and a log whose mma.sync line says "built" (MMA_BUILT ON) or "not built".
function(expect archs sm90a mma_built)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "NATIVE;ALL;ALL_MAJOR;NVCC" "")
  set(TILEDMM_NVCC_GPU_CODE "${arg_NVCC}")
  set(CMAKE_CUDA_ARCHITECTURES_NATIVE "${arg_NATIVE}")
  set(CMAKE_CUDA_ARCHITECTURES_ALL "${arg_ALL}")
  set(CMAKE_CUDA_ARCHITECTURES_ALL_MAJOR "${arg_ALL_MAJOR}")
  tiledmm_cuda_resolve_architectures(resolved "${archs}")
  tiledmm_cuda_kernel_families("${resolved}")
  list(GET TILEDMM_CUDA_KERNELS_LOG 1 mma_line)
  list(GET TILEDMM_CUDA_KERNELS_LOG 2 wgmma_line)
  set(mma_ok OFF)
  if(mma_line MATCHES ": built for ")
    set(mma_ok ON)
  endif()
  set(wgmma_ok OFF)
  if(wgmma_line MATCHES ": built$")
    set(wgmma_ok ON)
  endif()
  if(NOT TILEDMM_SM90A STREQUAL sm90a OR NOT wgmma_ok STREQUAL sm90a OR
     NOT mma_ok STREQUAL mma_built)
    message(SEND_ERROR "FAIL '${archs}' (resolved: '${resolved}'): TILEDMM_SM90A="
      "${TILEDMM_SM90A}, expected ${sm90a}; mma.sync built ${mma_ok}, expected ${mma_built}\n"
      "  ${TILEDMM_CUDA_KERNELS_LOG}")
    math(EXPR failures "${failures} + 1")
    set(failures ${failures} PARENT_SCOPE)
  else()
    message(STATUS "PASS '${archs}' -> '${resolved}': sm90a ${sm90a}, mma.sync ${mma_ok}")
  endif()
endfunction()

# What CMake 3.25 resolves all and all-major to with CUDA 13.0 (its table stops at
# 11.8; nvcc itself is given -arch=all or -arch=all-major, whose lists hold 90 too).
set(all 35-real 37-real 50-real 52-real 53-real 60-real 61-real 62-real 70-real 72-real
        75-real 80-real 86-real 87-real 89-real 90)
set(all_major 35-real 50-real 60-real 70-real 80-real 90)

# tiledmm's default list, and explicit lists with 9.0 in every spelling.
expect("75-real;80-real;86-real;89-real;90" ON ON)
expect("90" ON ON)
expect("90a" ON ON)
expect("90-real" ON ON)
expect("90a-real" ON ON)
expect("90-virtual" ON ON)
expect("90a-virtual" ON ON)
expect("80-real;90a-real" ON ON)
# Lists without 9.0: no Hopper kernels; before 8.0, no mma.sync either.
expect("75" OFF OFF)
expect("75-real;86-real" OFF ON)
expect("80;89" OFF ON)
expect("100-real;120" OFF ON)  # sm_90a code does not run on 10.0 or 12.0
expect("9" OFF OFF)            # not 9.0
# native, as CMake resolved it: an H100, an A100, an H100 beside an L4, no GPU.
expect("native" ON ON NATIVE "90-real")
expect("native" OFF ON NATIVE "80-real")
expect("native" ON ON NATIVE "89-real;90-real")
expect("native" OFF OFF NATIVE "75-real")
tiledmm_cuda_resolve_architectures(no_gpu "native")  # CMAKE_CUDA_ARCHITECTURES_NATIVE unset
if(NOT no_gpu STREQUAL "")
  message(SEND_ERROR "FAIL native without a GPU resolved to '${no_gpu}', expected nothing")
  math(EXPR failures "${failures} + 1")
endif()
# all and all-major.
expect("all" ON ON ALL "${all}")
expect("all-major" ON ON ALL_MAJOR "${all_major}")
# CUDA 13's own lists (CMake 4.x): still 9.0.
expect("all" ON ON ALL "75-real;80-real;86-real;87-real;88-real;89-real;90-real;100-real;120")
expect("all-major" ON ON ALL_MAJOR "75-real;80-real;90-real;100-real;110-real;120")
# nvcc 13.0's list (nvcc --list-gpu-code), which wins over CMake's where known; and a
# toolkit without Hopper (CUDA 11.7: up to 8.7) against CMake's list that has it.
set(nvcc13 75 80 86 87 88 89 90 100 103 110 120 121)
expect("all" ON ON NVCC "${nvcc13}" ALL "35-real;90")
expect("all-major" ON ON NVCC "${nvcc13}" ALL_MAJOR "35-real;90")
expect("all" OFF ON NVCC "35;37;50;52;53;60;61;62;70;72;75;80;86;87" ALL "${all}")
expect("all-major" OFF ON NVCC "75;86" ALL_MAJOR "${all_major}")
set(TILEDMM_NVCC_GPU_CODE ${nvcc13})
tiledmm_cuda_resolve_architectures(major13 "all-major")
if(NOT major13 STREQUAL "75-real;80-real;90-real;100-real;110-real;120")
  message(SEND_ERROR "FAIL all-major with nvcc 13.0's list gave '${major13}'")
  math(EXPR failures "${failures} + 1")
endif()
tiledmm_cuda_resolve_architectures(all13 "all")
if(NOT all13 STREQUAL
   "75-real;80-real;86-real;87-real;88-real;89-real;90-real;100-real;103-real;110-real;120-real;121")
  message(SEND_ERROR "FAIL all with nvcc 13.0's list gave '${all13}'")
  math(EXPR failures "${failures} + 1")
endif()
unset(TILEDMM_NVCC_GPU_CODE)

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} architecture lists gave the wrong kernel families")
endif()
message(STATUS "every form of CMAKE_CUDA_ARCHITECTURES gives the expected kernel families")
