# Run as cmake -DLIB=path -P check_exports.cmake. Fails unless:
#   - every dynamic symbol the library defines is a tmm_ function with a TILEDMM_x.y
#     symbol version (the version nodes themselves are the only other entries);
#   - every function a release's reference dump (abi/tiledmm-X.Y.Z.abi) lists is
#     still exported, in the version node of the release that introduced it, and
#     every function no dump lists is in a node newer than the newest dump;
#   - the functions exported are exactly those tiledmm.h declares with TMM_API;
#   - no NEEDED entry names cudart, cublas or a BLAS, and the SONAME is versioned.
# The layout of types is abidiff's job (scripts/abi-check.sh); this check needs only
# binutils, so it runs in every build. docs/ABI.md has the policy.
cmake_minimum_required(VERSION 3.24)
set(src ${CMAKE_CURRENT_LIST_DIR}/..)
execute_process(COMMAND readelf --dyn-syms --wide ${LIB} OUTPUT_VARIABLE symtab RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${LIB}")
endif()

# exported: the names; version_of_<name>: the TILEDMM_ versions each is defined in.
set(exported "")
set(nodes "")
string(REPLACE "\n" ";" lines "${symtab}")
foreach(line IN LISTS lines)
  # Num: Value Size Type Bind Vis Ndx Name
  if(NOT line MATCHES "^ *[0-9]+: [0-9a-f]+ +[0-9a-fx]+ +[A-Z_]+ +[A-Z_]+ +[A-Z_]+ +([A-Z0-9]+) +(.+)$")
    continue()
  endif()
  set(ndx "${CMAKE_MATCH_1}")
  set(sym "${CMAKE_MATCH_2}")
  if(ndx STREQUAL "UND")
    continue()
  endif()
  if(ndx STREQUAL "ABS" AND sym MATCHES "^TILEDMM_[0-9]+\\.[0-9]+$")
    list(APPEND nodes "${sym}")  # the symbol GNU ld defines for each version node
    continue()
  endif()
  if(NOT sym MATCHES "^([^@]+)")
    message(FATAL_ERROR "cannot read the symbol line: ${line}")
  endif()
  if(NOT CMAKE_MATCH_1 MATCHES "^tmm_")
    message(FATAL_ERROR "exported symbol that is not tmm_: ${sym}")
  endif()
  if(NOT sym MATCHES "^(tmm_[A-Za-z0-9_]+)@@?TILEDMM_([0-9]+\\.[0-9]+)$")
    message(FATAL_ERROR "exported symbol without a TILEDMM_x.y version: ${sym} "
                        "(lib/api/exports.map must give every tmm_ symbol a version node)")
  endif()
  list(APPEND exported "${CMAKE_MATCH_1}")
  list(APPEND version_of_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
endforeach()
list(REMOVE_DUPLICATES exported)
list(LENGTH exported count)
if(count LESS 20)
  message(FATAL_ERROR "only ${count} tmm_ symbols exported")
endif()

# Each release's dump: its new functions keep that release's node forever.
file(GLOB dumps ${src}/abi/tiledmm-*.abi)
list(SORT dumps COMPARE NATURAL)
set(released "")
set(newest_release "")
foreach(dump IN LISTS dumps)
  get_filename_component(dump_name ${dump} NAME)
  if(NOT dump_name MATCHES "^tiledmm-([0-9]+\\.[0-9]+)\\.[0-9]+\\.abi$")
    message(FATAL_ERROR "abi/${dump_name}: not named tiledmm-MAJOR.MINOR.PATCH.abi")
  endif()
  set(release ${CMAKE_MATCH_1})
  file(STRINGS ${dump} elf_lines REGEX "<elf-symbol name='tmm_")
  foreach(line IN LISTS elf_lines)
    string(REGEX REPLACE ".*<elf-symbol name='(tmm_[A-Za-z0-9_]+)'.*" "\\1" name "${line}")
    if(name IN_LIST released)
      continue()
    endif()
    list(APPEND released ${name})
    if(NOT name IN_LIST exported)
      message(FATAL_ERROR "${name} (released in ${release}, abi/${dump_name}) is no longer "
                          "exported: removing a function needs a new SONAME (docs/ABI.md)")
    endif()
    if(NOT release IN_LIST version_of_${name})
      message(FATAL_ERROR "${name} was released in ${release} but is exported as version "
                          "TILEDMM_${version_of_${name}}: it must stay in TILEDMM_${release} "
                          "in lib/api/exports.map")
    endif()
  endforeach()
  if(NOT newest_release OR release VERSION_GREATER newest_release)
    set(newest_release ${release})
  endif()
endforeach()
if(NOT dumps)
  message(FATAL_ERROR "no reference dumps in ${src}/abi")
endif()
foreach(name IN LISTS exported)
  if(name IN_LIST released)
    continue()
  endif()
  foreach(v IN LISTS version_of_${name})
    if(NOT v VERSION_GREATER newest_release)
      message(FATAL_ERROR "${name} is new since ${newest_release} (no abi/ dump lists it) but "
                          "is exported as TILEDMM_${v}: open the next version node in "
                          "lib/api/exports.map (docs/ABI.md)")
    endif()
  endforeach()
endforeach()

# The header and the export list name the same functions.
file(STRINGS ${src}/include/tiledmm/tiledmm.h api_lines REGEX "^[ ]*TMM_API ")
set(declared "")
foreach(line IN LISTS api_lines)
  if(line MATCHES "(tmm_[a-z0-9_]+)[ ]*\\(")
    list(APPEND declared ${CMAKE_MATCH_1})
  endif()
endforeach()
foreach(name IN LISTS declared)
  if(NOT name IN_LIST exported)
    message(FATAL_ERROR "${name} is declared in tiledmm.h but not exported (is the newest "
                        "version node in lib/api/exports.map missing its tmm_* glob?)")
  endif()
endforeach()
foreach(name IN LISTS exported)
  if(NOT name IN_LIST declared)
    message(FATAL_ERROR "${name} is exported but tiledmm.h does not declare it with TMM_API")
  endif()
endforeach()

execute_process(COMMAND objdump -p ${LIB} OUTPUT_VARIABLE dyn)
if(dyn MATCHES "NEEDED[ ]+lib(cudart|cublas)")
  message(FATAL_ERROR "libtiledmm needs a CUDA runtime or cuBLAS shared library")
endif()
# The CPU backend finds the system BLAS at run time (lib/cpu/system_blas.cpp): no BLAS
# may be a link-time dependency.
if(dyn MATCHES "NEEDED[ ]+lib[a-z_]*(blas|blis|mkl)")
  message(FATAL_ERROR "libtiledmm needs a BLAS library at link time")
endif()
if(NOT dyn MATCHES "SONAME[ ]+libtiledmm\\.so\\.[0-9]+")
  message(FATAL_ERROR "libtiledmm has no versioned SONAME")
endif()
string(REPLACE ";" " " nodes_text "${nodes}")
message(STATUS "${count} tmm_ symbols exported, all versioned (${nodes_text}), "
               "dumps up to ${newest_release} kept, header and exports agree, "
               "no cudart/cublas/BLAS NEEDED")
