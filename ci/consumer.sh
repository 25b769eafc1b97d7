#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/consumer built against this tree the three ways a user would,
# each configured, built and its ctest run: find_package from an install
# into a temporary prefix (Make), pkg-config from the same install (Ninja),
# FetchContent from this checkout with nothing downloaded (Ninja, clang).
# Those use the fake-chip companion by its name (mpfixture::fakechips,
# mpfixture-fakechips.pc, <mpfixture/fakechips.h>); find_package and
# pkg-config once more with its deprecated 0.2 names (mpfixture::fake_chips,
# which must warn, mpfixture-fake-chips.pc, <mpfixture/mpfixture_worker.h>).
# Each ctest must list exactly the consumer's five tests, none of ours.
# Then the docs' recipes verbatim (below): the FetchContent recipe and
# example of docs/getting-started.md, the clone-and-install step of
# docs/ci-recipes.md, and README.md's example built on that install.
# Needs the build of ${BUILD_DIR:-build}; run by ci/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
src=$PWD/examples/consumer
work=$(mktemp -d "${TMPDIR:-/tmp}/mpf-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
# Parallel jobs of the consumer's builds and ctest runs: nproc, capped at
# max_jobs. (ci/lint.sh's bound is the other one: a floor, min_jobs.)
max_jobs=2
jobs=$(nproc)
[ "$jobs" -le "$max_jobs" ] || jobs=$max_jobs

expected="test_chips.a_tree_of_fake_chips_comes_up
test_counter.forgotten_object_is_reported
test_counter.workers_add_up
test_counter_cpp.undeclared_leak_fails_by_name
test_counter_cpp.workers_add_up"

# consumer <name> <way> <cmake args>...: configure, build, list, run.
consumer() {
  local name=$1 way=$2 dir=$work/$1 start=$SECONDS
  shift 2
  if ! cmake -S "$src" -B "$dir" -DMPFIXTURE_VIA="$way" "$@" >"$dir.log" 2>&1 ||
     ! cmake --build "$dir" -j"$jobs" >>"$dir.log" 2>&1; then
    cat "$dir.log"
    echo "consumer: $name: configure or build failed" >&2
    return 1
  fi
  local listed
  listed=$(ctest --test-dir "$dir" -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort)
  if [ "$listed" != "$expected" ]; then
    printf 'consumer: %s: ctest lists\n%s\nexpected\n%s\n' "$name" "$listed" "$expected" >&2
    return 1
  fi
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" >"$dir.ctest" 2>&1 ||
    { cat "$dir.ctest"; echo "consumer: $name: ctest failed" >&2; return 1; }
  # The deprecated target warns where it is linked; the new names do not.
  local warned=0
  grep -q "mpfixture::fake_chips is 0.2's name of mpfixture::fakechips" "$dir.log" && warned=1
  if [ "$warned" != "${want_deprecation:-0}" ]; then
    cat "$dir.log"
    echo "consumer: $name: deprecation warning of mpfixture::fake_chips: $warned, expected ${want_deprecation:-0}" >&2
    return 1
  fi
  echo "consumer: $name: 5 of 5 tests passed ($((SECONDS - start)) s)"
}

cmake --install "$build" --prefix "$prefix" >/dev/null
consumer package package -DCMAKE_PREFIX_PATH="$prefix"
want_deprecation=1 consumer package-0.2-names package -DCMAKE_PREFIX_PATH="$prefix" \
  -DMPFIXTURE_OLD_NAMES=ON
PKG_CONFIG_PATH=$prefix/lib/pkgconfig consumer pkg-config pkg-config -G Ninja
PKG_CONFIG_PATH=$prefix/lib/pkgconfig consumer pkg-config-0.2-names pkg-config -G Ninja \
  -DMPFIXTURE_OLD_NAMES=ON
CC=clang CXX=clang++ consumer fetchcontent fetchcontent -G Ninja \
  -DFETCHCONTENT_SOURCE_DIR_MPFIXTURE="$PWD" -DFETCHCONTENT_FULLY_DISCONNECTED=ON

# ctest -T memcheck of a project using the installed package: a clean
# guarded case shows 0 defects (libmpfixture's memory held until exit is
# suppressed by the module's mpfixture-memcheck.supp), and a case that
# leaks still shows its leaks (the suppression hides nothing of the test's).
start=$SECONDS
mc=$work/memcheck
mkdir -p "$mc"
cat >"$mc/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(memcheck C)
find_package(mpfixture 0.2 REQUIRED)
include(CTest)
include(MpfixtureTests)
mpf_add_cmocka_test(test_clean SOURCES test_clean.c LABELS unit)
mpf_add_cmocka_test(test_leaky SOURCES test_leaky.c LABELS unit)
CMAKE
cat >"$mc/test_clean.c" <<'C'
#include <mpfixture/cmocka.h>
static void adds_up(void **state) { (void)state; assert_int_equal(2, 1 + 1); }
int main(void)
{
    const struct CMUnitTest tests[] = { mpf_unit_test(adds_up, 2000) };
    return mpf_run_group_tests(tests, NULL, NULL);
}
C
cat >"$mc/test_leaky.c" <<'C'
#include <stdlib.h>
#include <mpfixture/cmocka.h>
static void loses_a_block(void **state)
{
    (void)state;
    volatile char *p = malloc(64);
    p[0] = 1;
    p = NULL;
}
int main(void)
{
    const struct CMUnitTest tests[] = { mpf_unit_test(loses_a_block, 2000) };
    return mpf_run_group_tests(tests, NULL, NULL);
}
C
{ cmake -S "$mc" -B "$mc/build" -DCMAKE_PREFIX_PATH="$prefix" &&
  cmake --build "$mc/build" &&
  (cd "$mc/build" && ctest -T memcheck || true); } >"$mc.log" 2>&1
clean=$(sed -n 's/.*MemCheck: #[0-9]*: test_clean.adds_up .*Defects: \([0-9]*\).*/\1/p' "$mc.log")
leaky=$(sed -n 's/.*MemCheck: #[0-9]*: test_leaky.loses_a_block .*Defects: \([0-9]*\).*/\1/p' "$mc.log")
if ! grep -q "test_clean.adds_up" "$mc.log" || [ "${clean:-0}" != 0 ] || [ "${leaky:-0}" -lt 1 ]; then
  cat "$mc.log"
  echo "consumer: memcheck: clean case ${clean:-0} defects (want 0), leaky case ${leaky:-0} (want >= 1)" >&2
  exit 1
fi
echo "consumer: ctest -T memcheck: clean guarded case 0 defects, leaking case $leaky ($((SECONDS - start)) s)"

# The Check and Criterion forms from the installed package, as the cmocka
# form above: include(MpfixtureTests)'s mpf_add_check_test() and
# mpf_add_criterion_test() register each test of a consumer's suite as its
# own ctest test; a clean one passes, a leaking one fails by name (its
# EXPECT_OUTPUT). Only where pkg-config finds Check or Criterion
# (ci/bootstrap.sh installs both); skipped saying so otherwise.
start=$SECONDS
fw=$work/frameworks
mkdir -p "$fw"
have_check=0 have_criterion=0 want_fw=""
pkg-config --exists check && have_check=1
pkg-config --exists criterion && have_criterion=1
cat >"$fw/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(frameworks C)
find_package(mpfixture 0.2 REQUIRED)
include(CTest)
include(MpfixtureTests)
if(WANT_CHECK)
  mpf_add_check_test(check_pool SOURCES check_pool.c LABELS unit
    EXPECT_OUTPUT leaves_shm "FAILED \\[shm_leak\\]")
endif()
if(WANT_CRITERION)
  mpf_add_criterion_test(criterion_pool SOURCES criterion_pool.c LABELS unit
    EXPECT_OUTPUT pool/leaves_child "FAILED \\[survivor\\]")
endif()
CMAKE
cat >"$fw/check_pool.c" <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <mpfixture/check.h>
START_TEST(adds_up) { ck_assert_int_eq(2, 1 + 1); }
END_TEST
START_TEST(leaves_shm)
{
    int fd = shm_open("/mpf_consumer_check_leak", O_CREAT | O_RDWR, 0600);
    ck_assert_int_ge(fd, 0);
    close(fd);
}
END_TEST
int main(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, adds_up);
    tcase_add_test(tc, leaves_shm);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    int failed = mpf_srunner_run_all(sr, CK_ENV);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
C
cat >"$fw/criterion_pool.c" <<'C'
#include <signal.h>
#include <unistd.h>
#include <mpfixture/criterion.h>
MPF_TEST(pool, adds_up) { cr_assert_eq(2, 1 + 1); }
MPF_TEST(pool, leaves_child)
{
    if (fork() == 0)
        for (;;)
            pause();
}
C
[ $have_check = 1 ] && want_fw="check_pool.adds_up
check_pool.leaves_shm"
[ $have_criterion = 1 ] && want_fw="$want_fw${want_fw:+
}criterion_pool.pool.adds_up
criterion_pool.pool.leaves_child"
if [ -z "$want_fw" ]; then
  echo "consumer: Check and Criterion forms: skipped (pkg-config finds neither check nor criterion)"
else
  { cmake -S "$fw" -B "$fw/build" -DCMAKE_PREFIX_PATH="$prefix" \
      -DWANT_CHECK=$have_check -DWANT_CRITERION=$have_criterion &&
    cmake --build "$fw/build" -j"$jobs"; } >"$fw.log" 2>&1 ||
    { cat "$fw.log"; echo "consumer: Check/Criterion forms: configure or build failed" >&2; exit 1; }
  listed=$(ctest --test-dir "$fw/build" -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort)
  if [ "$listed" != "$(sort <<<"$want_fw")" ]; then
    printf 'consumer: Check/Criterion forms: ctest lists\n%s\nexpected\n%s\n' "$listed" "$want_fw" >&2
    exit 1
  fi
  ctest --test-dir "$fw/build" --output-on-failure -j"$jobs" >"$fw.ctest" 2>&1 ||
    { cat "$fw.ctest"; echo "consumer: Check/Criterion forms: ctest failed" >&2; exit 1; }
  echo "consumer: mpf_add_check_test (check: $have_check), mpf_add_criterion_test (criterion: $have_criterion) from the installed package: $(wc -l <<<"$want_fw") tests, the leaks failing by name ($((SECONDS - start)) s)"
fi

# ---- The docs' recipes, verbatim, against this repository ----
# The one place where this checkout stands in for "mpfixture's
# repository": the placeholder <mpfixture's repository> of
# docs/getting-started.md and $MPFIXTURE_REPO of docs/ci-recipes.md both
# become this URL. The recipes clone the ref they name (a branch or tag of
# this repository; tests/docs checks it exists), not the work tree.
MPFIXTURE_REPO=file://$PWD
export MPFIXTURE_REPO
docs=$PWD/docs
# block <file> <n> <lang>: the n-th fenced block of that language, verbatim.
block() {
  awk -v want="$2" -v lang="$3" '
    /^```/ { if (inside) { inside = 0; next } if ($0 == "```" lang) { n++; inside = (n == want); next } }
    inside' "$1"
}
# expect_survivor <dir> <case>: the doc's example fails as the doc says.
expect_survivor() {
  if grep -q "FAILED \[survivor\]" "$1/out.log" && grep -q "$2" "$1/out.log"; then
    return 0
  fi
  cat "$1/out.log"; return 1
}

# docs/getting-started.md: test_pool.c (its first C block), its
# CMakeLists.txt with the FetchContent block (its first CMake block) in
# place of find_package ("or FetchContent, as above"), then its "Build and
# run" commands. The case fails on purpose: ctest must say so, by name.
start=$SECONDS
gs=$work/getting-started
mkdir -p "$gs"
block "$docs/getting-started.md" 1 c >"$gs/test_pool.c"
fetch=$(block "$docs/getting-started.md" 1 cmake |
        sed "s|<mpfixture's repository>|$MPFIXTURE_REPO|")
block "$docs/getting-started.md" 2 cmake |
  awk -v fetch="$fetch" '/^find_package\(mpfixture/ { print fetch; next } { print }' \
  >"$gs/CMakeLists.txt"
grep -q FetchContent_MakeAvailable "$gs/CMakeLists.txt" ||
  { echo "consumer: getting-started: no FetchContent block found" >&2; exit 1; }
run_block=$(block "$docs/getting-started.md" 2 sh)
if (cd "$gs" && bash -c "$run_block") >"$gs/out.log" 2>&1; then
  cat "$gs/out.log"; echo "consumer: getting-started: the example passed; the doc says it fails" >&2; exit 1
fi
expect_survivor "$gs" "test_pool.pool_starts_and_stops" ||
  { echo "consumer: getting-started (FetchContent): not the documented failure" >&2; exit 1; }
echo "consumer: docs/getting-started.md FetchContent recipe and example: fails as documented, [survivor] ($((SECONDS - start)) s)"

# docs/cmake.md: its pkg-config snippet (its first CMake block), verbatim,
# then one guarded case registered through the module it included: ctest
# lists the case by name and passes it.
start=$SECONDS
pc=$work/cmake-doc-pkg-config
mkdir -p "$pc"
{
  printf 'cmake_minimum_required(VERSION 3.20)\nproject(pc C)\ninclude(CTest)\n'
  block "$docs/cmake.md" 1 cmake
  printf 'mpf_add_cmocka_test(test_clean SOURCES test_clean.c LABELS unit)\n'
} >"$pc/CMakeLists.txt"
cp "$mc/test_clean.c" "$pc/"
{ PKG_CONFIG_PATH=$prefix/lib/pkgconfig cmake -S "$pc" -B "$pc/build" &&
  cmake --build "$pc/build" && ctest --test-dir "$pc/build" --output-on-failure; } >"$pc.log" 2>&1 ||
  { cat "$pc.log"; echo "consumer: docs/cmake.md pkg-config snippet: configure, build or ctest failed" >&2; exit 1; }
grep -q "test_clean.adds_up .*Passed" "$pc.log" ||
  { cat "$pc.log"; echo "consumer: docs/cmake.md pkg-config snippet: test_clean.adds_up not registered" >&2; exit 1; }
echo "consumer: docs/cmake.md pkg-config snippet, verbatim: a guarded case registered and passed ($((SECONDS - start)) s)"

# docs/ci-recipes.md: the GitHub job's "mpfixture" step (clone, configure,
# install) run verbatim; its `sudo` installs under DESTDIR here, not into
# the system. The GitLab job's lines are the same commands in
# /tmp/mpfixture: checked equal after that one substitution.
start=$SECONDS
ci=$work/ci-recipes
mkdir -p "$ci"
gh_step=$(block "$docs/ci-recipes.md" 1 yaml |
          awk '/- name: mpfixture/ { s = 1; next } s && /run: \|/ { r = 1; next }
               r && /^ *env:/ { exit } r { sub(/^ +/, ""); print }')
gl_step=$(block "$docs/ci-recipes.md" 3 yaml |
          sed -n 's|^ *- \(git clone .*\)|\1|p; s|^ *- \(cmake .*/tmp/mpfixture.*\)|\1|p')
if [ -z "$gh_step" ] || [ "$gh_step" != "$(sed 's|/tmp/mpfixture|mpfixture|g; s|^cmake --build|sudo cmake --build|' <<<"$gl_step")" ]; then
  printf 'consumer: ci-recipes: the GitHub step\n%s\nand the GitLab lines\n%s\ndiffer\n' "$gh_step" "$gl_step" >&2
  exit 1
fi
destdir=$ci/destdir
(cd "$ci" && DESTDIR=$destdir bash -c "sudo() { \"\$@\"; }; set -e; $gh_step") >"$ci/out.log" 2>&1 ||
  { cat "$ci/out.log"; echo "consumer: ci-recipes: the clone-and-install step failed" >&2; exit 1; }
installed=$(dirname "$(dirname "$(find "$destdir" -path '*/include/mpfixture/mpfixture.h' | head -1)")")
installed=$(dirname "$installed")
# README.md: its C example and its CMake snippet, built against that
# install with the README's own commands (ctest must find the case).
rd=$work/readme
mkdir -p "$rd"
block README.md 1 c >"$rd/test_pool.c"
block README.md 1 cmake >"$rd/CMakeLists.txt"
if (cd "$rd" && CMAKE_PREFIX_PATH=$installed bash -c "$run_block") >"$rd/out.log" 2>&1; then
  cat "$rd/out.log"; echo "consumer: README: the example passed; the README says it fails" >&2; exit 1
fi
expect_survivor "$rd" "test_pool.worker_pool_starts_and_stops" ||
  { echo "consumer: README example against the ci-recipes install: not the documented failure" >&2; exit 1; }
echo "consumer: docs/ci-recipes.md clone-and-install recipe, README.md example on it: fails as documented, [survivor] ($((SECONDS - start)) s)"
