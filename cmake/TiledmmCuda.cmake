# The CUDA toolkit tiledmm needs, and which of its kernel families a list of CUDA
# architectures builds. The top-level CMakeLists.txt uses these functions;
# tests/cuda_architectures_test.cmake runs them in script mode on every form of the
# list (no toolkit or GPU needed).
#
# The families:
#   portable   naive, tiled, coarsened and blocked FP32 kernels: every architecture
#   mma.sync   TF32 tensor cores (mma.sync m16n8k8, cp.async): compute capability 8.0
#              and later; built into the device code of each architecture >= 80
#   wgmma      Hopper's TF32 tensor cores (wgmma, TMA, setmaxnreg): sm_90a, which
#              runs on compute capability 9.0 alone; lib/CMakeLists.txt builds them
#              (tiledmm_cuda_sm90a) when the list includes 9.0 in any form

# The oldest toolkit tiledmm builds with: the library finds driver functions through
# cudaGetDriverEntryPointByVersion (lib/cuda/runtime/host_memory.cu, lib/cuda/runtime/tensor_map.hpp),
# which CUDA 12.5 introduced; the Hopper kernels need 12.0 (sm_90a, wgmma, TMA).
set(TILEDMM_CUDA_MINIMUM 12.5)

# tiledmm_nvcc_version(OUT NVCC): the toolkit version nvcc reports ("release 13.0"),
# or "" if it says none (not nvcc, or it does not run).
function(tiledmm_nvcc_version out nvcc)
  execute_process(COMMAND "${nvcc}" --version OUTPUT_VARIABLE text ERROR_QUIET
                  RESULT_VARIABLE rc)
  set(version "")
  if(rc EQUAL 0 AND text MATCHES "release ([0-9]+\\.[0-9]+)")
    set(version ${CMAKE_MATCH_1})
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

# tiledmm_nvcc_gpu_code(OUT NVCC): the real architectures NVCC compiles for, as
# numbers (nvcc --list-gpu-code: sm_75 sm_80 ... -> 75 80 ...), or "" if it does not
# say. nvcc is given -arch=all and -arch=all-major as they are, and these are what it
# makes of them; CMake's own tables (CMAKE_CUDA_ARCHITECTURES_ALL) may be older than
# the toolkit (CMake 3.25 and 3.28 list 35 to 90 for CUDA 13, which has 75 to 121).
function(tiledmm_nvcc_gpu_code out nvcc)
  execute_process(COMMAND "${nvcc}" --list-gpu-code OUTPUT_VARIABLE text ERROR_QUIET
                  RESULT_VARIABLE rc)
  set(codes "")
  if(rc EQUAL 0)
    string(REGEX MATCHALL "sm_[0-9]+" found "${text}")
    foreach(code IN LISTS found)
      string(SUBSTRING "${code}" 3 -1 number)
      list(APPEND codes ${number})
    endforeach()
    list(REMOVE_DUPLICATES codes)
    list(SORT codes COMPARE NATURAL)
  endif()
  set(${out} "${codes}" PARENT_SCOPE)
endfunction()

# tiledmm_cuda_resolve_architectures(OUT ARCHS): ARCHS with the special values
# replaced by what they stand for. native: CMAKE_CUDA_ARCHITECTURES_NATIVE, what CMake
# found when it enabled CUDA (the GPUs of this machine, e.g. 90-real on an H100;
# empty where it found no GPU). all and all-major: from TILEDMM_NVCC_GPU_CODE (nvcc's
# list, above) where set, each architecture it lists or the lowest of each major
# version, real, and the newest also as PTX; else CMake's CMAKE_CUDA_ARCHITECTURES_ALL
# and _ALL_MAJOR.
function(tiledmm_cuda_resolve_architectures out archs)
  set(resolved "")
  foreach(arch IN LISTS archs)
    if(arch STREQUAL "native")
      list(APPEND resolved ${CMAKE_CUDA_ARCHITECTURES_NATIVE})
    elseif((arch STREQUAL "all" OR arch STREQUAL "all-major") AND TILEDMM_NVCC_GPU_CODE)
      set(chosen "")
      set(majors "")
      foreach(number IN LISTS TILEDMM_NVCC_GPU_CODE)
        math(EXPR major "${number} / 10")
        if(arch STREQUAL "all" OR NOT major IN_LIST majors)
          list(APPEND majors ${major})
          list(APPEND chosen ${number}-real)
        endif()
      endforeach()
      list(POP_BACK chosen newest)
      string(REPLACE "-real" "" newest "${newest}")
      list(APPEND resolved ${chosen} ${newest})
    elseif(arch STREQUAL "all")
      list(APPEND resolved ${CMAKE_CUDA_ARCHITECTURES_ALL})
    elseif(arch STREQUAL "all-major")
      list(APPEND resolved ${CMAKE_CUDA_ARCHITECTURES_ALL_MAJOR})
    else()
      list(APPEND resolved ${arch})
    endif()
  endforeach()
  set(${out} "${resolved}" PARENT_SCOPE)
endfunction()

# tiledmm_cuda_kernel_families(ARCHS): for a resolved list (each entry a number with
# an optional a or f, then an optional -real or -virtual), sets in the caller's scope
#   TILEDMM_SM90A             ON when the list includes compute capability 9.0
#                             (90, 90a, 90-real, 90a-real, 90-virtual, ...)
#   TILEDMM_CUDA_KERNELS_LOG  one line per family: built for what, or why not
function(tiledmm_cuda_kernel_families archs)
  set(all "")
  set(mma "")
  set(sm90a OFF)
  foreach(arch IN LISTS archs)
    if(NOT arch MATCHES "^([0-9]+)([af]?)(-real|-virtual)?$")
      message(FATAL_ERROR "tiledmm: cannot read the CUDA architecture '${arch}' "
        "(CMAKE_CUDA_ARCHITECTURES=${archs})")
    endif()
    set(cc ${CMAKE_MATCH_1})
    set(name "sm_${cc}${CMAKE_MATCH_2}")
    if(CMAKE_MATCH_3 STREQUAL "-virtual")
      set(name "compute_${cc}${CMAKE_MATCH_2}")  # PTX only
    endif()
    list(APPEND all ${name})
    if(cc GREATER_EQUAL 80)
      list(APPEND mma ${name})
    endif()
    if(cc EQUAL 90)
      set(sm90a ON)
    endif()
  endforeach()
  list(REMOVE_DUPLICATES all)
  list(REMOVE_DUPLICATES mma)
  string(REPLACE ";" ", " all "${all}")
  string(REPLACE ";" ", " mma "${mma}")

  set(log "CUDA kernels, portable FP32 (naive, tiled, coarsened, blocked): built for ${all}")
  set(family "CUDA kernels, mma.sync TF32 tensor cores (sm_80 and later)")
  if(mma)
    list(APPEND log "${family}: built for ${mma}")
  else()
    list(APPEND log "${family}: not built: no compute capability 8.0 or later in the list")
  endif()
  set(family "CUDA kernels, Hopper wgmma TF32 tensor cores (sm_90a)")
  if(sm90a)
    list(APPEND log "${family}: built")
  else()
    string(CONCAT line "${family}: not built: no compute capability 9.0 in the list (add 90 "
      "or 90a, or use native on a Hopper GPU)")
    list(APPEND log "${line}")
  endif()
  set(TILEDMM_SM90A ${sm90a} PARENT_SCOPE)
  set(TILEDMM_CUDA_KERNELS_LOG "${log}" PARENT_SCOPE)
endfunction()
