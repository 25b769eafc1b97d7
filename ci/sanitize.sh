#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tree built with sanitizers, its suites run by ctest:
#   ci/sanitize.sh [address,undefined]   ASan + UBSan (build-asan): every
#                                        suite, as ci/test.sh runs them
#                                        (all but the soak label)
#   ci/sanitize.sh address,undefined fast  the same build, every suite but
#                                        the fault sweep (ci/test.sh's gate)
#   ci/sanitize.sh thread                TSan (build-tsan): the runtime's
#                                        threaded suites (dispatch, control,
#                                        error propagation, startup)
# BUILD_DIR overrides the build directory. Any report fails its test: ASan
# and TSan stop the process at the first one (halt_on_error), UBSan is built
# without recovery (MPF_SANITIZE adds -fno-sanitize-recover), LSan fails
# the test process on a leak. Budgets scale x3 (mpf_time_scale()), the
# ctest timeouts with them. mpf-run preloads the sanitizer runtime ahead of
# libmpfixture into the programs it runs (fixture/tools/mpf_run.c).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/labels.sh
kind=${1:-address,undefined}
scope=${2:-all}
case $kind:$scope in
  address,undefined:all)
    dir=build-asan
    tests=("${MPF_TESTS_ALL[@]}") ;;
  address,undefined:fast)
    dir=build-asan
    tests=("${MPF_TESTS_ALL_BUT_FAULT_SWEEP[@]}") ;;
  thread:all)
    dir=build-tsan
    tests=("${MPF_TESTS_THREADED[@]}") ;;
  *) echo "usage: ci/sanitize.sh [address,undefined [fast]|thread]" >&2; exit 2 ;;
esac
ci/bootstrap.sh
export BUILD_DIR=${BUILD_DIR:-$dir}
ci/build.sh -DMPF_SANITIZE="$kind" -DMPF_CTEST_TIMEOUT_FACTOR=6
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" "${tests[@]}"
