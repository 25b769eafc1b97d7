#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Memcheck of the suites: every case of the cmocka suites runs under
# valgrind, every process of it traced (forked children, exec'd programs).
#   ci/valgrind.sh [LABEL]...   default: fixture runtime security stress
#                               (VALGRIND_LABEL="..." works too)
# Each process writes its own XML (BUILD_DIR/memcheck/<case>.<pid>.xml):
# a forked child's error only changes that child's exit status, which its
# parent may never read, so after ctest every file is read by
# ci/memcheck_report.py and any error of any process (memory errors,
# definitely-lost blocks; ci/valgrind.supp says what is suppressed, and
# why) fails the run. The test process's own errors also fail its test
# (exit status 99). Descriptors open at each exit are listed (--track-fds).
# Budgets scale themselves under valgrind (x20), the tests' own time
# bounds with them (mpf_time_scale()), and the ctest timeouts are widened
# to match. The runtime takes its exit-pipe path (valgrind 3.19 has no
# pidfd_open). The stress label runs its short form (MPF_STRESS_SHORT).
# Not by default: the fault_sweep label (1,022 cases, 11 minutes more on 2
# cores; `ci/valgrind.sh fault_sweep` runs it, clean when measured), and the
# tests that are not cmocka suites (mpf_run.*, settings.*, shared_page.*,
# the renderer's Python tests, the realworld corpus run by mpf-run): they
# run natively in this build.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/labels.sh
ci/bootstrap.sh
export BUILD_DIR=${BUILD_DIR:-build-valgrind}
labels=("$@")
if [ ${#labels[@]} -eq 0 ]; then
  read -r -a labels <<<"${VALGRIND_LABEL:-$MPF_VALGRIND_LABELS}"
fi
mkdir -p "$BUILD_DIR/memcheck"
xml_dir=$(cd "$BUILD_DIR/memcheck" && pwd)
launcher="valgrind;-q;--trace-children=yes;--track-fds=yes;--error-exitcode=99"
launcher+=";--leak-check=full;--show-leak-kinds=definite;--errors-for-leak-kinds=definite"
launcher+=";--suppressions=$PWD/ci/valgrind.supp"
launcher+=";--xml=yes;--xml-file=$xml_dir/%q{MPF_CASE}.%p.xml"
ci/build.sh "-DMPF_TEST_LAUNCHER=$launcher" -DMPF_CTEST_TIMEOUT_FACTOR=25 \
            -DMPF_STRESS_SHORT=ON
find "$xml_dir" -name '*.xml' -delete
regex="^($(IFS='|'; echo "${labels[*]}"))\$"
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)" -L "$regex" || status=$?
python3 ci/memcheck_report.py "$xml_dir" || status=1
exit "$status"
