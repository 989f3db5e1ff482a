#!/usr/bin/env python3
"""Every MPI_ function an MPI library exports is either in the lists
(trace/api/*.list) or in trace/api/mpi_not_wrapped.txt, with a reason.

    check_mpi_coverage.py LIBMPI.so   (prints what is missing, exits 1)
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    return sorted({f.split()[-1] for f in out.splitlines() if re.search(r"\sMPI_\w+$", f)})


def wrapped():
    names = set()
    for f in os.listdir(HERE):
        if f.endswith(".list"):
            with open(os.path.join(HERE, f)) as fh:
                names.update(re.findall(r"\b(MPI_\w+)\(", fh.read()))
    return names


def left_out():
    pats = []
    with open(os.path.join(HERE, "mpi_not_wrapped.txt")) as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                pats.append(re.compile(f"(?:{line})$"))
    return pats


def main():
    if len(sys.argv) != 2 or not os.path.exists(sys.argv[1]):
        print("usage: check_mpi_coverage.py LIBMPI.so", file=sys.stderr)
        return 2
    names, have, skip = exported(sys.argv[1]), wrapped(), left_out()
    missing = [n for n in names if n not in have and not any(p.match(n) for p in skip)]
    listed = sum(n in have for n in names)
    print(f"{len(names)} MPI_ symbols exported, {listed} wrapped, {len(names) - listed - len(missing)} left out "
          f"on purpose, {len(missing)} neither")
    for n in missing:
        print(f"  not wrapped and not in mpi_not_wrapped.txt: {n}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
