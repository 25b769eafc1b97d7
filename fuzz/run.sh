#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# fuzz/run.sh [SECONDS] — build every libFuzzer harness of fuzz/ with clang
# into ${FUZZ_BUILD_DIR:-build-fuzz} and run each for SECONDS (default 30),
# one after the other on one core. Each run starts from a scratch copy of
# its seed corpus (fuzz/corpus/<name>/, never grown by a run) with its
# dictionary (fuzz/dict/<name>.dict) if there is one. Prints one line per
# harness:
#   fuzz <name>: <runs> runs in <s> s, cov <n> ft <n>, corpus <n>: ok|FAILED
# and fails if any harness crashed, leaked or tripped a sanitizer; its
# reproducer is kept in <build>/fuzz-artifacts/ (replay: bin/fuzz_<name> FILE).
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-30}
if ! [[ $secs =~ ^[1-9][0-9]{0,5}$ ]]; then
  echo "usage: fuzz/run.sh [SECONDS]  (SECONDS: 1..999999, got '$secs')" >&2
  exit 2
fi
build=${FUZZ_BUILD_DIR:-build-fuzz}

# CC is read by the first configure only; an existing directory keeps its
# compiler (the top-level CMakeLists refuses MPF_FUZZ with anything but clang).
CC=${FUZZ_CC:-clang} cmake -S . -B "$build" -DMPF_FUZZ=ON -DMPF_WERROR=ON >/dev/null
cmake --build "$build" --target fuzzers -j"$(nproc)"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mpf-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"

status=0
for src in fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  name=${name#fuzz_}
  bin=$build/bin/fuzz_$name
  if [ ! -x "$bin" ]; then
    echo "fuzz $name: $bin was not built (register it with mpf_add_fuzzer in fuzz/CMakeLists.txt)" >&2
    status=1
    continue
  fi
  work=$scratch/$name
  mkdir -p "$work/corpus" "$work/artifacts"
  if [ -d "fuzz/corpus/$name" ]; then
    cp -r "fuzz/corpus/$name/." "$work/corpus/"
  fi
  args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/")
  if [ -f "fuzz/dict/$name.dict" ]; then
    args+=(-dict="fuzz/dict/$name.dict")
  fi
  rc=0
  "$bin" "${args[@]}" "$work/corpus" >"$work/log" 2>&1 || rc=$?
  # The last status line ("#N DONE cov: C ft: F corp: K/…") and the final stats.
  last=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
  time=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/log")
  verdict=ok
  if [ "$rc" -ne 0 ]; then
    verdict=FAILED
    status=1
    sed -n '/==[0-9]*==ERROR\|runtime error\|deadly signal\|ERROR: libFuzzer/,$p' "$work/log" | head -n 60 >&2
    for f in "$work"/artifacts/*; do
      [ -e "$f" ] || continue
      cp "$f" "$artifacts/${name}-$(basename "$f")"
      echo "fuzz $name: reproducer kept as $artifacts/${name}-$(basename "$f")" >&2
    done
  fi
  echo "fuzz $name: ${runs:-?} runs in ${time:-?} s, cov ${cov:-?} ft ${ft:-?}, corpus ${corp:-?}: $verdict"
done
exit "$status"
