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
    for m in re.finditer(r"^\[RUN \] (\S+)$", output, re.M):
        name = m.group(1)
        end = re.compile(r"^\[(PASS|FAIL|SKIP)\] " + re.escape(name) + r"\b",
                         re.M)
        e = end.search(output, m.end())
        if not e:
            out[name] = ("NONE", output[m.end():])
            continue
        out[name] = (e.group(1), output[m.end():e.start()])
    return out


def xml_failures(path, name):
    suite, _, test = name.partition("::")
    root = ET.parse(path).getroot()
    texts = []
    for suite_el in root.iter("testsuite"):
        if suite_el.get("name") != suite:
            continue
        for case in suite_el.iter("testcase"):
            if case.get("name") == test:
                for f in case.iter("failure"):
                    texts.append((f.get("message") or "") + (f.text or ""))
    return texts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--filter", default="*/*")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--clean", action="append", default=[])
    ap.add_argument("--xml-has", action="append", default=[])
    ap.add_argument("--audit", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
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
    any_failed = False
    for spec in a.expect:
        name, _, rest = spec.partition("=")
        verdict, _, regexes = rest.partition(":")
        got, text = seen.get(name, ("MISSING", ""))
        any_failed |= verdict == "FAIL"
        if got != verdict:
            problems.append(f"{name}: Criterion said {got}, expected {verdict}")
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

    for spec in a.xml_has:
        # "suite::name:regex": the name ends at the first ':' after "::".
        suite, _, rest = spec.partition("::")
        test, _, rx = rest.partition(":")
        name = suite + "::" + test
        try:
            texts = xml_failures(xml_path, name)
        except (OSError, ET.ParseError) as e:
            texts = []
            problems.append(f"no XML from Criterion: {e}")
        if not any(re.search(rx, t) for t in texts):
            problems.append(f"XML: no failure of {name} matching /{rx}/")
    if os.path.exists(xml_path):
        os.unlink(xml_path)

    adapter_run.check_audit(audit_path, a.audit, problems)
    os.rmdir(tmp)

    left = adapter_run.leftover_children()
    if left:
        problems.append("processes left behind: " + "; ".join(left))
    for planted in ("leak", "kept"):
        shm = f"mpf_criterion_{planted}.{proc.pid}"
        if os.path.exists("/dev/shm/" + shm):
            os.unlink("/dev/shm/" + shm)
            problems.append(f"/dev/shm/{shm} left behind")

    for p in problems:
        print("check_criterion_run: FAIL: " + p)
    if problems:
        return 1
    print("check_criterion_run: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
