#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bazel test of examples/bazel against this build, offline (issue 19).

    bazel_example.py SOURCE_DIR BUILD_DIR

Installs the build into a temporary prefix, copies the example workspace
beside it, and runs, with --config=offline and 4 shards:
  1. bazel test //... --test_env=EXAMPLE_LEAK=1: fails; across the 4
     shards' test.xml every one of the 8 cases is there exactly once, and
     the leaking one has <failure type="shm_leak">;
     The GoogleTest target the same way: each of its 8 tests (death tests
     of both styles among them) in exactly one shard's test.xml (gtest's
     own), the leaking one a failure there with the guard's report;
  2. bazel test //... --test_filter=pipes: passes; one case in all.
The Check suite (tests/guarded_check_test, fork mode, 6 tests) in the same
runs: with the leak, each of its tests in exactly one shard's test.xml,
check_leaks_shm_when_asked as <failure type="shm_leak">; the filter
selects none of them, its shards pass with no test.
docs/ci-recipes.md (Bazel) shows these commands. Its server and everything
it wrote are removed at the end. Without bazel: exit status 77 (ctest's
SKIP_RETURN_CODE), saying so."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

CASES = ["adds", "compares", "forks_and_waits", "shm_made_and_removed",
         "leaks_shm_when_asked", "pipes", "allocates", "counts"]
TARGET = "tests/guarded_cmocka_test"
CHECK_TESTS = ["check_adds", "check_forks_and_waits",
               "check_shm_made_and_removed", "check_leaks_shm_when_asked",
               "check_pipes", "check_counts"]
CHECK_TARGET = "tests/guarded_check_test"


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def shard_cases(ws, target=TARGET):
    """[(shard, name, failure type or None, message)] over the shards."""
    logs = os.path.join(ws, "bazel-testlogs", target)
    out = []
    xmls = sorted(glob.glob(os.path.join(logs, "shard_*_of_4", "test.xml")))
    if len(xmls) != 4:
        fail("%d shard XML files under %s" % (len(xmls), logs))
    for path in xmls:
        shard = os.path.basename(os.path.dirname(path))
        for tc in ET.parse(path).getroot().iter("testcase"):
            bad = tc.find("failure")
            out.append((shard, tc.get("name"),
                        None if bad is None else bad.get("type"),
                        None if bad is None else bad.get("message")))
    return out, xmls


def check_target_sharded(ws):
    """The Check suite's shards after the run with the leak: each test in
    exactly one, the leaking one failed with its kind, the others passed."""
    cases, xmls = shard_cases(ws, CHECK_TARGET)
    ran = sorted(name for _, name, _, _ in cases)
    if ran != sorted(CHECK_TESTS):
        fail("the Check suite's shards ran %s, expected each of %s once" %
             (ran, CHECK_TESTS))
    leak = [c for c in cases if c[1] == "check_leaks_shm_when_asked"][0]
    if leak[2] != "shm_leak" or "shm_leak" not in leak[3]:
        fail("the leaking Check test in its shard's XML: %s" % (leak,))
    others = [c for c in cases if c[2] and c[1] != leak[1]]
    if others:
        fail("other Check tests failed: %s" % others)
    print("the Check suite (fork mode), each test in exactly one shard:")
    for shard, name, kind, _ in cases:
        print("  %s %s%s" % (shard, name, " FAILED " + kind if kind else ""))
    text = open([x for x in xmls if leak[0] in x][0]).read()
    start = text.index('<testcase name="check_leaks_shm_when_asked"')
    print("XML excerpt (%s/test.xml):" % leak[0])
    print("\n".join(text[start:].splitlines()[:4]))


GTEST_TESTS = ["Example.Adds", "Example.Compares", "Example.ForksAndWaits",
               "Example.LeaksShmWhenAsked", "Example.Pipes",
               "ExampleDeathTest.ExitsFast", "ExampleDeathTest.ExitsThreadsafe",
               "ExampleDeathTest.Aborts"]


def check_gtest_shards(ws):
    """The GoogleTest target of run 1: every test in exactly one shard's
    test.xml, only the leaking one failed, with the guard's report."""
    logs = os.path.join(ws, "bazel-testlogs", "tests/guarded_gtest_test")
    xmls = sorted(glob.glob(os.path.join(logs, "shard_*_of_4", "test.xml")))
    if len(xmls) != 4:
        fail("%d shard XML files under %s" % (len(xmls), logs))
    seen = []
    for path in xmls:
        shard = os.path.basename(os.path.dirname(path))
        for tc in ET.parse(path).getroot().iter("testcase"):
            name = tc.get("classname") + "." + tc.get("name")
            bad = tc.find("failure")
            text = None if bad is None else (bad.get("message") or "")
            seen.append((shard, name, text))
    for t in GTEST_TESTS:
        if sum(1 for _, name, _ in seen if name == t) != 1:
            fail("gtest: %s is in %d shards' XML" %
                 (t, sum(1 for _, name, _ in seen if name == t)))
    if len(seen) != len(GTEST_TESTS):
        fail("gtest: %d testcases across the shards" % len(seen))
    for shard, name, text in seen:
        leak = name == "Example.LeaksShmWhenAsked"
        if leak != (text is not None) or (leak and not re.search(
                r"FAILED \[shm_leak\][^\n]*\n *shm_leak +mpf-bazel-gtest-leak",
                text)):
            fail("gtest: %s in %s: %s" % (name, shard, text))
        print("  %s %s%s" % (shard, name, " FAILED shm_leak" if leak else ""))


def main():
    source, build = sys.argv[1], sys.argv[2]
    bazel = shutil.which("bazel")
    if not bazel:
        print("SKIPPED: bazel is not installed (Debian 12: apt-get install "
              "bazel-bootstrap); examples/bazel was not run")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="mpf-bazel-example.")
    prefix, ws = os.path.join(tmp, "prefix"), os.path.join(tmp, "ws")
    root = os.path.join(tmp, "root")
    startup = [bazel, "--output_user_root=" + root, "--max_idle_secs=60"]
    try:
        subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                       check=True, stdout=subprocess.DEVNULL)
        shutil.copy(os.path.join(source, "examples/bazel/third_party/"
                                 "mpfixture.BUILD"),
                    os.path.join(prefix, "BUILD"))
        open(os.path.join(prefix, "WORKSPACE"), "w").close()
        shutil.copytree(os.path.join(source, "examples/bazel"), ws,
                        ignore=shutil.ignore_patterns("bazel-*",
                                                      "offline.bazelrc"))
        subprocess.run([os.path.join(ws, "offline/setup.sh")], check=True)
        common = ["test", "--config=offline",
                  "--override_repository=mpfixture=" + prefix,
                  "--test_sharding_strategy=explicit", "//..."]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("MPF_")}

        cmd = startup + common + ["--test_env=EXAMPLE_LEAK=1"]
        print("$ bazel " + " ".join(cmd[3:]))
        p = subprocess.run(cmd, cwd=ws, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 3:  # 3: built, and some test failed
            fail("bazel test with the leak: exit status %d\n%s" %
                 (p.returncode, p.stdout[-4000:]))
        cases, xmls = shard_cases(ws)
        for c in CASES:
            n = sum(1 for _, name, _, _ in cases if name == c)
            if n != 1:
                fail("%s is in %d shards' XML" % (c, n))
        if len(cases) != len(CASES):
            fail("%d testcases across the shards" % len(cases))
        leak = [c for c in cases if c[1] == "leaks_shm_when_asked"][0]
        if leak[2] != "shm_leak" or "shm_leak" not in leak[3]:
            fail("the leaking case in its shard's XML: %s" % (leak,))
        others = [c for c in cases if c[2] and c[1] != leak[1]]
        if others:
            fail("other cases failed: %s" % others)
        print("exit status 3 (a test failed); 4 shards, each case in "
              "exactly one:")
        for shard, name, kind, _ in cases:
            print("  %s %s%s" % (shard, name, " FAILED " + kind if kind else ""))
        text = open([x for x in xmls if leak[0] in x][0]).read()
        start = text.index('<testcase name="leaks_shm_when_asked"')
        print("XML excerpt (%s/test.xml):" % leak[0])
        print("\n".join(text[start:].splitlines()[:4]))
        print("GoogleTest, 4 shards, each test in exactly one:")
        check_gtest_shards(ws)

        check_target_sharded(ws)

        cmd = startup + common + ["--test_filter=pipes"]
        print("$ bazel " + " ".join(cmd[3:]))
        p = subprocess.run(cmd, cwd=ws, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            fail("bazel test --test_filter=pipes: exit status %d\n%s" %
                 (p.returncode, p.stdout[-4000:]))
        cases, _ = shard_cases(ws)
        if [c[1] for c in cases] != ["pipes"] or cases[0][2]:
            fail("--test_filter=pipes ran %s" % cases)
        print("exit status 0; --test_filter=pipes ran one case: %s" %
              cases[0][0])
        if shard_cases(ws, CHECK_TARGET)[0]:
            fail("--test_filter=pipes ran Check tests: %s" %
                 shard_cases(ws, CHECK_TARGET)[0])
        print("the Check suite's 4 shards passed with no test selected")
    finally:
        subprocess.run(startup + ["shutdown"], cwd=ws if os.path.isdir(ws)
                       else tmp, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["chmod", "-R", "u+w", tmp])
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
