#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarise valgrind's XML files (one per process) of a ci/valgrind.sh run
(memcheck) or a ci/helgrind.sh run.

    ci/memcheck_report.py DIR

Every process of every case writes DIR/<case>.<pid>.xml, forked children
included (valgrind reopens the file per pid). A child's error only changes
that child's exit status, which its parent may never look at, so the run
is judged here: every <error> of every file (memory errors, definitely-lost
blocks) is printed with its first frames, and the exit status is 1 if
there was any. A process killed by SIGKILL leaves a truncated file: what it
wrote before is still read.
"""
import glob
import html
import os
import re
import sys


def field(block, tag):
    m = re.search(r"<%s>(.*?)</%s>" % (tag, tag), block, re.S)
    return html.unescape(m.group(1).strip()) if m else ""


def frames(block, limit=8):
    """The first frames of the error's own stack (not the allocation's)."""
    out = []
    stack = re.search(r"<stack>(.*?)</stack>", block, re.S)
    for f in re.findall(r"<frame>(.*?)</frame>", stack.group(1) if stack else "",
                        re.S)[:limit]:
        fn = field(f, "fn") or field(f, "obj") or field(f, "ip")
        where = field(f, "file")
        if where:
            where = " (%s:%s)" % (where, field(f, "line"))
        out.append("      at %s%s" % (fn, where))
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    files = sorted(glob.glob(os.path.join(sys.argv[1], "*.xml")))
    errors = 0
    tool = "memcheck"
    for path in files:
        with open(path, errors="replace") as f:
            text = f.read()
        tool = field(text, "tool") or tool
        blocks = re.findall(r"<error>(.*?)</error>", text, re.S)
        if not blocks:
            continue
        exe = re.findall(r"<exe>(.*?)</exe>", text)
        pid = field(text, "pid")
        print("%s (pid %s, %s): %d error(s)" % (
            os.path.basename(path), pid, exe[-1] if exe else "?", len(blocks)))
        for b in blocks:
            what = field(b, "what") or field(field(b, "xwhat"), "text")
            print("  %s: %s" % (field(b, "kind"), what))
            print("\n".join(frames(b)))
        errors += len(blocks)
    print("%s: %d process(es), %d error(s)%s" % (
        tool, len(files), errors,
        ", no definitely-lost block" if tool == "memcheck" and not errors else ""))
    return 1 if errors or not files else 0


if __name__ == "__main__":
    sys.exit(main())
