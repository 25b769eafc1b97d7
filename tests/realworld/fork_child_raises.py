# SPDX-License-Identifier: MIT
"""An escaped fork in Python: the os.fork() child raises, the exception
unwinds through the parent's frames into the top level, the child prints a
traceback and ends through exit() (Py_Exit), running the atexit handlers
and flushing the stdio buffers it inherited. The parent waits for it and
exits 0. mpf-run --escaped-fork flags the child with its command line."""
import os

parent = os.getpid()


def work():
    pid = os.fork()
    if pid == 0:
        raise RuntimeError("the forked child raised through the parent's code")
    os.waitpid(pid, 0)


try:
    work()
except RuntimeError:
    if os.getpid() != parent:
        raise
