#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configure and build into ${BUILD_DIR:-build} with warnings as errors.
# Extra arguments go to cmake's configure step (e.g. -DMPF_COVERAGE=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DMPF_WERROR=ON "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
