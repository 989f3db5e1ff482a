"""Parser for the declarative function lists in trace/api/*.list.

Shared by trace/api/gen_kinds.py (event kinds) and preload/gen_wrappers.py
(real-symbol table and wrappers), so both read the lists the same way.
"""
import os
import re
from dataclasses import dataclass, field


@dataclass
class Param:
    decl: str          # full declaration text, e.g. "const int recvcounts[]"
    name: str          # parameter name, e.g. "recvcounts"
    ctype: str         # type with the name removed, arrays turned into pointers


@dataclass
class Function:
    family: str        # list file stem: posix, stdio, mpi, internal
    opclass: str
    name: str
    ret: str = "void"
    params: list = field(default_factory=list)
    variadic: bool = False
    handler: str = ""  # handler name
    handler_args: list = field(default_factory=list)
    options: dict = field(default_factory=dict)
    line: int = 0

    @property
    def internal(self):
        """A tracer record, not a function (a line without declaration)."""
        return self.family == "internal" or not self.handler


def split_top(text, sep=","):
    """Split on sep outside parentheses and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_param(decl):
    m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\])?$", decl)
    if not m:
        raise ValueError(f"cannot parse parameter '{decl}'")
    ctype = m.group(1).strip()
    if m.group(3):
        ctype += " *"
    return Param(decl=decl, name=m.group(2), ctype=ctype)


def parse_decl(decl):
    m = re.match(r"^(.*?[\s\*])([A-Za-z_]\w*)\s*\((.*)\)$", decl.strip())
    if not m:
        raise ValueError(f"cannot parse declaration '{decl}'")
    ret, name, plist = m.group(1).strip(), m.group(2), m.group(3).strip()
    params, variadic = [], False
    if plist and plist != "void":
        for p in split_top(plist):
            if p == "...":
                variadic = True
            else:
                params.append(parse_param(p))
    return ret, name, params, variadic


def parse_handler(text):
    m = re.match(r"^([A-Za-z_]\w*)\((.*)\)$", text.strip())
    if not m:
        raise ValueError(f"cannot parse handler '{text}'")
    return m.group(1), split_top(m.group(2))


def split_handler(text):
    """The handler call runs to its matching ')'; options may follow after '|'."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                rest = text[i + 1:].strip()
                if rest and not rest.startswith("|"):
                    raise ValueError(f"unexpected text after handler: '{rest}'")
                return text[:i + 1], rest.lstrip("|").strip()
    raise ValueError(f"unbalanced handler '{text}'")


def parse_options(text):
    opts = {}
    for tok in split_top(text, sep=" "):
        if "=" in tok:
            k, v = tok.split("=", 1)
            opts[k] = v
        elif tok:
            opts[tok] = True
    return opts


def parse_file(path):
    family = os.path.splitext(os.path.basename(path))[0]
    funcs = []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
            if not line:
                continue
            fields = [x.strip() for x in line.split(" | ", 2)]
            try:
                if len(fields) == 2:
                    funcs.append(Function(family, fields[0], fields[1], line=lineno))
                    continue
                ret, name, params, variadic = parse_decl(fields[1])
                htext, otext = split_handler(fields[2])
                handler, hargs = parse_handler(htext)
                opts = parse_options(otext)
            except (ValueError, IndexError) as e:
                raise SystemExit(f"{path}:{lineno}: {e}")
            funcs.append(Function(family, fields[0], name, ret, params, variadic,
                                  handler, hargs, opts, lineno))
    return funcs


def parse_all(paths):
    funcs, seen = [], set()
    for p in paths:
        for fn in parse_file(p):
            if fn.name in seen:
                raise SystemExit(f"{p}:{fn.line}: {fn.name} listed twice")
            seen.add(fn.name)
            funcs.append(fn)
    return funcs
