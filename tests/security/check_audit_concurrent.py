#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 30, item 5: concurrent writers of audit lines leave no empty line.

  check_audit_concurrent.py AUDIT_CONCURRENT [WRITERS LINES]

Runs audit_concurrent (8 writers x 400 lines by default, started at once
through a gate, none killed) on a file in a directory of its own, then
checks the file: exactly WRITERS x LINES lines, none empty, each one JSON
object, each case name once. Prints the counts and "OK" when all hold.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    prog = sys.argv[1]
    writers, lines = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (8, 400)
    with tempfile.TemporaryDirectory(prefix="mpf-audit-concurrent.") as d:
        path = os.path.join(d, "audit.jsonl")
        run = subprocess.run([prog, str(writers), str(lines), path], capture_output=True,
                             text=True, timeout=600, check=False)
        print(run.stdout.strip(), run.stderr.strip())
        if run.returncode != 0:
            print(f"FAIL: audit_concurrent exited {run.returncode}")
            return 1
        with open(path, "rb") as f:
            data = f.read()
    problems = []
    if not data.endswith(b"\n"):
        problems.append("the file does not end with a newline")
    got = data.split(b"\n")[:-1]
    empty = [n for n, raw in enumerate(got, 1) if not raw]
    bad, names = [], []
    for n, raw in enumerate(got, 1):
        if not raw:
            continue
        try:
            names.append(json.loads(raw.decode("utf-8"))["case"])
        except (ValueError, KeyError, TypeError):
            bad.append(n)
    print(f"lines {len(got)} empty {len(empty)} not JSON {len(bad)}")
    if empty:
        problems.append(f"empty lines: {empty[:20]}")
    if bad:
        problems.append(f"lines that are not a JSON object: {bad[:20]}")
    want = sorted(f"w{i}.{k}" for i in range(writers) for k in range(lines))
    if sorted(names) != want:
        problems.append(f"{len(names)} cases, each of {len(want)} once expected")
    for p in problems:
        print("FAIL:", p)
    if not problems:
        print("OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
