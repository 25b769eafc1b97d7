#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The call graph between the source files of a library, from the object
files' symbol tables (nm), and its cycles.

usage: cycles.py [--order LAYER,LAYER,...] [--table README] [--allow A>B ...]
                 OBJ...

An edge A -> B means a function of A.o calls (or data of A.o refers to) a
symbol that B.o defines. A layered library's files call only downwards,
except along the edges documented as --allow FILE>FILE (stems, e.g.
child>nested: a next-level child's process runs a whole worker again,
which re-enters the library from the top). Without those edges the graph
must have no cycle: each cycle found (a strongly connected component of
more than one file) is printed with its edges, and the exit status is 1.

--order names the layers from the bottom up. A layer is a folder (an
object's layer is the folder it was compiled from, when that folder is
named in the list) or a single file at the top of the tree (its stem).
A file may call only its own layer or the layers below it: each edge that
calls upward (and is not an --allow edge) is printed as UPWARD with the
two layers, and the exit status is 1. An object in no named layer is an
error too (exit status 1): a new folder must be placed in the order.

--table names the README whose table draws those layers, one row per
source file: "| `folder/` | `file.c` | what it does |", the folders bottom
up. Its folders must be the --order's, in that order, and its rows exactly
the .c and .cc files of those folders (beside the README): each difference
is printed as TABLE and the exit status is 1.
"""
import os
import re
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


def layer_of(obj, order):
    """The folder an object was compiled from if the order names it, else
    the object's stem; None if the order names neither."""
    folder = os.path.basename(os.path.dirname(obj))
    if folder in order:
        return folder
    return stem(obj) if stem(obj) in order else None


def upward_edges(objs, graph, allowed, order):
    """Print each call from a layer to a layer above it; their number."""
    rank = {name: i for i, name in enumerate(order)}
    layer, bad = {}, 0
    for o in objs:
        layer[stem(o)] = layer_of(o, rank)
        if layer[stem(o)] is None:
            print("NO LAYER: %s is in no layer of --order %s"
                  % (o, ",".join(order)))
            bad += 1
    for a in sorted(graph):
        for b in sorted(graph[a]):
            la, lb = layer.get(a), layer.get(b)
            if (a, b) in allowed or la is None or lb is None:
                continue
            if rank[la] < rank[lb]:
                print("UPWARD: %s -> %s (layer %s calls layer %s above it)"
                      % (a, b, la, lb))
                bad += 1
    return bad


def table_errors(path, order):
    """Print each difference between the README's table and the layers
    and files of the tree; their number."""
    rows = []
    with open(path) as f:
        for line in f:
            m = re.match(r"\|\s*`(\w+)/`\s*\|\s*`([\w.]+)`\s*\|", line)
            if m:
                rows.append((m.group(1), m.group(2)))
    bad = 0
    folders = list(dict.fromkeys(folder for folder, _ in rows))
    if folders != order:
        print("TABLE: %s draws the layers %s, the order is %s"
              % (path, " < ".join(folders), " < ".join(order)))
        bad += 1
    top = os.path.dirname(path)
    listed = set(rows)
    present = {(folder, name) for folder in order
               if os.path.isdir(os.path.join(top, folder))
               for name in os.listdir(os.path.join(top, folder))
               if name.endswith((".c", ".cc"))}
    for folder, name in sorted(present - listed):
        print("TABLE: %s/%s is not in %s" % (folder, name, path))
        bad += 1
    for folder, name in sorted(listed - present):
        print("TABLE: %s lists %s/%s, which is not there" % (path, folder, name))
        bad += 1
    return bad


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
    allowed, objs, order, readme = set(), [], [], None
    it = iter(argv)
    for a in it:
        if a == "--allow":
            src, _, dst = next(it).partition(">")
            allowed.add((src, dst))
        elif a == "--order":
            order = [x for x in next(it).split(",") if x]
        elif a == "--table":
            readme = next(it)
        else:
            objs.extend(x for x in a.split(";") if x)  # a CMake list too
    if not objs:
        print(__doc__, file=sys.stderr)
        return 2
    stems = [stem(o) for o in objs]
    twice = sorted({x for x in stems if stems.count(x) > 1})
    if twice:
        print("files of the same name: %s (an edge would be ambiguous)"
              % ", ".join(twice))
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
    if order:
        bad += upward_edges(objs, graph, allowed, order)
    if readme:
        bad += table_errors(readme, order)
    if not bad:
        print("no cycle beyond the documented edges (%d files; documented: %s)"
              % (len(table), ", ".join("%s -> %s" % e for e in sorted(allowed))
                 or "none"))
        if order:
            print("every call goes down the layers %s" % " < ".join(order))
        if readme:
            print("%s draws those layers and every file of them" % readme)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
