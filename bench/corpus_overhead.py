#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-case cost of the guard on the real-suite corpus, plain vs guarded.

    corpus_overhead.py BINDIR ROUNDS SUITE...

For each SUITE of tests/realworld_cmocka, BINDIR/SUITE_plain (cmocka alone)
and BINDIR/SUITE_guarded (the same source with the cmocka drop-in) run
alternately, ROUNDS times each; the medians of their wall times give

    ratio corpus_<suite>_guarded_vs_plain <guarded/plain> target <t> <ok|miss>
    info corpus_<suite> cases <n> plain_ms <m> guarded_ms <m> per_case_us <u>

The guarded run forks a case runner and a watchdog and checks every case:
its cost is per run (the runner) plus per case; per_case_us is the
difference spread over the cases. The planted offences of a suite fail in
its guarded run: that run's cost includes reporting and cleaning them,
as in real use. /dev/shm names of the corpus ("corpus-") are removed
after every run; processes a run leaves (the planted worker of the plain
run) are killed by pid.
"""
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TARGET = 1.5  # guarded within 1.5x of a plain run of a few-ms suite


def clean():
    for e in os.listdir("/dev/shm"):
        if e.startswith("corpus-"):
            path = os.path.join("/dev/shm", e)
            try:
                os.unlink(path)
            except IsADirectoryError:
                pass


def kill_left(binary):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            exe = os.readlink("/proc/%s/exe" % pid)
        except OSError:
            continue
        if exe == binary:
            os.kill(int(pid), signal.SIGKILL)


def timed(binary):
    t0 = time.monotonic()
    p = subprocess.run([binary], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    dt = time.monotonic() - t0
    kill_left(binary)
    clean()
    return dt, p.returncode


def cases_of(binary):
    # To a file, not a pipe: the planted worker would hold a pipe open.
    with tempfile.TemporaryFile() as f:
        subprocess.run([binary], stdout=f, stderr=subprocess.STDOUT)
        f.seek(0)
        out = f.read().decode(errors="replace")
    kill_left(binary)
    clean()
    return len(re.findall(r"^\[ RUN +\]", out, re.M))


def main():
    bindir, rounds, suites = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    env_clean = [k for k in os.environ if k.startswith("MPF_")]
    for k in env_clean:
        del os.environ[k]
    for suite in suites:
        plain = os.path.realpath(os.path.join(bindir, suite + "_plain"))
        guarded = os.path.realpath(os.path.join(bindir, suite + "_guarded"))
        n = cases_of(plain)
        tp, tg = [], []
        for _ in range(rounds):
            tp.append(timed(plain)[0])
            tg.append(timed(guarded)[0])
        mp, mg = statistics.median(tp), statistics.median(tg)
        ratio = mg / mp
        print("ratio corpus_%s_guarded_vs_plain %.2f target %g %s"
              % (suite, ratio, TARGET, "ok" if ratio <= TARGET else "miss"))
        print("info corpus_%s cases %d plain_ms %.2f guarded_ms %.2f "
              "per_case_us %.0f" % (suite, n, mp * 1e3, mg * 1e3,
                                    (mg - mp) / max(n, 1) * 1e6))


if __name__ == "__main__":
    main()
