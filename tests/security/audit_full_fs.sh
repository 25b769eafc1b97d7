#!/bin/sh
# SPDX-License-Identifier: MIT
# audit_full_fs.sh TEST_AUDIT_FILE MPF_AUDIT_PY
#
# Issue 18: the audit file on a full file system. Mounts a 256 KiB tmpfs in
# a mount namespace of its own (unshare -m: needs root; exit 77, a skip,
# with the reason otherwise), runs test_audit_file's full_fs_* cases with
# MPF_AUDIT on it, prints their output and exit status, then mpf-audit's
# reading of the file (--text) and its exit status.
set -u
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: mounting a small tmpfs (unshare -m) needs root"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/mpf-audit-full.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/full" || exit 99
unshare -m --propagation private /bin/sh -c '
    mount -t tmpfs -o size=256k mpf-full "$0" || exit 77
    MPF_AUDIT=$0/audit.jsonl MPF_TEST_FILLER=$0/filler MPF_CASE="full_fs_*" \
        timeout -k 5 60 "$1" 2>&1
    echo "exit status $?"
    cd "$0" && python3 "$2" --text audit.jsonl 2>&1
    echo "mpf-audit exit status $?"
' "$dir/full" "$1" "$2"
