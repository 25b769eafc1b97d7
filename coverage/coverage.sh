#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Line, function and branch coverage of the ctest suite (soak excluded):
# builds an instrumented tree in ${BUILD_DIR:-build}-coverage, runs the tests
# there, writes an lcov HTML report to <that tree>/coverage-html and ends with
#   coverage: lines NN.N% functions NN.N% branches NN.N%
# Fails (after that line) when a test failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/bootstrap.sh
build=${BUILD_DIR:-build}-coverage
BUILD_DIR=$build ci/build.sh -DMPF_COVERAGE=ON

lcov_rc=(--rc lcov_branch_coverage=1)
info=$build/coverage.info
lcov --quiet --zerocounters --directory "$build" # counters of an earlier run
ctest_status=0
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -LE soak || ctest_status=$?

lcov --quiet "${lcov_rc[@]}" --capture --directory "$build" --output-file "$info"
lcov --quiet "${lcov_rc[@]}" --remove "$info" '/usr/*' '*/tests/*' --output-file "$info"
rm -rf "$build/coverage-html"
genhtml --quiet --branch-coverage --output-directory "$build/coverage-html" "$info"

# "  lines......: 87.1% (522 of 599 lines)"; "no data found" counts as 0.
summary=$(lcov "${lcov_rc[@]}" --summary "$info" 2>&1)
rate() {
  local pct
  pct=$(sed -n "s/^ *$1\.*: \([0-9.]*\)%.*/\1/p" <<<"$summary")
  printf '%.1f%%' "${pct:-0}"
}
[ "$ctest_status" -eq 0 ] || echo "coverage: ctest failed (status $ctest_status)" >&2
echo "coverage: lines $(rate lines) functions $(rate functions) branches $(rate branches)"
exit "$ctest_status"
