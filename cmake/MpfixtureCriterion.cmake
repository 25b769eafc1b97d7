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
# (MpfixtureDiscover.cmake, through MpfixtureTests.cmake's registration). A test listed in EXPECT_OUTPUT passes when
# its output matches the regex, whatever its exit code (a must-fail test);
# it also gets the label must_fail. TIMEOUT defaults to
# MPF_CTEST_TIMEOUT_FACTOR * (10 s budget + 2 s grace) + 30 s.
#
# Works in this tree and after find_package(mpfixture) when the package
# has mpfixture::criterion (built where Criterion was found).
include_guard(GLOBAL)
# The registration shared with mpf_add_cmocka_test() (_mpf_register_cases),
# and MPF_CTEST_TIMEOUT_FACTOR.
include(${CMAKE_CURRENT_LIST_DIR}/MpfixtureTests.cmake)

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
  _mpf_register_cases(${target} "" "${A_LABELS}" "${A_ENVIRONMENT}"
                      "${A_TIMEOUT}" "${A_RUN_SERIAL}" "" "${A_EXPECT_OUTPUT}" criterion)
endfunction()
