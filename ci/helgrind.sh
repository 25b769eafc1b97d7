#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The dispatch suite under helgrind (its pidfd and exit-pipe forms): the
# runtime's scheduler thread against the caller's, every process traced.
# Each process writes its own XML (BUILD_DIR/helgrind/<case>.<pid>.xml),
# read by ci/memcheck_report.py: any error of any process fails the run.
# Budgets and the tests' own time bounds scale x20 (RUNNING_ON_VALGRIND).
# BUILD_DIR overrides the build directory (default build-helgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
ci/bootstrap.sh
export BUILD_DIR=${BUILD_DIR:-build-helgrind}
mkdir -p "$BUILD_DIR/helgrind"
xml_dir=$(cd "$BUILD_DIR/helgrind" && pwd)
launcher="valgrind;--tool=helgrind;-q;--trace-children=yes;--error-exitcode=98"
launcher+=";--xml=yes;--xml-file=$xml_dir/%q{MPF_CASE}.%p.xml"
ci/build.sh "-DMPF_TEST_LAUNCHER=$launcher" -DMPF_CTEST_TIMEOUT_FACTOR=25
find "$xml_dir" -name '*.xml' -delete
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" -R '^test_dispatch\.' || status=$?
python3 ci/memcheck_report.py "$xml_dir" || status=1
exit "$status"
