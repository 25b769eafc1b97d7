#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Static analysis and the format check; fails on any finding.
#   ci/lint.sh                 all of them, in this order
#   ci/lint.sh cppcheck tidy   only the named ones (cppcheck, tidy, scan, format)
# cppcheck and clang-tidy read the compile commands of a configured build
# (${BUILD_DIR:-build}-lint, nothing is compiled there); scan-build compiles
# the whole tree with clang under the analyzer in ${BUILD_DIR:-build}-scan.
# Configuration: .clang-tidy (and tests/.clang-tidy), ci/cppcheck.supp,
# .clang-format. A false positive is silenced on its line with a reason:
# "cppcheck-suppress <id> ; reason" for cppcheck, NOLINT(check) or
# NOLINTNEXTLINE(check) for clang-tidy; scan-build honours the same NOLINT
# for its checker as clang-analyzer-<checker>. ci/format.sh applies the
# format.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/bootstrap.sh --lint
base=${BUILD_DIR:-build}
lint_dir=$base-lint
scan_dir=$base-scan
# Parallel jobs of cppcheck, clang-tidy, scan-build and clang-format:
# nproc, raised to min_jobs on a smaller machine. (ci/consumer.sh's bound
# is the other one: a cap, max_jobs.)
min_jobs=2
jobs=$(nproc)
[ "$jobs" -ge "$min_jobs" ] || jobs=$min_jobs

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(cppcheck tidy scan format)
for s in "${steps[@]}"; do
  case $s in
    cppcheck|tidy|scan|format) ;;
    *) echo "usage: ci/lint.sh [cppcheck|tidy|scan|format]..." >&2; exit 2 ;;
  esac
done

failed=()
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

configure() {
  cmake -S . -B "$lint_dir" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
  # Every translation unit once (a test built twice is analysed once).
  python3 - "$lint_dir/compile_commands.json" > "$out/files" <<'EOF'
import json, sys
print("\n".join(sorted({e["file"] for e in json.load(open(sys.argv[1]))})))
EOF
}

run_cppcheck() {
  echo "lint: cppcheck $(cppcheck --version | cut -d' ' -f2)"
  # warning, style, performance, portability: everything but the
  # "information" chatter about system headers it does not parse.
  if ! cppcheck --project="$lint_dir/compile_commands.json" --std=c11 \
       --enable=warning,style,performance,portability --inline-suppr \
       --suppressions-list=ci/cppcheck.supp --error-exitcode=1 --quiet \
       -j"$jobs" --template='{file}:{line}: {severity}: {message} [{id}]' \
       2> "$out/cppcheck"; then
    cat "$out/cppcheck"
    failed+=(cppcheck)
  fi
}

run_tidy() {
  echo "lint: $(clang-tidy --version | grep -o 'LLVM version [0-9.]*' | sed 's/LLVM version/clang-tidy/')"
  # One file per clang-tidy process: with several, clang-tidy 14 carries
  # analyzer state from one file to the next and reports va_lists that are
  # initialised as uninitialised.
  if ! xargs -a "$out/files" -P"$jobs" -n1 \
       clang-tidy -p "$lint_dir" --quiet > "$out/tidy" 2> "$out/tidy.err"; then
    grep -E ': (warning|error):' -A3 "$out/tidy" || cat "$out/tidy.err"
    failed+=(clang-tidy)
  fi
}

# A scan-build finding is suppressed by NOLINT(clang-analyzer-<checker>) on
# its line or NOLINTNEXTLINE(...) on the line before, as for clang-tidy.
filter_scan() {
  python3 - "$1" <<'EOF'
import re, sys
seen, bad = set(), 0
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"(/[^:]+):(\d+):\d+: warning: .*\[([\w.-]+)\]$", line.rstrip())
    if not m or m.group(0) in seen:
        continue
    seen.add(m.group(0))
    path, no, checker = m.group(1), int(m.group(2)), m.group(3)
    name = "clang-analyzer-" + checker
    src = open(path, errors="replace").read().split("\n")
    here = src[no - 1] if no <= len(src) else ""
    prev = src[no - 2] if no >= 2 else ""
    def names(text, tag):
        return {n.strip() for m in re.finditer(tag + r"\(([^)]*)\)", text)
                for n in m.group(1).split(",")}
    if name in names(here, r"NOLINT") or name in names(prev, r"NOLINTNEXTLINE"):
        continue
    print(m.group(0))
    bad += 1
sys.exit(1 if bad else 0)
EOF
}

run_scan() {
  echo "lint: scan-build (clang $(clang -dumpversion))"
  local cc
  cc=$(command -v clang)
  [ -f "$scan_dir/CMakeCache.txt" ] ||
    scan-build --use-cc="$cc" cmake -S . -B "$scan_dir" -DMPF_WERROR=ON >/dev/null
  # A full rebuild, so every file is analysed, not only the changed ones.
  # The reports in HTML stay in $scan_dir/reports for scan-view.
  rm -rf "$scan_dir/reports"
  if ! scan-build --use-cc="$cc" -o "$scan_dir/reports" \
       cmake --build "$scan_dir" --clean-first -j"$jobs" > "$out/scan" 2>&1; then
    grep -E 'error|Error' "$out/scan" | head -20
    failed+=(scan-build)
    return
  fi
  filter_scan "$out/scan" || failed+=(scan-build)
}

run_format() {
  echo "lint: $(clang-format --version | grep -o 'clang-format version [0-9.]*')"
  if ! git ls-files -z -- '*.c' '*.h' '*.cc' '*.cpp' |
       xargs -0 -n1 -P"$jobs" clang-format --dry-run -Werror 2> "$out/format"; then
    grep -E '^[^ ].*: error:' "$out/format" | cut -d: -f1 | sort | uniq -c |
      awk '{printf "  %s: %d places to reformat\n", $2, $1}'
    echo "lint: ci/format.sh applies .clang-format"
    failed+=(clang-format)
  fi
}

configure
for s in "${steps[@]}"; do
  "run_$s"
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "lint: FAILED: ${failed[*]}"
  exit 1
fi
echo "lint: clean (${steps[*]})"
