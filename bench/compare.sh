#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/compare.sh REV — the libraries of REV (before) and of the work tree
# (after) measured in the same run, interleaved: did a change make them
# slower? Both are built in Release with the work tree's bench/ programs,
# so only the libraries differ. Prints one line per measurement
#   compare <name> before <median> after <median> after/before <ratio>
# (the ratio is the median of per-round ratios, the two variants of a round
# having run back to back) and, for the guard, what a guarded empty case
# costs beyond a plain one (bench_case_overhead) and a ledgered shm_open's
# ratio to libc's own (bench_case_overhead create), each the median of
# per-run ratios, one run of each build back to back.
#
# Environment: COMPARE_ROUNDS (default 41), COMPARE_DIR (default
# build-compare: the before tree and both builds live there).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: bench/compare.sh REV" >&2; exit 2; }
rev=$(git rev-parse --verify --quiet "$1^{commit}") ||
  { echo "bench/compare.sh: '$1' is not a commit" >&2; exit 2; }
rounds=${COMPARE_ROUNDS:-41}
dir=${COMPARE_DIR:-build-compare}

# The before tree: REV's sources with this tree's bench/ in place of its own.
rm -rf "$dir/src" && mkdir -p "$dir/src"
git archive "$rev" | tar -x -C "$dir/src"
rm -rf "$dir/src/bench" && cp -r bench "$dir/src/bench"
grep -q 'add_subdirectory(bench)' "$dir/src/CMakeLists.txt" ||
  { echo "bench/compare.sh: $rev builds no bench/ (CMakeLists.txt)" >&2; exit 2; }
build() { # source build-dir
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$2" -j"$(nproc)" --target bench_case_overhead bench_tree bench_dispatch >/dev/null
}
# A before build made of another REV's sources may hold objects of files
# this REV lacks (its file lists are cached): made anew when REV changes.
[ "$(cat "$dir/before.rev" 2>/dev/null)" = "$rev" ] || rm -rf "$dir/before"
build "$dir/src" "$dir/before"
echo "$rev" >"$dir/before.rev"
build . "$dir/after"
b=$dir/before/bin a=$dir/after/bin

echo "# compare: before $(git rev-parse --short "$rev"), after $(git rev-parse --short HEAD)$(
  git diff --quiet HEAD -- && echo || echo ' + uncommitted changes'); $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
raw=$dir/raw.txt
: >"$raw"
pairs=()
for v in rt:16 rt:64 rt_rollback:16 rt_l4:8; do
  pairs+=("before_${v%%:*}_${v##*:}=$b/bench_tree:$v" "after_${v%%:*}_${v##*:}=$a/bench_tree:$v")
done
"$a/bench_tree" drive "$rounds" "${pairs[@]}" | sed 's/^sample /tree /' >>"$raw"
# The round trip pinned to one CPU, as run.sh's faults_disarmed_cost: where
# the scheduler puts the chip makes it 11 or 50 us unpinned.
taskset -c "$(($(nproc) - 1))" "$a/bench_tree" drive "$rounds" \
  "before_rtt=$b/bench_dispatch:rtt:2000" "after_rtt=$a/bench_dispatch:rtt:2000" |
  sed 's/^sample /tree /' >>"$raw"
# The guard: whole bench_case_overhead runs of each build, alternated,
# eleven of three rounds of 2,000 cases; a run's figure is the median of
# its rounds. The same build against itself read 0.97-1.09 as a ratio to
# fork-per-case over seven runs of one round of 1,000 (a fork's cost moves
# most), 0.998-1.008 as the overhead in us over these runs (four tries).
for ((r = 0; r < 11; r++)); do
  "$b/bench_case_overhead" 2000 3 | sed "s/^sample /case before $r /" >>"$raw"
  "$a/bench_case_overhead" 2000 3 | sed "s/^sample /case after $r /" >>"$raw"
done
# A ledgered shm_open (its site captured, after) against libc's own, each
# build's in its own run, alternated: eleven runs of nine rounds, each
# run's ratio the median of its rounds. A round (1,000 creations, ~3 ms)
# may hold one of the kernel's RCU batches that free unlinked inodes (0.4-1
# ms) on either side: the same build against itself read 0.98-1.15 over
# seven runs of one round, 0.97-1.03 over eleven of nine (six tries each).
for ((r = 0; r < 11; r++)); do
  "$b/bench_case_overhead" create 1000 9 | sed "s/^sample /create before $r /" >>"$raw"
  "$a/bench_case_overhead" create 1000 9 | sed "s/^sample /create after $r /" >>"$raw"
done

python3 - "$raw" <<'PY'
import collections, statistics, sys
tree = collections.defaultdict(dict)          # name -> round -> {side: ns}
runs = collections.defaultdict(lambda: collections.defaultdict(dict))
                               # (kind, side, run) -> round -> label -> us
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "tree":
        side, name = f[1].split("_", 1)
        tree[name].setdefault(int(f[2]), {})[side] = float(f[3])
    elif f[0] in ("case", "create"):
        runs[(f[0], f[1], int(f[2]))][int(f[4])][f[3]] = float(f[5])
def line(name, before, after, ratios, unit):
    print("compare %-23s before %9.3f after %9.3f %s  after/before %.3f"
          % (name, statistics.median(before), statistics.median(after), unit,
             statistics.median(ratios)))
for name, by_round in tree.items():
    rs = [v for v in by_round.values() if len(v) == 2]
    unit = "us" if name == "rtt" else "ms"
    scale = 1e3 if name == "rtt" else 1e6
    line(name, [v["before"] / scale for v in rs], [v["after"] / scale for v in rs],
         [v["after"] / v["before"] for v in rs], unit)
def per_run(name, kind, figure, unit):
    """figure(a round's samples) for each run of each build, the median of
    the run's rounds; after/before by run."""
    def of(side, run):
        return statistics.median(figure(s) for s in runs[(kind, side, run)].values())
    ids = sorted({r for k, _, r in runs if k == kind})
    line(name, [of("before", r) for r in ids], [of("after", r) for r in ids],
         [of("after", r) / of("before", r) for r in ids], unit)
per_run("guard_overhead_per_case", "case", lambda s: s["guard_overhead"], "us")
per_run("ledgered_shm_open_ratio", "create",
        lambda s: s["shm_open_ledgered"] / s["shm_open_bare"], "  ")
PY
