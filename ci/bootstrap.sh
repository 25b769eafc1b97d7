#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what the build and the tests need from Debian's packages, only if
# something is missing. Safe to run again; needs root (or sudo) to install.
#   ci/bootstrap.sh          the build and the tests
#   ci/bootstrap.sh --full   also the fuzz build (fuzz/run.sh): clang and
#                            libFuzzer (libclang-rt-dev: clang only
#                            recommends it, and we install no recommends),
#                            and bazel-bootstrap for examples/bazel (the
#                            normal run skips that test without it)
#   ci/bootstrap.sh --lint   also the analyzers of ci/lint.sh: cppcheck,
#                            clang-tidy, clang-format, and clang-tools for
#                            scan-build
set -euo pipefail

pkgs=(cmake gcc g++ clang make ninja-build libc6-dev libcmocka-dev libgtest-dev check pkg-config valgrind lcov gdb python3
      libdw-dev
      libcriterion-dev
      python3-coverage
      meson autoconf automake
      man-db bsdextrautils gpg-agent dbus-daemon)
for arg in "$@"; do
  case $arg in
    --full) pkgs+=(clang libclang-rt-dev bazel-bootstrap) ;;
    --lint) pkgs+=(cppcheck clang-tidy clang-format clang-tools) ;;
    *) echo "usage: ci/bootstrap.sh [--full] [--lint]" >&2; exit 2 ;;
  esac
done

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# libdw-dev: a report names the function and line that made an offender
# (libdwfl's header at build time; libdw1 is loaded when a report needs it).
# python3-coverage: coverage/coverage.sh measures mpf_audit.py with it.
# libcriterion-dev: the Criterion adapter (mpfixture::criterion) and its tests.
# g++, clang and ninja-build: examples/consumer (ci/consumer.sh) builds its C++
# test with both compilers, and with Ninja as well as Make.
# libgtest-dev: the GoogleTest adapter (mpfixture::gtest) and its tests.
# check: the Check adapter (mpfixture::check) and its tests.
# meson, autoconf and automake: examples/meson and examples/autotools
# (ci/build_systems.sh) build against the installed package with them.
for pkg in "${pkgs[@]}"; do
  have_pkg "$pkg" || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0

echo "bootstrap: installing ${need[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
