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
import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "adapters"))
import adapter_run  # noqa: E402

def blocks(output):
    """Test name -> (verdict, the text printed while it ran)."""
    out = {}
    run = re.compile(r"^\[ RUN      \] (\S+)$", re.M)
    for m in run.finditer(output):
        name = m.group(1)
        end = re.compile(r"^\[ *(OK|FAILED|SKIPPED) *\] " + re.escape(name)
                         + r"[ ,]", re.M)
        e = end.search(output, m.end())
        if not e:
            out[name] = ("NONE", output[m.end():])
            continue
        out[name] = (e.group(1), output[m.end():e.start()])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--filter", default="*")
    ap.add_argument("--style", choices=["fast", "threadsafe"])
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--clean", action="append", default=[])
    ap.add_argument("--xml-has", action="append", default=[])
    ap.add_argument("--audit", action="append", default=[])
    ap.add_argument("--output-has", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
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
    any_failed = False
    for rx in a.output_has:
        if not re.search(rx, output):
            problems.append(f"the output lacks /{rx}/")
    for spec in a.expect:
        name, _, rest = spec.partition("=")
        verdict, _, regexes = rest.partition(":")
        got, text = seen.get(name, ("MISSING", ""))
        any_failed |= verdict == "FAILED"
        if got != verdict:
            problems.append(f"{name}: gtest said {got}, expected {verdict}")
        for rx in filter(None, regexes.split("@@")):
            if not re.search(rx, text):
                problems.append(f"{name}: its output lacks /{rx}/")
    for name in a.clean:
        got, text = seen.get(name, ("MISSING", ""))
        m = re.search(adapter_run.KINDS, text)
        if got == "MISSING" or m:
            problems.append(f"{name}: expected none of the guard's words, "
                            f"found {m.group(0) if m else 'no test'}")
    if (status != 0) != any_failed:
        problems.append(f"exit status {status}, expected "
                        f"{'non-zero' if any_failed else '0'}")

    if a.xml_has:
        try:
            root = ET.parse(xml_path).getroot()
        except (OSError, ET.ParseError) as e:
            root = None
            problems.append(f"no XML from gtest: {e}")
        for spec in a.xml_has:
            name, _, rx = spec.partition(":")
            suite, _, test = name.partition(".")
            msgs = []
            if root is not None:
                for case in root.iter("testcase"):
                    if case.get("classname") == suite and case.get("name") == test:
                        msgs += [f.get("message", "") for f in case.iter("failure")]
            if not any(re.search(rx, m) for m in msgs):
                problems.append(f"XML: no failure of {name} matching /{rx}/")
    if os.path.exists(xml_path):
        os.unlink(xml_path)

    adapter_run.check_audit(audit_path, a.audit, problems)

    left = adapter_run.leftover_children()
    if left:
        problems.append("processes left behind: " + "; ".join(left))
    for shm in ["mpf_gtest_leak.{pid}"] + a.shm_gone:
        shm = shm.format(pid=proc.pid)
        if os.path.exists("/dev/shm/" + shm):
            os.unlink("/dev/shm/" + shm)
            problems.append(f"/dev/shm/{shm} left behind")

    for p in problems:
        print("check_gtest_run: FAIL: " + p)
    if problems:
        return 1
    print("check_gtest_run: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
