#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tests: install what is missing, build with warnings as errors, run
# every ctest test except the soak and bazel labels, then the same with clang (the
# fast suites, in <build>-clang), then build and test
# examples/consumer against this tree three ways (ci/consumer.sh), then
# the static checks: cppcheck, clang-tidy and the format (ci/lint.sh),
# then every suite but the fault sweep under ASan+UBSan in its own build
# directory <build>-asan (ci/sanitize.sh address,undefined fast), then the
# coverage gate: every suite again in an instrumented <build>-coverage,
# failing below 92% of lines or 80% of branches (coverage/coverage.sh).
#   ci/test.sh          the above
#   ci/test.sh --full   the above, then every fuzz harness for 30 s each
#                       (fuzz/run.sh 30; clang and libFuzzer are installed
#                       by ci/bootstrap.sh --full), scan-build over the
#                       whole build (ci/lint.sh scan), the mutation checks
#                       of the detectors (ci/mutate.sh), then the suites
#                       under ASan+UBSan (the fault sweep too) and the
#                       runtime's threaded suites under TSan
#                       (ci/sanitize.sh), then memcheck of the
#                       fixture, runtime, security and stress suites
#                       (ci/valgrind.sh) and the dispatch suite under
#                       helgrind (ci/helgrind.sh); each in its own build
#                       directory (<build>-asan, -tsan, -valgrind, -helgrind),
#                       then bazel test of examples/bazel (label bazel,
#                       skipped saying so when bazel is not installed)
set -euo pipefail
cd "$(dirname "$0")/.."
full=0
for arg in "$@"; do
  case $arg in
    --full) full=1 ;;
    *) echo "usage: ci/test.sh [--full]" >&2; exit 2 ;;
  esac
done
if [ "$full" -eq 1 ]; then
  ci/bootstrap.sh --full
else
  ci/bootstrap.sh
fi
ci/build.sh
build=${BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -LE 'soak|^bazel$'
# The same tree with clang, warnings as errors too, and its fast suites
# (the fixture, runtime and security labels; not the fault sweep, soak,
# stress or the realworld commands, which test the host more than the
# compiler).
BUILD_DIR="$build-clang" ci/build.sh -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
ctest --test-dir "$build-clang" --output-on-failure -j"$(nproc)" \
  -L 'fixture|runtime|security|realworld_cmocka|criterion_adapter|check_adapter|gtest_adapter' -LE 'soak|fault_sweep|stress|realworld$'
# The consumer's view: install, find_package, pkg-config, FetchContent.
ci/consumer.sh
# clang-tidy runs the clang analyzer's checks on every file already;
# scan-build (the same analyzer over the whole build) is in --full.
ci/lint.sh cppcheck tidy format
BUILD_DIR="$build-asan" ci/sanitize.sh address,undefined fast
BUILD_DIR="$build" coverage/coverage.sh
if [ "$full" -eq 1 ]; then
  fuzz/run.sh 30
  ci/lint.sh scan
  ci/mutate.sh
  BUILD_DIR="$build-asan" ci/sanitize.sh address,undefined
  BUILD_DIR="$build-tsan" ci/sanitize.sh thread
  BUILD_DIR="$build-valgrind" ci/valgrind.sh
  BUILD_DIR="$build-helgrind" ci/helgrind.sh
  # examples/bazel under bazel test, offline, 4 shards (a minute or more)
  ctest --test-dir "$build" --output-on-failure -L '^bazel$'
fi
