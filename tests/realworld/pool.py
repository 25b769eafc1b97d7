# SPDX-License-Identifier: MIT
"""multiprocessing.Pool (fork start method, Linux default): workers forked,
fed through pipes, joined when the pool closes."""
from multiprocessing import Pool

with Pool(4) as pool:
    assert sum(pool.map(abs, range(-50, 50))) == 2500
