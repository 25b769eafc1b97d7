#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes offline.bazelrc beside WORKSPACE: --config=offline points rules_cc,
# rules_java and remote_coverage_tools at the stand-ins kept here, so that
# Bazel 4 (Debian's bazel-bootstrap) builds and tests with no network.
# --override_repository takes only absolute paths (not %workspace%), so
# they are written for this checkout.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
{
  echo "# written by offline/setup.sh for this checkout"
  for repo in rules_cc rules_java remote_coverage_tools; do
    echo "build:offline --override_repository=$repo=$here/$repo"
  done
} > "$here/../offline.bazelrc"
