# The ctest test planner_golden: runs PROGRAM (tests/planner_golden), writes its output
# to OUTPUT and compares it byte for byte with GOLDEN (tests/data/planner_golden.txt).
# On a difference it prints the start of a diff and how to regenerate GOLDEN;
# regenerate only for a planner change the commit explains.
execute_process(COMMAND ${PROGRAM} OUTPUT_FILE ${OUTPUT} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "planner_golden: ${PROGRAM} failed (${status})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUTPUT} ${GOLDEN}
                RESULT_VARIABLE differ)
if(differ EQUAL 0)
  message(STATUS "planner_golden: ${OUTPUT} matches ${GOLDEN}")
  return()
endif()
set(report "")
find_program(DIFF diff)
if(DIFF)
  execute_process(COMMAND ${DIFF} -U0 ${GOLDEN} ${OUTPUT} OUTPUT_VARIABLE report)
  string(LENGTH "${report}" length)
  if(length GREATER 4000)
    string(SUBSTRING "${report}" 0 4000 report)
    string(APPEND report "\n...\n")
  endif()
endif()
# NOTICE prints the text as it is (FATAL_ERROR would rewrap the diff).
message(NOTICE "planner_golden: the planner's choices differ from ${GOLDEN}:\n${report}\n"
  "All of it: diff ${GOLDEN} ${OUTPUT}\n"
  "If the change is meant, regenerate the file (cp ${OUTPUT} ${GOLDEN}) and say in the "
  "commit which choices changed and why.")
message(FATAL_ERROR "planner_golden: output differs from the golden file")
