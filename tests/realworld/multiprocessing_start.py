# SPDX-License-Identifier: MIT
"""multiprocessing.Process with the start method given (fork, spawn or
forkserver): children started, fed through a queue, joined; exit 0."""
import multiprocessing as mp
import sys


def square(q, n):
    q.put(n * n)


if __name__ == "__main__":
    ctx = mp.get_context(sys.argv[1])
    q = ctx.Queue()
    procs = [ctx.Process(target=square, args=(q, n)) for n in range(4)]
    for p in procs:
        p.start()
    got = sorted(q.get() for _ in procs)
    for p in procs:
        p.join()
    assert got == [0, 1, 4, 9] and all(p.exitcode == 0 for p in procs), got
