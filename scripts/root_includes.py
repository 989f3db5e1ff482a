#!/usr/bin/env python3
"""Rewrites every quoted #include of the project's own headers to its path from
the repository root ("postproc/files.hpp"), the form DEVELOPERS.md asks for.
A name that several folders hold is resolved as the compiler resolved it, from
the build's dependency records (ninja -t deps). --check only lists what it
would change and exits 1 if anything would or if two headers share a name. Usage:
  scripts/root_includes.py [--check] [BUILD_DIR]"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^(\s*#\s*include\s+)"([^"]+)"', re.M)
SOURCES = (".cpp", ".hpp", ".h", ".c", ".inc")


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    # The C programs (test/apps, bench) build alone with mpicc or h5pcc: they
    # keep their own form.
    return [p for p in out.split() if p.endswith(SOURCES) and not p.endswith((".c", ".h")) and not p.startswith("test/apps/")]


def generated(build):
    """Headers the build generates, by their path from the build root."""
    found = []
    for d, _, names in os.walk(build):
        rel = os.path.relpath(d, build)
        if rel.startswith((".", "meson")) or ".p" in rel.split(os.sep)[-1]:
            continue
        found += [os.path.normpath(os.path.join(rel, n)) for n in names if n.endswith((".hpp", ".h", ".inc"))]
    return found


def deps_of_objects(build):
    """{source or header (root-relative): set of headers (root-relative) its objects saw}."""
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True).stdout
    seen, current = {}, []
    for line in out.splitlines():
        if not line.startswith(" "):
            current = []
            continue
        p = os.path.normpath(os.path.join(build, line.strip()))
        if p.startswith(ROOT + "/"):
            rel = os.path.relpath(p, ROOT)
            if rel.startswith(os.path.relpath(build, ROOT) + "/"):
                rel = os.path.relpath(p, build)
            current.append(rel)
            for f in current:
                seen.setdefault(f, set()).update(current)
    return seen


def resolve(src, name, headers, deps):
    here = os.path.dirname(src)
    local = os.path.normpath(os.path.join(here, name))
    if local in headers:
        return local
    if "/" in name and os.path.normpath(name) in headers:
        return os.path.normpath(name)
    cands = [h for h in headers if h == name or h.endswith("/" + name)]
    if len(cands) == 1:
        return cands[0]
    if cands:
        used = [c for c in cands if c in deps.get(src, ())]
        if len(used) == 1:
            return used[0]
    return None


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    check = "--check" in sys.argv
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, "build"))
    files = tracked()
    headers = set(files) | set(generated(build))
    deps = deps_of_objects(build) if os.path.isdir(build) else {}
    changed, unresolved = [], []
    for src in files:
        path = os.path.join(ROOT, src)
        text = open(path, encoding="utf-8").read()

        def fix(m):
            name = m.group(2)
            target = resolve(src, name, headers, deps)
            if target is None:
                if not name.startswith("/") and "<" not in name:
                    unresolved.append(f"{src}: {name}")
                return m.group(0)
            return f'{m.group(1)}"{target}"'
        new = INCLUDE.sub(fix, text)
        if new != text:
            changed.append(src)
            if not check:
                open(path, "w", encoding="utf-8").write(new)
    names = {}
    for h in files:
        if h.endswith(".hpp"):
            names.setdefault(os.path.basename(h), []).append(h)
    twins = [" and ".join(v) for v in names.values() if len(v) > 1]
    for t in twins:
        print(f"one name per header: {t}", file=sys.stderr)
    for u in unresolved:
        print(f"unresolved: {u}", file=sys.stderr)
    for c in changed:
        print(("would change: " if check else "changed: ") + c)
    sys.exit(1 if (check and (changed or twins)) else 0)


if __name__ == "__main__":
    main()
