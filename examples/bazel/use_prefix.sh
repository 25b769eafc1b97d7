#!/bin/sh
# SPDX-License-Identifier: MIT
# use_prefix.sh [PREFIX]: point @mpfixture at the mpfixture installed under
# PREFIX (cmake --install build --prefix PREFIX; none given: /usr/local,
# the WORKSPACE's default).
#
# Writes, beside WORKSPACE, the repository prefix/ (BUILD: a copy of
# third_party/mpfixture.BUILD; an empty WORKSPACE; include and lib,
# symbolic links to PREFIX's) and prefix.bazelrc (imported by .bazelrc),
# whose --override_repository=mpfixture=... makes every bazel build, test,
# query and fetch of this workspace use it. Run it again after changing
# third_party/mpfixture.BUILD or to switch prefixes; remove prefix/ and
# prefix.bazelrc to go back to the WORKSPACE's new_local_repository.
#
# A PREFIX without include/mpfixture/mpfixture.h, or without the shared
# library in lib, lib64 or lib/<multiarch>, is refused with one line
# (exit status 2), and nothing is written.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -gt 1 ]; then
  echo "usage: $0 [PREFIX]   (default /usr/local)" >&2
  exit 2
fi
given=${1:-/usr/local}
if [ ! -f "$given/include/mpfixture/mpfixture.h" ]; then
  echo "$0: '$given' is not an mpfixture install prefix (no include/mpfixture/mpfixture.h)" >&2
  exit 2
fi
prefix=$(cd "$given" && pwd -P)
# The library directory: lib, or where GNUInstallDirs put it (lib64 on
# some distributions, lib/<multiarch> for a /usr prefix on Debian).
libdir=
for d in "$prefix"/lib "$prefix"/lib64 "$prefix"/lib/*-linux-gnu*; do
  for so in "$d"/libmpfixture.so.*; do
    if [ -f "$so" ]; then
      libdir=$d
      break 2
    fi
  done
done
if [ -z "$libdir" ]; then
  echo "$0: '$given' has mpfixture's headers but no libmpfixture.so.* in lib, lib64 or lib/<multiarch>" >&2
  exit 2
fi

repo=$here/prefix
rm -rf "$repo"
mkdir "$repo"
cp "$here/third_party/mpfixture.BUILD" "$repo/BUILD"
: > "$repo/WORKSPACE"
ln -s "$prefix/include" "$repo/include"
ln -s "$libdir" "$repo/lib"
{
  echo "# written by use_prefix.sh: @mpfixture is the install under $prefix"
  for command in build query fetch; do
    echo "$command --override_repository=mpfixture=$repo"
  done
} > "$here/prefix.bazelrc"
echo "@mpfixture: $prefix (include: $prefix/include, lib: $libdir)"
