#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bazel's test protocol without Bazel: sets the variables `bazel test`
sets, runs the 8-case guarded suite (protocol_suite.c) or mpf-run, and
checks what the protocol promises (fixture/src/adapters/adapter.h).

    check_protocol.py shards    SUITE          4 shards run every case once
    check_protocol.py xml       SUITE          the leaking case and its kind
    check_protocol.py filter    SUITE          TESTBRIDGE_TEST_ONLY
    check_protocol.py premature SUITE          TEST_PREMATURE_EXIT_FILE
    check_protocol.py mpf_run   MPF_RUN SUITE  mpf-run's whole run and --per-case
    check_protocol.py links     MPF_RUN SUITE  no protocol file is written
                                               through a planted symlink

Prints what it saw; exits 1 naming the first broken promise."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

CASES = ["case_one", "case_two", "leaks_shm_object", "case_four",
         "premature_file_exists_while_running", "exits_mid_run_when_asked",
         "case_seven", "case_eight"]
PROTOCOL = ["TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", "TEST_SHARD_STATUS_FILE",
            "XML_OUTPUT_FILE", "TESTBRIDGE_TEST_ONLY",
            "TEST_PREMATURE_EXIT_FILE", "TEST_UNDECLARED_OUTPUTS_DIR",
            "MPF_AUDIT", "MPF_CASE", "PROTOCOL_SUITE_EXIT",
            "PROTOCOL_SUITE_FAIL", "PROTOCOL_SUITE_SKIP",
            "PROTOCOL_SUITE_SETUP_FAIL", "PROTOCOL_SUITE_GROUP_FAIL",
            "PROTOCOL_SUITE_TEARDOWN_FAIL", "PROTOCOL_SUITE_FD_LEAK",
            "PROTOCOL_SUITE_CHECK_PREMATURE"]


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def run(cmd, **env):
    e = {k: v for k, v in os.environ.items() if k not in PROTOCOL}
    e.update(env)
    p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    ran = re.findall(r"^ran (\S+)$", p.stdout, re.M)
    return p, ran


def testcases(path):
    """{name: (element or None, type, message)} of a JUnit file."""
    root = ET.parse(path).getroot()
    out = {}
    for tc in root.iter("testcase"):
        bad = tc.find("failure")
        if bad is None:
            bad = tc.find("error")
        name = tc.get("name")
        if name in out:
            fail("%s: testcase %s twice" % (path, name))
        out[name] = (None if bad is None else bad.tag,
                     None if bad is None else bad.get("type"),
                     None if bad is None else bad.get("message"))
    return out


def no_temporaries(tmp):
    left = [f for f in os.listdir(tmp) if f.endswith(".tmp")]
    if left:
        fail("temporary XML files left: %s" % left)


def shards(suite, tmp):
    seen = []
    for i in range(4):
        status = os.path.join(tmp, "status%d" % i)
        xml = os.path.join(tmp, "shard%d.xml" % i)
        p, ran = run([suite], TEST_TOTAL_SHARDS="4", TEST_SHARD_INDEX=str(i),
                     TEST_SHARD_STATUS_FILE=status, XML_OUTPUT_FILE=xml)
        if not os.path.exists(status):
            fail("shard %d did not touch TEST_SHARD_STATUS_FILE" % i)
        in_xml = sorted(testcases(xml))
        if in_xml != sorted(ran):
            fail("shard %d ran %s, its XML names %s" % (i, ran, in_xml))
        print("shard %d of 4 ran %s (exit status %d)" %
              (i, " ".join(ran), p.returncode))
        seen += ran
    for c in CASES:
        if seen.count(c) != 1:
            fail("%s ran %d times across the 4 shards" % (c, seen.count(c)))
    if len(seen) != len(CASES):
        fail("%d runs across the shards, %d cases" % (len(seen), len(CASES)))
    for bad in [dict(TEST_TOTAL_SHARDS="4", TEST_SHARD_INDEX="4"),
                dict(TEST_TOTAL_SHARDS="four", TEST_SHARD_INDEX="0"),
                dict(TEST_SHARD_INDEX="1"),
                dict(TEST_TOTAL_SHARDS="2"),
                dict(TEST_TOTAL_SHARDS="2", TEST_SHARD_INDEX="x"),
                dict(TEST_TOTAL_SHARDS="1234567890", TEST_SHARD_INDEX="0")]:
        p, ran = run([suite], **bad)
        said = "TEST_TOTAL_SHARDS='%s' TEST_SHARD_INDEX='%s'" % (
            bad.get("TEST_TOTAL_SHARDS", ""), bad.get("TEST_SHARD_INDEX", ""))
        if p.returncode != 255 or said not in p.stderr or ran:
            fail("%s was not refused: %d %s" % (bad, p.returncode, p.stderr))
    # Empty values are unset ones (Bazel's own rule): one shard, every case.
    p, ran = run([suite], TEST_TOTAL_SHARDS="", TEST_SHARD_INDEX="",
                 XML_OUTPUT_FILE="", TESTBRIDGE_TEST_ONLY="")
    if sorted(ran) != sorted(CASES):
        fail("empty protocol variables: ran %s (exit status %d) %s" %
             (ran, p.returncode, p.stderr))
    p, ran = run([suite], TEST_TOTAL_SHARDS="2", TEST_SHARD_INDEX="0",
                 TEST_SHARD_STATUS_FILE=os.path.join(tmp, "no", "status"))
    if p.returncode != 255 or "TEST_SHARD_STATUS_FILE" not in p.stderr or ran:
        fail("a status file that cannot be made was not refused: %d %s" %
             (p.returncode, p.stderr))
    print("refused (exit status 255, no case run): index 4 of 4, a total "
          "that is no number, an index alone, a total alone, an index that "
          "is no number, a total of 10 digits, a status file not writable; "
          "empty values: unset")
    no_temporaries(tmp)
    print("every one of the %d cases ran exactly once across 4 shards"
          % len(CASES))


def xml(suite, tmp):
    path = os.path.join(tmp, "test.xml")
    outputs = os.path.join(tmp, "outputs")
    os.mkdir(outputs)
    with open(path, "w") as f:
        f.write("stale")
    p, ran = run([suite], XML_OUTPUT_FILE=path,
                 TEST_UNDECLARED_OUTPUTS_DIR=outputs)
    cases = testcases(path)
    if sorted(cases) != sorted(CASES):
        fail("the XML names %s" % sorted(cases))
    tag, kind, message = cases["leaks_shm_object"]
    if tag != "failure" or kind != "shm_leak" or "shm_leak" not in message:
        fail("leaks_shm_object: %s type=%s message=%s" % (tag, kind, message))
    body = ET.parse(path).getroot().find(".//testcase[@name='leaks_shm_object']/failure").text
    if not re.search(r"shm_leak +mpf-bazel-leak-\d+: created by pid", body):
        fail("the failure's text does not name the object: %r" % body)
    for c in CASES:
        if c != "leaks_shm_object" and cases[c][0] is not None:
            fail("%s failed in the XML: %s" % (c, cases[c]))
    root = ET.parse(path).getroot()
    if (root.get("tests"), root.get("failures")) != ("8", "1"):
        fail("testsuites tests=%s failures=%s" % (root.get("tests"),
                                                  root.get("failures")))
    if p.returncode == 0:
        fail("the suite passed with a leak")
    print('leaks_shm_object: <failure type="%s" message="%s">' % (kind, message))
    audit = os.path.join(outputs, "mpfixture-audit.jsonl")
    lines = open(audit).read().splitlines() if os.path.exists(audit) else []
    if len(lines) != len(CASES):
        fail("TEST_UNDECLARED_OUTPUTS_DIR: %d audit lines" % len(lines))
    print("audit in TEST_UNDECLARED_OUTPUTS_DIR: %d lines" % len(lines))
    # A case killed with its runner (exit() in a supervised runner) has no
    # verdict: failed in the XML, never passed.
    p, ran = run([suite], XML_OUTPUT_FILE=path, PROTOCOL_SUITE_EXIT="1",
                 TESTBRIDGE_TEST_ONLY="case_one:exits_*:case_two")
    cases = testcases(path)
    if sorted(cases) != ["case_one", "case_two", "exits_mid_run_when_asked"]:
        fail("filtered run with an exit: the XML names %s" % sorted(cases))
    if cases["exits_mid_run_when_asked"][:2] != ("failure", "killed"):
        fail("a case whose runner exited: %s" %
             (cases["exits_mid_run_when_asked"],))
    print("exits_mid_run_when_asked (its runner exited): %s type=%s" %
          cases["exits_mid_run_when_asked"][:2])
    # The test's own verdicts: a failed assertion (its message XML-escaped)
    # and a skip.
    p, ran = run([suite], XML_OUTPUT_FILE=path, PROTOCOL_SUITE_FAIL="1",
                 TESTBRIDGE_TEST_ONLY="exits_*")
    tag, kind, message = testcases(path)["exits_mid_run_when_asked"]
    if (tag, kind) != ("failure", "fail") or "2 < 1" not in open(path).read().replace("&lt;", "<"):
        fail("a failed assertion in the XML: %s %s %s" % (tag, kind, message))
    if "2 < 1" in open(path).read():
        fail("'<' not escaped in the XML")
    p, ran = run([suite], XML_OUTPUT_FILE=path, PROTOCOL_SUITE_SKIP="1",
                 TESTBRIDGE_TEST_ONLY="exits_*")
    root = ET.parse(path).getroot()
    if root.find(".//testcase/skipped") is None or root.get("skipped") != "1":
        fail("a skipped case in the XML: %s" % open(path).read())
    print("a failed assertion: <failure type=\"fail\">; a skip: <skipped/>")
    p, ran = run([suite], XML_OUTPUT_FILE=path, PROTOCOL_SUITE_SETUP_FAIL="1",
                 TESTBRIDGE_TEST_ONLY="case_eight")
    if testcases(path)["case_eight"][:2] != ("failure", "setup"):
        fail("a failed setup in the XML: %s" % (testcases(path),))
    p, ran = run([suite], XML_OUTPUT_FILE=path, PROTOCOL_SUITE_GROUP_FAIL="1",
                 TESTBRIDGE_TEST_ONLY="case_one:case_two")
    cases = testcases(path)
    if ran or p.returncode == 0 or [cases[c][:2] for c in sorted(cases)] != [
            ("error", "not_run")] * 2:
        fail("a failed group setup: exit %d, XML %s" % (p.returncode, cases))
    print("a failed setup: <failure type=\"setup\">; a failed group setup: "
          "each case <error type=\"not_run\">, never a pass")
    p, ran = run([suite], XML_OUTPUT_FILE=path,
                 PROTOCOL_SUITE_TEARDOWN_FAIL="1", TESTBRIDGE_TEST_ONLY="case_eight")
    root = ET.parse(path).getroot()
    tag, kind, message = testcases(path)["case_eight"]
    said = root.find(".//testcase[@name='case_eight']/error")
    if (tag, kind) != ("error", "error") or "case_eight FAILED" not in message \
            or "teardown returned -1" not in said.text \
            or root.get("errors") != "1" or p.returncode == 0:
        fail("a failed teardown in the XML: exit %d, %s %s %s" %
             (p.returncode, tag, kind, message))
    print("a failed teardown: <error type=\"error\">")
    # Two kinds in one case: both in its type.
    p, ran = run([suite], XML_OUTPUT_FILE=path, PROTOCOL_SUITE_FD_LEAK="1",
                 TESTBRIDGE_TEST_ONLY="leaks_*")
    tag, kind, message = testcases(path)["leaks_shm_object"]
    if (tag, kind) != ("failure", "shm_leak,fd_leak") or p.returncode == 0:
        fail("a case with two kinds: exit %d, %s %s" % (p.returncode, tag, kind))
    print('a case with two kinds: <failure type="%s">' % kind)
    # The suite is named after the program (argv[0]): its XML specials as
    # entities, a control character XML cannot carry as "\x01".
    odd = 'odd\x01\t\r<&"name'
    e = {k: v for k, v in os.environ.items() if k not in PROTOCOL}
    e.update(XML_OUTPUT_FILE=path, TESTBRIDGE_TEST_ONLY="case_one")
    p = subprocess.run([odd], executable=suite, env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    raw = open(path, "rb").read()
    names = [ET.parse(path).getroot().find("testsuite").get("name"),
             ET.parse(path).getroot().find(".//testcase").get("classname")]
    # (an XML parser reads a tab or a CR in an attribute as a space)
    if p.returncode != 0 or b"\x01" in raw or b'odd\\x01\t\r&lt;&amp;&quot;name' \
            not in raw or names != ['odd\\x01  <&"name'] * 2:
        fail("a program named %r: exit %d, names %s in %r" %
             (odd, p.returncode, names, raw))
    print("a program named %r: its suite and classname %r" % (odd, names[0]))
    # Nothing selected in any shard: the run fails with one line naming the
    # filter, and no case runs (a shard empty only by sharding passes).
    line = ("mpfixture: TESTBRIDGE_TEST_ONLY='no_such_case' (--test_filter) "
            "matches no case of bazel_protocol_suite%s\n")
    for shards, suffix in [({}, ""), ({"TEST_TOTAL_SHARDS": "2", "TEST_SHARD_INDEX": "1"},
                                      " (in any shard)")]:
        p, ran = run([suite], XML_OUTPUT_FILE=path, TESTBRIDGE_TEST_ONLY="no_such_case",
                     **shards)
        if ran or p.returncode != 255 or p.stderr != line % suffix:
            fail("a filter that selects nothing%s: exit %d, ran %s, stderr %r" %
                 (suffix, p.returncode, ran, p.stderr))
    p, ran = run([suite], XML_OUTPUT_FILE=path, TEST_TOTAL_SHARDS="99",
                 TEST_SHARD_INDEX="98")
    if ran or p.returncode != 0 or testcases(path):
        fail("a shard empty only by sharding: exit %d, ran %s, stderr %r" %
             (p.returncode, ran, p.stderr))
    print("a filter that selects nothing fails in every shard; a shard empty "
          "only by sharding passes")
    # An XML that cannot be written fails the run, and leaves no temporary:
    # a directory in its place; a path too long for its temporary.
    where = os.path.join(tmp, "a_directory.xml")
    os.mkdir(where)
    too_long = os.path.join(tmp, *(["d" * 200] * 21))[:4090]
    for bad, why in [(where, "Is a directory"),
                     (too_long, "File name too long")]:
        p, ran = run([suite], XML_OUTPUT_FILE=bad, TESTBRIDGE_TEST_ONLY="case_one")
        said = "XML_OUTPUT_FILE='%s': %s" % (bad, why)
        if ran != ["case_one"] or p.returncode == 0 or said not in p.stderr:
            fail("an XML that cannot be written (%s): exit %d, ran %s, %s" %
                 (why, p.returncode, ran, p.stderr))
    if os.listdir(where):
        fail("left in the directory named by XML_OUTPUT_FILE: %s" %
             os.listdir(where))
    print("an XML that cannot be written (a directory, a path too long): "
          "the run fails")
    no_temporaries(tmp)


def filter_(suite, tmp):
    path = os.path.join(tmp, "test.xml")
    p, ran = run([suite], TESTBRIDGE_TEST_ONLY="case_two",
                 XML_OUTPUT_FILE=path)
    if ran != ["case_two"] or sorted(testcases(path)) != ["case_two"]:
        fail("--test_filter=case_two ran %s" % ran)
    if p.returncode != 0:
        fail("case_two alone: exit status %d" % p.returncode)
    print("TESTBRIDGE_TEST_ONLY=case_two ran %s, exit status 0" % ran)
    p, ran = run([suite], TESTBRIDGE_TEST_ONLY=":case_o*::case_s?ven:")
    if ran != ["case_one", "case_seven"]:
        fail("TESTBRIDGE_TEST_ONLY=case_o*:case_s?ven ran %s" % ran)
    print("TESTBRIDGE_TEST_ONLY=:case_o*::case_s?ven: ran %s (empty globs "
          "select nothing)" % ran)
    p, ran = run([suite], TESTBRIDGE_TEST_ONLY="case_two:" + "x" * 1100)
    if ran != ["case_two"]:
        fail("a glob longer than 1 KiB beside case_two: ran %s" % ran)
    p, ran = run([suite], TESTBRIDGE_TEST_ONLY="case_two", TEST_TOTAL_SHARDS="2",
                 TEST_SHARD_INDEX="1")
    if ran:
        fail("the filter's one case ran in its second shard too: %s" % ran)


def premature(suite, tmp):
    path = os.path.join(tmp, "premature")
    p, ran = run([suite], TEST_PREMATURE_EXIT_FILE=path,
                 PROTOCOL_SUITE_CHECK_PREMATURE="1",
                 TESTBRIDGE_TEST_ONLY="premature_*:case_one")
    if ran != ["case_one", "premature_file_exists_while_running"]:
        fail("ran %s" % ran)
    if p.returncode != 0:
        fail("the file was not there while the cases ran:\n" + p.stderr)
    if os.path.exists(path):
        fail("TEST_PREMATURE_EXIT_FILE left after a normal end")
    print("normal end: the file existed during the run and is removed")
    p, ran = run([suite], TEST_PREMATURE_EXIT_FILE=path, MPF_ISOLATE="none",
                 PROTOCOL_SUITE_EXIT="1", TESTBRIDGE_TEST_ONLY="exits_*:case_*")
    if "exits_mid_run_when_asked" not in ran or "case_seven" in ran:
        fail("the exit did not end the run early: %s" % ran)
    if not os.path.exists(path):
        fail("TEST_PREMATURE_EXIT_FILE removed though the process exited "
             "inside the run")
    print("exit() inside a case (MPF_ISOLATE=none): the file is left")
    p, ran = run([suite], TEST_PREMATURE_EXIT_FILE=os.path.join(tmp, "no", "f"))
    if p.returncode == 0 or ran or "TEST_PREMATURE_EXIT_FILE" not in p.stderr:
        fail("a premature-exit file that cannot be made: %d, ran %s" %
             (p.returncode, ran))
    print("a premature-exit file that cannot be made: no case runs, "
          "exit status %d" % p.returncode)
    p, ran = run([suite], TEST_PREMATURE_EXIT_FILE="/dev/full",
                 XML_OUTPUT_FILE=os.path.join(tmp, "test.xml"))
    if p.returncode == 0 or ran or "TEST_PREMATURE_EXIT_FILE='/dev/full': " \
            "No space left on device" not in p.stderr:
        fail("a premature-exit file that cannot be written: %d, ran %s, %s" %
             (p.returncode, ran, p.stderr))
    print("a premature-exit file that cannot be written (/dev/full): no case "
          "runs, exit status %d" % p.returncode)


def mpf_run(mpf_run_bin, suite, tmp):
    path = os.path.join(tmp, "run.xml")
    pre = os.path.join(tmp, "premature")
    p, _ = run([mpf_run_bin, "--grace", "0.2", "--", "sh", "-c",
                "sleep 30 & exit 0"], XML_OUTPUT_FILE=path,
               TEST_PREMATURE_EXIT_FILE=pre)
    cases = testcases(path)
    if cases.get("sh", (None, None))[1] != "escapee":
        fail("mpf-run's XML: %s (exit status %d)" % (cases, p.returncode))
    if os.path.exists(pre):
        fail("mpf-run left its TEST_PREMATURE_EXIT_FILE after a normal end")
    print("mpf-run: the run's case in XML_OUTPUT_FILE: %s" % (cases["sh"],))
    own = ('<?xml version="1.0"?>\n<testsuites><testsuite name="own">'
           '<testcase name="theirs"/></testsuite></testsuites>\n')
    p, _ = run([mpf_run_bin, "--", "sh", "-c",
                'printf "%s" "$0" > "$XML_OUTPUT_FILE"; printf 0 > "$1"',
                own, pre], XML_OUTPUT_FILE=path, TEST_PREMATURE_EXIT_FILE=pre)
    cases = testcases(path)
    if sorted(cases) != ["sh", "theirs"] or p.returncode != 0:
        fail("mpf-run beside the command's XML: %s, status %d" %
             (cases, p.returncode))
    if not os.path.exists(pre):
        fail("mpf-run removed the command's own premature-exit file")
    print("mpf-run: its case added beside the command's; the command's "
          "premature-exit file kept")
    os.unlink(pre)
    one = ('<?xml version="1.0"?>\n<testsuite name="one">'
           '<testcase name="single"/></testsuite>')
    p, _ = run([mpf_run_bin, "--", "sh", "-c",
                'printf "%s" "$0" > "$XML_OUTPUT_FILE"', one],
               XML_OUTPUT_FILE=path)
    if sorted(testcases(path)) != ["sh", "single"]:
        fail("mpf-run around a one-suite document: %s" % testcases(path))
    # The command's XML: empty (none), or one suite without a declaration.
    for theirs, want in [("", ["sh"]),
                         ('<testsuite name="bare"><testcase name="b"/>'
                          '</testsuite>', ["b", "sh"])]:
        p, _ = run([mpf_run_bin, "--", "sh", "-c",
                    'printf "%s" "$0" > "$XML_OUTPUT_FILE"', theirs],
                   XML_OUTPUT_FILE=path)
        if sorted(testcases(path)) != want or p.returncode != 0:
            fail("mpf-run around the command's XML %r: %s, status %d" %
                 (theirs, testcases(path), p.returncode))
    # Its premature-exit file removed by the command, or replaced by the
    # command's own (another file): mpf-run neither fails nor removes it.
    p, _ = run([mpf_run_bin, "--", "sh", "-c", 'rm "$TEST_PREMATURE_EXIT_FILE"'],
               TEST_PREMATURE_EXIT_FILE=pre)
    if p.returncode != 0 or os.path.exists(pre):
        fail("mpf-run, its premature-exit file removed: %d" % p.returncode)
    p, _ = run([mpf_run_bin, "--", "sh", "-c",
                'mv "$TEST_PREMATURE_EXIT_FILE" "$TEST_PREMATURE_EXIT_FILE.old"'
                ' && : > "$TEST_PREMATURE_EXIT_FILE"'],
               TEST_PREMATURE_EXIT_FILE=pre)
    if p.returncode != 0 or not os.path.exists(pre):
        fail("mpf-run removed the command's own (replacing) premature-exit "
             "file: %d" % p.returncode)
    os.unlink(pre + ".old")
    print("mpf-run: the command's empty or bare-suite XML; its premature-exit "
          "file removed or replaced by the command: kept as the command left it")
    open(pre, "w").close()  # someone else's: mpf-run leaves it
    p, _ = run([mpf_run_bin, "--", "true"], TEST_PREMATURE_EXIT_FILE=pre)
    if p.returncode != 0 or not os.path.exists(pre):
        fail("mpf-run and a premature-exit file made before it: %d, %s" %
             (p.returncode, os.path.exists(pre)))
    p, _ = run([mpf_run_bin, "--", "true"],
               XML_OUTPUT_FILE=os.path.join(tmp, "missing", "run.xml"))
    if p.returncode != 119 or "XML_OUTPUT_FILE" not in p.stderr:
        fail("an XML mpf-run cannot write did not fail the run: %d %s" %
             (p.returncode, p.stderr))
    print("mpf-run: an XML it cannot write fails the run (exit status 119)")
    seen = []
    for i in range(2):
        p, ran = run([mpf_run_bin, "--per-case", "--", suite],
                     TEST_TOTAL_SHARDS="2", TEST_SHARD_INDEX=str(i),
                     XML_OUTPUT_FILE=os.path.join(tmp, "pc%d.xml" % i))
        if sorted(testcases(os.path.join(tmp, "pc%d.xml" % i))) != sorted(ran):
            fail("mpf-run --per-case shard %d: XML and runs differ" % i)
        seen += ran
    if sorted(seen) != sorted(CASES):
        fail("mpf-run --per-case, 2 shards, ran %s" % seen)
    print("mpf-run --per-case: 2 shards ran each of the 8 cases once")
    no_temporaries(tmp)


PRECIOUS = "precious contents, never to be written\n"


def planted(tmp, name, dangling=False):
    """A symlink at tmp/name to a file of known contents (or to a name
    that does not exist), and a check that it was not written through."""
    target = os.path.join(tmp, name + ".target")
    if os.path.lexists(target):
        os.unlink(target)
    if not dangling:
        with open(target, "w") as f:
            f.write(PRECIOUS)
    link = os.path.join(tmp, name)
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(target, link)

    def untouched(what):
        if dangling and os.path.lexists(target):
            fail("%s: the dangling link's target was created" % what)
        if not dangling and open(target).read() != PRECIOUS:
            fail("%s: the link's target was written: %r" %
                 (what, open(target).read()[:120]))
        if not os.path.islink(link) or os.readlink(link) != target:
            fail("%s: the planted link itself was replaced" % what)
    return link, untouched


def refused(what, p, variable, path):
    """The run failed, saying in one line that `variable`'s file at `path`
    is a symbolic link it did not follow."""
    said = "%s='%s': a symbolic link, not followed" % (variable, path)
    lines = [ln for ln in p.stderr.splitlines() if said in ln]
    if p.returncode == 0 or len(lines) != 1:
        fail("%s: exit status %d, stderr %r" % (what, p.returncode, p.stderr))
    print("%s: refused, exit status %d: %s" % (what, p.returncode, lines[0]))


def under_pid(target, cmd):
    """cmd run by a shell that plants a symlink to target at
    "$XML_OUTPUT_FILE.$$.tmp" and then execs cmd: the program keeps the
    shell's pid, so the planted name is its temporary's."""
    return ["sh", "-c", 'ln -s "$1" "$XML_OUTPUT_FILE.$$.tmp" && shift && '
            'exec "$@"', "sh", target] + cmd


def links(mpf_run_bin, suite, tmp):
    """Each section on its own: one that fails does not hide the others."""
    failed = []
    for section in (links_xml_temporary, links_xml_file, links_premature,
                    links_shard_status):
        try:
            section(mpf_run_bin, suite, tmp)
        except SystemExit:
            failed.append(section.__name__)
    if failed:
        fail("planted links: %s" % ", ".join(failed))


def links_xml_temporary(mpf_run_bin, suite, tmp):
    # The JUnit writer's temporary (<XML_OUTPUT_FILE>.<pid>.tmp) is a
    # symlink: the XML is not written, the run fails. (mpf-run writes its
    # XML through the same function, from its guard process, a pid this
    # test cannot know beforehand.)
    xml = os.path.join(tmp, "test.xml")
    for who, cmd in [("the suite", [suite])]:
        target = os.path.join(tmp, "tmp.target")
        with open(target, "w") as f:
            f.write(PRECIOUS)
        p, _ = run(under_pid(target, cmd), XML_OUTPUT_FILE=xml,
                   TESTBRIDGE_TEST_ONLY="case_one")
        tmps = [f for f in os.listdir(tmp) if f.startswith("test.xml.")]
        if open(target).read() != PRECIOUS:
            fail("%s: the XML's temporary was written through a symlink: %r" %
                 (who, open(target).read()[:120]))
        if len(tmps) != 1 or not os.path.islink(os.path.join(tmp, tmps[0])):
            fail("%s: the planted temporary was replaced or others left: %s" %
                 (who, tmps))
        said = [ln for ln in p.stderr.splitlines()
                if "XML_OUTPUT_FILE='%s'" % xml in ln and tmps[0] in ln]
        if p.returncode == 0 or len(said) != 1 or os.path.exists(xml):
            fail("%s, its XML's temporary a planted symlink: exit status %d, "
                 "stderr %r" % (who, p.returncode, p.stderr))
        print("%s, its XML's temporary a planted symlink: exit status %d, "
              "the target unchanged: %s" % (who, p.returncode, said[0]))
        os.unlink(os.path.join(tmp, tmps[0]))
        os.unlink(target)


def links_xml_file(mpf_run_bin, suite, tmp):
    # XML_OUTPUT_FILE itself a symlink: refused, never replaced.
    for who, cmd in [("the suite", [suite]),
                     ("mpf-run", [mpf_run_bin, "--", "true"])]:
        link, untouched = planted(tmp, "linked.xml")
        p, _ = run(cmd, XML_OUTPUT_FILE=link, TESTBRIDGE_TEST_ONLY="case_one")
        untouched("%s, XML_OUTPUT_FILE a symlink" % who)
        refused("%s, XML_OUTPUT_FILE a symlink" % who, p, "XML_OUTPUT_FILE", link)


def links_premature(mpf_run_bin, suite, tmp):
    # TEST_PREMATURE_EXIT_FILE a symlink (to a file, or dangling): no case
    # runs, nothing written through it.
    for dangling in (False, True):
        link, untouched = planted(tmp, "premature", dangling)
        p, ran = run([suite], TEST_PREMATURE_EXIT_FILE=link,
                     TESTBRIDGE_TEST_ONLY="case_one")
        what = "TEST_PREMATURE_EXIT_FILE a%s symlink" % (
            " dangling" if dangling else "")
        untouched(what)
        if ran:
            fail("%s: cases ran: %s" % (what, ran))
        refused(what, p, "TEST_PREMATURE_EXIT_FILE", link)
    # mpf-run never writes a premature-exit file that exists (O_EXCL): a
    # symlink there is left as it is, its target too.
    link, untouched = planted(tmp, "premature")
    p, _ = run([mpf_run_bin, "--", "true"], TEST_PREMATURE_EXIT_FILE=link)
    untouched("mpf-run, TEST_PREMATURE_EXIT_FILE a symlink")
    print("mpf-run, TEST_PREMATURE_EXIT_FILE a symlink: left alone, exit "
          "status %d" % p.returncode)


def links_shard_status(mpf_run_bin, suite, tmp):
    # TEST_SHARD_STATUS_FILE a symlink (to a file, or dangling): no case
    # runs, the target neither touched nor created.
    for dangling in (False, True):
        link, untouched = planted(tmp, "status", dangling)
        p, ran = run([suite], TEST_TOTAL_SHARDS="2", TEST_SHARD_INDEX="0",
                     TEST_SHARD_STATUS_FILE=link)
        what = "TEST_SHARD_STATUS_FILE a%s symlink" % (
            " dangling" if dangling else "")
        untouched(what)
        if ran:
            fail("%s: cases ran: %s" % (what, ran))
        refused(what, p, "TEST_SHARD_STATUS_FILE", link)

def main():
    what, args = sys.argv[1], sys.argv[2:]
    tmp = tempfile.mkdtemp(prefix="mpf-bazel-protocol.")
    try:
        {"shards": shards, "xml": xml, "filter": filter_,
         "premature": premature, "mpf_run": mpf_run,
         "links": links}[what](*args, tmp)
    finally:
        shutil.rmtree(tmp)
    print("ok")


if __name__ == "__main__":
    main()
