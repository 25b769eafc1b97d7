# SPDX-License-Identifier: MIT
"""Not a kill without a wait: the parent sends its forked child a signal
the child handles (SIGUSR1), then exits without waiting; the child
outlives it and ends by itself (os._exit(0) once the parent is gone, seen
as EOF on a pipe). Under mpf-run it is an orphan that ended by itself, not
an unwaited child. Readiness and the parent's end are pipes."""
import os
import signal

gone_r, gone_w = os.pipe()
ready_r, ready_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(gone_w)
    os.close(ready_r)
    signal.signal(signal.SIGUSR1, lambda *_: None)
    os.write(ready_w, b"x")  # ready: SIGUSR1 is handled
    os.read(gone_r, 1)  # EOF: the parent is gone
    os._exit(0)
os.close(gone_r)
os.close(ready_w)
os.read(ready_r, 1)
os.kill(pid, signal.SIGUSR1)
