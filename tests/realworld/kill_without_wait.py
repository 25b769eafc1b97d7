# SPDX-License-Identifier: MIT
"""A kill without a wait: a forked child (no exec) is SIGTERMed by its
parent, which then exits without waiting for it. Under mpf-run the zombie
is inherited and reported as unwaited: killed by signal 15, its parent
(pid and command line) never waited for it. Readiness is a pipe."""
import os
import signal

r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    os.write(w, b"x")  # ready: pause() is next
    while True:
        signal.pause()
os.close(w)
os.read(r, 1)
os.kill(pid, signal.SIGTERM)
