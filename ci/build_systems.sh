#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/meson and examples/autotools against this tree's install: the
# build of ${BUILD_DIR:-build} (ci/build.sh) installed into a temporary
# prefix, found through pkg-config only (PKG_CONFIG_PATH), each example
# copied into a temporary directory and built there with the commands
# docs/ci-recipes.md shows, its guarded tests run in both forms:
#   meson      (a) test_pool, one meson test per case  `meson test -C build`
#              (b) test_plain under mpf-run --per-case `meson test -C build --setup guarded`
#   autotools  (a) check_pool, the Check adapter       `make -C guarded check`
#              (b) test_plain under mpf-run (LOG_COMPILER) `make -C unmodified check`
# Each form must fail, and only by its planted leak: the run exits
# non-zero; the guard names <program>.forgets_to_unlink FAILED [shm_leak]
# and no other case; the runner (meson, automake's TAP driver) passes
# shares_and_removes and fails forgets_to_unlink and nothing else; the
# audit (MPF_AUDIT) has exactly those two verdicts; the leaked object is
# gone from /dev/shm and no example-* entry is left.
# The docs cannot drift from the examples: ci-recipes.md's Meson and
# Autotools sections show meson.build, configure.ac and the two
# Makefile.am verbatim (each file without its SPDX line), and hold every
# command run here as a line of their sh blocks.
# An example whose tools are missing (meson and ninja; autoreconf,
# autoconf and automake) is skipped with one line saying so. One line per
# form on success; on failure the log and a one-line reason, exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
examples=$PWD/examples
recipes=$PWD/docs/ci-recipes.md
work=$(mktemp -d "${TMPDIR:-/tmp}/mpf-build-systems.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
# The private prefix the docs write as $HOME/.local/mpfixture.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# Parallel jobs: the consumer's cap (ci/consumer.sh).
max_jobs=2
jobs=$(nproc)
[ "$jobs" -le "$max_jobs" ] || jobs=$max_jobs
export MESON_TESTTHREADS=$jobs

# fail <log> <reason>: the log, then one line, on stderr; exit 1 (from a
# subshell too: its caller runs with -e).
fail() {
  [ ! -s "$1" ] || cat "$1" >&2
  echo "build_systems: $2" >&2
  exit 1
}

# section_block <heading> <lang> <n>: the n-th fenced block of that
# language under "## <heading>" of ci-recipes.md, verbatim.
section_block() {
  awk -v head="## $1" -v lang="$2" -v want="$3" '
    /^## / { in_sec = ($0 == head) }
    /^```/ { if (inside) { inside = 0; next }
             if (in_sec && $0 == "```" lang) { n++; inside = (n == want); next } }
    inside' "$recipes"
}

# shows_file <heading> <lang> <n> <file>: that block is the file without
# its SPDX line.
shows_file() {
  local shown
  shown=$(section_block "$1" "$2" "$3")
  if [ "$shown" != "$(grep -v '^# SPDX-License-Identifier:' "$4")" ]; then
    diff <(echo "$shown") <(grep -v '^# SPDX-License-Identifier:' "$4") >&2 || true
    fail /dev/null "docs/ci-recipes.md, $1: block $3 ($2) is not ${4#"$PWD"/} as it is now"
  fi
}

# doc_commands <heading> <command>...: each command is a line of the
# section's sh block (before any '#' comment); the script runs exactly
# these, each as its own command (sh -c for the test runs), in the copy.
doc_commands() {
  local head=$1 cmd
  shift
  for cmd in "$@"; do
    section_block "$head" sh 1 | sed 's/ *#.*//; s/ *$//' | grep -qxF -- "$cmd" ||
      fail /dev/null "docs/ci-recipes.md, $head: the command '$cmd' is not in its sh block"
  done
}

# judge <form> <log> <audit> <program> <status>: the guard's side of the
# verdict, the same for every form (the runner's side is each form's).
judge() {
  local form=$1 log=$2 audit=$3 prog=$4 status=$5
  [ "$status" -ne 0 ] || fail "$log" "$form: passed; its planted leak must fail it"
  local named
  named=$(grep -o 'mpfixture: [^ ]* FAILED \[[a-z_,]*\]' "$log" | sort -u)
  [ "$named" = "mpfixture: $prog.forgets_to_unlink FAILED [shm_leak]" ] ||
    fail "$log" "$form: the guard failed '${named//$'\n'/, }', not $prog.forgets_to_unlink alone as shm_leak"
  python3 - "$audit" "$prog" >"$audit.leaked" <<'EOF' ||
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
# (program, case, the guard's verdict, the test's own outcome, kinds)
got = sorted((l["binary"], l["case"], l["verdict"], l["test"], tuple(l["kinds"]))
             for l in lines)
want = sorted([(sys.argv[2], "forgets_to_unlink", "fail", "pass", ("shm_leak",)),
               (sys.argv[2], "shares_and_removes", "pass", "pass", ())])
if got != want:
    sys.exit("audit: %s, expected %s" % (got, want))
print("\n".join(o["name"] for l in lines for o in l["offenders"]))
EOF
    fail "$log" "$form: the audit ($audit) is not the two expected verdicts"
  local leaked
  leaked=$(cat "$audit.leaked")
  [ -n "$leaked" ] || fail "$log" "$form: the audit names no leaked object"
  local name
  for name in $leaked; do
    [ ! -e "/dev/shm/$name" ] || fail "$log" "$form: /dev/shm/$name is left; the guard must remove it"
  done
  echo "$leaked"
}

# run_form <stem> <form> <command> <runner log> <program>: runs the
# form's command (sh -c) with the audit in $work/<stem>.jsonl, its output
# then the runner's own log in $work/<stem>.log, and judges the guard's
# side (judge); prints the leaked names.
run_form() {
  local log=$work/$1.log status=0
  env MPF_AUDIT="$work/$1.jsonl" sh -c "$3" >"$log" 2>&1 || status=$?
  cat "$4" >>"$log" 2>/dev/null || true
  judge "$2" "$log" "$work/$1.jsonl" "$5" "$status"
}

# shm_examples: the example-* entries of /dev/shm, sorted; shm_left:
# those that were not there when the script began.
shm_examples() {
  local f
  for f in /dev/shm/example-*; do
    [ ! -e "$f" ] || echo "${f#/dev/shm/}"
  done | sort
}
shm_before=$(shm_examples)
shm_left() {
  comm -13 <(echo "$shm_before") <(shm_examples)
}

cmake --install "$build" --prefix "$prefix" >/dev/null

# ---- Meson ----
if ! command -v meson >/dev/null || ! command -v ninja >/dev/null; then
  echo "build_systems: meson: skipped (meson or ninja is not installed; ci/bootstrap.sh installs them)"
else
  shows_file Meson meson 1 "$examples/meson/meson.build"
  setup="meson setup build"
  form_a="meson test -C build"
  form_b="meson test -C build --setup guarded"
  doc_commands Meson "$setup" "$form_a" "$form_b"
  cp -r "$examples/meson" "$work/meson"
  (
    cd "$work/meson"
    start=$SECONDS # form (a)'s time includes the setup and the build
    log=$work/meson.log
    eval "$setup" >"$log" 2>&1 ||
      fail "$log" "meson: meson setup failed"
    ninja -C build -j"$jobs" >>"$log" 2>&1 || fail "$log" "meson: the build failed"
    # Every case of test_pool is registered: meson's tests of the default
    # setup are test_pool --list's cases, one each.
    registered=$(meson test -C build --list 2>/dev/null | sed -n 's|^pool:mpfixture / ||p' | sort)
    listed=$(build/test_pool --list | awk '{ print "test_pool." $1 }' | sort)
    [ "$registered" = "$listed" ] ||
      fail /dev/null "meson: meson test lists '${registered//$'\n'/ }', test_pool --list '${listed//$'\n'/ }'"

    log=$work/meson-a.log
    leaked=$(run_form meson-a "meson (a)" "$form_a" build/meson-logs/testlog.txt test_pool)
    if ! { grep -Eq '^ *[0-9]+/2 pool:mpfixture / test_pool.shares_and_removes +OK ' "$log" &&
           grep -Eq '^ *[0-9]+/2 pool:mpfixture / test_pool.forgets_to_unlink +FAIL ' "$log" &&
           grep -Eq '^Ok: +1 *$' "$log" && grep -Eq '^Fail: +1 *$' "$log"; }; then
      fail "$log" "meson (a): meson test did not pass shares_and_removes and fail forgets_to_unlink alone"
    fi
    echo "build_systems: meson (a) one meson test per case: test_pool.forgets_to_unlink failed [shm_leak] ($leaked removed), test_pool.shares_and_removes passed ($((SECONDS - start)) s)"

    start=$SECONDS
    log=$work/meson-b.log
    leaked=$(run_form meson-b "meson (b)" "$form_b" build/meson-logs/testlog-guarded.txt test_plain)
    if ! { grep -Eq '^ *1/1 pool:unmodified / test_plain +FAIL ' "$log" &&
           grep -Eq '^Ok: +0 *$' "$log" && grep -Eq '^Fail: +1 *$' "$log" &&
           grep -q 'mpf-run --per-case -- .*/test_plain' "$log" &&
           grep -q '^\[       OK \] shares_and_removes' "$log" &&
           grep -q '^\[  FAILED  \] forgets_to_unlink' "$log"; }; then
      fail "$log" "meson (b): meson test --setup guarded did not run test_plain alone, under mpf-run --per-case, shares_and_removes passing and forgets_to_unlink failing"
    fi
    echo "build_systems: meson (b) test_plain under mpf-run --per-case (--setup guarded): test_plain.forgets_to_unlink failed [shm_leak] ($leaked removed), shares_and_removes passed ($((SECONDS - start)) s)"
  )
fi

# ---- Autotools ----
missing=""
for tool in autoreconf autoconf automake aclocal make; do
  command -v "$tool" >/dev/null || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  echo "build_systems: autotools: skipped (not installed:$missing; ci/bootstrap.sh installs autoconf and automake)"
elif ! pkg-config --exists mpfixture-check; then
  echo "build_systems: autotools: skipped (the install has no mpfixture-check.pc: Check was not found when $build was configured)"
else
  shows_file Autotools m4 1 "$examples/autotools/configure.ac"
  shows_file Autotools make 1 "$examples/autotools/guarded/Makefile.am"
  shows_file Autotools make 2 "$examples/autotools/unmodified/Makefile.am"
  setup=("autoreconf -fi" "./configure")
  form_a="make -C guarded check"
  form_b="make -C unmodified check"
  doc_commands Autotools "${setup[@]}" "$form_a" "$form_b"
  cp -r "$examples/autotools" "$work/autotools"
  (
    cd "$work/autotools"
    start=$SECONDS # form (a)'s time includes autoreconf, configure, the build
    log=$work/autotools.log
    { eval "${setup[0]}" && eval "${setup[1]}"; } >"$log" 2>&1 ||
      fail "$log" "autotools: autoreconf or configure failed"
    make -j"$jobs" >>"$log" 2>&1 || fail "$log" "autotools: the build failed"

    # tap <log> <program>: make check's result lines are one PASS (the
    # clean test), one FAIL (the leak) and the program's own exit status
    # as its one ERROR, nothing else.
    tap() {
      local got
      got=$(grep -E '^(PASS|FAIL|ERROR|XPASS|SKIP|XFAIL):' "$1" | sort -u)
      [ "$(wc -l <<<"$got")" -eq 3 ] &&
        grep -Eq "^PASS: $2 1 - .*shares_and_removes" <<<"$got" &&
        grep -Eq "^FAIL: $2 2 - .*forgets_to_unlink" <<<"$got" &&
        grep -Eq "^ERROR: $2 - exited with status 1\$" <<<"$got"
    }

    log=$work/autotools-a.log
    leaked=$(run_form autotools-a "autotools (a)" "$form_a" guarded/check_pool.log check_pool)
    tap "$log" check_pool ||
      fail "$log" "autotools (a): make check did not pass shares_and_removes and fail forgets_to_unlink alone"
    echo "build_systems: autotools (a) Check adapter, TAP per test: check_pool.forgets_to_unlink failed [shm_leak] ($leaked removed), shares_and_removes passed ($((SECONDS - start)) s)"

    start=$SECONDS
    log=$work/autotools-b.log
    leaked=$(run_form autotools-b "autotools (b)" "$form_b" unmodified/test_plain.log test_plain)
    tap "$log" test_plain ||
      fail "$log" "autotools (b): make check did not pass shares_and_removes and fail forgets_to_unlink alone"
    echo "build_systems: autotools (b) test_plain under mpf-run --per-case (LOG_COMPILER), TAP per case: test_plain.forgets_to_unlink failed [shm_leak] ($leaked removed), shares_and_removes passed ($((SECONDS - start)) s)"
  )
fi

left=$(shm_left)
[ -z "$left" ] || fail /dev/null "left in /dev/shm: ${left//$'\n'/ }"
