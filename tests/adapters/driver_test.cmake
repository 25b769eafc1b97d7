# SPDX-License-Identifier: MIT
# mpf_adapter_driver_test(<test> <driver> <binary> <label>
#                         <flags> <values> <lists> [<argument>...])
#
# The ctest test <test> of an adapter's selftests: the driver script
# <driver> (beside the calling CMakeLists.txt, run by Python3_EXECUTABLE)
# runs the target <binary> and asserts what the arguments say; the test
# passes when the driver prints "<driver's stem>: PASS". The arguments are
# parsed with the keywords of <flags> (no value), <values> (one value) and
# <lists> (many values), and each keyword KEY_WORD becomes the driver's
# option --key-word (a flag alone, each value as --key-word=value).
# Labels <label> and must_fail, TIMEOUT 120.
include_guard(GLOBAL)
function(mpf_adapter_driver_test test driver binary label flags values lists)
  cmake_parse_arguments(A "${flags}" "${values}" "${lists}" ${ARGN})
  set(args)
  foreach(keyword IN LISTS flags values lists)
    string(TOLOWER "${keyword}" option)
    string(REPLACE "_" "-" option "${option}")
    if(keyword IN_LIST flags)
      if(A_${keyword})
        list(APPEND args --${option})
      endif()
    else()
      foreach(value IN LISTS A_${keyword})
        list(APPEND args --${option}=${value})
      endforeach()
    endif()
  endforeach()
  get_filename_component(stem ${driver} NAME_WE)
  add_test(NAME ${test}
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/${driver}
            $<TARGET_FILE:${binary}> ${args})
  set_tests_properties(${test} PROPERTIES
    LABELS "${label};must_fail" TIMEOUT 120
    PASS_REGULAR_EXPRESSION "${stem}: PASS")
endfunction()
