#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a guarded GoogleTest binary and assert gtest's own verdicts.

    check_gtest_run.py BINARY [--filter F] [--style fast|threadsafe]
        [--expect Test.Name=OK] [--expect 'Test.Name=FAILED:regex@@regex']
        [--clean Test.Name] [--xml-has 'Test.Name:regex']

--expect   the test ends "[       OK ]", "[  FAILED  ]" or "[  SKIPPED ]" in
           gtest's output (Test.Name=OK, =FAILED, =SKIPPED);
           each regex must match the text gtest printed for it (between
           its "[ RUN      ]" and verdict lines).
--clean    the test's text names none of the guard's kinds (its failure,
           if any, is its own).
--xml-has  gtest's XML (--gtest_output=xml) holds a failure of the test
           whose message matches the regex.
--audit    'Test.Name=outcome,verdict': the audit line of the case
           (MPF_AUDIT) has the test's own outcome ("test") and the
           guard's verdict.
--output-has  the whole output matches the regex (e.g. a failure of the
           group, outside every test).
--env      'NAME=value' in the binary's environment.
--no-stdin the binary runs with its standard input closed.
--shm-gone a /dev/shm name (with {pid}: the binary's pid) that must not
           be left.
After the run: the binary's exit status says failure iff a test failed;
no process of the run is left (this script is the run's child subreaper)
and the run's planted /dev/shm object is gone.
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
        output, r"^\[ RUN      \] (\S+)$",
        lambda name: r"^\[ *(OK|FAILED|SKIPPED) *\] " + re.escape(name)
        + r"[ ,]")


def xml_failures(root, name):
    """The messages of the failures of Suite.Test in gtest's XML."""
    suite, _, test = name.partition(".")
    msgs = []
    for case in root.iter("testcase"):
        if case.get("classname") == suite and case.get("name") == test:
            msgs += [f.get("message", "") for f in case.iter("failure")]
    return msgs


def main():
    ap = adapter_run.arguments()
    ap.add_argument("--filter", default="*")
    ap.add_argument("--style", choices=["fast", "threadsafe"])
    ap.add_argument("--clean", action="append", default=[])
    ap.add_argument("--output-has", action="append", default=[])
    ap.add_argument("--no-stdin", action="store_true")
    ap.add_argument("--shm-gone", action="append", default=[])
    a = ap.parse_args()

    adapter_run.become_subreaper("check_gtest_run")
    xml_path = tempfile.mktemp(prefix="mpf_gtest_", suffix=".xml")
    cmd = [a.binary, "--gtest_filter=" + a.filter,
           "--gtest_output=xml:" + xml_path]
    if a.style:
        cmd.append("--gtest_death_test_style=" + a.style)
    audit_path = tempfile.mktemp(prefix="mpf_gtest_", suffix=".jsonl")
    env = dict(os.environ, GTEST_COLOR="no", MPF_AUDIT=audit_path)
    env.pop("GTEST_OUTPUT", None)
    env.update(e.split("=", 1) for e in a.env)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, env=env,
                            preexec_fn=(lambda: os.close(0)) if a.no_stdin
                            else None)
    output = proc.communicate()[0].decode(errors="replace")
    status = proc.returncode
    print(output)
    problems = []

    seen = blocks(output)
    for rx in a.output_has:
        if not re.search(rx, output):
            problems.append(f"the output lacks /{rx}/")
    any_failed = adapter_run.check_expect(seen, a.expect, "gtest",
                                          lambda v: v == "FAILED", problems)
    adapter_run.check_clean(seen, a.clean, problems)
    adapter_run.check_exit_status(status, any_failed, problems)

    adapter_run.check_xml_failures(
        xml_path, a.xml_has, "gtest",
        lambda spec: spec.partition(":")[::2],
        xml_failures, problems)

    adapter_run.check_audit(audit_path, a.audit, problems)

    adapter_run.check_nothing_left(problems)
    adapter_run.check_shm_gone(["mpf_gtest_leak.{pid}"] + a.shm_gone,
                               proc.pid, problems)

    return adapter_run.verdict("check_gtest_run", problems)


if __name__ == "__main__":
    sys.exit(main())
