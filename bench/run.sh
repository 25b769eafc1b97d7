#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmarks: each prints its medians as '#' lines and one line per ratio,
#   ratio <name> <value> target <t> <ok|miss>
# measured against baselines taken in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/bootstrap.sh
ci/build.sh
build=${BUILD_DIR:-build}
"$build/bin/bench_case_overhead" "${BENCH_CASES:-2000}"
