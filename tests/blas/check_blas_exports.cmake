# Run as cmake -DLIB=path -DHEADER=path -P check_blas_exports.cmake. Fails unless
# libtiledmm_blas exports exactly the BLAS names it stands in for and the functions
# tiledmm_blas.h declares, all unversioned (so that they interpose on any BLAS), has
# a versioned SONAME, and needs libtiledmm but no BLAS and no CUDA library.
cmake_minimum_required(VERSION 3.24)
set(expected sgemm_ sgemm_64_ cblas_sgemm cblas_sgemm64_ dgemm_ dgemm_64_ cblas_dgemm
  cblas_dgemm64_ pilaenv_
  # The names pip's NumPy and SciPy wheels call (blas/support/wheel_names.hpp).
  scipy_sgemm_ scipy_sgemm_64_ scipy_cblas_sgemm scipy_cblas_sgemm64_
  scipy_dgemm_ scipy_dgemm_64_ scipy_cblas_dgemm scipy_cblas_dgemm64_)
file(STRINGS ${HEADER} api_lines REGEX "^TMM_BLAS_API ")
foreach(line IN LISTS api_lines)
  if(line MATCHES "(tmm_blas_[a-z0-9_]+)[ ]*\\(")
    list(APPEND expected ${CMAKE_MATCH_1})
  endif()
endforeach()

execute_process(COMMAND readelf --dyn-syms --wide ${LIB} OUTPUT_VARIABLE symtab RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${LIB}")
endif()
set(exported "")
string(REPLACE "\n" ";" lines "${symtab}")
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^ *[0-9]+: [0-9a-f]+ +[0-9a-fx]+ +[A-Z_]+ +[A-Z_]+ +[A-Z_]+ +([A-Z0-9]+) +(.+)$")
    continue()
  endif()
  if(CMAKE_MATCH_1 STREQUAL "UND")
    continue()
  endif()
  set(sym "${CMAKE_MATCH_2}")
  if(sym MATCHES "@")
    message(FATAL_ERROR "${sym} carries a symbol version: it would not interpose on an "
                        "unversioned BLAS reference (blas/exports.map)")
  endif()
  list(APPEND exported ${sym})
endforeach()
list(SORT exported)
list(SORT expected)
if(NOT exported STREQUAL expected)
  message(FATAL_ERROR "libtiledmm_blas exports\n  ${exported}\nexpected\n  ${expected}")
endif()

execute_process(COMMAND objdump -p ${LIB} OUTPUT_VARIABLE dyn)
if(NOT dyn MATCHES "SONAME[ ]+libtiledmm_blas\\.so\\.[0-9]+")
  message(FATAL_ERROR "libtiledmm_blas has no versioned SONAME")
endif()
if(NOT dyn MATCHES "NEEDED[ ]+libtiledmm\\.so\\.[0-9]+")
  message(FATAL_ERROR "libtiledmm_blas does not link libtiledmm")
endif()
if(dyn MATCHES "NEEDED[ ]+lib(blas|cblas|openblas|mkl|cuda|cudart|cublas)")
  message(FATAL_ERROR "libtiledmm_blas links a BLAS or CUDA library (it must load the "
                      "fallback at run time and leave CUDA to libtiledmm)")
endif()
list(LENGTH exported count)
message(STATUS "libtiledmm_blas exports ${count} unversioned symbols: ${exported}")
