#!/bin/sh
echo "offline stand-in: bazel coverage needs the real remote_coverage_tools" >&2
exit 1
