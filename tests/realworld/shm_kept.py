# SPDX-License-Identifier: MIT
"""A SharedMemory never unlinked: created, then taken away from the
resource tracker (as programs do that keep a segment for another process),
so nothing removes it when the program ends. mpf-run must name it."""
import os
from multiprocessing import resource_tracker, shared_memory

shm = shared_memory.SharedMemory(create=True, size=4096,
                                 name=os.environ["MPF_RW_MARK"] + "-kept")
shm.close()
resource_tracker.unregister(shm._name, "shared_memory")
