#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a guarded Criterion binary and assert Criterion's own verdicts.

    check_criterion_run.py BINARY [--filter F]
        [--expect suite::name=PASS] [--expect 'suite::name=FAIL:regex@@regex']
        [--clean suite::name] [--xml-has 'suite::name:regex']
        [--audit 'suite/name=outcome,verdict'] [--env VAR=value]

--expect   Criterion ends the test "[PASS]", "[FAIL]" or "[SKIP]"; each
           regex must match the text it printed for it (between its
           "[RUN ]" and verdict lines, --verbose, one job).
--clean    the test's text names none of the guard's kinds (its failure,
           if any, is its own).
--xml-has  Criterion's XML report (--xml) holds a failure of the test whose
           text matches the regex.
--audit    the audit line of the case (MPF_AUDIT) has the test's own
           outcome ("test") and the guard's verdict.
--env      set in the binary's environment.
--arg      one more argument of the binary (e.g. --arg=--full-stats).
After the run: the binary's exit status says failure iff a test failed; no
process of the run is left, Criterion's workers included (this script is
the run's child subreaper), and the run's planted /dev/shm object is gone.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "adapters"))
import adapter_run  # noqa: E402

def blocks(output):
    """Test name -> (verdict, the text printed while it ran)."""
    return adapter_run.blocks(
        output, r"^\[RUN \] (\S+)$",
        lambda name: r"^\[(PASS|FAIL|SKIP)\] " + re.escape(name) + r"\b")


def xml_failures(root, name):
    """The texts of the failures of suite::name in Criterion's XML."""
    suite, _, test = name.partition("::")
    texts = []
    for suite_el in root.iter("testsuite"):
        if suite_el.get("name") != suite:
            continue
        for case in suite_el.iter("testcase"):
            if case.get("name") == test:
                for f in case.iter("failure"):
                    texts.append((f.get("message") or "") + (f.text or ""))
    return texts


def split_xml_spec(spec):
    """"suite::name:regex": the name ends at the first ':' after "::"."""
    suite, _, rest = spec.partition("::")
    test, _, rx = rest.partition(":")
    return suite + "::" + test, rx


def main():
    ap = adapter_run.arguments()
    ap.add_argument("--filter", default="*/*")
    ap.add_argument("--clean", action="append", default=[])
    ap.add_argument("--arg", action="append", default=[])
    a = ap.parse_args()

    adapter_run.become_subreaper("check_criterion_run")
    tmp = tempfile.mkdtemp(prefix="mpf_criterion_")
    xml_path = os.path.join(tmp, "report.xml")
    audit_path = os.path.join(tmp, "audit.jsonl")
    cmd = [a.binary, "--filter=" + a.filter, "--verbose", "-j1",
           "--color=never", "--xml=" + xml_path] + a.arg
    env = dict(os.environ, MPF_AUDIT=audit_path)
    env.update(e.split("=", 1) for e in a.env)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env)
    output = proc.communicate()[0].decode(errors="replace")
    status = proc.returncode
    print(output)
    problems = []

    seen = blocks(output)
    any_failed = adapter_run.check_expect(seen, a.expect, "Criterion",
                                          lambda v: v == "FAIL", problems)
    adapter_run.check_clean(seen, a.clean, problems)
    adapter_run.check_exit_status(status, any_failed, problems)

    adapter_run.check_xml_failures(xml_path, a.xml_has, "Criterion",
                                   split_xml_spec, xml_failures, problems)

    adapter_run.check_audit(audit_path, a.audit, problems)
    os.rmdir(tmp)

    adapter_run.check_nothing_left(problems)
    adapter_run.check_shm_gone(["mpf_criterion_leak.{pid}",
                                "mpf_criterion_kept.{pid}"],
                               proc.pid, problems)

    return adapter_run.verdict("check_criterion_run", problems)


if __name__ == "__main__":
    sys.exit(main())
