# mpf_add_cmocka_test(<target>
#     SOURCES <src>...
#     [LINK_LIBRARIES <lib>...]
#     LABELS <label>...
#     [ENVIRONMENT <VAR=value>...]
#     [EXPECT_OUTPUT <case> <regex> [<case> <regex>]...])
#
# Builds a cmocka test binary that uses mpf_run_group_tests() and registers
# every case of it as its own ctest test named <target>.<case>, so that -R,
# -j, --repeat, labels and sharding come from ctest itself. The cases are
# discovered after each build of it by running `<target> --list`. A case listed in
# EXPECT_OUTPUT passes when its output matches the regex (a must-fail case
# that dies on purpose, e.g. killed by the watchdog), whatever its exit code.
# Each test's TIMEOUT sits above the case's budget plus grace, scaled by
# MPF_CTEST_TIMEOUT_FACTOR, so the fixture's report always beats ctest's.
set(MPF_CTEST_TIMEOUT_FACTOR 3 CACHE STRING "ctest TIMEOUT = factor * (budget + grace) + 30 s")
set(MPF_TEST_LAUNCHER "" CACHE STRING
    "Command list each case runs under, e.g. valgrind;-q;--trace-children=yes")
set(MPF_DISCOVER_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/MpfDiscover.cmake)

function(mpf_add_cmocka_test target)
  cmake_parse_arguments(A "" "" "SOURCES;LINK_LIBRARIES;LABELS;ENVIRONMENT;EXPECT_OUTPUT" ${ARGN})
  if(NOT A_SOURCES)
    message(FATAL_ERROR "mpf_add_cmocka_test(${target}): SOURCES is required")
  endif()
  add_executable(${target} ${A_SOURCES})
  target_link_libraries(${target} PRIVATE mpfixture ${A_LINK_LIBRARIES} cmocka)

  set(params ${CMAKE_CURRENT_BINARY_DIR}/${target}_params.cmake)
  set(tests ${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake)
  set(include ${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake)
  file(WRITE ${params}.new
    "set(MPF_LABELS [==[${A_LABELS}]==])\n"
    "set(MPF_ENVIRONMENT [==[${A_ENVIRONMENT}]==])\n"
    "set(MPF_EXPECT_OUTPUT [==[${A_EXPECT_OUTPUT}]==])\n"
    "set(MPF_TIMEOUT_FACTOR \"${MPF_CTEST_TIMEOUT_FACTOR}\")\n"
    "set(MPF_LAUNCHER [==[${MPF_TEST_LAUNCHER}]==])\n"
    "set(MPF_WORKDIR \"${CMAKE_CURRENT_BINARY_DIR}\")\n")
  file(COPY_FILE ${params}.new ${params} ONLY_IF_DIFFERENT)
  file(WRITE ${include}
    "if(EXISTS \"${tests}\")\n"
    "  include(\"${tests}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  # Re-list the cases whenever the binary or the registration changes.
  add_custom_command(OUTPUT ${tests}
    COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:${target}> -DSTEM=${target}
            -DPARAMS=${params} -DOUT=${tests} -P ${MPF_DISCOVER_SCRIPT}
    DEPENDS ${target} ${params} ${MPF_DISCOVER_SCRIPT}
    COMMENT "Listing the cases of ${target}"
    VERBATIM)
  add_custom_target(${target}_cases ALL DEPENDS ${tests})
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include})
endfunction()
