#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tests, one stage a line: ci/test.sh runs stages 1-8, ci/test.sh --full 1-16.
#  1. install what is missing (ci/bootstrap.sh; with --full, clang and libFuzzer too)
#  2. build with warnings as errors (ci/build.sh)
#  3. every ctest test but the soak and bazel labels
#  4. the same with clang, warnings as errors too, and its fast suites only
#  5. examples/consumer built and tested against this tree three ways (ci/consumer.sh)
#  6. the static checks: cppcheck, clang-tidy and the format (ci/lint.sh)
#  7. every suite but the fault sweep under ASan+UBSan (ci/sanitize.sh address,undefined fast)
#  8. the coverage gate: every suite again, failing below 92% lines, 80% branches (coverage/coverage.sh)
#  9. every fuzz harness for 30 s each (fuzz/run.sh 30)
# 10. scan-build over the whole build (ci/lint.sh scan)
# 11. the mutation checks of the detectors (ci/mutate.sh)
# 12. the suites, the fault sweep too, under ASan+UBSan (ci/sanitize.sh address,undefined)
# 13. the runtime's threaded suites under TSan (ci/sanitize.sh thread)
# 14. memcheck of the fixture, runtime, security and stress suites (ci/valgrind.sh)
# 15. the dispatch suite under helgrind (ci/helgrind.sh)
# 16. bazel test of examples/bazel (label bazel; skipped, saying so, without bazel)
# Stages 4, 7, 8 and 12-15 build in directories of their own beside <build>
# (${BUILD_DIR:-build}): <build>-clang, -asan, -coverage (instrumented), -asan,
# -tsan, -valgrind and -helgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/labels.sh
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
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "${MPF_TESTS_ALL[@]}"
# The same tree with clang, warnings as errors too, and its fast suites
# (MPF_TESTS_FAST of ci/labels.sh).
BUILD_DIR="$build-clang" ci/build.sh -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
ctest --test-dir "$build-clang" --output-on-failure -j"$(nproc)" "${MPF_TESTS_FAST[@]}"
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
  ctest --test-dir "$build" --output-on-failure "${MPF_TESTS_BAZEL[@]}"
fi
