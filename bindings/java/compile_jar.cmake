# cmake -P compile_jar.cmake: compiles the SWIG-generated Java files (known only
# after SWIG runs) with the hand-written ones, warnings as errors, into CLASSES.
# Variables: JAVAC, GEN (generated sources), SOURCES (;-list), CLASSES.
file(GLOB_RECURSE generated "${GEN}/*.java")
file(REMOVE_RECURSE "${CLASSES}")
file(MAKE_DIRECTORY "${CLASSES}")
execute_process(
  COMMAND "${JAVAC}" --release 11 -Xlint:all,-removal -Werror -d "${CLASSES}" ${generated} ${SOURCES}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "javac failed")
endif()
