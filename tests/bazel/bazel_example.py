#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bazel test of examples/bazel against this build, offline (issues 19, 33).

    bazel_example.py SOURCE_DIR BUILD_DIR [docs|linux-sandbox|processwrapper-sandbox]

Runs docs/ci-recipes.md's Bazel commands (its block marked as tested
here, read from the doc: a doc that differs from DOC_COMMANDS fails, with
or without bazel) the way a user with a private prefix does: HOME is a
temporary directory, this build is installed into $HOME/.local/mpfixture
(getting-started's prefix), examples/bazel is copied into a checkout
beside it and the block's lines run there verbatim through sh, one after
the other. $HOME/.bazelrc holds only what keeps the run to itself: the
output root under the temporary directory, a server that quits when idle,
2 jobs, and a build event file (each shard's status).

docs (the default): every line but the online one (no network here):
  ./use_prefix.sh "$HOME/.local/mpfixture" writes the repository of
     @mpfixture and prefix.bazelrc; then
  the offline run: passes, every shard of the 3 targets, every case once
     across a target's 4 shards' test.xml and none failed;
  --test_filter=pipes on the cmocka target: passes; one case in all (on
     //..., the other targets, which have no case of that name, would
     fail: an empty selection is an error);
  --test_env=EXAMPLE_LEAK=1: fails (exit status 3); each target fails in
     exactly one shard, the one whose test.xml holds its leaking case,
     with <failure type="shm_leak"> and the guard's report; every case is
     in exactly one shard's test.xml (cmocka 8, Check 6 in fork mode,
     GoogleTest 8 with death tests of both styles, gtest's own XML).
linux-sandbox, processwrapper-sandbox: the setup lines, then the offline
run and the leak run, each with --spawn_strategy=<that>, checked as above,
and every test action must have run under that strategy (Bazel's process
summary). linux-sandbox needs user namespaces: where Bazel has no
linux-sandbox, exit status 77, saying why.

Its server and everything it wrote are removed at the end. Without bazel:
exit status 77 (ctest's SKIP_RETURN_CODE), saying so."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
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


def leak_alone(cases, xmls, leak_name, what, title):
    """The case leak_name failed as shm_leak in its shard's XML and no
    other case failed; prints the shards' cases and the leak's XML.
    Returns the leak's (shard, name, kind, message)."""
    leak = [c for c in cases if c[1] == leak_name][0]
    if leak[2] != "shm_leak" or "shm_leak" not in leak[3]:
        fail("the leaking %s in its shard's XML: %s" % (what, leak))
    others = [c for c in cases if c[2] and c[1] != leak[1]]
    if others:
        fail("other %ss failed: %s" % (what, others))
    print(title)
    for shard, name, kind, _ in cases:
        print("  %s %s%s" % (shard, name, " FAILED " + kind if kind else ""))
    text = open([x for x in xmls if leak[0] in x][0]).read()
    start = text.index('<testcase name="%s"' % leak_name)
    print("XML excerpt (%s/test.xml):" % leak[0])
    print("\n".join(text[start:].splitlines()[:4]))
    return leak


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
    leak = leak_alone(cases, xmls, "check_leaks_shm_when_asked", "Check test",
               "the Check suite (fork mode), each test in exactly one shard:")


GTEST_TESTS = ["Example.Adds", "Example.Compares", "Example.ForksAndWaits",
               "Example.LeaksShmWhenAsked", "Example.Pipes",
               "ExampleDeathTest.ExitsFast", "ExampleDeathTest.ExitsThreadsafe",
               "ExampleDeathTest.Aborts"]
GTEST_TARGET = "tests/guarded_gtest_test"


def check_gtest_shards(ws, leak=True):
    """The GoogleTest target: every test in exactly one shard's test.xml;
    with the leak only the leaking one failed, with the guard's report;
    without it none failed."""
    logs = os.path.join(ws, "bazel-testlogs", GTEST_TARGET)
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
        leaks = leak and name == "Example.LeaksShmWhenAsked"
        if leaks != (text is not None) or (leaks and not re.search(
                r"FAILED \[shm_leak\][^\n]*\n *shm_leak +mpf-bazel-gtest-leak",
                text)):
            fail("gtest: %s in %s: %s" % (name, shard, text))
        if leak:
            print("  %s %s%s" % (shard, name, " FAILED shm_leak" if leaks else ""))
    return [shard for shard, _, text in seen if text is not None]


# docs/ci-recipes.md, "## Bazel": the block marked as tested here, each
# line without its comment. main() runs them all but ONLINE.
DOC = "docs/ci-recipes.md"
DOC_COMMANDS = [
    'cd examples/bazel',
    './use_prefix.sh "$HOME/.local/mpfixture"',
    'bazel test //... --test_sharding_strategy=explicit',
    'offline/setup.sh && bazel test --config=offline //...',
    'bazel test --config=offline //tests:guarded_cmocka_test --test_filter=pipes',
    'bazel test --config=offline //... --test_env=EXAMPLE_LEAK=1',
]
CD, USE_PREFIX, ONLINE, OFFLINE, FILTER, LEAK = DOC_COMMANDS
TARGETS = {"//tests:guarded_cmocka_test": TARGET,
           "//tests:guarded_check_test": CHECK_TARGET,
           "//tests:guarded_gtest_test": GTEST_TARGET}
STRATEGIES = ("linux-sandbox", "processwrapper-sandbox")


def doc_commands(source):
    """The commands of the Bazel section's block marked as tested here."""
    lines = open(os.path.join(source, DOC), encoding="utf-8").read().split("\n")
    section = lines.index("## Bazel")
    mark = lines.index("<!-- tested: tests/bazel/bazel_example.py -->", section)
    if lines[mark + 1] != "```sh":
        fail("%s: no sh block after the mark at line %d" % (DOC, mark + 1))
    end = lines.index("```", mark + 2)
    out = [re.sub(r"\s+#.*$", "", line).rstrip() for line in lines[mark + 2:end]]
    return [line for line in out if line]


def shard_status(bep):
    """{bazel label: {shard number (as in shard_N_of_4): status}} from the
    build event file of the last bazel test."""
    out = {}
    for line in open(bep, encoding="utf-8"):
        event = json.loads(line)
        tid = event["id"].get("testResult")
        if tid:
            out.setdefault(tid["label"], {})[tid.get("shard", 0)] = \
                event.get("testResult", {}).get("status")
    return out


def strategies_used(output):
    """Bazel's process summary ('INFO: 13 processes: 1 internal, 12
    linux-sandbox.'): the strategies that ran actions, internal left out."""
    m = re.findall(r"^INFO: \d+ process(?:es)?: (.*)\.$", output, re.M)
    if not m:
        return set()
    return {part.split(" ", 1)[1] for part in m[-1].split(", ")
            if part.split(" ", 1)[1] != "internal"}


def check_clean(ws, bep):
    """Every shard of every target passed; every case in exactly one
    shard's test.xml, none failed."""
    for label in TARGETS:
        status = shard_status(bep).get(label, {})
        if sorted(status) != [1, 2, 3, 4] or set(status.values()) != {"PASSED"}:
            fail("%s's shards: %s" % (label, status))
    cases, _ = shard_cases(ws)
    if sorted(c[1] for c in cases) != sorted(CASES) or any(c[2] for c in cases):
        fail("the cmocka suite's shards without the leak: %s" % cases)
    cases, _ = shard_cases(ws, CHECK_TARGET)
    if sorted(c[1] for c in cases) != sorted(CHECK_TESTS) or any(c[2] for c in cases):
        fail("the Check suite's shards without the leak: %s" % cases)
    if check_gtest_shards(ws, leak=False):
        fail("GoogleTest failed without the leak")
    print("exit status 0; the 3 targets' 12 shards passed, every case in "
          "exactly one shard's test.xml, none failed")


def check_leak(ws, bep):
    """Each target failed in exactly one shard: the one whose test.xml
    holds its leaking case, failed there as shm_leak, by name."""
    cases, xmls = shard_cases(ws)
    for c in CASES:
        n = sum(1 for _, name, _, _ in cases if name == c)
        if n != 1:
            fail("%s is in %d shards' XML" % (c, n))
    if len(cases) != len(CASES):
        fail("%d testcases across the shards" % len(cases))
    leak = leak_alone(cases, xmls, "leaks_shm_when_asked", "case",
               "4 shards, each case in exactly one:")
    print("GoogleTest, 4 shards, each test in exactly one:")
    leaking = {"//tests:guarded_cmocka_test": [leak[0]],
               "//tests:guarded_gtest_test": check_gtest_shards(ws)}
    check_target_sharded(ws)
    leaking["//tests:guarded_check_test"] = [
        c[0] for c in shard_cases(ws, CHECK_TARGET)[0] if c[2]]
    status = shard_status(bep)
    for label in TARGETS:
        failed = ["shard_%d_of_4" % n
                  for n, s in sorted(status.get(label, {}).items())
                  if s != "PASSED"]
        if sorted(status.get(label, {})) != [1, 2, 3, 4] or \
                failed != leaking[label]:
            fail("%s: the shards that failed %s, the leaking case's %s "
                 "(all: %s)" % (label, failed, leaking[label],
                                status.get(label)))
        print("%s FAILED in exactly %s, the shard of its leaking case"
              % (label, failed[0]))


def main():
    source, build = sys.argv[1], sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else "docs"
    if mode not in ("docs",) + STRATEGIES:
        fail("unknown mode %s" % mode)
    shown = doc_commands(source)
    if shown != DOC_COMMANDS:
        fail("%s's Bazel block is not what this test runs:\n  %s\n"
             "expected:\n  %s" % (DOC, "\n  ".join(shown),
                                   "\n  ".join(DOC_COMMANDS)))
    bazel = shutil.which("bazel")
    if not bazel:
        print("SKIPPED: bazel is not installed (Debian 12: apt-get install "
              "bazel-bootstrap); examples/bazel was not run")
        sys.exit(77)
    began = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="mpf-bazel-example.")
    home = os.path.join(tmp, "home")
    ws = os.path.join(tmp, "checkout", "examples", "bazel")
    bep = os.path.join(tmp, "bep.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MPF_")}
    env["HOME"] = home
    try:
        os.makedirs(home)
        with open(os.path.join(home, ".bazelrc"), "w") as rc:
            rc.write("startup --output_user_root=%s\n"
                     "startup --max_idle_secs=60\n"
                     "startup --host_jvm_args=-XX:-UsePerfData\n"
                     "build --jobs=2 --local_cpu_resources=2\n"
                     "test --build_event_json_file=%s\n"
                     % (os.path.join(tmp, "root"), bep))
        subprocess.run(["cmake", "--install", build, "--prefix",
                        os.path.join(home, ".local", "mpfixture")],
                       check=True, stdout=subprocess.DEVNULL)
        shutil.copytree(os.path.join(source, "examples/bazel"), ws,
                        ignore=shutil.ignore_patterns(
                            "bazel-*", "offline.bazelrc", "prefix",
                            "prefix.bazelrc"))

        def run(line, want):
            print("$ " + line)
            if os.path.exists(bep):
                os.remove(bep)
            p = subprocess.run(["sh", "-c", line], cwd=ws, env=env,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if p.returncode != want:
                unavailable = re.search(r"^ERROR: '([^']*)' was requested.*"
                                        r"no strategy with that identifier "
                                        r"was registered.*$",
                                        p.stdout, re.M)
                if unavailable and mode == "linux-sandbox":
                    print("SKIPPED: Bazel has no linux-sandbox here (it "
                          "needs user namespaces): " + unavailable.group(0))
                    sys.exit(77)
                logs = re.findall(r"^  (/\S+/test\.log)$", p.stdout, re.M)
                first = ""
                if logs and os.path.isfile(logs[0]):
                    first = "\n%s:\n%s" % (logs[0], "\n".join(
                        [x for x in open(logs[0], errors="replace")
                         .read().splitlines()
                         if not re.match(r"\d+\.\d+: src/main/tools/", x)]
                        [-15:]))
                fail("%s: exit status %d, expected %d\n%s%s" %
                     (line, p.returncode, want, p.stdout[-4000:], first))
            used = strategies_used(p.stdout)
            if line.startswith(("bazel", "offline/setup.sh")):
                print("(test actions ran under: %s)" % ", ".join(sorted(used)))
            if mode in STRATEGIES and "--spawn_strategy" in line and \
                    used != {mode}:
                fail("%s: actions ran under %s, not %s" % (line, used, mode))
            return p

        if os.path.basename(os.path.dirname(ws)) != "examples" or \
                subprocess.run(["sh", "-c", CD], cwd=os.path.dirname(
                    os.path.dirname(ws))).returncode != 0:
            fail(CD + " failed")
        print("$ " + CD)
        if mode == "docs":
            # A prefix with no mpfixture is refused in one line, exit
            # status 2, and nothing is written.
            p = run("./use_prefix.sh " + tmp, 2)
            lines = p.stdout.strip().split("\n")
            if len(lines) != 1 or "include/mpfixture/mpfixture.h" not in \
                    lines[0] or os.path.exists(os.path.join(
                        ws, "prefix.bazelrc")):
                fail("use_prefix.sh with no mpfixture there: %s" % p.stdout)
            print(lines[0])
        p = run(USE_PREFIX, 0)
        print(p.stdout.rstrip())
        if mode == "docs":
            print("(%s: not run, it needs the network)" % ONLINE)
            run(OFFLINE, 0)
            check_clean(ws, bep)
            run(FILTER, 0)
            cases, _ = shard_cases(ws)
            if [c[1] for c in cases] != ["pipes"] or cases[0][2]:
                fail("--test_filter=pipes ran %s" % cases)
            status = shard_status(bep)
            if list(status) != ["//tests:guarded_cmocka_test"] or \
                    set(status[list(status)[0]].values()) != {"PASSED"}:
                fail("--test_filter=pipes: %s" % status)
            print("exit status 0; --test_filter=pipes ran one case: %s" %
                  cases[0][0])
            run(LEAK, 3)  # 3: built, and some test failed
            check_leak(ws, bep)
        else:
            strategy = " --spawn_strategy=" + mode
            run(OFFLINE + strategy, 0)
            check_clean(ws, bep)
            run(LEAK + strategy, 3)
            check_leak(ws, bep)
    finally:
        subprocess.run([bazel, "shutdown"], cwd=ws if os.path.isdir(ws)
                       else tmp, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        subprocess.run(["chmod", "-R", "u+w", tmp])
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s: %.0f s" % (mode, time.monotonic() - began))
    print("ok")


if __name__ == "__main__":
    main()
