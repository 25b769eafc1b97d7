# SPDX-License-Identifier: MIT
"""What the adapters' drivers (tests/gtest, tests/criterion, tests/check)
share: the run's child subreaper and what it leaves, the audit lines of a
run, and the words of the guard's reports.

A driver imports it with tests/adapters on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "adapters"))
    import adapter_run
"""
import ctypes
import json
import os
import signal

# The guard's kinds, and its name: a test whose text has none of these was
# judged clean by the guard.
KINDS = r"shm_leak|survivor|escapee|zombie|escaped_fork|fd_leak|budget|mpfixture"
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper(driver):
    """What the run leaves (the binary's children, daemons, a framework's
    workers) is re-parented to this process, so it can be seen and ended."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"{driver}: prctl(PR_SET_CHILD_SUBREAPER) failed")


def leftover_children():
    """Processes of the run re-parented to this process, alive or zombies,
    as "pid cmdline"; killed and reaped here (they are the run's)."""
    pids = []
    task_dir = "/proc/self/task"
    for tid in os.listdir(task_dir):
        with open(os.path.join(task_dir, tid, "children")) as f:
            pids += [int(p) for p in f.read().split()]
    left = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmd = "?"
        left.append(f"{pid} {cmd.strip()}")
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass
    return left


def check_audit(audit_path, specs, problems):
    """Each spec 'case=outcome,verdict': the case's audit line has the
    test's own outcome ("test") and the guard's verdict. The audit file is
    removed; what does not hold is appended to problems."""
    lines = {}
    if os.path.exists(audit_path):
        with open(audit_path) as f:
            for line in f:
                d = json.loads(line)
                lines[d.get("case")] = d
        os.unlink(audit_path)
    for spec in specs:
        name, _, want = spec.partition("=")
        outcome, _, verdict = want.partition(",")
        d = lines.get(name)
        if d is None:
            problems.append(f"audit: no line of case {name}")
        elif (d.get("test"), d.get("verdict")) != (outcome, verdict):
            problems.append(f"audit: {name} has test={d.get('test')} "
                            f"verdict={d.get('verdict')}, expected "
                            f"test={outcome} verdict={verdict}")


def verdict(driver, problems):
    """One "<driver>: FAIL: ..." line a problem, or "<driver>: PASS";
    the exit status of the driver."""
    for p in problems:
        print(f"{driver}: FAIL: {p}")
    if problems:
        return 1
    print(f"{driver}: PASS")
    return 0
