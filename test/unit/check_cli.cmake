# Runs one tessel-run command and checks its exit status and output.
#   -DTOOL=path  -DARGS=a|b|c (arguments, '|'-separated so they may contain
#   spaces and '=')  -DRC=<exit status>  -DMATCH=<regex over stdout+stderr>
#   -DNOMATCH=<regex that must not match>  -DWORKDIR=<cwd>
# A crash (signal) never counts as the expected failure.
string(REPLACE "|" ";" args "${ARGS}")
if(NOT WORKDIR)
  set(WORKDIR ".")
endif()
execute_process(COMMAND "${TOOL}" ${args}
  WORKING_DIRECTORY "${WORKDIR}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message(STATUS "command: ${TOOL} ${args}\nexit: ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "tessel-run did not exit normally: ${rc}")
endif()
if(NOT rc EQUAL RC)
  message(FATAL_ERROR "exit status ${rc}, expected ${RC}")
endif()
if(DEFINED MATCH AND NOT all MATCHES "${MATCH}")
  message(FATAL_ERROR "output does not match: ${MATCH}")
endif()
if(DEFINED NOMATCH AND NOT NOMATCH STREQUAL "" AND all MATCHES "${NOMATCH}")
  message(FATAL_ERROR "output matches forbidden pattern: ${NOMATCH}")
endif()
# Failures must be reported as "tessel-run: error: ...", never as a crash
# message from the C++ runtime.
if(all MATCHES "terminate called|Aborted|Segmentation")
  message(FATAL_ERROR "output looks like a crash")
endif()
