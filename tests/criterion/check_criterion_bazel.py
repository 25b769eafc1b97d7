#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bazel's test protocol in the Criterion adapter, without Bazel: sets the
variables `bazel test` sets, runs the guarded Criterion suite and checks
what adapters/adapter.h promises.

    check_criterion_bazel.py shards    SUITE  4 shards run every test once
    check_criterion_bazel.py xml       SUITE  XML_OUTPUT_FILE: outcomes and
                                              kinds; the audit among the
                                              undeclared outputs
    check_criterion_bazel.py filter    SUITE  TESTBRIDGE_TEST_ONLY
    check_criterion_bazel.py premature SUITE  TEST_PREMATURE_EXIT_FILE

Prints what it saw; "check_criterion_bazel: PASS" when every promise
holds, else one FAIL line each. No process of the runs is left (this
script is their child subreaper) and the planted /dev/shm objects are gone.
"""
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "adapters"))
import adapter_run  # noqa: E402

PROTOCOL = ["TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX", "TEST_SHARD_STATUS_FILE",
            "XML_OUTPUT_FILE", "TESTBRIDGE_TEST_ONLY",
            "TEST_PREMATURE_EXIT_FILE", "TEST_UNDECLARED_OUTPUTS_DIR",
            "MPF_AUDIT", "MPF__BAZEL_RECORDS", "CRITERION_BAZEL_KILL_RUNNER"]
problems = []


def run(suite, args, **env):
    e = {k: v for k, v in os.environ.items() if k not in PROTOCOL}
    e.update(env)
    cmd = [suite, "--verbose", "-j1", "--color=never"] + args
    try:
        p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
    except subprocess.TimeoutExpired as t:
        # What the run left holds its output open: named at the end.
        problems.append("%s did not end within 300 s" % " ".join(cmd))
        p = subprocess.CompletedProcess(cmd, -1, (t.output or b"").decode(
            errors="replace"))
    print("$ %s  (%s)\n%s" % (" ".join(cmd), " ".join(
        "%s=%s" % kv for kv in env.items()), p.stdout))
    ran = re.findall(r"^\[RUN \] (\S+)$", p.stdout, re.M)
    return p, [r.replace("::", "/") for r in ran]


def listed(suite):
    """Every test of the program, "suite/name", from --list."""
    out = subprocess.run([suite, "--list"], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    tests, current = [], None
    for line in out.splitlines():
        m = re.match(r"^(\S+): \d+ tests?$", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"^\W+ (\S+)$", line)
        if m and current:
            tests.append(current + "/" + m.group(1))
    return tests


def testcases(path):
    """{name: (tag of failure/error/skipped or None, type, text)}."""
    out = {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        problems.append("XML_OUTPUT_FILE %s: %s" % (path, e))
        return out
    for tc in root.iter("testcase"):
        name = tc.get("name")
        if name in out:
            problems.append("XML: testcase %s twice" % name)
        bad = None
        for tag in ("failure", "error", "skipped"):
            if tc.find(tag) is not None:
                bad = tc.find(tag)
                break
        out[name] = (None if bad is None else bad.tag,
                     "" if bad is None else bad.get("type") or "",
                     "" if bad is None else
                     (bad.get("message") or "") + "\n" + (bad.text or ""))
    return out


def check_shards(suite, tmp):
    every = listed(suite)
    if len(every) < 10:
        problems.append("--list: %d tests, expected the whole suite" % len(every))
    seen = {}
    for index in range(4):
        status = os.path.join(tmp, "status%d" % index)
        xml = os.path.join(tmp, "shard%d.xml" % index)
        p, ran = run(suite, [], TEST_TOTAL_SHARDS="4",
                     TEST_SHARD_INDEX=str(index),
                     TEST_SHARD_STATUS_FILE=status, XML_OUTPUT_FILE=xml)
        if not os.path.exists(status):
            problems.append("shard %d: TEST_SHARD_STATUS_FILE not touched"
                            % index)
        cases = testcases(xml)
        if sorted(cases) != sorted(ran):
            problems.append("shard %d: XML has %s, Criterion ran %s"
                            % (index, sorted(cases), sorted(ran)))
        if not ran:
            problems.append("shard %d ran nothing" % index)
        for name in ran:
            seen.setdefault(name, []).append(index)
    for name in every:
        if len(seen.get(name, [])) != 1:
            problems.append("%s ran in shards %s, expected exactly one"
                            % (name, seen.get(name, [])))
    for name in seen:
        if name not in every:
            problems.append("%s ran but --list does not have it" % name)
    p, _ = run(suite, [], TEST_TOTAL_SHARDS="4", TEST_SHARD_INDEX="4")
    if p.returncode == 0 or "TEST_SHARD_INDEX" not in p.stdout:
        problems.append("an index out of range was not refused")


def check_xml(suite, tmp):
    xml = os.path.join(tmp, "test.xml")
    outputs = os.path.join(tmp, "outputs")
    os.mkdir(outputs)
    # Criterion's own filter and Bazel's together: the leaks suite, a skip
    # in .init (the guard never begins that case) and a plain Test.
    p, ran = run(suite, ["--filter=@(leaks|outcome|bazel)/*"],
                 XML_OUTPUT_FILE=xml, TEST_UNDECLARED_OUTPUTS_DIR=outputs,
                 TESTBRIDGE_TEST_ONLY="leaks/*:outcome/skips_in_init:"
                                      "bazel/plain_*")
    want = {
        "leaks/t1_clean_first": (None, "", ""),
        "leaks/t2_leaves_live_child":
            ("failure", "survivor", r"FAILED \[survivor\]"),
        "leaks/t3_leaves_shm_object":
            ("failure", "shm_leak", r"shm_leak +mpf_criterion_leak"),
        "leaks/t4_leaves_zombie": ("failure", "zombie", r"zombie +pid"),
        "leaks/t5_fails_an_assertion":
            ("failure", "fail", r"the planted assertion"),
        "leaks/t6_clean_again": (None, "", ""),
        "outcome/skips_in_init": ("skipped", "", ""),
        "bazel/plain_test_is_sharded_too": (None, "", ""),
    }
    cases = testcases(xml)
    if sorted(cases) != sorted(want):
        problems.append("XML has %s, expected %s" % (sorted(cases),
                                                     sorted(want)))
    for name, (tag, kind, rx) in want.items():
        got = cases.get(name)
        if got is None:
            continue
        if got[0] != tag or got[1] != kind or not re.search(rx, got[2]):
            problems.append("XML: %s is %s, expected %s type '%s' /%s/"
                            % (name, got, tag, kind, rx))
    if p.returncode == 0:
        problems.append("the run exited 0 with failed tests")
    # An XML that cannot be written fails the run (Bazel would otherwise
    # take the exit status alone), its tests all passing.
    p, ran = run(suite, [], XML_OUTPUT_FILE=os.path.join(tmp, "no", "t.xml"),
                 TESTBRIDGE_TEST_ONLY="leaks/t1_clean_first")
    if ran != ["leaks/t1_clean_first"] or p.returncode == 0 or \
            "XML_OUTPUT_FILE='" not in p.stdout:
        problems.append("an XML_OUTPUT_FILE that cannot be written: ran %s, "
                        "exit status %d" % (ran, p.returncode))
    audit = os.path.join(outputs, "mpfixture-audit.jsonl")
    verdicts = {}
    if os.path.exists(audit):
        with open(audit) as f:
            for line in f:
                d = json.loads(line)
                verdicts[d.get("case")] = d.get("verdict")
    guarded = {n: ("pass" if want[n][0] is None else "fail")
               for n in want if n.startswith("leaks/")}
    if verdicts != guarded:
        problems.append("audit in TEST_UNDECLARED_OUTPUTS_DIR: %s, expected %s"
                        % (verdicts, guarded))


def check_filter(suite, tmp):
    xml = os.path.join(tmp, "test.xml")
    p, ran = run(suite, [], XML_OUTPUT_FILE=xml,
                 TESTBRIDGE_TEST_ONLY="leaks/t3_*:leaks/t6_clean_again")
    want = ["leaks/t3_leaves_shm_object", "leaks/t6_clean_again"]
    if sorted(ran) != want or sorted(testcases(xml)) != want:
        problems.append("TESTBRIDGE_TEST_ONLY: ran %s, XML %s, expected %s"
                        % (ran, sorted(testcases(xml)), want))
    # Nothing selected in any shard: one line naming the filter, no test
    # run, the run fails (issue 29, item 9).
    line = ("mpfixture: TESTBRIDGE_TEST_ONLY='no_such/test' (--test_filter) "
            "matches no case of %s (in any shard)" % os.path.basename(suite))
    for shard in ("0", "1"):
        p, ran = run(suite, [], TESTBRIDGE_TEST_ONLY="no_such/test",
                     TEST_TOTAL_SHARDS="2", TEST_SHARD_INDEX=shard)
        if ran or p.returncode == 0 or line not in p.stdout.splitlines():
            problems.append("a filter that selects nothing, shard %s: ran %s, "
                            "exit status %d, expected the line %r"
                            % (shard, ran, p.returncode, line))


def children():
    pids = []
    for tid in os.listdir("/proc/self/task"):
        with open("/proc/self/task/%s/children" % tid) as f:
            pids += [int(p) for p in f.read().split()]
    return pids


def reap_the_dying(seconds):
    """After the runner's kill, what it leaves dies on its own (the
    worker by its parent-death signal, then what the worker's guard
    started, re-parented here in turn): each process re-parented here is
    waited for through a pidfd, up to `seconds` in all; one alive by then
    is what leftover_children names."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pids = children()
        if not pids:
            return
        poller = select.poll()
        fds = {}
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except OSError:
                continue
            fds[fd] = pid
            poller.register(fd, select.POLLIN)
        # One exit at least (or the deadline), then look again: a death
        # re-parents that process's children here.
        ready = poller.poll(max(0, int((deadline - time.monotonic()) * 1000)))
        for fd, _ in ready:
            os.waitpid(fds[fd], 0)
        for fd in fds:
            os.close(fd)


def check_premature(suite, tmp):
    flag = os.path.join(tmp, "premature")
    p, ran = run(suite, ["--filter=bazel/*"], TEST_PREMATURE_EXIT_FILE=flag)
    if p.returncode != 0 or "bazel/premature_file_exists_while_running" \
            not in ran:
        problems.append("the run with TEST_PREMATURE_EXIT_FILE failed, or "
                        "did not look for the file while running")
    if os.path.exists(flag):
        problems.append("TEST_PREMATURE_EXIT_FILE left after a normal end")
    p, ran = run(suite, ["--filter=bazel/runner_dies_when_asked"],
                 TEST_PREMATURE_EXIT_FILE=flag,
                 CRITERION_BAZEL_KILL_RUNNER="1")
    if p.returncode != -9:
        problems.append("the runner was to die of SIGKILL, status %d"
                        % p.returncode)
    reap_the_dying(30)
    # The killed runner's message server: only Criterion's own end removes
    # it. Left, it would stop a later run of another user that gets the
    # same pid ("Address already in use").
    killed = re.search(r"^killing the runner, pid (\d+)$", p.stdout, re.M)
    if not killed:
        problems.append("the worker did not say which runner it killed")
    else:
        try:
            os.unlink("/tmp/criterion_%s.sock" % killed.group(1))
        except FileNotFoundError:
            pass
    if not os.path.exists(flag):
        problems.append("TEST_PREMATURE_EXIT_FILE absent after the runner "
                        "died mid-run")


def main():
    what, suite = sys.argv[1], os.path.abspath(sys.argv[2])
    adapter_run.become_subreaper("check_criterion_bazel")
    tmp = tempfile.mkdtemp(prefix="mpf_criterion_bazel_")
    try:
        {"shards": check_shards, "xml": check_xml, "filter": check_filter,
         "premature": check_premature}[what](suite, tmp)
    finally:
        shutil.rmtree(tmp)
    left = adapter_run.leftover_children()
    if left:
        problems.append("processes left behind: " + "; ".join(left))
    for name in os.listdir("/dev/shm"):
        if name.startswith("mpf_criterion_"):
            owner = name.rsplit(".", 1)[-1]
            if not os.path.exists("/proc/" + owner):
                os.unlink("/dev/shm/" + name)
                problems.append("/dev/shm/%s left behind" % name)
    return adapter_run.verdict("check_criterion_bazel", problems)


if __name__ == "__main__":
    sys.exit(main())
