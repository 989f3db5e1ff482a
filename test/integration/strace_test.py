#!/usr/bin/env python3
"""Completeness check that a missing wrapper cannot fool: each bundled program
runs once under the tracer and Debian's strace -f together; for every file
of the program's own (below its run directory) in the trace, the bytes the
kernel saw in the read/write syscall family (read, write, the p*, *v, *v2
forms, copy_file_range, sendfile, splice; AIO's helper threads included;
io_submit's iocbs) equal
the bytes the trace records at every depth, minus what went through memory
mappings (no syscall moves those). Stdio writes reach the kernel at flush, so
they match too; stdio reads fill a buffer ahead, so there the kernel may have
read more. The MPI programs run under mpirun with the MPI library's memory
hooks left on (UCX's, under MPICH's ch4:ucx and Open MPI's UCX PML): bytes
through mappings, which no syscall moves, are checked against what the
program wrote through them. One scenario per meson test: strace_test.py NAME."""
import os
import re
import shutil

from harness import MPI_APPS, OPENMPI, Failure, Scenario, check, check_eq, main, run

FAMILY = ("read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev", "preadv2", "pwritev2")
COPIES = ("copy_file_range", "sendfile", "splice")
WRITES = {"write", "pwrite64", "writev", "pwritev", "pwritev2"}
LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)")
UNFINISHED = re.compile(r"^(\d+)\s+(\w+)\((.*)\s+<unfinished \.\.\.>$")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>(.*)\)\s+=\s+(-?\d+)")
FD = re.compile(r"^\s*\d+<(.*)>$")
# Linux native AIO: the bytes of each iocb io_submit took (strace -e abbrev=none).
IOCB = re.compile(r"aio_lio_opcode=IOCB_CMD_P(WRITE|READ)V?, aio_fildes=\d+<([^>]*)>(.*?)(?=\{aio_data=|$)")
IOV_LEN = re.compile(r"(?:aio_nbytes|iov_len)=(\d+)")


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
            if name == "io_submit":
                for i, m in enumerate(IOCB.finditer(args)):
                    if i < ret:
                        add(m.group(2), 0 if m.group(1) == "WRITE" else 1, sum(map(int, IOV_LEN.findall(m.group(3)))))
                continue
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


def cross_check(app, args=(), ranks=None, prepare=None, skip=None, ucx=False, mapped=None):
    """mapped(rel, file entry): checks a file's bytes through mappings."""
    if not shutil.which("strace"):
        raise Failure("strace is not installed (scripts/setup.sh installs it)")
    s = Scenario(app, args, ranks=ranks, prepare=prepare, ucx=ucx)
    log = os.path.join(s.root, "strace.log")
    calls = ",".join(FAMILY + COPIES + ("io_submit",))
    # One run, traced and under strace: programs whose reads depend on timing
    # (ROMIO reading back a hole another rank is extending) give the same
    # answer to both counts. strace itself runs untraced (its log would be a
    # traced process's file, and the job its child): -E hands the tracing
    # variables to the command alone.
    plain, traced = s.environment(False), s.environment(True)
    tracing = [a for k, v in traced.items() if plain.get(k) != v for a in ("-E", f"{k}={v}")]
    run(["strace", "-f", "-qq", "-y", "-s", "0", "-e", f"trace={calls}", "-e", "abbrev=none", "-e", "signal=none",
         "-o", log] + tracing
        + s.command(), cwd=s.work, env=plain)
    summary = s.post()
    kernel = kernel_bytes(log)
    checked = 0
    for f in summary["files"]:
        if not f["path"].startswith(s.work + "/") or f["directory"]:
            continue
        rel = os.path.relpath(f["path"], s.work)
        if skip and skip(rel):
            continue
        kw, kr = kernel.get(f["path"], [0, 0])
        tw = f["bytes_written"] - f["mapped_written"] + f["nested_written"]
        tr = f["bytes_read"] - f["mapped_read"] + f["nested_read"]
        check_eq(tw, kw, f"{app}: bytes written to {rel}, trace vs kernel")
        if f["stdio_read"]:
            check(tr <= kr, f"{app}: {rel}: trace read {tr} bytes through stdio, kernel only {kr}")
        else:
            check_eq(tr, kr, f"{app}: bytes read from {rel}, trace vs kernel")
        if mapped:
            mapped(rel, f)
        checked += 1
    check(checked > 0, f"{app}: no file of its own in the trace")
    s.cleanup()


def mmap_bounds(pages):
    """mmap_io's bytes through mappings, per file: out.dat's shared writable
    mapping written whole, MS_SYNC'ed (counted exactly: what the kernel held
    dirty), a quarter written and synced again, half written and unmapped
    (at most that half: what the kernel still holds dirty); its read-write
    and read-only mappings read it whole; grow.dat, mapped write-only and
    grown by mremap, written whole and synced."""
    size = pages * 4096

    def check_file(rel, f):
        name = os.path.basename(rel)
        if name.startswith("out."):
            exact = size + size // 4
            check(exact <= f["mapped_written"] <= exact + size // 2,
                  f"{rel}: {f['mapped_written']} bytes written through mappings, want {exact} to {exact + size // 2}")
            check_eq(f["mapped_read"], 2 * size, f"{rel}: bytes read through mappings")
        elif name.startswith("grow."):
            check_eq((f["mapped_written"], f["mapped_read"]), (size, 0), f"{rel}: bytes through mappings")
    return check_file


def hdf5():
    """Parallel HDF5 (collective and independent writes through MPI-IO, read
    back collectively) over UCX: ROMIO under MPICH, OMPIO under Open MPI's
    UCX PML, against Debian's HDF5 built for that MPI."""
    if OPENMPI and not os.path.exists(os.path.join(MPI_APPS, "hdf5_steps")):
        raise Failure("hdf5_steps was not built for Open MPI (pkg-config hdf5-openmpi: libhdf5-openmpi-dev, "
                      "scripts/setup.sh)")
    cross_check("hdf5_steps", [6], ranks=2, ucx=True)


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
    # The family programs as MPI ranks (UCX loaded, its memory hooks on).
    "mmap_mpi": lambda: cross_check("mmap_io_mpi", [16], ranks=2, ucx=True, mapped=mmap_bounds(16)),
    "aio_mpi": lambda: cross_check("aio_io_mpi", [8, 4096], ranks=2, ucx=True),
    "libaio_mpi": lambda: cross_check("libaio_io_mpi", [8, 4096], ranks=2, ucx=True),
    "hdf5": hdf5,
}

if __name__ == "__main__":
    main(SCENARIOS)
