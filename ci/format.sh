#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Apply .clang-format to every tracked C and C++ source and header, in
# place. ci/lint.sh format checks the same set without changing it.
set -euo pipefail
cd "$(dirname "$0")/.."
git ls-files -z -- '*.c' '*.h' '*.cc' '*.cpp' | xargs -0 clang-format -i
git diff --stat --no-color | tail -1
