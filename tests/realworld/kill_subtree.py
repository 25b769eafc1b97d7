# SPDX-License-Identifier: MIT
"""A program that kills a stuck subtree, then checks its grandchild is gone.

The shape of simpler's test_stuck_midinit_subtree_killpg_reaps_grandchild:
a child leads its own process group and forks a grandchild; both ignore
SIGTERM, so the parent SIGKILLs the group, reaps the child, and requires
the grandchild to be gone (reaped by whoever inherited it: init, or a
subreaper such as mpf-run) within 5 s. Exit 0 when it is, 1 when not.

Readiness is a pipe (the grandchild writes its pid once SIGTERM is
ignored); its death is a pidfd. Only the reap by the inheriting process
has no event of its own: /proc/<pid> is looked at, yielding in between,
for at most 5 s.
"""
import os
import select
import signal
import sys
import time

r, w = os.pipe()
child = os.fork()
if child == 0:
    os.setpgid(0, 0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.fork() == 0:
        os.write(w, b"%d\n" % os.getpid())
        while True:
            signal.pause()
    while True:
        signal.pause()
os.close(w)
grandchild = int(os.read(r, 32))
pidfd = os.pidfd_open(grandchild)
os.killpg(child, signal.SIGTERM)  # ignored by both: still stuck
os.killpg(child, signal.SIGKILL)
os.waitpid(child, 0)
if not select.select([pidfd], [], [], 5.0)[0]:
    sys.exit("grandchild %d did not die of SIGKILL" % grandchild)
deadline = time.monotonic() + 5.0
while os.path.exists("/proc/%d" % grandchild):
    if time.monotonic() > deadline:
        sys.exit("grandchild %d is dead but was never reaped" % grandchild)
    os.sched_yield()
print("grandchild gone")
