# SPDX-License-Identifier: MIT
# mpf_add_cmocka_test(<target>
#     SOURCES <src>...
#     [LINK_LIBRARIES <lib>...]
#     LABELS <label>...
#     [ENVIRONMENT <VAR=value>...]
#     [BUDGETS <glob>=<ms>...]
#     [KEEP_SHM <glob>...] [KEEP_FD <glob>...] [DEFER_SHM]
#     [SUPPRESSIONS <file>] [TIMEOUT <seconds>] [RUN_SERIAL]
#     [EXPECT_OUTPUT <case> <regex> [<case> <regex>]...])
#
# Builds a cmocka test binary that uses mpf_run_group_tests() and registers
# every case of it as its own ctest test named <target>.<case>, so that -R,
# -j, --repeat, labels and sharding come from ctest itself. The cases are
# discovered after each build of it by running `<target> --list`. A case
# listed in EXPECT_OUTPUT passes when its output matches the regex (a
# must-fail case that dies on purpose, e.g. killed by the watchdog),
# whatever its exit code; it also gets the label must_fail.
#
# Works the same in this tree, in a project that added mpfixture with
# add_subdirectory()/FetchContent, and after find_package(mpfixture): it
# links mpfixture::mpfixture (before cmocka, so that the adapter's wrappers
# of cmocka's reporting come first) and runs MpfixtureDiscover.cmake from
# its own directory. Make and Ninja alike; CMake 3.20 or newer.
#
# BUDGETS gives budgets by case name to a table that declares none (plain
# cmocka_unit_test() entries): the first glob ('*', '?') that matches a
# case gives its budget in ms, over the table's (MPF_BUDGETS in the tests'
# environment, and in the listing, so that the TIMEOUT below follows).
# KEEP_SHM declares persistent state: /dev/shm entries whose name matches
# one of the globs (e.g. sr_* myapp.state; a semaphore "/x" is sem.x) are
# kept on purpose by the code under test, reported as kept, never removed
# and never a failure. It sets MPF_KEEP_SHM in the tests' ENVIRONMENT (the
# globs joined with ':', after any MPF_KEEP_SHM=... given in ENVIRONMENT);
# a glob may not hold ':' or ';', and the fixture refuses '/' when the
# test runs. The globs are also the target's property MPF_KEEP_SHM, which
# mpf_add_cmocka_variant() adds to the variant's own KEEP_SHM: a variant
# of a suite keeps what the suite keeps. KEEP_FD does the same for
# descriptors (MPF_KEEP_FD, property MPF_KEEP_FD): a descriptor on a file
# whose path matches one of the globs (e.g. /var/lib/myapp/*) is the
# code's own, never an fd_leak, never closed. DEFER_SHM sets
# MPF_DEFER_SHM=1 (property MPF_DEFER_SHM, which variants keep): a case's
# /dev/shm objects that outlive it are held and judged after the group's
# teardown (the state of a session the group setup opened). SUPPRESSIONS
# names a file of known offences (MPF_SUPPRESSIONS, made absolute against
# the current source directory; property MPF_SUPPRESSIONS, which variants
# keep): each offence an entry matches is listed and cleaned up, and fails
# nothing (docs/guard.md, "Known offences").
#
# Each test's TIMEOUT sits above the case's budget plus grace, times the
# MPF_REPEAT count of ENVIRONMENT, scaled by MPF_CTEST_TIMEOUT_FACTOR, so
# the fixture's report always beats ctest's; TIMEOUT overrides it.
#
# mpf_add_cmocka_variant(<target> SUFFIX <s>
#     LABELS <label>... [ENVIRONMENT <VAR=value>...] [KEEP_SHM <glob>...]
#     [KEEP_FD <glob>...] [TIMEOUT <seconds>] [RUN_SERIAL] [CASES <regex>])
#
# Registers the cases of a binary made by mpf_add_cmocka_test() (those
# matching CASES) once more, as <target>.<case>.<s>, with their own labels
# and environment: e.g. the soak form of a stress suite, MPF_REPEAT=1000.
include_guard(GLOBAL)
set(MPF_CTEST_TIMEOUT_FACTOR 3 CACHE STRING "ctest TIMEOUT = factor * (budget + grace) * repeats + 30 s")
set(MPF_TEST_LAUNCHER "" CACHE STRING
    "Command list each case runs under, e.g. valgrind;-q;--trace-children=yes")

# ENVIRONMENT with the globs of KEEP_SHM (or KEEP_FD) added as `var`
# (MPF_KEEP_SHM, MPF_KEEP_FD), into <out>.
function(_mpf_keep_environment out fn var environment)
  set(globs ${ARGN})
  if(NOT globs)
    set(${out} "${environment}" PARENT_SCOPE)
    return()
  endif()
  string(REPLACE "MPF_" "" keyword "${var}")
  foreach(glob IN LISTS globs)
    if(glob MATCHES ":")
      message(FATAL_ERROR "${fn}: ${keyword} '${glob}': a glob cannot hold ':' "
                          "(it separates the globs of ${var}); give each its own")
    endif()
  endforeach()
  string(REPLACE ";" ":" joined "${globs}")
  set(env "")
  foreach(item IN LISTS environment)
    if(item MATCHES "^${var}=(.+)$")
      set(joined "${CMAKE_MATCH_1}:${joined}")
    else()
      list(APPEND env "${item}")
    endif()
  endforeach()
  list(APPEND env "${var}=${joined}")
  set(${out} "${env}" PARENT_SCOPE)
endfunction()

function(mpf_add_cmocka_test target)
  if(NOT TARGET mpfixture::mpfixture)
    message(FATAL_ERROR "mpf_add_cmocka_test(${target}): no target mpfixture::mpfixture; "
                        "find_package(mpfixture) or add mpfixture's source first")
  endif()
  _mpf_add_listed_test(${target} mpf_add_cmocka_test mpfixture::mpfixture cmocka ${ARGN})
  _mpf_link_first(${target})
endfunction()

# The binary of mpf_add_cmocka_test() or mpf_add_check_test() (`fn`), linked
# with `first`, its LINK_LIBRARIES and `last`, and its cases registered.
function(_mpf_add_listed_test target fn first last)
  cmake_parse_arguments(A "RUN_SERIAL;DEFER_SHM" "TIMEOUT;SUPPRESSIONS"
                        "SOURCES;LINK_LIBRARIES;LABELS;ENVIRONMENT;BUDGETS;KEEP_SHM;KEEP_FD;EXPECT_OUTPUT" ${ARGN})
  if(NOT A_SOURCES)
    message(FATAL_ERROR "${fn}(${target}): SOURCES is required")
  endif()
  if(A_BUDGETS)
    string(REPLACE ";" ":" budgets "${A_BUDGETS}")
    list(APPEND A_ENVIRONMENT "MPF_BUDGETS=${budgets}")
  endif()
  add_executable(${target} ${A_SOURCES})
  target_link_libraries(${target} PRIVATE ${first} ${A_LINK_LIBRARIES} ${last})
  foreach(kind SHM FD)
    _mpf_keep_environment(A_ENVIRONMENT "${fn}(${target})" MPF_KEEP_${kind}
                          "${A_ENVIRONMENT}" ${A_KEEP_${kind}})
    set_target_properties(${target} PROPERTIES MPF_KEEP_${kind} "${A_KEEP_${kind}}")
  endforeach()
  set_target_properties(${target} PROPERTIES MPF_DEFER_SHM "${A_DEFER_SHM}")
  if(A_DEFER_SHM)
    list(APPEND A_ENVIRONMENT "MPF_DEFER_SHM=1")
  endif()
  if(A_SUPPRESSIONS)
    get_filename_component(A_SUPPRESSIONS "${A_SUPPRESSIONS}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND A_ENVIRONMENT "MPF_SUPPRESSIONS=${A_SUPPRESSIONS}")
  endif()
  set_target_properties(${target} PROPERTIES MPF_SUPPRESSIONS "${A_SUPPRESSIONS}")
  _mpf_register_cases(${target} "" "${A_LABELS}" "${A_ENVIRONMENT}"
                      "${A_TIMEOUT}" "${A_RUN_SERIAL}" "" "${A_EXPECT_OUTPUT}" cases)
endfunction()

# libmpfixture must come before libcmocka in the program's search order
# (its wrappers of cmocka's reporting and filters; the adapter refuses to
# run otherwise), whatever order CMake gives the link line. The package's
# and the source tree's target put it first by a link option already; a
# target imported from pkg-config (pkg_check_modules IMPORTED_TARGET) only
# lists the library's path: put that path first here.
function(_mpf_link_first target)
  get_target_property(type mpfixture::mpfixture TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  get_target_property(libs mpfixture::mpfixture INTERFACE_LINK_LIBRARIES)
  foreach(lib IN LISTS libs)
    if(lib MATCHES "/libmpfixture[.]so")
      target_link_options(${target} BEFORE PRIVATE
        "SHELL:LINKER:--push-state,--no-as-needed ${lib} LINKER:--pop-state")
    endif()
  endforeach()
endfunction()

function(mpf_add_cmocka_variant target)
  cmake_parse_arguments(A "RUN_SERIAL" "SUFFIX;TIMEOUT;CASES" "LABELS;ENVIRONMENT;KEEP_SHM;KEEP_FD" ${ARGN})
  if(NOT A_SUFFIX OR NOT TARGET ${target})
    message(FATAL_ERROR "mpf_add_cmocka_variant(${target}): needs SUFFIX and "
                        "a target made by mpf_add_cmocka_test()")
  endif()
  foreach(kind SHM FD)
    get_target_property(keep ${target} MPF_KEEP_${kind})
    if(NOT keep)
      set(keep "")
    endif()
    _mpf_keep_environment(A_ENVIRONMENT "mpf_add_cmocka_variant(${target})"
                          MPF_KEEP_${kind} "${A_ENVIRONMENT}" ${keep} ${A_KEEP_${kind}})
  endforeach()
  get_target_property(defer ${target} MPF_DEFER_SHM)
  if(defer)
    list(APPEND A_ENVIRONMENT "MPF_DEFER_SHM=1")
  endif()
  get_target_property(known ${target} MPF_SUPPRESSIONS)
  if(known)
    list(APPEND A_ENVIRONMENT "MPF_SUPPRESSIONS=${known}")
  endif()
  _mpf_register_cases(${target} "${A_SUFFIX}" "${A_LABELS}" "${A_ENVIRONMENT}"
                      "${A_TIMEOUT}" "${A_RUN_SERIAL}" "${A_CASES}" "" cases)
endfunction()

# Writes the registration's parameters, and a build step that lists the
# cases and writes the ctest include (MpfixtureDiscover.cmake; `listing` is
# the form of `<target> --list`: "cases" or "criterion").
function(_mpf_register_cases target suffix labels environment timeout
         run_serial cases expect_output listing)
  # Next to this file, wherever it was found (source tree or install).
  set(_MPF_DISCOVER_SCRIPT ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/MpfixtureDiscover.cmake)
  set(tag ${target})
  if(suffix)
    set(tag ${target}_${suffix})
  endif()
  # Under valgrind (ctest -T memcheck, or a valgrind MPF_TEST_LAUNCHER):
  # what libmpfixture holds until exit is not the test's leak
  # (mpfixture-memcheck.supp, next to this file). A VALGRIND_OPTS of the
  # registration's own ENVIRONMENT wins.
  if(NOT environment MATCHES "(^|;)VALGRIND_OPTS=")
    list(APPEND environment
         "VALGRIND_OPTS=--suppressions=${CMAKE_CURRENT_FUNCTION_LIST_DIR}/mpfixture-memcheck.supp")
  endif()
  set(params ${CMAKE_CURRENT_BINARY_DIR}/${tag}_params.cmake)
  set(tests ${CMAKE_CURRENT_BINARY_DIR}/${tag}_tests.cmake)
  set(include ${CMAKE_CURRENT_BINARY_DIR}/${tag}_include.cmake)
  string(CONCAT content
    "set(MPF_LISTING [==[${listing}]==])\n"
    "set(MPF_SUFFIX [==[${suffix}]==])\n"
    "set(MPF_LABELS [==[${labels}]==])\n"
    "set(MPF_ENVIRONMENT [==[${environment}]==])\n"
    "set(MPF_TIMEOUT [==[${timeout}]==])\n"
    "set(MPF_RUN_SERIAL [==[${run_serial}]==])\n"
    "set(MPF_CASES [==[${cases}]==])\n"
    "set(MPF_EXPECT_OUTPUT [==[${expect_output}]==])\n"
    "set(MPF_TIMEOUT_FACTOR \"${MPF_CTEST_TIMEOUT_FACTOR}\")\n"
    "set(MPF_LAUNCHER [==[${MPF_TEST_LAUNCHER}]==])\n"
    "set(MPF_WORKDIR \"${CMAKE_CURRENT_BINARY_DIR}\")\n")
  # Rewritten only when it changes, so that a re-configure does not re-list
  # every binary (file(COPY_FILE ... ONLY_IF_DIFFERENT) would need 3.21).
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
    "  add_test(${tag}_NOT_BUILT ${tag}_NOT_BUILT)\n"
    "endif()\n")
  # Re-list the cases whenever the binary or the registration changes.
  add_custom_command(OUTPUT ${tests}
    COMMAND ${CMAKE_COMMAND} -DBIN=$<TARGET_FILE:${target}> -DSTEM=${target}
            -DPARAMS=${params} -DOUT=${tests} -P ${_MPF_DISCOVER_SCRIPT}
    DEPENDS ${target} ${params} ${_MPF_DISCOVER_SCRIPT}
    COMMENT "Listing the cases of ${tag}"
    VERBATIM)
  add_custom_target(${tag}_cases ALL DEPENDS ${tests})
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include})
endfunction()

# Criterion (mpf_add_criterion_test): MpfixtureCriterion.cmake, beside this file.
include(${CMAKE_CURRENT_LIST_DIR}/MpfixtureCriterion.cmake)

# mpf_add_check_test(<target> SOURCES <src>... [LINK_LIBRARIES <lib>...]
#     LABELS <label>... [ENVIRONMENT <VAR=value>...] [BUDGETS <glob>=<ms>...]
#     [KEEP_SHM <glob>...] [KEEP_FD <glob>...] [TIMEOUT <seconds>] [RUN_SERIAL]
#     [EXPECT_OUTPUT <test> <regex> [<test> <regex>]...])
#
# The same for a Check suite run by mpf_srunner_run_all()
# (<mpfixture/check.h>): the binary links mpfixture::check, and every
# Check test becomes its own ctest test <target>.<test>, run alone
# (MPF_CASE) in Check's fork mode unless ENVIRONMENT says CK_FORK=no.
# mpf_add_cmocka_variant() registers its tests once more, the same way.
function(mpf_add_check_test target)
  if(NOT TARGET mpfixture::check)
    message(FATAL_ERROR "mpf_add_check_test(${target}): no target mpfixture::check "
                        "(mpfixture built with Check)")
  endif()
  _mpf_add_listed_test(${target} mpf_add_check_test mpfixture::check "" ${ARGN})
endfunction()
