#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/run.sh — build Release and run every benchmark twice, on an idle
# machine and with both cores busy; print one line per ratio (idle run)
#   ratio <name> <value> target <t> <ok|miss>
# then a readable table with both runs and the growth tables. Every ratio
# is against a baseline measured in the same run, interleaved.
#
# Writes <BENCH_BUILD_DIR>/bench-results/: raw.txt (every sample),
# last-run.md (the tables), growth.svg (the plot), so a run leaves the
# source tree as it was. `bench/run.sh --publish` also copies last-run.md
# and growth.svg to bench/results/, the copy bench/README.md shows (raw
# samples are never committed). bench/README.md says how to read them.
#
# The placement-sensitive benchmarks (the dispatch round trip against the
# ping-pong, throughput on one and two chips, fault points in and out) run
# pinned to one CPU (taskset): unpinned, whether a wake-up crosses vCPUs
# decides between two modes 5-20 times apart, and the ratio follows the
# scheduler, not the code.
#
# Environment:
#   BENCH_BUILD_DIR   Release build (default build-release)
#   BENCH_NOFAULTS_DIR  Release build with fault points compiled out
#                     (default build-nofaults)
#   BENCH_QUICK=1     fewer rounds (a smoke run, figures not for the README)
#   BENCH_LOADED=0    skip the run with both cores busy
#   BENCH_NO_NS=1     do not use a private /dev/shm (mount namespace)
#
# /dev/shm: when it may (root or an unprivileged user namespace), the script
# re-runs itself in a private mount namespace with its own tmpfs on
# /dev/shm, so that neither the engineers' tests running beside it nor the
# 10,000 foreign entries of the guard benchmark meet. Either way every name
# it creates carries mpfbench-<tag>-, and the EXIT trap removes them.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
publish=0
for arg in "$@"; do
  case $arg in
    --publish) publish=1 ;;
    *) echo "usage: bench/run.sh [--publish]" >&2; exit 2 ;;
  esac
done

if [ -z "${BENCH_IN_NS:-}" ] && [ "${BENCH_NO_NS:-0}" != 1 ]; then
  ns_cmd=(unshare -m --propagation private)
  [ "$(id -u)" -eq 0 ] || ns_cmd=(unshare -r -m --propagation private)
  if "${ns_cmd[@]}" sh -c 'mount -t tmpfs -o size=1g,mode=1777 mpfbench /dev/shm' 2>/dev/null; then
    exec "${ns_cmd[@]}" env BENCH_IN_NS=1 bash -c \
      'mount -t tmpfs -o size=1g,mode=1777 mpfbench /dev/shm && exec bash "$0" "$@"' \
      "$0" "$@"
  fi
  echo "# bench: no private /dev/shm here (mount namespace refused); using the host's" >&2
fi

tag=${BENCH_TAG:-$$}
export BENCH_TAG=$tag
hogs=()
cleanup() {
  local rc=$?
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${hogs[@]}"; do wait "$p" 2>/dev/null || true; done
  hogs=()
  rm -f /dev/shm/mpfbench-"$tag"-* 2>/dev/null || true
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

t_start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- build ----
rel=${BENCH_BUILD_DIR:-build-release}
nof=${BENCH_NOFAULTS_DIR:-build-nofaults}
if ! command -v cmake >/dev/null || ! [ -e /usr/include/cmocka.h ]; then
  ci/bootstrap.sh
fi
targets=(--target bench_case_overhead bench_tree bench_dispatch
         table_forms_plain table_forms_guarded two_process_plain two_process_guarded
         datastore_plain datastore_guarded bench_adapters)
cmake -S . -B "$rel" -DCMAKE_BUILD_TYPE=Release -DMPF_WERROR=ON >/dev/null
cmake --build "$rel" -j"$(nproc)" "${targets[@]}" >/dev/null
cmake -S . -B "$nof" -DCMAKE_BUILD_TYPE=Release -DMPF_WERROR=ON -DMPF_FAULT_POINTS=OFF >/dev/null
cmake --build "$nof" -j"$(nproc)" --target bench_tree bench_dispatch >/dev/null
B=$rel/bin
N=$nof/bin
pin=$(( $(nproc) - 1 ))

if [ "${BENCH_QUICK:-0}" = 1 ]; then
  cases=300 case_rounds=3 groups=50 group_rounds=3 shm_cases=200 shm_rounds=2 create_rounds=3 tree_rounds=4 corpus_rounds=3
  adapter_rounds=3
  rtt_blocks=4 rtt_block=500 frtt_rounds=4 tput_rounds=3 tput_m=1000 idle_s=0.5
else
  # create_rounds: a round of 1,000 creations lasts ~3 ms, about the gap
  # between the kernel's RCU batches that free unlinked inodes (0.4-1 ms
  # on whichever side runs then): nine rounds put the median anywhere in
  # 1.06-1.30, 31 within 1.18-1.24 (six runs each, bench/README.md).
  # group_rounds, shm_rounds: a round's figure moves with the machine (a
  # fork's cost steps between 130 and 190 us within a run; a round of
  # 1,000 guarded cases reads 8.1 or 9.6-12.4 us a case): with 11 and 9
  # rounds the medians of three runs in a row spread 0.380-0.458 and
  # 0.865-1.020 (bench/README.md); a round lasts 63 ms and 9 ms.
  cases=2000 case_rounds=11 groups=300 group_rounds=31 shm_cases=1000 shm_rounds=21 create_rounds=31 tree_rounds=61
  adapter_rounds=11
  rtt_blocks=12 rtt_block=2000 frtt_rounds=61 tput_rounds=11 tput_m=5000 idle_s=2
fi

out=$rel/bench-results
mkdir -p "$out"
raw=$out/raw.txt
: >"$raw"

# One phase: every benchmark once, each line prefixed with the phase.
phase() {
  local ph=$1 t0
  t0=$(date +%s)
  echo "# bench: $ph run" >&2
  tree_cases=()
  for n in 1 2 4 8 16 32 64; do
    tree_cases+=("rt_$n=$B/bench_tree:rt:$n" "bare_$n=$B/bench_tree:bare:$n")
  done
  tree_cases+=("rt_rollback_16=$B/bench_tree:rt_rollback:16"
               "bare_rollback_16=$B/bench_tree:bare_rollback:16"
               "rt_l4_2x8=$B/bench_tree:rt_l4:8" "rt_2xl3_8=$B/bench_tree:rt_2xl3:8"
)
  {
    "$B/bench_case_overhead" "$cases" "$case_rounds"
    "$B/bench_case_overhead" group "$groups" "$group_rounds"
    "$B/bench_case_overhead" shm "$shm_cases" "$shm_rounds" 0 100 1000 10000
    "$B/bench_case_overhead" create "$shm_cases" "$create_rounds"
    "$B/bench_tree" drive "$tree_rounds" "${tree_cases[@]}"
    # Pinned to one CPU, as the fault-point pairs below: both sides of the
    # ratio then hand off on the same vCPU every time.
    taskset -c "$pin" "$B/bench_dispatch" rtt "$rtt_blocks" "$rtt_block"
    # Fault points in / compiled out: a difference of a few branches in
    # ~10 us, so both builds run pinned to one CPU, where the wake-ups cost
    # the same every time (unpinned, where the scheduler places the chip
    # makes the round trip 11 or 50 us: noise 100 times the effect).
    taskset -c "$pin" "$B/bench_tree" drive "$frtt_rounds" \
      "faults_in_rtt=$B/bench_dispatch:rtt:$rtt_block" \
      "faults_out_rtt=$N/bench_dispatch:rtt:$rtt_block" \
      "faults_in_startup16=$B/bench_tree:rt:16" \
      "faults_out_startup16=$N/bench_tree:rt:16"
    taskset -c "$pin" "$B/bench_dispatch" tput "$tput_rounds" "$tput_m"
    "$B/bench_dispatch" idle "$idle_s"
  } | sed "s/^#/info/; s/^/$ph /" >>"$raw"
  echo "$ph info phase took $(( $(date +%s) - t0 )) s, load average now $(cut -d' ' -f1-3 /proc/loadavg)" >>"$raw"
}

phase idle

if [ "${BENCH_LOADED:-1}" != 0 ]; then
  for _ in $(seq "$(nproc)"); do
    ( while :; do :; done ) &
    hogs+=($!)
  done
  phase loaded
  for p in "${hogs[@]}"; do kill "$p"; done
  for p in "${hogs[@]}"; do wait "$p" 2>/dev/null || true; done
  hogs=()
fi

left=$(ls /dev/shm | grep -c -e "^mpfbench-$tag-" -e "^wk-" || true)
machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), kernel $(uname -r), load average $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg) at end, $(( $(date +%s) - t_start )) s, /dev/shm $([ -n "${BENCH_IN_NS:-}" ] && echo private || echo host)"
echo "machine: $machine"
python3 bench/report.py "$raw" "$out" "$machine"
# The real-suite corpus, plain vs guarded (idle machine, after the rest).
python3 bench/corpus_overhead.py "$B" "${corpus_rounds:-21}" table_forms two_process datastore
# What each adapter costs a test: generated suites of 200 trivial tests,
# each framework alone against the same source guarded by its adapter.
python3 bench/adapters_overhead.py "$B" "$adapter_rounds"
echo "bench: results in $out/"
if [ "$publish" -eq 1 ]; then
  mkdir -p bench/results
  cp "$out/last-run.md" "$out/growth.svg" bench/results/
  echo "bench: published last-run.md and growth.svg to bench/results/"
fi
if [ -n "${BENCH_IN_NS:-}" ] && [ "$left" != 0 ]; then
  echo "bench: $left shm names left behind in the private /dev/shm" >&2
  exit 1
fi
