#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what the build and the tests need from Debian's packages, only if
# something is missing. Safe to run again; needs root (or sudo) to install.
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# g++, clang and ninja-build: examples/consumer (ci/consumer.sh) builds its C++
# test with both compilers, and with Ninja as well as Make.
for pkg in cmake gcc g++ clang make ninja-build libc6-dev libcmocka-dev pkg-config \
           valgrind lcov gdb python3; do
  have_pkg "$pkg" || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${need[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
