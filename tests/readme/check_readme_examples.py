#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""README examples are tests.

usage: check_readme_examples.py README.md INCLUDE_DIR LIB_DIR [CC [FLAG]...]

Every ```c block of the README is written to a scratch directory, built
with -Wall -Wextra -Werror (and the FLAGs: a sanitizer build passes its
-fsanitize, as the example must be built like the library it links) against
libmpfixture and cmocka, and run. Its
documented verdict is asserted: a block that says it `fails this case
with "KIND"` must exit non-zero with the guard's report naming exactly
that kind ("FAILED [KIND]") and leave no process behind, and say it
once: without cmocka's empty "mpfixture:0: error: Failure!" line after
the guard's message, and without a source path of the library's build
(LIB_DIR's tree); any other block must exit 0. Blocks marked
<!-- illustrative --> on the line before are not built.
"""
import os
import re
import subprocess
import sys
import tempfile

readme, include_dir, lib_dir = sys.argv[1:4]
cc = sys.argv[4] if len(sys.argv) > 4 else "cc"
flags = sys.argv[5:]

with open(readme, encoding="utf-8") as f:
    blocks = [code for mark, code in re.findall(
        r"^([^\n]*)\n```c\n(.*?)^```$", f.read(), re.S | re.M)
              if not mark.startswith("<!-- illustrative")]
if not blocks:
    sys.exit("check_readme_examples: no ```c block in " + readme)

failures = 0
with tempfile.TemporaryDirectory(prefix="mpf-readme.") as tmp:
    for i, code in enumerate(blocks, 1):
        src = os.path.join(tmp, "example%d.c" % i)
        exe = os.path.join(tmp, "example%d" % i)
        with open(src, "w", encoding="utf-8") as f:
            f.write(code)
        build = subprocess.run(
            [cc, "-Wall", "-Wextra", "-Werror", *flags, "-I", include_dir, src,
             "-o", exe, "-L", lib_dir, "-Wl,-rpath," + lib_dir,
             "-lmpfixture", "-lcmocka"],
            capture_output=True, text=True, check=False)
        if build.returncode != 0:
            print("example %d does not build:\n%s" % (i, build.stderr))
            failures += 1
            continue
        run = subprocess.run([exe], capture_output=True, text=True,
                             timeout=60, check=False)
        out = run.stdout + run.stderr
        m = re.search(r'fails this case\s+(?:\*\s+)?with "(\w+)"', code)
        if m:
            kind = m.group(1)
            build_tree = os.path.dirname(os.path.abspath(lib_dir))
            noise = [n for n in ("mpfixture:0: error: Failure!", build_tree,
                                 "fixture/src/") if n in out]
            ok = run.returncode != 0 and re.search(
                r"FAILED \[%s\] in " % re.escape(kind), out) and not noise
            want = 'fails with exactly "%s", said once' % kind
            if noise:
                print("example %d: noise in the output: %s" % (i, noise))
        else:
            ok = run.returncode == 0
            want = "passes"
        print("example %d: %s: %s (exit %d)" % (i, want, "ok" if ok else "NO",
                                              run.returncode))
        if not ok:
            print(out)
            failures += 1
sys.exit(1 if failures else 0)
