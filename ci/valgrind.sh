#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fixture's self-tests under valgrind, every forked child traced: any
# memory error fails the case (exit 99). Budgets scale themselves under
# valgrind (x20), so the ctest timeouts are widened to match.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/bootstrap.sh
export BUILD_DIR=${BUILD_DIR:-build-valgrind}
ci/build.sh "-DMPF_TEST_LAUNCHER=valgrind;-q;--trace-children=yes;--error-exitcode=99" \
            -DMPF_CTEST_TIMEOUT_FACTOR=25
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" -L "${VALGRIND_LABEL:-selftest}"
