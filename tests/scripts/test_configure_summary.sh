#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# configure's summary of the framework adapters: with pkg-config finding
# nothing and GoogleTest's package hidden, the one line names cmocka as
# built and each other adapter as not built, with why.
set -uo pipefail
root=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/mpf-configure.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/no-pc"
out=$(PKG_CONFIG_LIBDIR=$work/no-pc PKG_CONFIG_PATH= cmake -S "$root" -B "$work/build" \
        -DMPF_BUILD_TESTS=OFF -DMPF_INSTALL=OFF -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON 2>&1)
line=$(grep -- '-- mpfixture: framework adapters built:' <<<"$out")
want="-- mpfixture: framework adapters built: cmocka; not built: Check (pkg-config finds no check, Debian's check), Criterion (pkg-config finds no criterion, Debian's libcriterion-dev), GoogleTest (no GoogleTest CMake package, Debian's libgtest-dev)"
if [ "$line" != "$want" ]; then
  printf 'FAIL: configure said\n%s\nwant\n%s\nconfigure output:\n%s\n' "$line" "$want" "$out"
  exit 1
fi
echo "ok: $line"
