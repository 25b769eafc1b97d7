# SPDX-License-Identifier: MIT
# mpf_rt_command_names(<out> <row-regex> <strip-regex> <command>...): run
# the command (a failure is fatal, with its stderr), keep the output rows
# matching <row-regex>, strip <strip-regex> from each (and blanks, and a
# symbol version "@..."): the names the command lists, in <out>. Shared by
# ctest_names.cmake (ctest -N) and exports.cmake (nm -D).
function(mpf_rt_command_names out row_regex strip_regex)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE listing
                  ERROR_VARIABLE listing_err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGN} failed (${rc}): ${listing_err}")
  endif()
  string(REGEX MATCHALL "${row_regex}" rows "${listing}")
  set(names "")
  foreach(row IN LISTS rows)
    string(REGEX REPLACE "${strip_regex}" "" name "${row}")
    string(REGEX REPLACE "@.*" "" name "${name}")
    string(STRIP "${name}" name)
    list(APPEND names "${name}")
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()
