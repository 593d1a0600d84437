# enums_follow_header_test.cmake: the test that a value added to tiledmm.h reaches a
# binding with no edit in bindings/. It copies the header, adds to the copy a value to
# tmm_algorithm and to tmm_option and a whole new enum, runs generate_enums.cmake on
# the copy, checks that the new names and values are in the generated source and
# compiles it with warnings as errors. Last, a value the generator cannot read (an
# expression) must fail the generation, saying why.
#
#   cmake -DHEADER=include/tiledmm/tiledmm.h -DLANGUAGE=java|csharp -DCOMPILER=javac|mcs
#         -DWORK=DIR -P enums_follow_header_test.cmake
cmake_minimum_required(VERSION 3.16)

set(generator ${CMAKE_CURRENT_LIST_DIR}/generate_enums.cmake)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# generate(HEADER OUT RESULT OUTPUT): runs the generator on HEADER for LANGUAGE.
function(generate header out result output)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -DHEADER=${header} -DLANGUAGE=${LANGUAGE} -DOUT=${out}
            -P ${generator}
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(${result} ${rc} PARENT_SCOPE)
  set(${output} "${stdout}${stderr}" PARENT_SCOPE)
endfunction()

# add_before_close(TEXT C_TYPE ADDITION): appends ADDITION as the last enumerator of
# enum C_TYPE in TEXT.
function(add_before_close var c_type addition)
  set(text "${${var}}")
  string(REGEX MATCH "}[ \t\r\n]*${c_type}[ \t\r\n]*;" close "${text}")
  if(close STREQUAL "")
    message(FATAL_ERROR "${HEADER}: no end of enum ${c_type}")
  endif()
  string(REPLACE "${close}" ",\n  ${addition}\n} ${c_type};" text "${text}")
  set(${var} "${text}" PARENT_SCOPE)
endfunction()

file(READ "${HEADER}" header)
set(changed "${header}")
add_before_close(changed tmm_algorithm
  "TMM_ALGO_FROM_TEST = 99 /* added by the test,\n                             on two lines */")
add_before_close(changed tmm_option "TMM_OPTION_FROM_TEST = 0x62 /* a new option */")
string(REGEX MATCH "}[ \t\r\n]*tmm_status[ \t\r\n]*;" status_end "${changed}")
string(REPLACE "${status_end}" "${status_end}

/* A new enum type, added by the test. */
typedef enum tmm_test_only_kind {
  TMM_TEST_ONLY_KIND_FP32 = 0, /* strict FP32 */
  TMM_TEST_ONLY_KIND_TF32_X3 = 3
} tmm_test_only_kind;" changed "${changed}")
if(changed STREQUAL header OR NOT changed MATCHES "tmm_test_only_kind")
  message(FATAL_ERROR "could not add the test's values to a copy of ${HEADER}")
endif()
file(WRITE "${WORK}/include/tiledmm/tiledmm.h" "${changed}")

generate("${WORK}/include/tiledmm/tiledmm.h" "${WORK}/out" rc output)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "generation failed on the changed header:\n${output}")
endif()

# expect(FILE STRING...): each STRING is in FILE.
function(expect file)
  if(NOT EXISTS "${WORK}/out/${file}")
    message(FATAL_ERROR "not generated: ${file}")
  endif()
  file(READ "${WORK}/out/${file}" text)
  foreach(wanted IN LISTS ARGN)
    string(FIND "${text}" "${wanted}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${file} lacks \"${wanted}\":\n${text}")
    endif()
  endforeach()
  list(JOIN ARGN " | " found)
  message(STATUS "${file} has: ${found}")
endfunction()

if(LANGUAGE STREQUAL "java")
  expect(Algorithm.java "  BLOCKED(4)," "  FROM_TEST(99),"
         "{@code TMM_ALGO_FROM_TEST}: added by the test, on two lines" "case 99:")
  expect(Option.java "  FROM_TEST(98)" "{@code TMM_OPTION_FROM_TEST}: a new option")
  expect(TestOnlyKind.java "public enum TestOnlyKind {" "  FP32(0)," "  TF32_X3(3)"
         "A new enum type, added by the test.")
  file(GLOB sources "${WORK}/out/*.java")
  set(compile ${COMPILER} --release 11 -Xlint:all -Werror -d ${WORK}/classes ${sources})
else()
  expect(Enums.cs "Blocked = 4," "FromTest = 99"
         "TMM_ALGO_FROM_TEST: added by the test, on two lines" "FromTest = 98"
         "public enum TestOnlyKind" "Fp32 = 0," "Tf32X3 = 3")
  set(compile ${COMPILER} -nologo -target:library -warnaserror+ -out:${WORK}/Enums.dll
      ${WORK}/out/Enums.cs)
endif()
execute_process(COMMAND ${compile} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the generated ${LANGUAGE} does not compile: ${compile}")
endif()
message(STATUS "the generated ${LANGUAGE} compiles")

# A value given by an expression cannot be read: the build must stop, saying so.
set(unreadable "${header}")
add_before_close(unreadable tmm_algorithm "TMM_ALGO_NEXT = TMM_ALGO_BLOCKED + 1")
file(WRITE "${WORK}/unreadable/tiledmm.h" "${unreadable}")
generate("${WORK}/unreadable/tiledmm.h" "${WORK}/unreadable/out" rc output)
string(REGEX REPLACE "[ \t\r\n]+" " " output "${output}")  # CMake wraps messages
if(rc EQUAL 0 OR NOT output MATCHES "integer literals only")
  message(FATAL_ERROR "an expression as a value was not refused (exit ${rc}):\n${output}")
endif()
message(STATUS "an expression as a value is refused")
