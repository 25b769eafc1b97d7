#!/bin/sh
# SPDX-License-Identifier: MIT
# run_case.sh RUNS EXPECT KIND NAME MPF_RUN [MPF-RUN ARGS]... CMD [ARG]...
#
# One corpus entry: runs `MPF_RUN [MPF-RUN ARGS]... CMD...` RUNS times
# (MPF_REALWORLD_RUNS overrides RUNS) and counts the runs that meet the
# expected verdict:
#   EXPECT pass  exit status 0 and no FAILED in the report;
#   EXPECT fail  exit status 119 (the audit failed) and an offender line
#                "KIND ... NAME" (NAME: an extended regex) in the report;
#   EXPECT exit=N  exit status N, the command's own: the audit did not fail.
# With MPF_RW_AUDIT_ERE set, each run also writes its audit line (--audit)
# and that line must match this extended regex.
# Either way a run must leave nothing behind: no process whose environment
# carries the run's mark, no /dev/shm entry whose name holds it.
#
# Each run gets MPF_RW_MARK (unique: rw-<pid>-<run>) in its environment,
# for the command to put into the names it creates, and MPF_RW_TMP, a
# fresh directory removed after the run. Exit 0 when every run met the
# expectation; else 1 with the output of the first run that did not.
set -u
runs=${MPF_REALWORLD_RUNS:-$1}
expect=$2 kind=$3 name=$4
shift 4
case $expect in
pass | fail | exit=[0-9]*) ;;
*) echo "EXPECT: pass, fail or exit=N" >&2; exit 2 ;;
esac
audit_ere=${MPF_RW_AUDIT_ERE:-}

# Processes carrying the mark in their environment, as "pid comm" lines.
marked() {
    for env in $(grep -lszx -- "MPF_RW_MARK=$1" /proc/[0-9]*/environ); do
        pid=${env#/proc/}; pid=${pid%/environ}
        echo "$pid $(cat /proc/$pid/comm 2>/dev/null)"
    done
}

ok=0 first_bad=""
i=1
while [ "$i" -le "$runs" ]; do
    mark="rw-$$-$i"
    tmp=$(mktemp -d) || exit 2
    # Only the command's environment carries the mark (not this script's:
    # its own grep would be found).
    if [ -n "$audit_ere" ]; then
        run=$1; shift
        out=$(MPF_RW_MARK=$mark MPF_RW_TMP=$tmp "$run" --audit "$tmp/audit.jsonl" "$@" 2>&1 </dev/null)
        rc=$?
        set -- "$run" "$@"
    else
        out=$(MPF_RW_MARK=$mark MPF_RW_TMP=$tmp "$@" 2>&1 </dev/null)
        rc=$?
    fi
    why=""
    if [ -n "$audit_ere" ]; then
        grep -Eq -- "$audit_ere" "$tmp/audit.jsonl" 2>/dev/null ||
            why="the audit line does not match '$audit_ere': $(cat "$tmp/audit.jsonl" 2>/dev/null)"
    fi
    case $expect in
    exit=*)
        [ "$rc" -eq "${expect#exit=}" ] || why="${why:+$why; }exit status $rc, expected ${expect#exit=}"
        case $out in *"the audit failed"*) why="${why:+$why; }the audit failed";; esac
        ;;
    esac
    if [ "$expect" = pass ]; then
        [ "$rc" -eq 0 ] || why="${why:+$why; }exit status $rc, expected 0"
        case $out in *FAILED*) why="${why:+$why; }the report says FAILED";; esac
    elif [ "$expect" = fail ]; then
        [ "$rc" -eq 119 ] || why="${why:+$why; }exit status $rc, expected 119"
        printf '%s\n' "$out" | grep -Eq "^  $kind +.*$name" ||
            why="${why:+$why; }no '$kind' offender naming '$name'"
    fi
    left=$(marked "$mark")
    [ -z "$left" ] || why="${why:+$why; }processes left: $left"
    shm=$(ls /dev/shm | grep -F -- "$mark")
    [ -z "$shm" ] || why="${why:+$why; }/dev/shm left: $shm"
    rm -rf "$tmp"
    if [ -z "$why" ]; then
        ok=$((ok + 1))
    elif [ -z "$first_bad" ]; then
        first_bad="run $i: $why
$out"
    fi
    i=$((i + 1))
done
echo "$ok of $runs runs $expect as expected"
[ -z "$first_bad" ] && exit 0
printf '%s\n' "$first_bad"
exit 1
