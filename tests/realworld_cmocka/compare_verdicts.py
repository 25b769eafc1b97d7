#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run one corpus suite plain and guarded; their verdicts must agree.

    compare_verdicts.py --plain BIN (--guarded BIN | --per-case MPF_RUN
                        [--run-option OPT]...)
                        [--planted CASE:KIND,...] [--keep GLOB,...]
                        [--planted-group CASE:KIND,...]
                        [-- ARGS...]

Both builds come from the same unchanged source: BIN of --plain links
cmocka alone, BIN of --guarded links mpfixture's cmocka drop-in too. With
--per-case the guarded run is the plain binary itself, run by
`MPF_RUN --per-case [OPT...] --`. Each
runs as a child of this process, made a child subreaper, so that whatever
a run leaves is found here. The guarded run writes an audit (MPF_AUDIT).

Passes when:
  - every case has the same verdict plain and guarded (cmocka's own
    [ OK ] / [ FAILED ] / [ ERROR ] / [ SKIPPED ] lines), except the
    planted ones: those pass plain and fail guarded, and their audit line
    names the planted kind;
  - every case run has exactly one audit line, whose verdict agrees;
  - each planted group offence (--planted-group: what a case leaves that
    the guard holds for the group's end, MPF_DEFER_SHM=1) passes its case
    plain and guarded, and fails the group's end: its teardown (one more
    failed teardown than plain) and a "(group end)" audit line with the
    kind, naming the case;
  - the same group setups and teardowns fail plain and guarded (a guard
    that closes or removes what the group still uses fails its teardown);
  - (run in a /dev/shm of its own where one can be made, see
    private_dev_shm())
  - the guarded run leaves no process and no /dev/shm entry of the suite
    (names starting with "corpus-"), except the keep-listed ones, which
    must still be there; then a plain run on that state has the verdicts
    of the first one (they are removed here afterwards).
Whatever the plain run leaves (its planted offences) is removed between.
"""
import argparse
import ctypes
import fnmatch
import json
import xml.etree.ElementTree as ET
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PR_SET_CHILD_SUBREAPER = 36
# A status may follow text on its line: with CMOCKA_TEST_ABORT=1 cmocka
# prints the failure without a newline before it aborts, and the guard's
# supervisor then writes the killed case's status.
STATUS = re.compile(r"\[ *(OK|FAILED|ERROR|SKIPPED) *\] (\S+)$")
RUN = re.compile(r"^\[ RUN +\] (\S+)$")
VERDICT = {"OK": "pass", "FAILED": "fail", "ERROR": "fail", "SKIPPED": "skip"}


def fail(msg):
    print("compare_verdicts: FAIL: " + msg)
    sys.exit(1)


GROUP_END = "(group end)"  # the audit line of the group's end
GROUP_FAILED = re.compile(r"\[ *(FAILED|ERROR) *\] GROUP (SETUP|TEARDOWN)")


def group_failures(output):
    """The group setups and teardowns cmocka says failed, in order."""
    return [m.group(2) for m in GROUP_FAILED.finditer(output)]


def verdicts(output):
    """Case -> verdict, from the status line that follows each RUN line."""
    out, running = {}, None
    for line in output.splitlines():
        m = RUN.match(line)
        if m:
            running = m.group(1)
            continue
        m = STATUS.search(line)
        if m and m.group(2) == running:
            out[running] = VERDICT[m.group(1)]
            running = None
    return out


def xml_verdicts(directory):
    """Case -> verdict from cmocka's XML files (CMOCKA_XML_FILE in
    `directory`), which are then removed."""
    out = {}
    for f in sorted(os.listdir(directory)):
        if not f.endswith(".xml"):
            continue
        path = os.path.join(directory, f)
        for case in ET.parse(path).getroot().iter("testcase"):
            failed = case.find("failure") is not None
            skipped = case.find("skipped") is not None
            out[case.get("name")] = ("fail" if failed
                                     else "skip" if skipped else "pass")
        os.unlink(path)
    return out


def corpus_entries():
    return sorted(e for e in os.listdir("/dev/shm") if e.startswith("corpus-"))


def remove_entry(name):
    path = os.path.join("/dev/shm", name)
    if os.path.isdir(path) and not os.path.islink(path):
        for root, dirs, files in os.walk(path, topdown=False):
            for f in files:
                os.unlink(os.path.join(root, f))
            for d in dirs:
                os.rmdir(os.path.join(root, d))
        os.rmdir(path)
    else:
        os.unlink(path)


def my_children():
    """Pids whose parent is this process (what a run left re-parents here)."""
    me, kids = os.getpid(), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == me:
            kids.append(int(pid))
    return kids


def describe(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "%d (gone)" % pid
    return "%d (state %s: %s)" % (pid, state, cmd.strip())


def still_running(kids, seconds=10.0):
    """Those of `kids` still alive after waiting up to `seconds` for them to
    end by themselves (the guard's watchdog ends right after the test
    binary does, not before it): waited on through pidfds, no sleeping."""
    deadline = time.monotonic() + seconds
    alive = []
    for pid in kids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                alive.append(pid)
        finally:
            os.close(fd)
    return alive


def reap_all():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def run(binary, args, env):
    """Exit status and output; the output goes to a file, not a pipe, which
    a process the run leaves behind would hold open. It runs in a scratch
    directory: with CMOCKA_MESSAGE_OUTPUT=xml, the verdicts are read from
    the XML files cmocka writes there, and any failure message is kept."""
    with tempfile.TemporaryFile() as out, \
            tempfile.TemporaryDirectory() as cwd:
        p = subprocess.run([binary] + args, env=env, stdout=out,
                           stderr=subprocess.STDOUT, cwd=cwd)
        out.seek(0)
        text = out.read().decode(errors="replace")
        if env.get("CMOCKA_MESSAGE_OUTPUT", "").lower() == "xml":
            got = xml_verdicts(cwd)
            text += "".join("[ RUN      ] %s\n[ %s ] %s\n" % (
                case, {"pass": "      OK", "fail": " FAILED ",
                       "skip": " SKIPPED"}[v], case)
                for case, v in got.items())
        return p.returncode, text


def private_dev_shm():
    """Re-run this script with a /dev/shm of its own (a mount namespace and
    a fresh tmpfs) where that can be made (root): a suite's thousands of
    objects then never reach the tests running beside it, nor theirs this
    one. Elsewhere it goes on in the host's /dev/shm."""
    if os.environ.get("CORPUS_PRIVATE_SHM") or os.geteuid() != 0 or \
            not shutil.which("unshare"):
        return
    env = dict(os.environ, CORPUS_PRIVATE_SHM="1")
    cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
           'mount -t tmpfs -o mode=1777 corpus /dev/shm && exec "$@"', "sh",
           sys.executable] + sys.argv
    probe = subprocess.run(["unshare", "-m", "--propagation", "private",
                            "sh", "-c", "mount -t tmpfs corpus /dev/shm"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    if probe.returncode == 0:
        os.execvpe(cmd[0], cmd, env)


def main():
    private_dev_shm()
    ap = argparse.ArgumentParser()
    ap.add_argument("--plain", required=True)
    ap.add_argument("--guarded")
    ap.add_argument("--per-case")
    ap.add_argument("--run-option", action="append", default=[])
    ap.add_argument("--planted", default="")
    ap.add_argument("--planted-group", default="")
    ap.add_argument("--keep", default="")
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()
    planted = dict(p.split(":", 1) for p in a.planted.split(",") if p)
    planted_group = dict(p.split(":", 1)
                         for p in a.planted_group.split(",") if p)
    keep = [g for g in a.keep.split(",") if g]

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        fail("cannot become a child subreaper")
    if corpus_entries():
        fail("/dev/shm already holds corpus entries: %s" % corpus_entries())

    env = {k: v for k, v in os.environ.items() if not k.startswith("MPF_")}
    rc_plain, out_plain = run(a.plain, a.args, env)
    left = my_children()
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    reap_all()
    for name in corpus_entries():
        remove_entry(name)
    plain = verdicts(out_plain)
    if not plain:
        fail("the plain run shows no case:\n" + out_plain)

    with tempfile.TemporaryDirectory() as tmp:
        audit = os.path.join(tmp, "audit.jsonl")
        genv = dict(os.environ, MPF_AUDIT=audit)
        if a.per_case:
            rc_guarded, out_guarded = run(
                a.per_case,
                ["--per-case"] + a.run_option + ["--", a.plain] + a.args, genv)
        else:
            rc_guarded, out_guarded = run(a.guarded, a.args, genv)
        survivors = [describe(p) for p in still_running(my_children())]
        for pid in my_children():
            os.kill(pid, signal.SIGKILL)
        reap_all()
        entries = corpus_entries()
        lines = []
        if os.path.exists(audit):
            with open(audit) as f:
                lines = [json.loads(line) for line in f if line.strip()]
    guarded = verdicts(out_guarded)
    report = "\n--- plain (exit %d) ---\n%s--- guarded (exit %d) ---\n%s" % (
        rc_plain, out_plain, rc_guarded, out_guarded)

    left_over = [e for e in entries
                 if not any(fnmatch.fnmatch(e, g) for g in keep)]
    if keep and not left_over:
        # The state the guarded run kept is what the next plain run finds.
        rc_next, out_next = run(a.plain, a.args, env)
        for pid in my_children():
            os.kill(pid, signal.SIGKILL)
        reap_all()
        if verdicts(out_next) != plain:
            fail("the plain run after the guarded one differs:\n" + out_next
                 + report)
    for name in corpus_entries():
        remove_entry(name)
    if survivors:
        fail("the guarded run left processes %s" % survivors + report)
    if left_over:
        fail("the guarded run left /dev/shm entries %s" % left_over + report)
    for g in keep:
        if not any(fnmatch.fnmatch(e, g) for e in entries):
            fail("keep-listed %s is gone after the guarded run" % g + report)

    group_end = [line for line in lines if line["case"] == GROUP_END]
    lines = [line for line in lines if line["case"] != GROUP_END]
    expected_failures = group_failures(out_plain) + (
        ["TEARDOWN"] if planted_group else [])
    if group_failures(out_guarded) != expected_failures:
        fail("group setups or teardowns failed: plain %s, guarded %s"
             % (group_failures(out_plain), group_failures(out_guarded))
             + report)
    for case, kind in sorted(planted_group.items()):
        named = [of for line in group_end if kind in line["kinds"]
                 for of in line["offenders"]
                 if "during case '%s'" % case in of.get("detail", "")]
        if not named:
            fail("planted group offence of case %s: no (group end) audit "
                 "line with kind %s naming it: %s" % (case, kind, group_end)
                 + report)
    if set(plain) != set(guarded):
        fail("cases differ: plain %s, guarded %s" % (sorted(plain),
                                                     sorted(guarded)) + report)
    by_case = {}
    for line in lines:
        by_case.setdefault(line["case"], []).append(line)
    for case, v in sorted(plain.items()):
        g = guarded[case]
        audited = by_case.get(case, [])
        if len(audited) != 1:
            fail("case %s has %d audit lines" % (case, len(audited)) + report)
        line = audited[0]
        if case in planted:
            kind = planted[case]
            if v != "pass" or g != "fail":
                fail("planted case %s: plain %s, guarded %s (expected pass, "
                     "fail)" % (case, v, g) + report)
            if kind not in line["kinds"] or line["verdict"] != "fail":
                fail("planted case %s: audit %s, expected kind %s"
                     % (case, line, kind) + report)
        else:
            if v != g:
                fail("case %s: plain %s, guarded %s" % (case, v, g) + report)
            want = "fail" if v == "fail" else "pass"
            if line["verdict"] != want or line["kinds"]:
                fail("case %s: audit %s, expected verdict %s and no kind"
                     % (case, line, want) + report)
    extra = set(by_case) - set(plain)
    if extra:
        fail("audit lines for cases that did not run: %s" % sorted(extra))
    print("compare_verdicts: %d cases, same verdicts plain and guarded; "
          "%d planted offences failed by name; nothing left"
          % (len(plain), len(planted)))


if __name__ == "__main__":
    main()
