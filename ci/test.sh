#!/usr/bin/env bash
# The tests: install what is missing, build with warnings as errors, run
# every ctest test except the soak label.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/bootstrap.sh
ci/build.sh
build=${BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -LE soak
