#!/usr/bin/env python3
"""Prints the dependency graph of mpior's folders, read from #include lines,
and fails on a cycle that scripts/deps_allowlist.txt does not know.

usage: scripts/deps_graph.py [BUILD_DIR]     (default: build)

An include is resolved as the compiler resolves it for each translation unit
(compile_commands.json: the including file's folder first, then the -I
paths in order), so a header name that exists in two folders counts for the
one the compiler took. An edge A -> B says a file of A includes one of B.

Dependencies should point one way, down to trace/ (issue 63). Cycles exist
today: the allowlist names the edges that close them. The check fails when
the graph without those edges still has a cycle (a new one), and when an
allowlisted edge is gone (take it off the list: the list only shrinks).
Exit status: 0 clean, 1 a new cycle or a stale allowlist entry, 2 bad use.
"""
import collections
import json
import os
import re
import shlex
import sys

FOLDERS = ["trace", "merge", "preload", "report", "extrap", "postproc", "replayer", "predict", "study"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ALLOWLIST = os.path.join(ROOT, "scripts", "deps_allowlist.txt")


def fail_usage(message):
    print(f"deps_graph: {message}", file=sys.stderr)
    sys.exit(2)


def source_root(build):
    """The sources the build was configured from (meson-info), else this script's checkout."""
    try:
        with open(os.path.join(build, "meson-info", "meson-info.json")) as f:
            return os.path.realpath(json.load(f)["directories"]["source"])
    except (OSError, ValueError, KeyError):
        return ROOT


def folder_of(path, build, root):
    """The project folder a file belongs to (generated files: the folder they are generated for), or None."""
    for base in (build, root):
        rel = os.path.relpath(path, base)
        if not rel.startswith(".."):
            top = rel.split(os.sep)[0]
            return top if top in FOLDERS else None
    return None


def include_paths(entry):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    paths = []
    for i, a in enumerate(args):
        p = args[i + 1] if a in ("-I", "-iquote") and i + 1 < len(args) else a[2:] if a.startswith("-I") else None
        if p:
            paths.append(os.path.realpath(os.path.join(entry["directory"], p)))
    return paths


_includes = {}


def includes_of(path):
    if path not in _includes:
        try:
            with open(path, errors="replace") as f:
                _includes[path] = INCLUDE.findall(f.read())
        except OSError:
            _includes[path] = []
    return _includes[path]


def resolve(name, including, paths):
    for d in [os.path.dirname(including)] + paths:
        candidate = os.path.realpath(os.path.join(d, name))
        if os.path.isfile(candidate):
            return candidate
    return None


def graph(build):
    db = os.path.join(build, "compile_commands.json")
    try:
        with open(db) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        fail_usage(f"cannot read {db} ({e}): configure the build first (scripts/build.sh)")
    root = source_root(build)
    edges = collections.defaultdict(set)  # (from, to) -> {(file, included)}
    for entry in entries:
        paths = include_paths(entry)
        source = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
        seen, todo = {source}, [source]
        while todo:
            path = todo.pop()
            for name in includes_of(path):
                target = resolve(name, path, paths)
                if not target or target in seen:
                    continue
                seen.add(target)
                todo.append(target)
                a, b = folder_of(path, build, root), folder_of(target, build, root)
                if a and b and a != b:
                    edges[(a, b)].add((os.path.relpath(path, root), name))
    return edges


def strongly_connected(nodes, edges):
    """Tarjan's components of more than one folder."""
    succ = collections.defaultdict(list)
    for a, b in edges:
        succ[a].append(b)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
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
            if len(comp) > 1:
                out.append(sorted(comp, key=FOLDERS.index))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def read_allowlist():
    allowed = set()
    with open(ALLOWLIST) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#")[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split("->")]
            if len(parts) != 2 or not all(p in FOLDERS for p in parts):
                fail_usage(f"{ALLOWLIST}:{number}: expected 'FOLDER -> FOLDER', got '{line}'")
            allowed.add(tuple(parts))
    return allowed


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1].startswith("-")):
        fail_usage(__doc__.split("\n")[3])
    build = os.path.realpath(sys.argv[1] if len(sys.argv) == 2 else os.path.join(ROOT, "build"))
    edges = graph(build)
    allowed = read_allowlist()
    for a in FOLDERS:
        targets = sorted((b for (x, b) in edges if x == a), key=FOLDERS.index)
        print(f"{a:10} -> " + (", ".join(f"{b} ({len(edges[(a, b)])})" for b in targets) or "-"))
    status = 0
    for comp in strongly_connected(FOLDERS, edges):
        sys.stdout.flush()
        print(f"cycle: {' <-> '.join(comp)}")
        for a, b in sorted(e for e in edges if e[0] in comp and e[1] in comp):
            mark = "allowed" if (a, b) in allowed else ""
            print(f"  {a} -> {b} {mark}".rstrip())
    sys.stdout.flush()
    sys.stdout.flush()
    for comp in strongly_connected(FOLDERS, [e for e in edges if e not in allowed]):
        status = 1
        print(f"NEW cycle (not closed by an allowlisted edge): {' <-> '.join(comp)}", file=sys.stderr)
        for a, b in sorted(e for e in edges if e[0] in comp and e[1] in comp and e not in allowed):
            for path, name in sorted(edges[(a, b)])[:3]:
                print(f"  {a} -> {b}: {path} includes \"{name}\"", file=sys.stderr)
    for a, b in sorted(allowed - set(edges)):
        status = 1
        print(f"allowlisted edge {a} -> {b} is gone: remove it from {os.path.relpath(ALLOWLIST, ROOT)}",
              file=sys.stderr)
    print(f"{len(edges)} edges, {len(allowed & set(edges))} allowlisted upward; "
          + ("no new cycle" if status == 0 else "FAILED"))
    return status


if __name__ == "__main__":
    sys.exit(main())
