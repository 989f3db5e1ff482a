#!/usr/bin/env python3
"""Completeness check that a missing wrapper cannot fool: each bundled program
runs once under Debian's strace -f and once under the tracer; for every file
of the program's own (below its run directory) in the trace, the bytes the
kernel saw in the read/write syscall family (read, write, the p*, *v, *v2
forms, copy_file_range, sendfile, splice; AIO's helper threads included) equal
the bytes the trace records at every depth, minus what went through memory
mappings (no syscall moves those). Stdio writes reach the kernel at flush, so
they match too; stdio reads fill a buffer ahead, so there the kernel may have
read more. One scenario per meson test: strace_test.py NAME."""
import os
import re
import shutil

from harness import Failure, Scenario, check, check_eq, main, run

FAMILY = ("read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2")
COPIES = ("copy_file_range", "sendfile", "splice")
WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)")
UNFINISHED = re.compile(r"^(\d+)\s+(\w+)\((.*)\s+<unfinished \.\.\.>$")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>(.*)\)\s+=\s+(-?\d+)")
FD = re.compile(r"^\s*\d+<(.*)>$")


def fd_path(arg):
    m = FD.match(arg)
    return m.group(1) if m else None


def kernel_bytes(log):
    """{path: [written, read]} from an `strace -f -y -s 0` log."""
    out, pending = {}, {}

    def add(path, i, n):
        if path and n > 0:
            out.setdefault(path, [0, 0])[i] += n

    with open(log) as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = UNFINISHED.match(line)
            if m:
                pending[m.group(1)] = (m.group(2), m.group(3))
                continue
            m = RESUMED.match(line)
            if m:
                name, args = pending.pop(m.group(1), (m.group(2), ""))
                args += m.group(3)
                ret = int(m.group(4))
            else:
                m = LINE.match(line)
                if not m:
                    continue
                name, args, ret = m.group(2), m.group(3), int(m.group(4))
            parts = [a.strip() for a in args.split(", ")]
            if name in FAMILY:
                add(fd_path(parts[0]), 0 if name in WRITES else 1, ret)
            elif name == "sendfile" and len(parts) >= 2:
                add(fd_path(parts[1]), 1, ret)
                add(fd_path(parts[0]), 0, ret)
            elif name in ("copy_file_range", "splice") and len(parts) >= 3:
                add(fd_path(parts[0]), 1, ret)
                add(fd_path(parts[2]), 0, ret)
    return out


def cross_check(app, args=(), ranks=None, prepare=None, skip=None):
    if not shutil.which("strace"):
        raise Failure("strace is not installed (scripts/setup.sh installs it)")
    s = Scenario(app, args, ranks=ranks, prepare=prepare)
    log = os.path.join(s.root, "strace.log")
    calls = ",".join(FAMILY + COPIES)
    run(["strace", "-f", "-qq", "-y", "-s", "0", "-e", f"trace={calls}", "-e", "signal=none", "-o", log]
        + s.command(), cwd=s.plain, env=s.environment(False))
    run(s.command(), cwd=s.work, env=s.environment(True))
    summary = s.post()
    kernel = kernel_bytes(log)
    checked = 0
    for f in summary["files"]:
        if not f["path"].startswith(s.work + "/") or f["directory"]:
            continue
        rel = os.path.relpath(f["path"], s.work)
        if skip and skip(rel):
            continue
        kw, kr = kernel.get(os.path.join(s.plain, rel), [0, 0])
        tw = f["bytes_written"] - f["mapped_written"] + f["nested_written"]
        tr = f["bytes_read"] - f["mapped_read"] + f["nested_read"]
        check_eq(tw, kw, f"{app}: bytes written to {rel}, trace vs kernel")
        if f["stdio_read"]:
            check(tr <= kr, f"{app}: {rel}: trace read {tr} bytes through stdio, kernel only {kr}")
        else:
            check_eq(tr, kr, f"{app}: bytes read from {rel}, trace vs kernel")
        checked += 1
    check(checked > 0, f"{app}: no file of its own in the trace")
    s.cleanup()


def make_input(d):
    with open(os.path.join(d, "input.dat"), "wb") as f:
        f.write(bytes(range(256)) * 40)


SCENARIOS = {
    "nonmpi": lambda: cross_check("nonmpi", [16], prepare=make_input),
    "aio_io": lambda: cross_check("aio_io", [8, 4096]),
    "files_more": lambda: cross_check("files_more"),
    "stdio_more": lambda: cross_check("stdio_more", [20]),
    "stdio_more_chk": lambda: cross_check("stdio_more_chk", [20]),
    "mmap_io": lambda: cross_check("mmap_io", [16]),
    "nton_barrier": lambda: cross_check("nton_barrier", [10, 4096], ranks=2),
    "nto1": lambda: cross_check("nto1", [10, 8192], ranks=2),
    "serial_gather": lambda: cross_check("serial_gather", [6, 256], ranks=2),
    "checkpoint_sim": lambda: cross_check("checkpoint_sim", [10, 1000, 5, 4096], ranks=2),
    "threads_io": lambda: cross_check("threads_io", [3, 40, 2048], ranks=2),
    "mpiio_aio": lambda: cross_check("mpiio_aio", [4, 65536], ranks=2),
    # ROMIO names its shared file pointer files after a random number: they
    # differ between the two runs.
    "mpiio_forms": lambda: cross_check("mpiio_forms", ranks=3, skip=lambda rel: ".shfp." in rel),
    # AIO requests never asked about, completed at close and at exit.
    "aio_orphan": lambda: cross_check("aio_orphan", [4096], ranks=2),
}

if __name__ == "__main__":
    main(SCENARIOS)
