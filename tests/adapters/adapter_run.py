# SPDX-License-Identifier: MIT
"""What the adapters' drivers (tests/gtest, tests/criterion, tests/check)
share: the run's child subreaper and what it leaves, the audit lines of a
run, and the words of the guard's reports.

A driver imports it with tests/adapters on sys.path:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "adapters"))
    import adapter_run
"""
import argparse
import ctypes
import json
import os
import re
import signal
import xml.etree.ElementTree as ET

# The guard's kinds, and its name: a test whose text has none of these was
# judged clean by the guard.
# The guard's words: its kinds, and its own lines ("mpfixture: ..."), not
# the word in a path (a checkout named mpfixture, in an assertion's file).
KINDS = r"shm_leak|survivor|escapee|zombie|escaped_fork|fd_leak|budget|mpfixture:"
PR_SET_CHILD_SUBREAPER = 36


def arguments():
    """The options every driver takes (its own are added to them): the
    binary, --expect, --xml-has, --audit and --env, each but the binary
    repeatable."""
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    for option in ("--expect", "--xml-has", "--audit", "--env"):
        ap.add_argument(option, action="append", default=[])
    return ap


def blocks(output, started, ended):
    """Test name -> (verdict, the text printed while it ran), from a
    framework's output: `started` matches a test's first line (group 1: its
    name), ended(name) is the regex of its verdict line (group 1: the
    verdict); a test without one has the verdict NONE."""
    out = {}
    for m in re.finditer(started, output, re.M):
        name = m.group(1)
        e = re.compile(ended(name), re.M).search(output, m.end())
        if not e:
            out[name] = ("NONE", output[m.end():])
            continue
        out[name] = (e.group(1), output[m.end():e.start()])
    return out


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


def check_expect(seen, specs, framework, fails, problems, flags=0):
    """Each spec 'name=VERDICT[:regex@@regex...]': seen (name -> (verdict,
    text), from the framework's output) has the verdict for the test, and
    each regex matches its text. Returns whether any expected verdict is a
    failure (fails(VERDICT)); what does not hold is appended to problems."""
    any_failed = False
    for spec in specs:
        name, _, rest = spec.partition("=")
        verdict, _, regexes = rest.partition(":")
        got, text = seen.get(name, ("MISSING", ""))
        any_failed |= fails(verdict)
        if got != verdict:
            problems.append(f"{name}: {framework} said {got}, expected "
                            f"{verdict}")
        for rx in filter(None, regexes.split("@@")):
            if not re.search(rx, text, flags):
                problems.append(f"{name}: its output lacks /{rx}/")
    return any_failed


def check_clean(seen, names, problems):
    """Each test of names ran, and its text names none of the guard's kinds
    (its failure, if any, is its own)."""
    for name in names:
        got, text = seen.get(name, ("MISSING", ""))
        m = re.search(KINDS, text)
        if got == "MISSING" or m:
            problems.append(f"{name}: expected none of the guard's words, "
                            f"found {m.group(0) if m else 'no test'}")


def check_exit_status(status, any_failed, problems):
    """The binary's exit status says failure iff a test failed."""
    if (status != 0) != any_failed:
        problems.append(f"exit status {status}, expected "
                        f"{'non-zero' if any_failed else '0'}")


def check_nothing_left(problems):
    """No process of the run is left (leftover_children)."""
    left = leftover_children()
    if left:
        problems.append("processes left behind: " + "; ".join(left))


def check_xml_failures(xml_path, specs, framework, split, failures,
                       problems):
    """Each spec, split(spec) -> (test name, regex): the framework's XML
    report holds a failure of the test whose text matches the regex
    (failures(root, name): the texts of the test's failures). The report
    is removed."""
    root = None
    if specs:
        try:
            root = ET.parse(xml_path).getroot()
        except (OSError, ET.ParseError) as e:
            problems.append(f"no XML from {framework}: {e}")
    for spec in specs:
        name, rx = split(spec)
        texts = failures(root, name) if root is not None else []
        if not any(re.search(rx, t) for t in texts):
            problems.append(f"XML: no failure of {name} matching /{rx}/")
    if os.path.exists(xml_path):
        os.unlink(xml_path)


def check_shm_gone(names, pid, problems):
    """No /dev/shm name of names ({pid}: the binary's pid) is left; one
    that is, is removed."""
    for name in names:
        shm = name.format(pid=pid)
        if os.path.exists("/dev/shm/" + shm):
            os.unlink("/dev/shm/" + shm)
            problems.append(f"/dev/shm/{shm} left behind")


def verdict(driver, problems):
    """One "<driver>: FAIL: ..." line a problem, or "<driver>: PASS";
    the exit status of the driver."""
    for p in problems:
        print(f"{driver}: FAIL: {p}")
    if problems:
        return 1
    print(f"{driver}: PASS")
    return 0
