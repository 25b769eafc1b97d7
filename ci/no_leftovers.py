#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a command as a child subreaper; fail if it leaves a process.

usage: ci/no_leftovers.py [--] CMD [ARG]...

The project's own scripts must leave nothing behind (a `2> >(grep ...)`
whose grep outlives the script, a daemon a test started and forgot). This
makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every
orphan of CMD is re-parented here instead of to init; it reaps orphans
that end while CMD runs (they ended in time: no offence). When CMD has
exited, every process still alive below this one, and not already in
exit() (the pipe a script reads to EOF closes before its writer is a
zombie), is a leftover: each is
named on one line (pid, comm, command line), killed with SIGKILL and
reaped, and the exit status is 1 even if CMD succeeded. Otherwise the
exit status is CMD's own (128+N if a signal N ended it).

There is no grace period: a process alive when the script that started
it has returned has outlived it. .ci/run runs ci/test.sh under this.
"""
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


PF_EXITING = 0x4  # linux/sched.h: the process is in exit() already


def descendants(root):
    """(pid, state, exiting) of each process whose parent chain leads to
    root, by /proc/<pid>/stat."""
    parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as f:
                stat = f.read()
        except OSError:
            continue  # it ended while we looked
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        fields = stat[stat.rindex(b")") + 2:].split()
        parent[int(entry)] = (int(fields[1]), fields[0].decode(),
                              bool(int(fields[6]) & PF_EXITING))
    found = []
    for pid, (ppid, state, exiting) in parent.items():
        seen = set()
        p = ppid
        while p and p not in seen:
            if p == root:
                found.append((pid, state, exiting))
                break
            seen.add(p)
            p = parent.get(p, (0, "", False))[0]
    return found


def describe(pid):
    try:
        with open("/proc/%d/comm" % pid, encoding="utf-8", errors="replace") as f:
            comm = f.read().strip()
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmd = f.read().replace(b"\0", b" ").strip()
        return "%s; cmd: %s" % (comm, cmd.decode("utf-8", "replace")[:200])
    except OSError:
        return "(gone)"


def main(argv):
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        sys.exit("usage: ci/no_leftovers.py [--] CMD [ARG]...")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("no_leftovers: prctl(PR_SET_CHILD_SUBREAPER): "
                 + os.strerror(ctypes.get_errno()))
    try:
        child = os.fork()
    except OSError as e:
        sys.exit("no_leftovers: fork: %s" % e)
    if child == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            os.write(2, ("no_leftovers: %s: %s\n" % (argv[0], e)).encode())
            os._exit(127)
    # Signals meant for the run go to the command; we wait for it.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: os.kill(child, s))
    status = None
    while status is None:
        pid, wstatus = os.wait()  # reaps orphans that end meanwhile
        if pid == child:
            status = os.waitstatus_to_exitcode(wstatus)
    if status < 0:
        status = 128 - status
    me = os.getpid()
    # Kill every leftover (and what one forks while we kill), reaping what
    # is re-parented here, until no child is left. A process already in
    # exit() has ended: the pipe its parent read to EOF closes before the
    # kernel makes it a zombie, so a script can return while it is still
    # exiting; it is reaped, not blamed.
    left = {}
    while True:
        alive = [pid for pid, state, exiting in descendants(me)
                 if state not in ("Z", "X") and not exiting]
        for pid in alive:
            if pid not in left:
                left[pid] = describe(pid)
                print("no_leftovers: process %d outlived %s: %s"
                      % (pid, argv[0], left[pid]), file=sys.stderr, flush=True)
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.wait()
        except ChildProcessError:
            break
    if left:
        print("no_leftovers: %d process(es) outlived %s (killed)"
              % (len(left), " ".join(argv)), file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
