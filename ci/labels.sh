# SPDX-License-Identifier: MIT
# The ctest selections of the project's scripts, each named once here and
# sourced from the top of the tree (`. ci/labels.sh`) by ci/test.sh,
# ci/sanitize.sh, ci/audit.sh, ci/valgrind.sh and coverage/coverage.sh.
# Each MPF_TESTS_* is an array of ctest arguments:
#   ctest --test-dir "$build" ... "${MPF_TESTS_ALL[@]}"
# tests/README.md says what each label selects.
# docs/ci-recipes.md keeps its own `-LE 'soak|must_fail'`: its recipes run
# in a consumer's tree, without this file.

# Every test but the soak label (the long forms) and bazel (bazel test of
# examples/bazel, in ci/test.sh --full only): ci/test.sh's first run,
# ci/sanitize.sh address,undefined, coverage/coverage.sh.
MPF_TESTS_ALL=(-LE 'soak|^bazel$')

# The same without the fault sweep: ci/sanitize.sh address,undefined fast
# (ci/test.sh's sanitizer gate).
MPF_TESTS_ALL_BUT_FAULT_SWEEP=(-LE 'soak|fault_sweep|^bazel$')

# The fast suites, for ci/test.sh's clang build: the fixture, runtime and
# security labels, the cmocka realworld corpus and the Criterion, Check
# and GoogleTest adapters; not the fault sweep, soak, stress or the
# realworld commands, which test the host more than the compiler.
MPF_TESTS_FAST=(-L 'fixture|runtime|security|realworld_cmocka|criterion_adapter|check_adapter|gtest_adapter'
                -LE 'soak|fault_sweep|stress|realworld$')

# examples/bazel under bazel test: ci/test.sh --full.
MPF_TESTS_BAZEL=(-L '^bazel$')

# The runtime's threaded suites (dispatch, control, error propagation,
# startup): ci/sanitize.sh thread (TSan).
MPF_TESTS_THREADED=(-L runtime -R '^test_(dispatch|control|error_propagation|startup_readiness)\.')

# Left out of ci/audit.sh's run: soak, and must_fail (tests that fail on
# purpose, judged by ctest on their output: their audit lines say "fail").
MPF_TESTS_NOT_AUDITED=(-LE 'soak|must_fail')

# The labels ci/valgrind.sh runs under memcheck when given none (a
# space-separated list; each label is matched whole).
MPF_VALGRIND_LABELS="fixture runtime security stress"
