# SPDX-License-Identifier: MIT
"""issue 29's reproducer: an escaped fork that never reaches exit(). The
os.fork() child raises through the top level and then dies of SIGSEGV
while Python finalizes (the atexit handler reads address 0). The parent
waits for it and exits 0. mpf-run --escaped-fork flags the child as the
frame that called os.fork() unwinds, however it then ends."""
import atexit, ctypes, os
pid = os.fork()
if pid == 0:
    atexit.register(ctypes.string_at, 0)   # the child crashes while Python finalizes
    raise RuntimeError("child escaped into the parent's code")
print("child status", os.waitpid(pid, 0)[1])
