# SPDX-License-Identifier: MIT
# mpf_add_criterion_test(<target>
#     SOURCES <src>...
#     [LINK_LIBRARIES <lib>...]
#     LABELS <label>...
#     [ENVIRONMENT <VAR=value>...]
#     [TIMEOUT <seconds>] [RUN_SERIAL]
#     [EXPECT_OUTPUT <suite/name> <regex> [<suite/name> <regex>]...])
#
# Builds a Criterion test binary whose tests are written with MPF_TEST
# (<mpfixture/criterion.h>) and registers each test as its own ctest test
# named <target>.<suite>.<name>, which runs `<target> --filter=<suite>/<name>`:
# -R, -j, --repeat, labels and sharding come from ctest itself. The tests
# are listed after each build of it by `<target> --list`
# (MpfCriterionDiscover.cmake). A test listed in EXPECT_OUTPUT passes when
# its output matches the regex, whatever its exit code (a must-fail test);
# it also gets the label must_fail. TIMEOUT defaults to
# MPF_CTEST_TIMEOUT_FACTOR * (10 s budget + 2 s grace) + 30 s.
#
# Works in this tree and after find_package(mpfixture) when the package
# has mpfixture::criterion (built where Criterion was found).
include_guard(GLOBAL)
set(MPF_CTEST_TIMEOUT_FACTOR 3 CACHE STRING "ctest TIMEOUT = factor * (budget + grace) * repeats + 30 s")

function(mpf_add_criterion_test target)
  cmake_parse_arguments(A "RUN_SERIAL" "TIMEOUT"
                        "SOURCES;LINK_LIBRARIES;LABELS;ENVIRONMENT;EXPECT_OUTPUT" ${ARGN})
  if(NOT A_SOURCES)
    message(FATAL_ERROR "mpf_add_criterion_test(${target}): SOURCES is required")
  endif()
  if(NOT TARGET mpfixture::criterion)
    message(FATAL_ERROR "mpf_add_criterion_test(${target}): no target mpfixture::criterion; "
                        "find_package(mpfixture) where Criterion is installed, or add mpfixture's source first")
  endif()
  if(NOT A_TIMEOUT)
    math(EXPR A_TIMEOUT "${MPF_CTEST_TIMEOUT_FACTOR} * 12 + 30")
  endif()
  add_executable(${target} ${A_SOURCES})
  target_link_libraries(${target} PRIVATE mpfixture::criterion ${A_LINK_LIBRARIES})

  set(params ${CMAKE_CURRENT_BINARY_DIR}/${target}_criterion_params.cmake)
  set(tests ${CMAKE_CURRENT_BINARY_DIR}/${target}_criterion_tests.cmake)
  set(include ${CMAKE_CURRENT_BINARY_DIR}/${target}_criterion_include.cmake)
  string(CONCAT content
    "set(MPF_LABELS [==[${A_LABELS}]==])\n"
    "set(MPF_ENVIRONMENT [==[${A_ENVIRONMENT}]==])\n"
    "set(MPF_TIMEOUT [==[${A_TIMEOUT}]==])\n"
    "set(MPF_RUN_SERIAL [==[${A_RUN_SERIAL}]==])\n"
    "set(MPF_EXPECT_OUTPUT [==[${A_EXPECT_OUTPUT}]==])\n"
    "set(MPF_WORKDIR \"${CMAKE_CURRENT_BINARY_DIR}\")\n")
  set(old "")
  if(EXISTS ${params})
    file(READ ${params} old)
  endif()
  if(NOT old STREQUAL content)
    file(WRITE ${params} "${content}")
  endif()
  file(WRITE ${include}
    "if(EXISTS \"${tests}\")\n"
    "  include(\"${tests}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set(script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/MpfCriterionDiscover.cmake)
  add_custom_command(OUTPUT ${tests}
    COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:${target}> -DSTEM=${target}
            -DPARAMS=${params} -DOUT=${tests} -P ${script}
    DEPENDS ${target} ${params} ${script}
    COMMENT "Listing the tests of ${target}"
    VERBATIM)
  add_custom_target(${target}_tests ALL DEPENDS ${tests})
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include})
endfunction()
