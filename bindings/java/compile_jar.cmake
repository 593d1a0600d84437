# cmake -P compile_jar.cmake: compiles the generated Java files (SWIG's and the
# enums', known only after the generators run) with the hand-written ones, warnings
# as errors, into CLASSES.
# Variables: JAVAC, GEN (;-list of folders of generated sources), SOURCES (;-list),
# CLASSES.
set(generated "")
foreach(dir IN LISTS GEN)
  file(GLOB_RECURSE found "${dir}/*.java")
  list(APPEND generated ${found})
endforeach()
file(REMOVE_RECURSE "${CLASSES}")
file(MAKE_DIRECTORY "${CLASSES}")
execute_process(
  COMMAND "${JAVAC}" --release 11 -Xlint:all,-removal -Werror -d "${CLASSES}" ${generated} ${SOURCES}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "javac failed")
endif()
