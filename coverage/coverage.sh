#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Line, function and branch coverage of fixture/, runtime/ and fakechips/
# (the fake-chip companion) by the ctest suite, soak and bazel excluded:
# builds an instrumented tree in ${BUILD_DIR:-build}-coverage, runs the tests
# there, writes an lcov HTML report to <that tree>/coverage-html and ends with
#   coverage: lines NN.N% functions NN.N% branches NN.N%
# Before that line: the hit counts of the child-side functions (counters
# written by forked children: MPF_COVERAGE_BUILD flushes them before every
# _exit and before a path that ends in SIGKILL) and the coverage of
# fixture/tools/mpf_audit.py by its own tests (coverage.py, when installed).
# Fails (after that line) when a test failed or a threshold was missed:
# lines < MIN_LINES or branches < MIN_BRANCHES (the script's own, below).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/labels.sh
MIN_LINES=92.0
MIN_BRANCHES=80.0
ci/bootstrap.sh
build=${BUILD_DIR:-build}-coverage
BUILD_DIR=$build ci/build.sh -DMPF_COVERAGE=ON

lcov_rc=(--rc lcov_branch_coverage=1)
info=$build/coverage.info
lcov --quiet --zerocounters --directory "$build" # counters of an earlier run
ctest_status=0
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "${MPF_TESTS_ALL[@]}" || ctest_status=$?

# geninfo of lcov 1.16 warns of its own redefined subroutines: not ours.
# Its stderr goes to a file filtered afterwards, not through a process
# substitution, whose grep would outlive this script.
capture_status=0
lcov --quiet "${lcov_rc[@]}" --capture --directory "$build" \
  --output-file "$info" 2>"$build/lcov-capture.stderr" || capture_status=$?
grep -v '^Subroutine .* redefined' "$build/lcov-capture.stderr" >&2 || true
[ "$capture_status" -eq 0 ] || exit "$capture_status"
lcov --quiet "${lcov_rc[@]}" --extract "$info" "$PWD/fixture/*" "$PWD/runtime/*" \
  "$PWD/fakechips/*" --output-file "$info"
lcov --quiet "${lcov_rc[@]}" --remove "$info" '*/tests/*' --output-file "$info"
rm -rf "$build/coverage-html"
genhtml --quiet --branch-coverage --output-directory "$build/coverage-html" "$info"

# Hit counts of functions that only forked children (or the watchdog) run:
# "FNDA:<count>,<name>" under the "SF:<file>" record of the info file.
hits() { # file function
  awk -v f="$PWD/$1" -v fn="$2" '
    /^SF:/ { in_file = substr($0, 4) == f }
    in_file && /^FNDA:/ { split(substr($0, 6), a, ","); if (a[2] == fn) n = a[1] }
    END { print n + 0 }' "$info"
}
line_hits() { # file text: the count of the first line holding text
  local n
  n=$(grep -nF -- "$2" "$1" | head -1 | cut -d: -f1)
  awk -v f="$PWD/$1" -v l="$n" '
    /^SF:/ { in_file = substr($0, 4) == f }
    in_file && /^DA:/ { split(substr($0, 4), a, ","); if (a[1] == l) c = a[2] }
    END { print c + 0 }' "$info"
}
echo "coverage: child side: child entry worker__child_main $(hits runtime/src/child/child.c worker__child_main)," \
  "serve loop serve $(hits runtime/src/child/child.c serve)," \
  "failure publication (INIT_FAILED store) $(line_hits runtime/src/child/child.c 'WORKER__MB_INIT_FAILED);')," \
  "sim chip worker__device_run $(hits runtime/src/device/device_sim.c worker__device_run)," \
  "watchdog kill path kill_binary $(hits fixture/src/ladder/watchdog.c kill_binary)"

# The renderer's own tests under coverage.py (Debian's python3-coverage):
# a sitecustomize starts it in every python3 process they run.
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import coverage' 2>/dev/null; then
  pycov=$PWD/$build/pycov
  rm -rf "$pycov" && mkdir -p "$pycov"
  cat >"$pycov/coveragerc" <<RC
[run]
branch = True
parallel = True
data_file = $pycov/data
include = $PWD/fixture/tools/mpf_audit.py
RC
  echo 'import coverage; coverage.process_startup()' >"$pycov/sitecustomize.py"
  for t in fixture/tools/test_mpf_audit.py fixture/tools/test_mpf_audit_malformed.py; do
    COVERAGE_PROCESS_START=$pycov/coveragerc PYTHONPATH=$pycov \
      /usr/bin/python3 "$t" >"$pycov/$(basename "$t" .py).log" 2>&1 ||
      { echo "coverage: $t failed (log: $pycov)" >&2; ctest_status=1; }
  done
  COVERAGE_RCFILE=$pycov/coveragerc /usr/bin/python3 -m coverage combine --quiet
  COVERAGE_RCFILE=$pycov/coveragerc /usr/bin/python3 -m coverage json --quiet -o "$pycov/audit.json"
  /usr/bin/python3 - "$pycov/audit.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
lines = 100.0 * t["covered_lines"] / max(t["num_statements"], 1)
branches = 100.0 * t["covered_branches"] / max(t["num_branches"], 1)
print("coverage: mpf_audit.py lines %.1f%% branches %.1f%% (coverage.py)"
      % (lines, branches))
PY
else
  echo "coverage: mpf_audit.py not measured (no python3-coverage)"
fi

# "  lines......: 87.1% (522 of 599 lines)"; "no data found" counts as 0.
summary=$(lcov "${lcov_rc[@]}" --summary "$info" 2>&1)
pct() { sed -n "s/^ *$1\.*: \([0-9.]*\)%.*/\1/p" <<<"$summary"; }
rate() { printf '%.1f%%' "$(pct "$1" | grep . || echo 0)"; }
below() { # rate minimum: true when rate < minimum, both with one decimal
  awk -v r="$(pct "$1" | grep . || echo 0)" -v m="$2" 'BEGIN { exit !(sprintf("%.1f", r) + 0 < m + 0) }'
}
status=$ctest_status
[ "$ctest_status" -eq 0 ] || echo "coverage: ctest failed (status $ctest_status)" >&2
if below lines "$MIN_LINES"; then
  echo "coverage: lines $(rate lines) is below the threshold of $MIN_LINES%" >&2
  status=1
fi
if below branches "$MIN_BRANCHES"; then
  echo "coverage: branches $(rate branches) is below the threshold of $MIN_BRANCHES%" >&2
  status=1
fi
echo "coverage: lines $(rate lines) functions $(rate functions) branches $(rate branches)"
exit "$status"
