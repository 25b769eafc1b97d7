#!/bin/sh
# SPDX-License-Identifier: MIT
# A ctest TIMEOUT shorter than the case's budget: ctest SIGKILLs the whole
# tree of the test (supervisor, runner, watchdog, the case's child), so
# nobody of the run is left to clean. The case's objects and its audit line
# then come from `mpf-run --reclaim`; nothing of the tree runs on.
#   ctest_timeout.sh SUBJECT MPF_RUN WORKDIR
set -eu
subject=$1 mpf_run=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
audit="$work/audit.jsonl"
# The case writes its readiness line ("<runner> <child> <name> <name>")
# to stderr, which ctest keeps in its log.
cat > "$work/CTestTestfile.cmake" <<EOT
add_test(killed_by_timeout "$subject")
set_tests_properties(killed_by_timeout PROPERTIES TIMEOUT "10"
  ENVIRONMENT "MPF_AUDIT=$audit;MPF_TEST_READY_FD=2")
EOT
ctest --test-dir "$work" --output-log "$work/log" > /dev/null 2>&1 || true
log="$work/Testing/Temporary/LastTest.log"
grep -q "Timeout" "$work/log" || { echo "ctest did not time the test out"; exit 1; }
line=$(grep -E '^[0-9]+ [0-9]+ mpf-killed-' "$log" | head -n 1)
[ -n "$line" ] || { echo "the case never said it was ready"; exit 1; }
set -- $line
runner=$1 child=$2 obj0=$3 obj1=$4
for p in "$runner" "$child"; do
  if kill -0 "$p" 2> /dev/null && grep -q runner_killed "/proc/$p/cmdline"; then
    echo "process $p of the timed-out tree is still running"; exit 1
  fi
done
[ -e "/dev/shm/$obj0" ] || { echo "the objects are gone before the reclaim: proves nothing"; exit 1; }
"$mpf_run" --reclaim
for o in "$obj0" "$obj1"; do
  [ ! -e "/dev/shm/$o" ] || { echo "object $o is left"; rm -f "/dev/shm/$o"; exit 1; }
done
grep '"case":"case_makes_objects_and_a_child_then_waits"' "$audit" |
  grep '"test":"error"' | grep -q -- '--reclaim' ||
  { echo "the timed-out case has no audit line"; exit 1; }
echo "ctest TIMEOUT: case audited, 0 objects, 0 processes left"
rm -rf "$work"
