#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 18, item 5: audit lines under a kill loop of 8 concurrent writers.

  check_audit_tear.py AUDIT_TEAR MPF_AUDIT_PY [WRITERS KILLS]

Runs audit_tear (8 writers of the fixture's audit lines, SIGKILLed as soon
as each is in its loop, 400 kills by default) on a file in a directory of
its own, then judges the file with mpf-audit and on its own:
  - every line is either whole (JSON) or torn, and
    mpf-audit names each torn one by its line number on stderr, and no
    other;
  - mpf-audit renders every whole line (--text: one line per case, then the
    note), and the whole line at the end of a torn one too: a line glued
    to a torn one is never lost;
  - no line is empty and none glued to a torn one: the writers' lock
    (audit_file.c) orders each writer's check of the file's last byte and
    its write after every other writer's whole write or death;
  - the torn line audit_tear leaves on purpose, before any writer starts,
    is line 1 and nothing is glued to it: the first writer saw the torn
    tail and began its line with a newline (no race there);
  - it exits 2 (the file holds at least that torn line).
Prints the counts. Exit 0 when all hold.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

LINE_START = b'{"binary":'


def main():
    tear, tool = sys.argv[1], sys.argv[2]
    writers, kills = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else ("8", "400")
    with tempfile.TemporaryDirectory(prefix="mpf-audit-tear.") as d:
        path = os.path.join(d, "audit.jsonl")
        run = subprocess.run([tear, writers, kills, path], capture_output=True,
                             text=True, timeout=600, check=False)
        print(run.stdout.strip(), run.stderr.strip())
        if run.returncode != 0:
            print(f"audit_tear exited {run.returncode}")
            return 1
        with open(path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        whole, torn, glued, blank = 0, [], [], 0
        for number, raw in enumerate(lines, 1):
            if not raw:
                blank += 1
                continue
            try:
                json.loads(raw.decode("utf-8"))
                whole += 1
                continue
            except ValueError:
                torn.append(number)
            start = raw.rfind(LINE_START)
            if start > 0:  # a whole line glued after a torn one?
                try:
                    json.loads(raw[start:].decode("utf-8"))
                    glued.append(number)
                except ValueError:
                    pass
        r = subprocess.run([sys.executable, tool, "--text", path],
                           capture_output=True, text=True, timeout=600, check=False)
        named = sorted(int(m) for m in re.findall(
            re.escape(path) + r":(\d+): torn line", r.stderr))
        rendered = [ln for ln in r.stdout.splitlines() if not ln.startswith("note: ")]
        print(f"lines {len(lines)} whole {whole} torn {len(torn)} (a whole line "
              f"glued after {len(glued)} of them) blank {blank}; "
              f"mpf-audit: exit {r.returncode}, rendered {len(rendered)}, "
              f"named torn {len(named)}")
        problems = []
        if named != torn:
            problems.append(f"torn lines {torn[:20]}, mpf-audit named {named[:20]}")
        if len(rendered) != whole + len(glued):
            problems.append(f"{whole} whole lines and {len(glued)} glued, mpf-audit "
                            f"rendered {len(rendered)}")
        if blank or glued:
            problems.append(f"{blank} empty lines, {len(glued)} lines glued to a torn one")
        if not torn or torn[0] != 1 or 1 in glued:
            problems.append("the torn line left on purpose is not line 1 alone")
        if r.returncode != 2 or not torn:
            problems.append(f"mpf-audit exited {r.returncode} with {len(torn)} torn")
        for p in problems:
            print("FAIL:", p)
        if not problems:
            print("OK")
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
