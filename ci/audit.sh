#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: install what is missing, build, run the runtime suite under
# the fixture with an audit file (the fixture's own suite while there is no
# runtime suite), and write the per-case audit to <build>/audit/:
# audit.jsonl (raw), audit.txt (one line a case), audit.md (also appended
# to $GITHUB_STEP_SUMMARY), audit.html, junit.xml and ctest.log.
# Prints a short summary: the counts, every failed case with its kinds, and
# where the reports are; the whole ctest log and audit only when something
# failed, or always with -v. Fails when ctest or the audit failed.
#   ci/audit.sh [-v]
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/labels.sh
verbose=0
for arg in "$@"; do
  case $arg in
    -v|--verbose) verbose=1 ;;
    *) echo "usage: ci/audit.sh [-v]" >&2; exit 2 ;;
  esac
done
ci/bootstrap.sh
build=${BUILD_DIR:-build}
ci/build.sh >"${TMPDIR:-/tmp}/mpf-audit-build.$$.log" 2>&1 ||
  { cat "${TMPDIR:-/tmp}/mpf-audit-build.$$.log"; rm -f "${TMPDIR:-/tmp}/mpf-audit-build.$$.log"; exit 1; }
rm -f "${TMPDIR:-/tmp}/mpf-audit-build.$$.log"
audit=$(cd "$build" && pwd)/audit # absolute: each test runs in its own dir
rm -rf "$audit"
mkdir -p "$audit"

if ctest --test-dir "$build" -N -L runtime | grep -q '^Total Tests: [1-9]'; then
  tests=(-L runtime)
else
  tests=(-L fixture)
fi
# must_fail cases fail on purpose (ctest judges them by their output):
# their audit lines say "fail", so they stay out of the audit.
tests+=("${MPF_TESTS_NOT_AUDITED[@]}")

ctest_status=0
MPF_AUDIT=$audit/audit.jsonl ctest --test-dir "$build" --output-on-failure \
  -j"$(nproc)" "${tests[@]}" >"$audit/ctest.log" 2>&1 || ctest_status=$?

audit_status=0
python3 fixture/tools/mpf_audit.py --text --markdown "$audit/audit.md" \
  --html "$audit/audit.html" --junit "$audit/junit.xml" "$audit/audit.jsonl" \
  >"$audit/audit.txt" 2>&1 || audit_status=$?
if [ -f "$audit/audit.md" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  { echo "## mpfixture audit"; echo; cat "$audit/audit.md"; } >>"$GITHUB_STEP_SUMMARY"
fi

green=0
[ "$ctest_status" -eq 0 ] && [ "$audit_status" -eq 0 ] && green=1
if [ "$verbose" -eq 1 ] || [ "$green" -eq 0 ]; then
  cat "$audit/ctest.log"
  echo
  cat "$audit/audit.txt"
  echo
fi
# ctest: "100% tests passed, 0 tests failed out of 328"
sed -n 's/^[0-9]*% tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\)/ctest: \2 tests, \1 failed/p' "$audit/ctest.log"
sed -n '/^The following tests FAILED:/,/^Errors while running/p' "$audit/ctest.log" | sed '$d' | head -20
passed=$(grep -c '^pass ' "$audit/audit.txt" || true)
failed=$(grep -c '^fail ' "$audit/audit.txt" || true)
echo "audit: $((passed + failed)) cases, $passed passed, $failed failed"
# Each failed case with its kinds (and its test's outcome), at most 20.
{ grep '^fail ' "$audit/audit.txt" || true; } | awk '{ print "  " $2, $3, $4 }' | head -20
[ "$failed" -le 20 ] || echo "  … and $((failed - 20)) more in $build/audit/audit.txt"
echo "audit: reports in $build/audit/ (audit.txt, audit.md, audit.html, junit.xml, audit.jsonl, ctest.log)"
echo "audit: ctest status $ctest_status, audit status $audit_status"
[ "$green" -eq 1 ]
