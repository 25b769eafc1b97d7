# SPDX-License-Identifier: MIT
"""SharedMemory used correctly: created, written by a child process that
attaches by name, read back, closed and unlinked. Python's resource
tracker (a helper process started on first use) exits on its own a moment
after the program."""
import os
from multiprocessing import Process, shared_memory


def fill(name):
    s = shared_memory.SharedMemory(name=name)
    s.buf[:5] = b"hello"
    s.close()


shm = shared_memory.SharedMemory(create=True, size=4096,
                                 name=os.environ["MPF_RW_MARK"] + "-ok")
p = Process(target=fill, args=(shm.name,))
p.start()
p.join()
assert bytes(shm.buf[:5]) == b"hello"
shm.close()
shm.unlink()
