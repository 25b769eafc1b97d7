# SPDX-License-Identifier: MIT
# The ctest list must not shrink: every name in the committed list
# (ctest_names.txt) must still be registered in the build directory. New
# names are fine (add them to the list when they land); a name that is
# gone fails, and is printed, so a test dropped by a CMake change (as
# example.vector_add once was, registered before enable_testing()) is seen.
#
#   cmake -DCTEST=<ctest> -DBUILD_DIR=<dir> -DLIST=<file> [-DEXTRA=<names>]
#         -P ctest_names.cmake
# EXTRA: names expected on top of the list (the must-fail test of this
# check plants one that does not exist).
foreach(var CTEST BUILD_DIR LIST)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "ctest_names.cmake: -D${var}=... is required")
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/command_names.cmake)
mpf_rt_command_names(present "Test +#[0-9]+: [^\n]+" "^Test +#[0-9]+: "
                     "${CTEST}" -N --test-dir "${BUILD_DIR}")

file(STRINGS "${LIST}" expected REGEX "^[^#]")
list(APPEND expected ${EXTRA})
set(missing ${expected})
if(present)
  list(REMOVE_ITEM missing ${present})
endif()

list(LENGTH expected n_expected)
list(LENGTH present n_present)
list(LENGTH missing n_missing)
if(n_missing GREATER 0)
  list(JOIN missing "\n  " missing_text)
  message(FATAL_ERROR "ctest lost ${n_missing} of the ${n_expected} listed "
                      "test(s) (${n_present} registered):\n  ${missing_text}")
endif()
message(STATUS "all ${n_expected} listed tests registered (${n_present} in all)")
