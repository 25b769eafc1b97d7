#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bazel's test protocol in the Check adapter, without Bazel: sets the
variables `bazel test` sets and runs a Check suite through
mpf_srunner_run_all(), in fork or no-fork mode.

    check_bazel_run.py shards    GUARDED_SUITE  --mode fork|nofork
    check_bazel_run.py filter    PROTOCOL_SUITE --mode ...
    check_bazel_run.py records   PROTOCOL_SUITE --mode ...
    check_bazel_run.py premature PROTOCOL_SUITE --mode ...
    check_bazel_run.py refused   PROTOCOL_SUITE --mode ...

shards:    4 shards run every test of the runner exactly once; each
           shard's XML_OUTPUT_FILE has the tests it ran, each leak with
           its kind, the failed assertion with outcome fail; the status
           file is touched; the audit is in TEST_UNDECLARED_OUTPUTS_DIR.
filter:    TESTBRIDGE_TEST_ONLY, alone and with shards.
records:   a loop test is one record a run; a test whose checked setup
           failed is "not run" (an error); a test Check's own filter
           (CK_RUN_CASE) leaves out is not in the XML.
premature: TEST_PREMATURE_EXIT_FILE exists while tests run, is removed at
           a normal end, is left when the runner dies.
refused:   invalid shard variables, an XML or a premature-exit file that
           cannot be written: the run fails, saying which variable.
Prints what it saw and "ok"; exits 1 naming the first broken promise.
After each run: no process of the run left (this script is the run's
child subreaper), no /dev/shm object the suites plant.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "adapters"))
import adapter_run  # noqa: E402

GUARDED = ["clean_first", "leaves_live_child", "leaves_shm_object",
           "leaves_zombie", "fails_an_assertion", "clean_again",
           "over_budget", "next_runs", "teardown_fails_after_it",
           "leaks_and_fails", "runs_after_a_failed_teardown"]
# Their verdicts in the XML: the guard's kinds, or the test's own outcome.
GUARDED_TYPES = {"leaves_live_child": "survivor",
                 "leaves_shm_object": "shm_leak", "leaves_zombie": "zombie",
                 "fails_an_assertion": "fail", "over_budget": "budget",
                 "leaks_and_fails": "survivor"}
RESULT = re.compile(r"^[^\n:]+:\d+:[PFES]:\w+:(\w+):\d+: ", re.M)
PROTOCOL = ["TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", "TEST_SHARD_STATUS_FILE",
            "XML_OUTPUT_FILE", "TESTBRIDGE_TEST_ONLY",
            "TEST_PREMATURE_EXIT_FILE", "TEST_UNDECLARED_OUTPUTS_DIR",
            "MPF_AUDIT", "MPF_CASE", "CK_RUN_CASE", "CK_RUN_SUITE",
            "PROTOCOL_SUITE_LEAK", "PROTOCOL_SUITE_KILL_RUNNER"]


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


class Runner:
    def __init__(self, suite, mode):
        self.suite, self.mode = suite, mode

    def run(self, runner_dies=False, **env):
        """The suite's run: (process, tests Check ran in run order, from
        the suite's "ran" lines, or else Check's result lines). A runner
        that dies leaves Check's child or the guard's watchdog to this
        subreaper: ended here, not counted as left."""
        e = {k: v for k, v in os.environ.items() if k not in PROTOCOL}
        e.update(CK_FORK="yes" if self.mode == "fork" else "no",
                 CK_VERBOSITY="verbose")
        e.update(env)
        # A session of its own: no-fork mode's killpg(0) stays in it.
        p = subprocess.run([self.suite], env=e, capture_output=True,
                           text=True, timeout=100, start_new_session=True)
        left = adapter_run.leftover_children()
        if left and not runner_dies:
            fail("processes left by the run: %s" % left)
        planted = [n for n in os.listdir("/dev/shm")
                   if n.startswith("mpf_check_leak.") and
                   not os.path.exists("/proc/" + n.rsplit(".", 1)[1])]
        if planted:
            fail("/dev/shm objects left: %s" % planted)
        ran = re.findall(r"^ran (\w+)$", p.stdout, re.M)
        if not ran:  # the guarded suite: Check's verbose result lines
            ran = RESULT.findall(p.stdout)
        return p, ran


def names(path):
    """The testcases of a JUnit file, in order, with their verdicts."""
    if not os.path.exists(path):
        fail("no XML_OUTPUT_FILE written")
    out = []
    for tc in ET.parse(path).getroot().iter("testcase"):
        bad = tc.find("failure")
        bad = tc.find("error") if bad is None else bad
        out.append((tc.get("name"), None if bad is None else bad.tag,
                    None if bad is None else bad.get("type")))
    return out


def shards(r, tmp):
    outputs = os.path.join(tmp, "outputs")
    seen = []
    for i in range(4):
        os.makedirs(os.path.join(outputs, str(i)))
        status = os.path.join(tmp, "status%d" % i)
        xml = os.path.join(tmp, "shard%d.xml" % i)
        p, ran = r.run(TEST_TOTAL_SHARDS="4", TEST_SHARD_INDEX=str(i),
                       TEST_SHARD_STATUS_FILE=status, XML_OUTPUT_FILE=xml,
                       TEST_UNDECLARED_OUTPUTS_DIR=os.path.join(outputs,
                                                                str(i)))
        if not os.path.exists(status):
            fail("shard %d did not touch TEST_SHARD_STATUS_FILE" % i)
        if not os.path.exists(xml):
            fail("shard %d wrote no XML_OUTPUT_FILE (exit status %d):\n%s"
                 % (i, p.returncode, p.stderr))
        in_xml = names(xml)
        if [n for n, _, _ in in_xml] != ran:
            fail("shard %d: Check ran %s, its XML names %s" % (i, ran, in_xml))
        for name, tag, kind in in_xml:
            want = GUARDED_TYPES.get(name)
            if name.startswith(("clean", "next", "runs_after")) and tag:
                fail("shard %d: %s failed in the XML: %s" % (i, name, kind))
            if want and (tag != "failure" or want not in kind.split(",")):
                fail("shard %d: %s is %s type=%s in the XML, expected a "
                     "failure of type %s" % (i, name, tag, kind, want))
        audit = os.path.join(outputs, str(i), "mpfixture-audit.jsonl")
        lines = open(audit).read().splitlines() if ran else []
        if len(lines) != len(ran):
            fail("shard %d: %d audit lines in TEST_UNDECLARED_OUTPUTS_DIR, "
                 "%d tests" % (i, len(lines), len(ran)))
        print("shard %d of 4: %s (exit status %d)" % (
            i, " ".join("%s%s" % (n, " [%s]" % k if t else "")
                        for n, t, k in in_xml), p.returncode))
        seen += ran
    for name in GUARDED:
        if seen.count(name) != 1:
            fail("%s ran %d times across the 4 shards" %
                 (name, seen.count(name)))
    if len(seen) != len(GUARDED):
        fail("%d runs across the shards, %d tests" % (len(seen), len(GUARDED)))
    print("every one of the %d tests ran in exactly one of 4 shards; the "
          "audit of each shard in its TEST_UNDECLARED_OUTPUTS_DIR"
          % len(GUARDED))


def filter_(r, tmp):
    xml = os.path.join(tmp, "test.xml")
    want = ["plain_one", "plain_two", "plain_four", "loops", "loops", "loops"]
    p, ran = r.run(TESTBRIDGE_TEST_ONLY="plain_*:loops", XML_OUTPUT_FILE=xml)
    if ran != want or [n for n, _, _ in names(xml)] != want or p.returncode:
        fail("TESTBRIDGE_TEST_ONLY=plain_*:loops: ran %s, XML %s, exit "
             "status %d\n%s" % (ran, names(xml), p.returncode, p.stderr))
    print("TESTBRIDGE_TEST_ONLY=plain_*:loops ran %s, exit status 0" % ran)
    seen = []
    for i in range(2):
        p, ran = r.run(TESTBRIDGE_TEST_ONLY="plain_*:loops",
                       TEST_TOTAL_SHARDS="2", TEST_SHARD_INDEX=str(i))
        seen += ran
    if sorted(seen) != sorted(want):
        fail("the filter over 2 shards ran %s" % seen)
    print("the filter over 2 shards: %s, each once" % sorted(set(seen)))
    # Nothing selected in any shard: one line naming the filter, no test
    # run, the run fails (issue 29, item 9).
    for shard in ("0", "1"):
        p, ran = r.run(TESTBRIDGE_TEST_ONLY="no_such_test", TEST_TOTAL_SHARDS="2",
                       TEST_SHARD_INDEX=shard)
        said = [l for l in p.stderr.splitlines() if l.startswith("mpfixture:")]
        if ran or p.returncode == 0 or said != [
                "mpfixture: TESTBRIDGE_TEST_ONLY='no_such_test' (--test_filter) "
                "matches no case of %s (in any shard)" % os.path.basename(r.suite)]:
            fail("a filter that selects nothing, shard %s: ran %s, exit status "
                 "%d, stderr %r" % (shard, ran, p.returncode, p.stderr))
    print("a filter that selects nothing: no test, one line, the run fails "
          "in every shard")


def records(r, tmp):
    xml = os.path.join(tmp, "test.xml")
    p, ran = r.run(XML_OUTPUT_FILE=xml, PROTOCOL_SUITE_LEAK="1")
    got = names(xml)
    want = [("plain_one", None, None), ("plain_two", None, None),
            ("leaks_when_asked", "failure", "shm_leak"),
            ("plain_four", None, None)] + [("loops", None, None)] * 3 + [
            ("after_a_failed_setup", "error", "not_run"),
            ("sees_the_premature_exit_file", None, None)]
    if got != want or p.returncode == 0:
        fail("the XML of the whole run (exit status %d):\n%s\nexpected\n%s"
             % (p.returncode, got, want))
    print("a loop test of 3 iterations: 3 records; a failed checked setup: "
          "<error type=\"not_run\">; a leak: <failure type=\"shm_leak\">")
    p, ran = r.run(XML_OUTPUT_FILE=xml, CK_RUN_CASE="Plain")
    if [n for n, _, _ in names(xml)] != ran or len(ran) != 4 or p.returncode:
        fail("CK_RUN_CASE=Plain: ran %s, XML %s, exit status %d" %
             (ran, names(xml), p.returncode))
    print("CK_RUN_CASE=Plain: only Plain's 4 tests in the XML, exit status 0")


def premature(r, tmp):
    path = os.path.join(tmp, "premature")
    p, ran = r.run(TEST_PREMATURE_EXIT_FILE=path, CK_RUN_CASE="Runner")
    if ran != ["sees_the_premature_exit_file"] or p.returncode:
        fail("the file was not there while the test ran: exit status %d, "
             "ran %s\n%s%s" % (p.returncode, ran, p.stdout, p.stderr))
    if os.path.exists(path):
        fail("TEST_PREMATURE_EXIT_FILE left after a normal end")
    print("normal end: the file was there while the test ran, and is "
          "removed")
    p, ran = r.run(TEST_PREMATURE_EXIT_FILE=path, CK_RUN_CASE="Runner",
                   PROTOCOL_SUITE_KILL_RUNNER="1", runner_dies=True)
    if not os.path.exists(path):
        fail("TEST_PREMATURE_EXIT_FILE removed though the runner was killed "
             "(exit status %d)" % p.returncode)
    print("the runner killed during a test (exit status %d): the file is "
          "left" % p.returncode)


def refused(r, tmp):
    for bad in [dict(TEST_TOTAL_SHARDS="4", TEST_SHARD_INDEX="4"),
                dict(TEST_TOTAL_SHARDS="four", TEST_SHARD_INDEX="0")]:
        p, ran = r.run(**bad)
        said = "TEST_TOTAL_SHARDS='%s' TEST_SHARD_INDEX='%s'" % (
            bad["TEST_TOTAL_SHARDS"], bad["TEST_SHARD_INDEX"])
        if p.returncode == 0 or said not in p.stderr or ran:
            fail("%s was not refused: exit status %d, ran %s\n%s" %
                 (bad, p.returncode, ran, p.stderr))
    print("invalid shard variables: refused, no test run")
    where = os.path.join(tmp, "a_directory.xml")
    os.mkdir(where)
    p, ran = r.run(XML_OUTPUT_FILE=where, CK_RUN_CASE="Plain")
    said = "XML_OUTPUT_FILE='%s': Is a directory" % where
    if len(ran) != 4 or p.returncode == 0 or said not in p.stderr:
        fail("an XML that cannot be written: exit status %d, ran %s\n%s" %
             (p.returncode, ran, p.stderr))
    print("an XML that cannot be written: the tests ran, the run fails")
    bad = os.path.join(tmp, "no", "premature")
    p, ran = r.run(TEST_PREMATURE_EXIT_FILE=bad, XML_OUTPUT_FILE=where)
    if p.returncode == 0 or ran or "TEST_PREMATURE_EXIT_FILE" not in p.stderr:
        fail("a premature-exit file that cannot be made: exit status %d, ran "
             "%s\n%s" % (p.returncode, ran, p.stderr))
    print("a premature-exit file that cannot be made: no test runs, the "
          "run fails")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["shards", "filter", "records",
                                     "premature", "refused"])
    ap.add_argument("suite")
    ap.add_argument("--mode", choices=["fork", "nofork"], required=True)
    a = ap.parse_args()
    adapter_run.become_subreaper("check_bazel_run")
    tmp = tempfile.mkdtemp(prefix="mpf-check-bazel.")
    try:
        {"shards": shards, "filter": filter_, "records": records,
         "premature": premature, "refused": refused}[a.what](
            Runner(a.suite, a.mode), tmp)
        left = [f for f in os.listdir(tmp) if f.endswith(".tmp")]
        if left:
            fail("temporary XML files left: %s" % left)
    finally:
        shutil.rmtree(tmp)
    print("ok")


if __name__ == "__main__":
    main()
