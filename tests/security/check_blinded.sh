#!/bin/sh
# SPDX-License-Identifier: MIT
# check_blinded.sh BINARY OFFENCE — run one pair of test_guard_blinded
# (MPF_CASE=OFFENCE*: the offence, then the case after it) with an
# unrelated setsid process tree started before it, then say whether that
# tree is alive and what the run left: the lines after the run's own
# output are
#   audit CASE VERDICT                (with MPF_TEST_AUDIT=1: each audit line)
#   exit status N
#   bystander PID alive|gone          (twice: the tree's two processes)
#   left in ps: N                     (live processes named MPF_TEST_MARK)
#   left in /dev/shm: N               (entries named MPF_TEST_MARK...)
# MPF_ISOLATE comes from the caller's environment.
set -u
bin=$1
offence=$2
mark=mpfb$$
dir=$(mktemp -d)
mkfifo "$dir/ready"
# The tree: a shell (ppid 1 once setsid -f returns) and its sleeping
# child; the fifo says their pids (no sleep to wait for it).
setsid -f sh -c 'sleep 3600 & echo $$ $! > "$1"; wait' sh "$dir/ready"
read -r b1 b2 < "$dir/ready"
if [ "${MPF_TEST_AUDIT:-}" = 1 ]; then
  export MPF_AUDIT="$dir/audit.jsonl"
fi
MPF_TEST_TMP=$dir MPF_TEST_MARK=$mark MPF_TEST_BYSTANDER="$b1 $b2" MPF_CASE="$offence*" \
  "$bin" 2>&1
status=$?
if [ "${MPF_TEST_AUDIT:-}" = 1 ] && [ -f "$MPF_AUDIT" ]; then
  sed -n 's/.*"case":"\([^"]*\)","verdict":"\([^"]*\)".*/audit \1 \2/p' "$MPF_AUDIT"
fi
echo "exit status $status"
for p in "$b1" "$b2"; do
  if [ -d "/proc/$p" ] && ! grep -q ') Z' "/proc/$p/stat"; then
    echo "bystander $p alive"
  else
    echo "bystander $p gone"
  fi
done
echo "left in ps: $(ps -eo stat=,comm= | awk -v m="$mark" '$2 == m && $1 !~ /^Z/' | wc -l)"
echo "left in /dev/shm: $(ls /dev/shm | grep -c "^$mark")"
# Only what this script started, by pid; and what a failed run left.
kill "$b2" "$b1" 2>/dev/null
for p in $(ps -eo pid=,stat=,comm= | awk -v m="$mark" '$3 == m && $2 !~ /^Z/ {print $1}'); do
  kill -9 "$p"
done
rm -f /dev/shm/"$mark"*
rm -rf "$dir"
