#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# examples/consumer built against this tree the three ways a user would,
# each configured, built and its ctest run: find_package from an install
# into a temporary prefix (Make), pkg-config from the same install (Ninja),
# FetchContent from this checkout with nothing downloaded (Ninja, clang).
# Each ctest must list exactly the consumer's four tests, none of ours.
# Needs the build of ${BUILD_DIR:-build}; run by ci/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
src=$PWD/examples/consumer
work=$(mktemp -d "${TMPDIR:-/tmp}/mpf-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
jobs=$(nproc)
[ "$jobs" -le 2 ] || jobs=2

expected="test_counter.forgotten_object_is_reported
test_counter.workers_add_up
test_counter_cpp.undeclared_leak_fails_by_name
test_counter_cpp.workers_add_up"

# consumer <way> <cmake args>...: configure, build, list, run.
consumer() {
  local way=$1 dir=$work/$1 start=$SECONDS
  shift
  if ! cmake -S "$src" -B "$dir" -DMPFIXTURE_VIA="$way" "$@" >"$dir.log" 2>&1 ||
     ! cmake --build "$dir" -j"$jobs" >>"$dir.log" 2>&1; then
    cat "$dir.log"
    echo "consumer: $way: configure or build failed" >&2
    return 1
  fi
  local listed
  listed=$(ctest --test-dir "$dir" -N | sed -n 's/^ *Test *#[0-9]*: //p' | sort)
  if [ "$listed" != "$expected" ]; then
    printf 'consumer: %s: ctest lists\n%s\nexpected\n%s\n' "$way" "$listed" "$expected" >&2
    return 1
  fi
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" >"$dir.ctest" 2>&1 ||
    { cat "$dir.ctest"; echo "consumer: $way: ctest failed" >&2; return 1; }
  echo "consumer: $way: 4 of 4 tests passed ($((SECONDS - start)) s)"
}

cmake --install "$build" --prefix "$prefix" >/dev/null
consumer package -DCMAKE_PREFIX_PATH="$prefix"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig consumer pkg-config -G Ninja
CC=clang CXX=clang++ consumer fetchcontent -G Ninja \
  -DFETCHCONTENT_SOURCE_DIR_MPFIXTURE="$PWD" -DFETCHCONTENT_FULLY_DISCONNECTED=ON
