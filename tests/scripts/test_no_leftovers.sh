#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ci/no_leftovers.py (the subreaper .ci/run runs ci/test.sh under): a
# command's own status when it leaves nothing; a process that outlives the
# command is named, killed, and the status is 1; the pattern that leaked
# from coverage/coverage.sh (a `2> >(...)` reader still running when the
# script returns) is caught. Then: no script of the project writes through
# a process substitution (the leak's shape), which fails on the old
# coverage/coverage.sh.
set -uo pipefail
root=$1
tool=$root/ci/no_leftovers.py
fail=0
check() { # what status-wanted status-got output pattern
  if [ "$2" != "$3" ] || ! grep -qE -- "$5" <<<"$4"; then
    echo "FAIL: $1: status $3 (want $2), output:"; echo "$4"; fail=1
  else
    echo "ok: $1"
  fi
}
mark=mpf-leftover-$$-$RANDOM

out=$(python3 "$tool" bash -c 'exit 3' 2>&1); st=$?
check "a clean command keeps its status" 3 "$st" "$out" '^$'

# The script ends once its background process has exec'd (its comm says
# so): caught between fork and exec, it would still be named bash.
out=$(python3 "$tool" bash -c "exec -a $mark sleep 60 &
  until [ \"\$(cat /proc/\$!/comm 2>/dev/null)\" = sleep ]; do :; done; exit 0" 2>&1); st=$?
check "a background process is named and killed" 1 "$st" "$out" \
  "no_leftovers: process [0-9]+ outlived bash: sleep; cmd: $mark 60"
if pgrep -f "$mark" >/dev/null; then echo "FAIL: $mark still runs"; fail=1; fi

# Here too the script ends only once the reader has exec'd ($! is the pid
# of the last process substitution).
out=$(python3 "$tool" bash -c "true 2> >(exec -a $mark-psub sleep 60)
  until [ \"\$(cat /proc/\$!/comm 2>/dev/null)\" = sleep ]; do :; done" 2>&1); st=$?
check "a process substitution's reader outliving the script" 1 "$st" "$out" \
  "outlived bash: .*$mark-psub"
if pgrep -f "$mark" >/dev/null; then echo "FAIL: $mark-psub still runs"; fail=1; fi

# The orphan holds the command substitution's pipe: the script reads to
# EOF, so it returns only once the orphan is in exit(), with no timing. It
# may not be a zombie yet (its descriptors close first): still no offence.
# 50 rounds: the window is microseconds (24 of 300 rounds flagged by the
# old tool at load 6).
st=0 out=""
for _ in $(seq 1 50); do
  out=$(python3 "$tool" bash -c 'x=$( (true &) ); exit 0' 2>&1) || { st=$?; break; }
done
check "an orphan that ended in time is no offence (50 rounds)" 0 "$st" "$out" '^$'

cd "$root" || exit 1
subs=$(grep -nE '[0-9]?> *>\(' ci/*.sh coverage/*.sh bench/*.sh fuzz/*.sh .ci/run 2>/dev/null)
check "no script writes through a process substitution" 0 "$([ -z "$subs" ]; echo $?)" "$subs" '.*'
exit $fail
