#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sweep.sh SCENARIO SHIM FUNCTION ERRNO ROLE MUST_SURFACE [TREE...]
#
# Runs SCENARIO (scenario.c) under SHIM (failsys.c) with the Nth call of
# FUNCTION failing with ERRNO in ROLE (parent, child), for N = 1, 2, … until
# a run in which no call failed (the scenario makes fewer calls than N):
# every N that fired is one failure path. Each run must exit 0 (the
# scenario's own checks: documented errors, nothing left behind) within
# RUN_TIMEOUT_S — a hang or a crash fails the sweep; the last run, which
# injected nothing, must work as without the shim. MUST_SURFACE=1: a
# failure injected in the caller's process may not be swallowed. TREE…
# limits the scenario to those trees (default: all three).
# SWEEP_EXPECT="TEXT|TEXT…": each TEXT must be in the output of some run
# that fired (a failure path the sweep must reach, or it proves nothing
# of it).
#
# Ends with one line:
#   failsys FUNCTION@ROLE: N runs fired (E errors, T tolerated)
# where an error run made some call of the tree it fired in return an
# error, and a tolerated run returned 0 everywhere (the runtime retried or
# ignored the failure; the rollback tree's scripted init failure aside).
set -uo pipefail
scenario=$1 shim=$2 fn=$3 err=$4 role=$5 must=$6
shift 6
RUN_TIMEOUT_S=${RUN_TIMEOUT_S:-30}
MAX_N=${MAX_N:-400}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fired=0 errors=0 tolerated=0
for ((n = 1; n <= MAX_N; n++)); do
  log=$work/log.$n
  out=$work/out.$n
  timeout -k 2 "$RUN_TIMEOUT_S" env LD_PRELOAD="$shim" \
    FAILSYS="$fn:$n:$err:$role" FAILSYS_LOG="$log" \
    FAILSYS_MUST_SURFACE="$must" "$scenario" "$@" >"$out" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "failsys $fn@$role n=$n: scenario exited $rc$([ "$rc" -eq 124 ] && echo ' (hang: killed at the timeout)')"
    cat "$out"
    exit 1
  fi
  [ -s "$log" ] || break
  fired=$((fired + 1))
  # An error: a tree in which the failure fired returned one (other than
  # the rollback tree's scripted failure of sub 1).
  if grep ': error .*\[fired: ' "$out" | grep -qv ': sub_worker: scripted) \[fired: '; then
    errors=$((errors + 1))
  else
    tolerated=$((tolerated + 1))
  fi
  sed "s/^/  n=$n /" "$out"
done
if [ "$n" -gt "$MAX_N" ]; then
  echo "failsys $fn@$role: still firing at n=$MAX_N"
  exit 1
fi
# The last run injected nothing: every tree must have worked as without
# the shim (the rollback tree fails as scripted, nothing else).
if grep ': error ' "$out" |
  grep -qv '^rollback: error -5 at init (sub worker 1 (pid [0-9]*) failed during init: sub_worker: scripted)$'; then
  echo "failsys $fn@$role n=$n: a run without an injected failure failed"
  cat "$out"
  exit 1
fi
if [ "$fired" -eq 0 ]; then
  echo "failsys $fn@$role: the scenario never calls $fn in that role (vacuous sweep)"
  exit 1
fi
if [ -n "${SWEEP_EXPECT:-}" ]; then
  IFS='|' read -r -a expect <<<"$SWEEP_EXPECT"
  # Runs 1..fired are the ones that fired (the loop stops at the first
  # that did not).
  outs=()
  for ((i = 1; i <= fired; i++)); do outs+=("$work/out.$i"); done
  for text in "${expect[@]}"; do
    if ! grep -qF -- "$text" "${outs[@]}"; then
      echo "failsys $fn@$role: no run that fired printed \"$text\" (a path the sweep did not reach)"
      exit 1
    fi
  done
fi
echo "failsys $fn@$role: $fired runs fired ($errors errors, $tolerated tolerated)"
