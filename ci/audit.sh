#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: install what is missing, build, run the runtime suite under
# the fixture with an audit file (the fixture's own suite while there is no
# runtime suite), print the per-case audit and write it to <build>/audit/:
# audit.jsonl (raw), audit.md (also appended to $GITHUB_STEP_SUMMARY) and
# audit.html and junit.xml. Fails when ctest or the audit failed, after printing all.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/bootstrap.sh
ci/build.sh
build=${BUILD_DIR:-build}
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
tests+=(-LE 'soak|must_fail')

ctest_status=0
MPF_AUDIT=$audit/audit.jsonl ctest --test-dir "$build" --output-on-failure \
  -j"$(nproc)" "${tests[@]}" || ctest_status=$?

echo
audit_status=0
python3 fixture/tools/mpf_audit.py --text --markdown "$audit/audit.md" \
  --html "$audit/audit.html" --junit "$audit/junit.xml" "$audit/audit.jsonl" || audit_status=$?
if [ -f "$audit/audit.md" ]; then
  echo
  cat "$audit/audit.md"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    { echo "## mpfixture audit"; echo; cat "$audit/audit.md"; } >>"$GITHUB_STEP_SUMMARY"
  fi
fi

echo
echo "audit: ctest status $ctest_status, audit status $audit_status; report in $build/audit/"
[ "$ctest_status" -eq 0 ] && [ "$audit_status" -eq 0 ]
