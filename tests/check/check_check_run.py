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
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "adapters"))
import adapter_run  # noqa: E402

RESULT = re.compile(r"^[^\n:]+:\d+:([PFES]):(\w+):(\w+):\d+: ", re.M)
SUMMARY = re.compile(r"^\d+%: Checks: ", re.M)


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


def xml_failures(root, name):
    """The messages of the test's failures in Check's XML log."""
    texts = []
    for t in root.iter():
        if t.tag.endswith("test") and t.get("result") == "failure":
            tid = next((c.text for c in t if c.tag.endswith("id")), "")
            if tid == name:
                texts += [c.text or "" for c in t
                          if c.tag.endswith("message")]
    return texts


def main():
    ap = adapter_run.arguments()
    ap.add_argument("--mode", choices=["fork", "nofork"], required=True)
    ap.add_argument("--tcase")
    ap.add_argument("--case")
    ap.add_argument("--stderr-has", action="append", default=[])
    a = ap.parse_args()
    adapter_run.become_subreaper("check_check_run")
    problems = []
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
        adapter_run.check_nothing_left(problems)
        print(run.stdout)
        print(run.stderr, file=sys.stderr)
        # A test fails unless Check says P (F, or S: a checked fixture).
        any_failed = adapter_run.check_expect(
            results(run.stdout), a.expect, "Check", lambda v: v != "P",
            problems, re.M)
        adapter_run.check_exit_status(run.returncode, any_failed, problems)
        for rx in a.stderr_has:
            if not re.search(rx, run.stderr, re.M):
                problems.append(f"/{rx}/ not on the run's stderr")
        adapter_run.check_xml_failures(
            xml_path, a.xml_has, "Check",
            lambda spec: spec.partition(":")[::2], xml_failures, problems)
        adapter_run.check_audit(audit_path, a.audit, problems)
        planted = [n for n in os.listdir("/dev/shm")
                   if n.startswith("mpf_check_leak.")]
        # Another run's (ctest -j) while its planter lives; this run's are
        # gone with their processes.
        mine = [n for n in planted if not os.path.exists(
            f"/proc/{n.rsplit('.', 1)[1]}")]
        if mine:
            problems.append(f"/dev/shm objects left: {mine}")
    return adapter_run.verdict("check_check_run", problems)


if __name__ == "__main__":
    sys.exit(main())
