#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-test cost of each framework adapter, plain vs guarded.

    adapters_overhead.py BINDIR ROUNDS

bench/CMakeLists.txt generates a suite of trivial tests per framework and
builds it twice: BINDIR/bench_adapter_<fw>_plain (the framework alone) and
BINDIR/bench_adapter_<fw>_guarded (the same source with the adapter). Each
suite below runs plain and guarded alternately, ROUNDS times each (the
order rotates every round), and prints

    ratio <suite>_guarded_vs_plain <r> target 1.3 <ok|miss>
    info adapters_<suite> tests <n> plain_ms <m> guarded_ms <m> per_test_us <u>
         rounds_ratio <min>-<max>

r is the median over rounds of guarded/plain wall time of a whole run
(the pair ran back to back), rounds_ratio the smallest and largest of
those; plain_ms and guarded_ms are the medians of each, per_test_us the
median per-round difference spread over the tests.
The Check suite runs twice, in fork mode (CK_FORK=yes) and in no-fork mode
(CK_FORK=no). Criterion runs its tests one at a time (CRITERION_JOBS=1),
as Check and GoogleTest do. A suite the build did not make is skipped
with an info line.

Every run must pass and leave nothing: a run that fails, a suite that
did not run all its tests, a process of the suite left after it, or a new
/dev/shm entry is an error of the benchmark (exit 1), never a sample. Run
it where nobody else makes /dev/shm entries (bench/run.sh gives it a
private /dev/shm). The binaries run with stdout and stderr to /dev/null,
without any MPF_*, CK_*, CRITERION_*, GTEST_* or Bazel test variable of
the caller's environment.
"""
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

TARGET = 1.3
# suite, framework, its environment, what its output says after a run
# where every test passed (its first group: the number of tests)
SUITES = [
    ("check_fork", "check", {"CK_FORK": "yes"},
     r"100%: Checks: (\d+), Failures: 0, Errors: 0"),
    ("check_nofork", "check", {"CK_FORK": "no"},
     r"100%: Checks: (\d+), Failures: 0, Errors: 0"),
    ("criterion", "criterion", {"CRITERION_JOBS": "1"},
     r"Synthesis: Tested: (\d+) \| Passing: \1 \| Failing: 0 \| Crashing: 0"),
    ("gtest", "gtest", {}, r"\[  PASSED  \] (\d+) tests?\."),
]
DROP = ("MPF_", "CK_", "CRITERION_", "GTEST_", "TEST_", "TESTBRIDGE_",
        "XML_OUTPUT_FILE")


class BenchError(Exception):
    pass


def processes_of(binary):
    """Pids whose executable is binary (not zombies: those have none)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink("/proc/%s/exe" % pid) == binary:
                pids.append(int(pid))
        except OSError:
            continue
    return pids


def run(binary, env, out=subprocess.DEVNULL):
    """One whole run; its wall time. Checks it passed and left nothing."""
    shm = set(os.listdir("/dev/shm"))
    t0 = time.monotonic()
    p = subprocess.run([binary], env=env, stdout=out, stderr=subprocess.STDOUT)
    dt = time.monotonic() - t0
    left = processes_of(binary)
    for _ in range(100):  # a process in exit() is gone within moments
        if not left:
            break
        time.sleep(0.01)
        left = processes_of(binary)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    new = sorted(set(os.listdir("/dev/shm")) - shm)
    name = os.path.basename(binary)
    if p.returncode != 0:
        raise BenchError("%s exited with status %d" % (name, p.returncode))
    if left:
        raise BenchError("%s left processes %s (killed)" % (name, left))
    if new:
        raise BenchError("%s left /dev/shm entries %s" % (name, new))
    return dt


def tests_run(binary, env, passed):
    """Runs binary once, to a file; the number of tests its output says
    passed (all of them), or an error."""
    with tempfile.TemporaryFile() as f:
        run(binary, env, f)
        f.seek(0)
        text = f.read().decode(errors="replace")
    m = re.search(passed, text)
    if not m:
        raise BenchError("%s: no line saying every test passed"
                         % os.path.basename(binary))
    return int(m.group(1))


def measure(bindir, rounds, suite, fw, extra, passed, env):
    plain = os.path.realpath(os.path.join(bindir, "bench_adapter_%s_plain" % fw))
    guarded = os.path.realpath(os.path.join(bindir, "bench_adapter_%s_guarded" % fw))
    if not (os.path.exists(plain) and os.path.exists(guarded)):
        print("info adapters_%s not built (no %s in this build)" % (suite, fw))
        return
    env = dict(env, **extra)
    n = tests_run(plain, env, passed)
    if tests_run(guarded, env, passed) != n:
        raise BenchError("%s: plain and guarded ran different numbers of tests" % suite)
    tp, tg = [], []
    for r in range(rounds):
        pair = (plain, guarded) if r % 2 == 0 else (guarded, plain)
        t = {b: run(b, env) for b in pair}
        tp.append(t[plain])
        tg.append(t[guarded])
    ratios = sorted(g / p for g, p in zip(tg, tp))
    ratio = statistics.median(ratios)
    added = statistics.median(g - p for g, p in zip(tg, tp))
    print("ratio %s_guarded_vs_plain %.2f target %g %s"
          % (suite, ratio, TARGET, "ok" if ratio <= TARGET else "miss"))
    print("info adapters_%s tests %d plain_ms %.2f guarded_ms %.2f "
          "per_test_us %.0f rounds_ratio %.2f-%.2f"
          % (suite, n, statistics.median(tp) * 1e3, statistics.median(tg) * 1e3,
             added / n * 1e6, ratios[0], ratios[-1]))
    sys.stdout.flush()


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: adapters_overhead.py BINDIR ROUNDS")
    bindir, rounds = sys.argv[1], int(sys.argv[2])
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROP)}
    try:
        for suite, fw, extra, passed in SUITES:
            measure(bindir, rounds, suite, fw, extra, passed, env)
    except BenchError as e:
        sys.exit("adapters_overhead: %s" % e)


if __name__ == "__main__":
    main()
