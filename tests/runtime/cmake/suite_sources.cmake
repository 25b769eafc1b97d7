# SPDX-License-Identifier: MIT
# A suite named in tests/runtime/CMakeLists.txt must have its source file:
# a mistyped name is a configure error, never a suite silently skipped.
#
# In a CMakeLists: include() it and call mpf_rt_require_suite_sources().
# As a script (the test of the check itself):
#   cmake -DSUITE_DIR=<dir> "-DSUITES=a;b" -P suite_sources.cmake
function(mpf_rt_require_suite_sources dir)
  set(missing "")
  foreach(suite IN LISTS ARGN)
    if(NOT EXISTS "${dir}/${suite}.c")
      list(APPEND missing "${suite}")
    endif()
  endforeach()
  if(missing)
    list(JOIN missing ", " missing_text)
    message(FATAL_ERROR "tests/runtime: no source file for suite(s) "
                        "${missing_text} (expected <suite>.c in ${dir}): "
                        "a mistyped suite name?")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  mpf_rt_require_suite_sources("${SUITE_DIR}" ${SUITES})
  message(STATUS "every suite has its source file")
endif()
