#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Mutation checks of the detectors: apply each mutation of ci/mutations.txt
# to a copy of the tree, build it, run the tests that must notice, and say
# who killed it. Exits non-zero if a mutant survives (a missing test), or if
# the unmutated copy fails its own selections (no verdict is possible then).
#   ci/mutate.sh            every mutation
#   ci/mutate.sh NAME...    only those
#   ci/mutate.sh --check    only that each snippet is found once in the
#                           checkout (no build; ctest meta.mutations_apply)
# The copy and its build live in ${BUILD_DIR:-build}-mutate; the checkout
# itself is never modified. Each run of the tests gets its own /dev/shm (a
# mount namespace) where that is allowed, so what a mutant leaks there goes
# with it; processes are the fixture's to kill, and ctest's timeout ends a
# mutant that hangs.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
work=${BUILD_DIR:-build}-mutate
case $work in /*) ;; *) work=$top/$work ;; esac
src=$work/src
bld=$work/build
jobs=$(nproc)
timeout=${MPF_MUTATE_TIMEOUT:-120}

# Run the tests in a /dev/shm of their own if we may (root, or an
# unprivileged user namespace); otherwise in the host's, with a note.
isolate=()
if unshare -m true 2>/dev/null; then
  isolate=(unshare -m)
elif unshare -rm true 2>/dev/null; then
  isolate=(unshare -rm)
else
  echo "mutate: no mount namespace here: the tests share the host's /dev/shm"
fi
# Under ci/no_leftovers.py: what a mutant leaves running (a cleanup it
# broke) is killed when its tests end, and fails them.
run_ctest() { # <log> <timeout> <ctest selection...>
  local log=$1 t=${2:-$timeout}; shift 2
  local guarded=(python3 "$top/ci/no_leftovers.py" --
                 ctest --test-dir "$bld" --timeout "$t" -j"$jobs" "$@")
  if [ ${#isolate[@]} -gt 0 ]; then
    "${isolate[@]}" sh -c 'mount -t tmpfs -o mode=1777,size=64m mpf-mutate /dev/shm && exec "$@"' \
      sh "${guarded[@]}" > "$log" 2>&1
  else
    "${guarded[@]}" > "$log" 2>&1
  fi
}

# ci/mutations.txt -> one record per line: name, file, tests, what,
# timeout and build, separated by \x1f (not a tab: read would merge the
# empty fields a tab leaves, and a missing timeout took the build list).
# Applying and restoring is done by the same parser (python3, in bootstrap).
parse() {
  python3 - "$top/ci/mutations.txt" "$@" <<'EOF'
import sys
path, cmd = sys.argv[1], sys.argv[2]
muts, cur, block = [], None, None
for line in open(path).read().split("\n"):
    if block is not None:
        if line.startswith("@@ "):
            sys.exit("mutations.txt: %s: no '--- end' before %s"
                     % (cur.get("name"), line))
        if line in ("--- to", "--- end"):
            cur[block] = "\n".join(buf)
            block, buf = ("to", []) if line == "--- to" else (None, None)
        else:
            buf.append(line)
        continue
    if line.startswith("@@ "):
        cur = {"name": line[3:].strip()}
        muts.append(cur)
    elif line == "--- from":
        block, buf = "from", []
    elif cur is not None and ":" in line and not line.startswith("#"):
        k, v = line.split(":", 1)
        cur[k.strip()] = v.strip()
for m in muts:
    for k in ("file", "tests", "what", "from", "to"):
        if k not in m:
            sys.exit("mutations.txt: %s has no %s" % (m.get("name"), k))
if cmd == "list":
    for m in muts:
        print("\x1f".join((m["name"], m["file"], m["tests"], m["what"],
                         m.get("timeout", ""), m.get("build", ""))))
    sys.exit(0)


def occurrences(m, root):
    return open(root + "/" + m["file"]).read().count(m["from"] + "\n")


if cmd == "check-all":  # every snippet, in one process
    bad = ["mutations.txt: %s: the snippet occurs %d times in %s"
           % (m["name"], n, m["file"])
           for m in muts for n in [occurrences(m, sys.argv[3])] if n != 1]
    sys.exit("\n".join(bad) if bad else 0)
name, root = sys.argv[3], sys.argv[4]
m = next(m for m in muts if m["name"] == name)
f = root + "/" + m["file"]
text = open(f).read()
n = text.count(m["from"] + "\n")
if n != 1:
    sys.exit("mutations.txt: %s: the snippet occurs %d times in %s"
             % (name, n, m["file"]))
if cmd == "apply":
    open(f, "w").write(text.replace(m["from"] + "\n", m["to"] + "\n"))
EOF
}

mapfile -t muts < <(parse list)
if [ "${1:-}" = --check ]; then
  parse check-all "$top"
  echo "mutate: ${#muts[@]} mutations, each snippet found once"
  exit 0
fi
want=("$@")
selected=()
for rec in "${muts[@]}"; do
  name=${rec%%$'\x1f'*}
  if [ ${#want[@]} -eq 0 ] || printf '%s\n' "${want[@]}" | grep -qx "$name"; then
    selected+=("$rec")
  fi
done
[ ${#selected[@]} -gt 0 ] || { echo "mutate: no such mutation: ${want[*]}" >&2; exit 2; }

# The copy: tracked files as they are in the checkout now. A file is
# copied only if its content differs from the copy's (a second run then
# rebuilds only that), and always with a new time stamp (a restored file
# must be newer than a mutant's objects).
mkdir -p "$src" "$bld"
git ls-files -z | python3 -c '
import os, shutil, sys
src = sys.argv[1]
for f in sys.stdin.buffer.read().decode().split("\0"):
    if not f:
        continue
    dst = os.path.join(src, f)
    try:
        if open(f, "rb").read() == open(dst, "rb").read():
            continue
    except OSError:
        pass
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    shutil.copyfile(f, dst)
    shutil.copymode(f, dst)
' "$src"

# Every snippet must be found once before anything is built.
for rec in "${selected[@]}"; do
  parse check "${rec%%$'\x1f'*}" "$src"
done

start=$(date +%s)
echo "mutate: building the unmutated copy"
cmake -S "$src" -B "$bld" -DMPF_WERROR=ON >/dev/null
cmake --build "$bld" -j"$jobs" > "$work/build.log" 2>&1 || {
  tail -20 "$work/build.log"; echo "mutate: the unmutated copy does not build"; exit 1; }

# The selections must pass on the unmutated copy, or a kill means nothing.
baseline_bad=0
for rec in "${selected[@]}"; do
  IFS=$'\x1f' read -r name file tests what mtimeout _ <<< "$rec"
  read -ra sel <<< "$tests"
  if ! run_ctest "$work/baseline.$name.log" "$mtimeout" "${sel[@]}"; then
    echo "mutate: baseline FAILED for $name ($tests):"
    grep -E '\*\*\*|Failed|Timeout' "$work/baseline.$name.log" | head -5
    baseline_bad=1
  elif ! grep -q 'tests passed' "$work/baseline.$name.log"; then
    echo "mutate: baseline ran no test for $name ($tests)"
    baseline_bad=1
  fi
done
[ "$baseline_bad" -eq 0 ] || exit 1

killed=0 survived=0 invalid=0
report=()
for rec in "${selected[@]}"; do
  IFS=$'\x1f' read -r name file tests what mtimeout mbuild <<< "$rec"
  read -ra sel <<< "$tests"
  # build: only these targets (the selection's binaries and what they
  # list with): a mutant of libmpfixture need not relink every suite.
  targets=()
  for t in $mbuild; do targets+=(--target "$t"); done
  cp -p "$src/$file" "$work/orig"
  parse apply "$name" "$src"
  t0=$(date +%s)
  if ! cmake --build "$bld" -j"$jobs" "${targets[@]}" > "$work/build.$name.log" 2>&1; then
    # A mutant must compile: one that does not tests nothing.
    verdict="INVALID"; by="does not build: $work/build.$name.log"
  elif run_ctest "$work/run.$name.log" "$mtimeout" "${sel[@]}"; then
    verdict="SURVIVED"; by="-"
  else
    verdict="killed"
    # ctest's summary: "<tab> 13 - test_detectors.name (Failed)".
    failed_tests=$(sed -nE 's/^[[:space:]]+[0-9]+ - ([^ ]+) .*/\1/p' "$work/run.$name.log")
    n=$(printf '%s' "$failed_tests" | grep -c . || true)
    by=$(printf '%s\n' "$failed_tests" | head -3 | paste -sd' ' -)
    [ "$n" -le 3 ] || by="$by (+$((n - 3)) more)"
    [ -n "$by" ] || by="ctest failed without a test failing: $work/run.$name.log"
  fi
  cp "$work/orig" "$src/$file"
  touch "$src/$file" # newer than the mutant's objects: rebuilt next time
  secs=$(( $(date +%s) - t0 ))
  if [ "$verdict" = killed ]; then killed=$((killed + 1)); else survived=$((survived + 1)); fi
  [ "$verdict" != INVALID ] || invalid=$((invalid + 1))
  printf 'mutate: %-8s %-40s %4ss  by %s\n' "$verdict" "$name" "$secs" "$by"
  report+=("$verdict $name: $what -- $by")
done
# Leave the build unmutated for the next run.
cmake --build "$bld" -j"$jobs" > "$work/build.log" 2>&1 || true

total=$((killed + survived))
echo "mutate: $killed of $total killed, $((survived - invalid)) survived, $invalid invalid ($(( $(date +%s) - start )) s)"
[ "$survived" -eq 0 ]
