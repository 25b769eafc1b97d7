#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run the guarded Check suite and assert Check's own verdicts.

    check_check_run.py BINARY --mode fork|nofork [--tcase NAME] [--case GLOB]
        [--env VAR=value]
        [--expect name=P] [--expect 'name=F:regex@@regex']
        [--xml-has 'name:regex'] [--audit 'name=outcome,verdict']
        [--stderr-has regex]

--env      one more variable of the run's environment.
--tcase    runs that TCase only (Check's CK_RUN_CASE); --case, the tests
           MPF_CASE selects.
--expect   Check's result line of the test (CK_VERBOSITY=verbose) says P
           (passed), F (failed) or S (failed in a checked fixture); each regex must match its message (the
           text after "file:line:F:tcase:name:0: ", to the next result).
--xml-has  Check's XML log (CK_XML_LOG_FILE_NAME) has the test with a
           message matching the regex.
--stderr-has  the run's stderr matches the regex.
--audit    the audit line of the case (MPF_AUDIT) has the test's own
           outcome ("test") and the guard's verdict.
After the run: no process of the run is left (this script is the run's
child subreaper), and no /dev/shm object the suite plants.
"""
import argparse
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

PR_SET_CHILD_SUBREAPER = 36
RESULT = re.compile(r"^[^\n:]+:\d+:([PFES]):(\w+):(\w+):\d+: ", re.M)
SUMMARY = re.compile(r"^\d+%: Checks: ", re.M)


def fail(why):
    print(f"check_check_run: FAIL: {why}")
    sys.exit(1)


def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        fail("prctl(PR_SET_CHILD_SUBREAPER) failed")


def reap_leftovers():
    """The run's processes re-parented here; killed and reaped (they are
    this run's), and returned for the verdict."""
    left = []
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/children") as f:
            for pid in map(int, f.read().split()):
                try:
                    with open(f"/proc/{pid}/comm") as c:
                        left.append(f"{pid} {c.read().strip()}")
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    left.append(str(pid))
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    return left


def results(stdout):
    """{test: (letter, message)} from Check's verbose output."""
    found = {}
    starts = list(RESULT.finditer(stdout))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(stdout)
        summary = SUMMARY.search(stdout, m.end(), end)
        if summary:
            end = summary.start()
        found[m.group(3)] = (m.group(1), stdout[m.end():end].rstrip("\n"))
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--mode", choices=["fork", "nofork"], required=True)
    ap.add_argument("--tcase")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--case")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--xml-has", action="append", default=[])
    ap.add_argument("--audit", action="append", default=[])
    ap.add_argument("--stderr-has", action="append", default=[])
    a = ap.parse_args()
    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="mpf_check_run.") as tmp:
        xml_path = os.path.join(tmp, "check.xml")
        audit_path = os.path.join(tmp, "audit.jsonl")
        env = dict(os.environ, CK_VERBOSITY="verbose",
                   CK_FORK="yes" if a.mode == "fork" else "no",
                   CK_XML_LOG_FILE_NAME=xml_path, MPF_AUDIT=audit_path)
        env.pop("MPF_CASE", None)
        env.pop("CK_RUN_CASE", None)
        if a.tcase:
            env["CK_RUN_CASE"] = a.tcase
        for item in a.env:
            name, _, value = item.partition("=")
            env[name] = value
        if a.case:
            env["MPF_CASE"] = a.case
        # A session of its own: a runner that kills its process group
        # (Check's SIGALRM handler does, killpg(0) in no-fork mode) takes
        # this script and ctest with it otherwise.
        run = subprocess.run([a.binary], env=env, capture_output=True,
                             text=True, timeout=100, check=False,
                             start_new_session=True)
        left = reap_leftovers()
        print(run.stdout)
        print(run.stderr, file=sys.stderr)
        found = results(run.stdout)
        failed_any = False
        for item in a.expect:
            name, _, want = item.partition("=")
            letter, _, regexes = want.partition(":")
            if name not in found:
                fail(f"{name}: no result line of Check")
            got, message = found[name]
            failed_any |= got != "P"
            if got != letter:
                fail(f"{name}: Check says {got}, expected {letter}: {message}")
            for rx in filter(None, regexes.split("@@")):
                if not re.search(rx, message, re.M):
                    fail(f"{name}: /{rx}/ not in Check's message:\n{message}")
        if failed_any != (run.returncode != 0):
            fail(f"exit status {run.returncode} with failures={failed_any}")
        for rx in a.stderr_has:
            if not re.search(rx, run.stderr, re.M):
                fail(f"/{rx}/ not on the run's stderr")
        if a.xml_has:
            root = ET.parse(xml_path).getroot()
            tests = {}
            for t in root.iter():
                if t.tag.endswith("test"):
                    tid = next((c.text for c in t if c.tag.endswith("id")), "")
                    msg = next((c.text or "" for c in t
                                if c.tag.endswith("message")), "")
                    tests[tid] = (t.get("result"), msg)
            for item in a.xml_has:
                name, _, rx = item.partition(":")
                result, msg = tests.get(name, (None, ""))
                if result != "failure" or not re.search(rx, msg):
                    fail(f"XML of {name}: {result} {msg!r} lacks /{rx}/")
        if a.audit:
            lines = {}
            with open(audit_path) as f:
                for line in f:
                    j = json.loads(line)
                    lines[j["case"]] = j
            for item in a.audit:
                name, _, want = item.partition("=")
                outcome, _, verdict = want.partition(",")
                j = lines.get(name)
                if not j or j.get("test") != outcome or \
                        j.get("verdict") != verdict:
                    fail(f"audit of {name}: {j}")
        if left:
            fail(f"processes left by the run: {left}")
        planted = [n for n in os.listdir("/dev/shm")
                   if n.startswith("mpf_check_leak.")]
        # Another run's (ctest -j) while its planter lives; this run's are
        # gone with their processes.
        mine = [n for n in planted if not os.path.exists(
            f"/proc/{n.rsplit('.', 1)[1]}")]
        if mine:
            fail(f"/dev/shm objects left: {mine}")
    print("check_check_run: PASS")


if __name__ == "__main__":
    main()
