#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bazel's test protocol in a guarded GoogleTest suite, without Bazel: the
environment bazel test's test-setup.sh gives a test (TEST_* and the
GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS it derives, XML_OUTPUT_FILE,
TESTBRIDGE_TEST_ONLY, TEST_PREMATURE_EXIT_FILE,
TEST_UNDECLARED_OUTPUTS_DIR), 4 shards, each death test style:

    check_gtest_bazel.py SUITE

- every test selected by the filter runs in exactly one shard (gtest's
  XML of each shard and its "[ RUN      ]" lines agree);
- each shard touched TEST_SHARD_STATUS_FILE;
- the leaking test is a failure in its shard's XML_OUTPUT_FILE with the
  guard's message (and the kind); the clean ones pass;
- the premature-exit file is gone after each normal end;
- the audit of each shard is in its TEST_UNDECLARED_OUTPUTS_DIR, one line
  per test of the shard;
- an invalid shard index is refused before any test runs.
Prints what it saw; "check_gtest_bazel: PASS", else a FAIL line each.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "adapters"))
import adapter_run  # noqa: E402

FILTER = "Leaks.*:DeathTests.*"
SHARDS = 4
problems = []


def selected(suite):
    out = subprocess.run([suite, "--gtest_list_tests",
                          "--gtest_filter=" + FILTER],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    tests, current = [], None
    for line in out.splitlines():
        if not line.startswith(" "):
            current = line.split()[0]
        else:
            tests.append(current + line.split()[0])
    return tests


def xml_cases(path):
    """{Suite.Name: failure text or None} of gtest's XML."""
    cases = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        problems.append("XML_OUTPUT_FILE %s: %s" % (path, e))
        return cases
    for tc in root.iter("testcase"):
        name = tc.get("classname") + "." + tc.get("name")
        texts = [(f.get("message") or "") + "\n" + (f.text or "")
                 for f in tc.iter("failure")]
        cases[name] = "\n".join(texts) if texts else None
    return cases


def run_shard(suite, tmp, style, index):
    d = os.path.join(tmp, "%s%d" % (style, index))
    os.makedirs(os.path.join(d, "outputs"))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TEST_", "GTEST_", "MPF_", "XML_OUTPUT",
                                "TESTBRIDGE"))}
    env.update(TEST_TOTAL_SHARDS=str(SHARDS), TEST_SHARD_INDEX=str(index),
               GTEST_TOTAL_SHARDS=str(SHARDS), GTEST_SHARD_INDEX=str(index),
               TEST_SHARD_STATUS_FILE=os.path.join(d, "status"),
               XML_OUTPUT_FILE=os.path.join(d, "test.xml"),
               TESTBRIDGE_TEST_ONLY=FILTER,
               TEST_PREMATURE_EXIT_FILE=os.path.join(d, "premature"),
               TEST_UNDECLARED_OUTPUTS_DIR=os.path.join(d, "outputs"),
               TEST_TMPDIR=d, GTEST_COLOR="no")
    cmd = [suite, "--gtest_death_test_style=" + style]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    print("$ %s  (shard %d of %d)\n%s" % (" ".join(cmd), index, SHARDS,
                                         p.stdout))
    ran = re.findall(r"^\[ RUN      \] (\S+)$", p.stdout, re.M)
    where = "%s shard %d" % (style, index)
    if not os.path.exists(env["TEST_SHARD_STATUS_FILE"]):
        problems.append(where + ": TEST_SHARD_STATUS_FILE not touched")
    if os.path.exists(env["TEST_PREMATURE_EXIT_FILE"]):
        problems.append(where + ": TEST_PREMATURE_EXIT_FILE left behind")
    cases = xml_cases(env["XML_OUTPUT_FILE"])
    if sorted(cases) != sorted(ran):
        problems.append("%s: XML has %s, gtest ran %s"
                        % (where, sorted(cases), sorted(ran)))
    audit = os.path.join(d, "outputs", "mpfixture-audit.jsonl")
    audited = []
    if os.path.exists(audit):
        with open(audit) as f:
            audited = [json.loads(line).get("case") for line in f]
    if sorted(audited) != sorted(ran):
        problems.append("%s: audit in TEST_UNDECLARED_OUTPUTS_DIR has %s, "
                        "expected %s" % (where, sorted(audited), sorted(ran)))
    return ran, cases, p.returncode


def main():
    suite = os.path.abspath(sys.argv[1])
    adapter_run.become_subreaper("check_gtest_bazel")
    tmp = tempfile.mkdtemp(prefix="mpf_gtest_bazel_")
    want = selected(suite)
    if len(want) < 8:
        problems.append("the filter selects %s" % want)
    try:
        for style in ("fast", "threadsafe"):
            seen = {}
            for index in range(SHARDS):
                ran, cases, status = run_shard(suite, tmp, style, index)
                for name in ran:
                    seen.setdefault(name, []).append(index)
                failed = [n for n in cases if cases[n] is not None]
                if (status != 0) != bool(failed):
                    problems.append("%s shard %d: exit status %d with "
                                    "failures %s" % (style, index, status,
                                                     failed))
                for name, text in cases.items():
                    leak = name.startswith("Leaks.Leaves")
                    bad = name == "Leaks.FailsAnAssertion" or leak
                    if bad != (text is not None):
                        problems.append("%s: %s %s in the XML" % (
                            style, name, "passed" if text is None else
                            "failed:\n" + text))
                shm = cases.get("Leaks.LeavesShmObject")
                if shm is not None and not re.search(
                        r"mpfixture: [^ ]*Leaks\.LeavesShmObject FAILED "
                        r"\[shm_leak\].*\n *shm_leak +mpf_gtest_leak", shm):
                    problems.append("%s: the leak's XML failure lacks the "
                                    "guard's message: %s" % (style, shm))
            for name in want:
                if len(seen.get(name, [])) != 1:
                    problems.append("%s: %s ran in shards %s, expected "
                                    "exactly one" % (style, name,
                                                     seen.get(name, [])))
            if sorted(seen) != sorted(want):
                problems.append("%s: ran %s, selected %s" % (
                    style, sorted(seen), sorted(want)))
        # An index not below the total: refused, fatally, before any test.
        env = dict(os.environ, TEST_TOTAL_SHARDS="4", TEST_SHARD_INDEX="4",
                   GTEST_COLOR="no")
        p = subprocess.run([suite, "--gtest_filter=" + FILTER], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=300, stdin=subprocess.DEVNULL)
        print(p.stdout)
        if p.returncode == 0 or "TEST_SHARD_INDEX='4'" not in p.stdout or \
                "[       OK ]" in p.stdout:
            problems.append("an invalid shard index was not refused before "
                            "the tests")
    finally:
        shutil.rmtree(tmp)
    left = adapter_run.leftover_children()
    if left:
        problems.append("processes left behind: " + "; ".join(left))
    return adapter_run.verdict("check_gtest_bazel", problems)


if __name__ == "__main__":
    sys.exit(main())
