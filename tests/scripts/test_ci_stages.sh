#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ci/stages.sh, the runner of ci/test.sh's stages: a failed stage does not
# stop the run (every later stage runs), errexit holds inside a stage (a
# stage function stops at its first failing command), a stage's output is
# in its log and not on the terminal, the run ends in one table naming the
# failed stage, and the status is 1 when any stage failed, 0 when none did.
set -uo pipefail
root=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/mpf-stages.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
check() { # what condition...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

# run_stages PLANT: four stages; the second fails when PLANT is 1.
cat >"$work/run.sh" <<EOF2
set -euo pipefail
. "$root/ci/stages.sh"
cd "$work"
loud() { seq 1 500; touch "ran-\$1"; }
second() {
  touch ran-second
  seq 1 500
  [ "\$1" = 0 ] || [ "\$1" = 2 ]
  if [ "\$1" = 2 ]; then rm "$work/logs/02-second.log"; false; fi
  touch second-went-on
}
reads_stdin() { touch ran-fourth; ! read -r _line; }
stages_begin "$work/logs" 4
stage first loud first
stage second second "\$1"
stage third loud third
stage fourth reads_stdin
stages_end
EOF2

out=$(bash "$work/run.sh" 1 2>&1 <<<"a line the stages must not read")
st=$?
check "a failed stage makes the status 1" [ "$st" = 1 ]
check "every stage after the failed one ran" \
  test -e "$work/ran-first" -a -e "$work/ran-second" -a -e "$work/ran-third" -a -e "$work/ran-fourth"
check "errexit holds inside a stage" test ! -e "$work/second-went-on"
check "the failed stage is named as it ends" grep -qE '^\[2/4\] second +FAILED \(exit 1\)' <<<"$out"
check "the table names the failed stage and its log" \
  grep -qE '^2 +second +FAILED \(exit 1\) +0m0[0-9]s +.*/logs/02-second\.log$' <<<"$out"
check "the run ends with the count of failed stages" \
  grep -qE '^run\.sh: 1 of 4 stages FAILED \(4 ran\) in ' <<<"$(tail -n 1 <<<"$out")"
check "a stage's output is in its log" grep -qx 500 "$work/logs/01-first.log"
check "the failed stage's last lines are shown, no more" \
  [ "$(grep -c '^    | ' <<<"$out")" = 15 ]
printf '%s\n' "$out"

rm -f "$work"/ran-* "$work/second-went-on"
out=$(bash "$work/run.sh" 0 2>&1 <<<"a line the stages must not read")
st=$?
check "a green run's status is 0" [ "$st" = 0 ]
check "a green run ends with every stage passed" \
  grep -qE '^run\.sh: 4 of 4 stages passed in ' <<<"$(tail -n 1 <<<"$out")"
check "a green run prints a line a stage and the table, nothing of the stages' own" \
  [ "$(wc -l <<<"$out")" = 12 ]
check "no stage reads the terminal's stdin" grep -qE '^4 +fourth +passed' <<<"$out"
printf '%s\n' "$out"

# A failed stage whose log is gone (removed by the stage itself) is still
# in the table, and the stages after it run.
rm -f "$work"/ran-*
out=$(bash "$work/run.sh" 2 2>&1 </dev/null)
st=$?
check "a failed stage without its log makes the status 1" [ "$st" = 1 ]
check "the stages after a failed stage without its log run" \
  test -e "$work/ran-third" -a -e "$work/ran-fourth"
check "the run still ends in its table" \
  grep -qE '^run\.sh: 1 of 4 stages FAILED \(4 ran\) in ' <<<"$(tail -n 1 <<<"$out")"
printf '%s\n' "$out"
exit $fail
