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
    funcs, list_facts = [], []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
            if line.startswith("@facts"):
                list_facts += list_facts_of(line, f"{path}:{lineno}")
                continue
            if not line or line.startswith("@"):  # schema lines: parse_schema
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
    for fn in funcs:
        for fact in list_facts:
            fn.options.setdefault(fact, True)
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


# Facts a list line's options may state about its kind (trace/kind.hpp fact::).
FACTS = ["positional", "by_fd", "by_path", "nofollow", "datasync", "prefix", "neighbor", "text", "whole_fs", "ranged",
         "two_files", "readahead", "returns_errno", "symbolic", "synchronises", "grows_only", "names_file"]


def list_facts_of(line, where):
    """The facts of an '@facts F ...' line: every kind of its list has them."""
    words = line.split()[1:]
    if line.split()[0] != "@facts" or not words:
        raise SystemExit(f"{where}: expected '@facts fact ...'")
    for w in words:
        if w not in FACTS:
            raise SystemExit(f"{where}: unknown fact '{w}' (trace/api/fnlist.py FACTS)")
    return words


def facts_of(fn):
    return [f for f in FACTS if f in fn.options]


@dataclass
class View:
    name: str
    base: str
    fields: list       # (arg:: name, slot)
    family: str        # the list that declares it
    where: str         # path:line, for messages
    families: set = field(default_factory=set)   # families whose kinds it fits
    opclasses: set = field(default_factory=set)  # and kinds of these opclasses


def parse_schema(paths):
    """The @view and @uses lines: views with the families and opclasses they fit."""
    views, uses = {}, []
    for path in paths:
        family = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            for lineno, raw in enumerate(f, 1):
                line = raw.split("#", 1)[0].strip()
                where = f"{path}:{lineno}"
                if line.startswith("@view "):
                    m = re.match(r"^@view\s+(\w+)\s*(?::\s*(\w+)\s*)?=\s*(.*)$", line)
                    if not m:
                        raise SystemExit(f"{where}: expected '@view Name [: Base] = field:slot ...'")
                    fields = []
                    for tok in m.group(3).split():
                        fm = re.match(r"^(\w+):([0-7])$", tok)
                        if not fm:
                            raise SystemExit(f"{where}: bad field '{tok}' (field:slot, slot 0-7)")
                        fields.append((fm.group(1), int(fm.group(2))))
                    if m.group(1) in views:
                        raise SystemExit(f"{where}: view {m.group(1)} declared twice")
                    views[m.group(1)] = View(m.group(1), m.group(2) or "", fields, family, where)
                elif line.startswith("@uses "):
                    words = line.split()[1:]
                    if not words:
                        raise SystemExit(f"{where}: expected '@uses Name [opclass ...]'")
                    uses.append((words[0], family, words[1:], where))
                elif line.startswith("@facts"):
                    continue  # per kind: parse_file
                elif line.startswith("@"):
                    raise SystemExit(f"{where}: unknown schema line '{line.split()[0]}'")
    for v in views.values():
        v.families.add(v.family)
    for name, family, ops, where in uses:
        if name not in views:
            raise SystemExit(f"{where}: no view {name}")
        if ops:
            views[name].opclasses.update(ops)
        else:
            views[name].families.add(family)

    def base_chain(v):
        seen = []
        while v.base:
            if v.base not in views:
                raise SystemExit(f"{v.where}: no view {v.base}")
            if v.base in seen:
                raise SystemExit(f"{v.where}: views derive from each other")
            seen.append(v.base)
            v = views[v.base]
        return [views[b] for b in seen]

    for v in list(views.values()):  # a base fits wherever a view derived from it does
        for b in base_chain(v):
            b.families |= v.families
            b.opclasses |= v.opclasses
    own = {v.name: list(v.fields) for v in views.values()}
    for v in views.values():
        inherited = [f for b in reversed(base_chain(v)) for f in own[b.name]]
        names = [n for n, _ in inherited + v.fields]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise SystemExit(f"{v.where}: field {sorted(dup)[0]} twice in {v.name}")
        v.fields = inherited + own[v.name]
    return list(views.values())
