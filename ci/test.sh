#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tests, one stage a line: ci/test.sh runs stages 1-9, ci/test.sh --full 1-17.
#  1. bootstrap: install what is missing (ci/bootstrap.sh; with --full, clang and libFuzzer too)
#  2. build: with warnings as errors (ci/build.sh)
#  3. ctest: every ctest test but the soak and bazel labels
#  4. clang: the same tree with clang, warnings as errors too, and its fast suites only
#  5. consumer: examples/consumer built and tested against this tree three ways (ci/consumer.sh)
#  6. build-systems: examples/meson and examples/autotools against the installed package (ci/build_systems.sh)
#  7. lint: cppcheck, clang-tidy and the format (ci/lint.sh)
#  8. asan: every suite but the fault sweep under ASan+UBSan (ci/sanitize.sh address,undefined fast)
#  9. coverage: every suite again, failing below 92% lines, 80% branches (coverage/coverage.sh)
# 10. fuzz: every fuzz harness for 30 s each (fuzz/run.sh 30)
# 11. scan-build: the clang analyzer over the whole build (ci/lint.sh scan)
# 12. mutants: the mutation checks of the detectors (ci/mutate.sh)
# 13. asan-full: the suites, the fault sweep too, under ASan+UBSan (ci/sanitize.sh address,undefined)
# 14. tsan: the runtime's threaded suites under TSan (ci/sanitize.sh thread)
# 15. memcheck: the fixture, runtime, security and stress suites (ci/valgrind.sh)
# 16. helgrind: the dispatch suite (ci/helgrind.sh)
# 17. bazel: bazel test of examples/bazel (label bazel; skipped, saying so, without bazel)
# Every stage runs, even after one failed (ci/stages.sh): each one's output
# goes to <build>-logs/NN-<stage>.log, the terminal gets one line a stage
# and a table at the end, and the exit status is 1 if any stage failed.
# <build> is ${BUILD_DIR:-build}; stages 4, 8, 9 and 13-16 build in
# directories of their own beside it: <build>-clang, -asan, -coverage
# (instrumented), -asan, -tsan, -valgrind and -helgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/labels.sh
. ci/stages.sh
full=0
for arg in "$@"; do
  case $arg in
    --full) full=1 ;;
    *) echo "usage: ci/test.sh [--full]" >&2; exit 2 ;;
  esac
done
build=${BUILD_DIR:-build}
jobs=$(nproc)

bootstrap() { if [ "$full" -eq 1 ]; then ci/bootstrap.sh --full; else ci/bootstrap.sh; fi; }
run_ctest() { ctest --test-dir "$build" --output-on-failure -j"$jobs" "${MPF_TESTS_ALL[@]}"; }
# The same tree with clang, warnings as errors too, and its fast suites
# (MPF_TESTS_FAST of ci/labels.sh).
clang_build_and_ctest() {
  BUILD_DIR="$build-clang" ci/build.sh -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
  ctest --test-dir "$build-clang" --output-on-failure -j"$jobs" "${MPF_TESTS_FAST[@]}"
}
# examples/bazel under bazel test, offline, 4 shards (a minute or more)
bazel_example() { ctest --test-dir "$build" --output-on-failure "${MPF_TESTS_BAZEL[@]}"; }

if [ "$full" -eq 1 ]; then stages_begin "$build-logs" 17; else stages_begin "$build-logs" 9; fi
stage bootstrap bootstrap
stage build ci/build.sh
stage ctest run_ctest
stage clang clang_build_and_ctest
# The consumer's view: install, find_package, pkg-config, FetchContent.
stage consumer ci/consumer.sh
# Meson and autotools projects on the installed package, each in two forms.
stage build-systems ci/build_systems.sh
# clang-tidy runs the clang analyzer's checks on every file already;
# scan-build (the same analyzer over the whole build) is in --full.
stage lint ci/lint.sh cppcheck tidy format
stage asan env BUILD_DIR="$build-asan" ci/sanitize.sh address,undefined fast
stage coverage env BUILD_DIR="$build" coverage/coverage.sh
if [ "$full" -eq 1 ]; then
  stage fuzz fuzz/run.sh 30
  stage scan-build ci/lint.sh scan
  stage mutants ci/mutate.sh
  stage asan-full env BUILD_DIR="$build-asan" ci/sanitize.sh address,undefined
  stage tsan env BUILD_DIR="$build-tsan" ci/sanitize.sh thread
  stage memcheck env BUILD_DIR="$build-valgrind" ci/valgrind.sh
  stage helgrind env BUILD_DIR="$build-helgrind" ci/helgrind.sh
  stage bazel bazel_example
fi
stages_end
