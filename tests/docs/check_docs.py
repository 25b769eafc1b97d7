#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The docs are tests: what README.md and docs/*.md show is what happens.

usage: check_docs.py ROOT blocks|refs|paths|settings

blocks    Every fenced code block of README.md and docs/*.md carries, on
          the line before its opening fence, one of two markers:
            <!-- illustrative -->  or  <!-- illustrative: why -->
              shown, not run: sample output, a signature, a job file
              whose commands need a CI service;
            <!-- tested: PATH -->
              PATH (from the top of the tree) is the test or script that
              builds or runs the block, and it names the document (its
              file name appears in PATH), so the claim can be followed.
              tests/docs/check_docs.py itself tests blocks of commands
              of the tree (the quick start): each line's first word must
              be an executable file of the tree.
          A block with neither fails, naming its file and line.
refs      Every git ref a doc or an example's build file names
          (`GIT_TAG x`, `--branch x`) resolves with `git rev-parse` in
          the repository (a branch, a tag, or
          origin's branch in a clone); every version it names for a
          package (`mpfixture_X.Y.Z_`, `mpfixture-X.Y.Z-`,
          `find_package(mpfixture X.Y`, `libmpfixture.so.X.Y`) is the
          project's (CMakeLists.txt `project(... VERSION ...)`).
paths     Every path of the tree a doc names in backquotes (`ci/...`,
          `tests/...`, `fixture/...` ...) exists.
settings  docs/settings.md is the one list of environment variables: its
          tables name exactly the variables fixture/src/base/settings.c reads
          (env("MPF_..."), env_flag, env_ms) and the runtime's getenv
          ("WORKER_..."); README.md, docs/api.md, docs/getting-started.md
          and mpfixture.h point to it and hold no table of their own.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1])
WHAT = sys.argv[2]
DOCS = [os.path.join(ROOT, "README.md")] + sorted(
    glob.glob(os.path.join(ROOT, "docs", "*.md")))
# Where a user copies a git ref from: the docs and every example's build
# files.
REF_FILES = DOCS + sorted(
    f for f in glob.glob(os.path.join(ROOT, "examples", "**", "*"), recursive=True)
    if os.path.basename(f) in ("CMakeLists.txt", "meson.build", "configure.ac",
                               "WORKSPACE", "BUILD", "BUILD.bazel", "MODULE.bazel"))
FENCE = re.compile(r"^(\s*)```")
MARK = re.compile(r"^<!-- (illustrative(?::[^>]*)?|tested: (\S+)) -->\s*$")


def rel(path):
    return os.path.relpath(path, ROOT)


def fenced_blocks(path):
    """(opening line number, line before it, opening fence, body lines)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            start = i
            i += 1
            while i < len(lines) and not FENCE.match(lines[i]):
                i += 1
            out.append((start + 1, lines[start - 1] if start else "",
                        lines[start], lines[start + 1:i]))
        i += 1
    return out


def check_blocks():
    bad = 0
    n = {"illustrative": 0, "tested": 0}
    for doc in DOCS:
        for line, before, fence, body in fenced_blocks(doc):
            m = MARK.match(before)
            where = "%s:%d (%s)" % (rel(doc), line, fence.strip())
            if not m:
                print("%s: a fenced block neither tested nor marked "
                      "illustrative (put <!-- tested: PATH --> or "
                      "<!-- illustrative --> on the line before it)" % where)
                bad += 1
                continue
            if m.group(2) is None:
                n["illustrative"] += 1
                continue
            tester = os.path.join(ROOT, m.group(2))
            if not os.path.isfile(tester):
                print("%s: tested by %s, which does not exist"
                      % (where, m.group(2)))
                bad += 1
            elif os.path.basename(doc) not in open(
                    tester, encoding="utf-8", errors="replace").read():
                print("%s: tested by %s, which never names %s"
                      % (where, m.group(2), os.path.basename(doc)))
                bad += 1
            elif m.group(2) == "tests/docs/check_docs.py":
                bad += check_commands(where, body)
                n["tested"] += 1
            else:
                n["tested"] += 1
    print("docs: %d fenced blocks tested, %d illustrative, %d unmarked"
          % (n["tested"], n["illustrative"], bad))
    return bad


def check_commands(where, body):
    """A block this script tests itself: commands of the tree (the quick
    start). Each line's first word is an executable file of the tree."""
    bad = 0
    for text in body:
        words = text.split("#")[0].split()
        if not words:
            continue
        path = os.path.join(ROOT, words[0])
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            print("%s: '%s' is not an executable of the tree" % (where, words[0]))
            bad += 1
    return bad


def project_version():
    text = open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8").read()
    return re.search(r"project\(mpfixture\s+VERSION\s+([0-9.]+)", text).group(1)


def resolves(ref):
    # The tree under test is trusted as it is built and run: git's refusal
    # of a repository another user owns (a checkout of root's tested as
    # an unprivileged user, "dubious ownership") is lifted for it alone.
    safe = "safe.directory=" + os.path.realpath(ROOT)
    for candidate in (ref, "refs/tags/" + ref, "origin/" + ref):
        r = subprocess.run(["git", "-c", safe, "-C", ROOT, "rev-parse",
                            "--verify", "-q", candidate + "^{commit}"],
                           capture_output=True, text=True, check=False)
        if r.returncode == 0:
            return True
    return False


def check_refs():
    bad = 0
    version = project_version()
    refs = versions = 0
    for doc in REF_FILES:
        for no, line in enumerate(open(doc, encoding="utf-8"), 1):
            for m in re.finditer(r"(?:GIT_TAG\s+|--branch[ =])([\w./-]+)", line):
                refs += 1
                if not resolves(m.group(1)):
                    print("%s:%d: the git ref '%s' does not exist in the "
                          "repository" % (rel(doc), no, m.group(1)))
                    bad += 1
            for pat in (r"mpfixture[_-](\d+\.\d+\.\d+)[_-]",
                        r"find_package\(mpfixture (\d+\.\d+)",
                        r"libmpfixture\.so\.(\d+\.\d+)"):
                for m in re.finditer(pat, line):
                    versions += 1
                    v = m.group(1)
                    if not (version == v or version.startswith(v + ".")):
                        print("%s:%d: version %s, the project is %s"
                              % (rel(doc), no, v, version))
                        bad += 1
    print("docs: %d git refs, %d versions checked (project %s)"
          % (refs, versions, version))
    return bad


TREE_PATH = re.compile(
    r"`(?:\./)?((?:\.ci|ci|fixture|tests|docs|runtime|cmake|bench|coverage|"
    r"fuzz|examples|fakechips)/[^`\s*<>…]*)`")


def check_paths():
    bad = n = 0
    for doc in DOCS:
        for no, line in enumerate(open(doc, encoding="utf-8"), 1):
            for m in TREE_PATH.finditer(line):
                path = m.group(1).rstrip(".,:;")
                n += 1
                if not os.path.exists(os.path.join(ROOT, path)):
                    print("%s:%d: names %s, which does not exist"
                          % (rel(doc), no, path))
                    bad += 1
    print("docs: %d paths of the tree checked" % n)
    return bad


def read_code_settings():
    code = open(os.path.join(ROOT, "fixture", "src", "base", "settings.c"),
                encoding="utf-8").read()
    names = set(re.findall(r'\benv(?:_flag|_ms)?\(\s*"(MPF_[A-Z_]+)"', code))
    for src in glob.glob(os.path.join(ROOT, "runtime", "src", "**", "*.c"),
                         recursive=True):
        names |= set(re.findall(r'getenv\("(WORKER_[A-Z_]+)"\)',
                                open(src, encoding="utf-8").read()))
    return names


def check_settings():
    bad = 0
    doc = os.path.join(ROOT, "docs", "settings.md")
    listed = set()
    for line in open(doc, encoding="utf-8"):
        m = re.match(r"\| `((?:MPF|WORKER)_[A-Z_]+)[=`]", line)
        if m:
            listed.add(m.group(1))
    code = read_code_settings()
    if not code:
        print("settings: no variable found in the code (pattern stale?)")
        bad += 1
    for name in sorted(code - listed):
        print("docs/settings.md: %s is read by the code but not listed" % name)
        bad += 1
    for name in sorted(listed - code):
        print("docs/settings.md: %s is listed but the code never reads it"
              % name)
        bad += 1
    pointers = ["README.md", "docs/api.md", "docs/getting-started.md",
                "fixture/include/mpfixture/mpfixture.h"]
    for p in pointers:
        text = open(os.path.join(ROOT, p), encoding="utf-8").read()
        if "settings.md" not in text:
            print("%s: does not point to docs/settings.md" % p)
            bad += 1
        own = set(re.findall(r"^\| `((?:MPF|WORKER)_[A-Z_]+)", text, re.M))
        if p.endswith(".md") and own & code:
            print("%s: holds a table of settings of its own; the list is "
                  "docs/settings.md" % p)
            bad += 1
    print("settings: %d variables in the code, %d listed" % (len(code),
                                                             len(listed)))
    return bad


CHECKS = {"blocks": check_blocks, "refs": check_refs, "paths": check_paths,
          "settings": check_settings}
if WHAT not in CHECKS:
    sys.exit(__doc__)
sys.exit(1 if CHECKS[WHAT]() else 0)
