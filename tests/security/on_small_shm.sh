#!/bin/sh
# SPDX-License-Identifier: MIT
# on_small_shm.sh PROGRAM [ARG...]
#
# Mounts a 2 MiB tmpfs on /dev/shm in a mount namespace of its own
# (unshare -m: needs root; exit 77, a skip, with the reason otherwise),
# runs PROGRAM there (the full-/dev/shm tests: test_shm_full_fs,
# mailbox_full_fs), prints its output and exit status, then how many
# entries are left in that /dev/shm.
set -u
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: mounting a small tmpfs (unshare -m) needs root"
    exit 77
fi
unshare -m --propagation private /bin/sh -c '
    mount -t tmpfs -o size=2m mpf-full /dev/shm || exit 77
    timeout -k 5 60 "$0" "$@" 2>&1
    echo "exit status $?"
    echo "left in /dev/shm: $(ls -A /dev/shm | wc -l)"
' "$@"
