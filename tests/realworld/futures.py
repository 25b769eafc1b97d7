# SPDX-License-Identifier: MIT
"""concurrent.futures.ProcessPoolExecutor: a pool with a queue feeder
thread and a management thread, shut down on leaving the block."""
from concurrent.futures import ProcessPoolExecutor

with ProcessPoolExecutor(max_workers=3) as ex:
    assert list(ex.map(pow, range(10), [2] * 10))[-1] == 81
