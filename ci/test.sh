#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tests: install what is missing, build with warnings as errors, run
# every ctest test except the soak label, then build and test
# examples/consumer against this tree three ways (ci/consumer.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/bootstrap.sh
ci/build.sh
build=${BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -LE soak
# The consumer's view: install, find_package, pkg-config, FetchContent.
ci/consumer.sh
