# SPDX-License-Identifier: MIT
"""An escaped fork that never reaches exit(): the os.fork() child returns
from the function that forked it (the bug), runs on in its parent's code,
says so on a pipe and waits; the parent SIGKILLs it, as a rollback would,
and waits for it. mpf-run --escaped-fork flags the child as it unwinds
past the frame that called os.fork(), before the kill."""
import os
import signal

ready_r, ready_w = os.pipe()


def start_worker():
    pid = os.fork()
    if pid == 0:
        pass  # the bug: the worker's loop was forgotten; it returns
    return pid


pid = start_worker()
if pid == 0:
    os.write(ready_w, b"x")  # the child, in its parent's code
    while True:
        signal.pause()
os.read(ready_r, 1)
os.kill(pid, signal.SIGKILL)
print("child status", os.waitpid(pid, 0)[1])
