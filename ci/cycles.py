#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The call graph between the source files of a library, from the object
files' symbol tables (nm), and its cycles.

usage: cycles.py [--allow A>B ...] OBJ...

An edge A -> B means a function of A.o calls (or data of A.o refers to) a
symbol that B.o defines. A layered library's files call only downwards,
except along the edges documented as --allow FILE>FILE (stems, e.g.
tree>child: the fork of a child, which re-enters the library from the
top). Without those edges the graph must have no cycle: each cycle found
(a strongly connected component of more than one file) is printed with
its edges, and the exit status is 1.
"""
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRC" and parts[1].isupper():
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def stem(obj):
    name = os.path.basename(obj)
    for ext in (".c.o", ".o"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def sccs(graph):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    allowed, objs = set(), []
    it = iter(argv)
    for a in it:
        if a == "--allow":
            src, _, dst = next(it).partition(">")
            allowed.add((src, dst))
        else:
            objs.extend(x for x in a.split(";") if x)  # a CMake list too
    if not objs:
        print(__doc__, file=sys.stderr)
        return 2
    table = {stem(o): symbols(o) for o in objs}
    owner = {}
    for name, (defined, _) in table.items():
        for sym in defined:
            owner[sym] = name
    graph = {name: set() for name in table}
    for name, (_, used) in table.items():
        for sym in used:
            dst = owner.get(sym)
            if dst and dst != name:
                graph[name].add(dst)
    for a, b in sorted(allowed):
        if b not in graph.get(a, ()):
            print("note: documented edge %s -> %s is not in the graph" % (a, b))
    layered = {a: {b for b in bs if (a, b) not in allowed}
               for a, bs in graph.items()}
    bad = 0
    for comp in sccs(layered):
        if len(comp) < 2:
            continue
        members = set(comp)
        print("CYCLE: %s" % " ".join(comp))
        for a in comp:
            for b in sorted(layered[a] & members):
                print("  %s -> %s" % (a, b))
        bad += 1
    if not bad:
        print("no cycle beyond the documented edges (%d files; documented: %s)"
              % (len(table), ", ".join("%s -> %s" % e for e in sorted(allowed))
                 or "none"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
