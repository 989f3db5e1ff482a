#!/usr/bin/env python3
"""Every byte a program moves is in the trace (issue 18): one program per
family of calls (test/apps), traced, post-processed and replayed; exact bytes
per file and direction in summary.json, calls in ops, replayed file sizes.
One scenario per meson test: families_test.py NAME."""
import json
import os
import re

from harness import APPS, POST, REPLAY, Scenario, check, check_eq, expect_ops, file_entry, main, run

MPI_FRAME = lambda n: {"MPI_Init": n, "MPI_Finalize": n}  # noqa: E731


def timeline_events(s):
    """The trace's timeline events (every record, at every depth)."""
    timeline = os.path.join(s.root, "timeline.json")
    run([POST, s.traces, "--timeline", timeline])
    with open(timeline) as fh:
        return json.load(fh)["traceEvents"]


def expect_bytes(summary, path, written, read):
    f = file_entry(summary, path)
    check_eq(f["bytes_written"], written, f"bytes written to {path}")
    check_eq(f["bytes_read"], read, f"bytes read from {path}")
    return f


def aio():
    iters, block = 8, 4096
    s = Scenario("aio_io", [iters, block]).run_both()
    summary = s.post()
    # aio_error: one per loop iteration, then at least one per wait on the
    # two LIO_NOWAIT reads, the polled read and aio_fsync (polls vary).
    got = dict(summary["ops"])
    polls = got.pop("aio_error")
    check(polls >= iters + 4, f"aio_error calls ({polls})")
    want = {"open": 1, "close": 1, "printf": 1, "aio_write": iters, "aio_read": 1, "aio_fsync": 1,
            "lio_listio": 2, "aio_return": iters + 4 + 2 + 1 + 1, "aio_cancel": 1}
    suspends = got.pop("aio_suspend")
    check(iters <= suspends <= iters + 3, f"aio_suspend calls ({suspends})")
    check_eq({k: v for k, v in got.items() if v}, want, "calls in summary.json")
    total = (iters + 4) * block
    expect_bytes(summary, s.abs("aio.dat"), total, 2 * block + total)
    check_eq(summary["op_totals"]["aio_write"]["bytes"], iters * block + 4 * block, "aio_write bytes (with lio_listio)")
    s.replay_and_check()
    check_eq(s.report["ops"]["aio_write"]["bytes"], iters * block, "replayed aio_write bytes")
    s.cleanup()


def aio64():
    """The program built with _FILE_OFFSET_BITS=64 calls the *64 forms: the requests' bytes count for
    aio_write64 and aio_read64, the rows with the calls (not for aio_write, a row of no calls the text
    summary leaves out), and show in summary.txt."""
    iters, block = 8, 4096
    s = Scenario("aio_io64", [iters, block]).run_both()
    summary = s.post()
    ops = summary["ops"]
    check_eq((ops.get("aio_write64"), ops.get("lio_listio64"), ops.get("aio_write", 0)), (iters, 2, 0),
             "aio_write64, lio_listio64 and aio_write calls")
    total = (iters + 4) * block
    expect_bytes(summary, s.abs("aio.dat"), total, 2 * block + total)
    totals = summary["op_totals"]
    check_eq((totals["aio_write64"]["bytes"], totals["aio_read64"]["bytes"]), (total, 2 * block + total),
             "aio_write64 and aio_read64 bytes (with lio_listio64's)")
    check_eq(totals.get("aio_write", {}).get("bytes", 0), 0, "bytes counted for aio_write")
    with open(os.path.join(s.traces, "plan", "summary.txt")) as f:
        text = f.read()
    row = re.search(r"^\s*aio_write64\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", text, re.M)
    check(row is not None and int(row.group(4)) == total, f"summary.txt's aio_write64 row: {row and row.group(0)}")
    s.replay_and_check()
    s.cleanup()


def libaio():
    """Linux native AIO through libaio: batches of iocbs per io_submit, completions from io_getevents, a vector
    write, an fsync request, and a write io_destroy waited for; replayed through the kernel's own AIO (one
    io_submit system call per request), not glibc's."""
    blocks, block = 8, 4096
    s = Scenario("libaio_io", [blocks, block]).run_both()
    summary = s.post()
    submits = blocks // 4 + 4  # the batches, the vector, the fsync, the reads, the last write
    expect_ops(summary, {"open": 1, "close": 1, "io_submit": submits, "io_getevents": blocks // 4 + 4,
                         "io_destroy": 1, "printf": 1})
    written, read = (blocks + 2) * block, 2 * block
    expect_bytes(summary, s.abs("kaio.dat"), written, read)
    check_eq(summary["op_totals"]["io_submit"]["bytes"], written + read, "io_submit bytes (its requests')")
    log = os.path.join(s.root, "strace.log")
    run(["strace", "-f", "-qq", "-e", "trace=io_submit", "-o", log, "--", REPLAY, "-q", "--fs",
         os.path.join(s.root, "fs_strace"), s.plan])
    with open(log) as f:
        calls = sum(1 for line in f if "io_submit(" in line)
    check_eq(calls, blocks + 5, "io_submit system calls of the replay (one per request)")
    s.replay_and_check()
    check_eq(s.report["ops"]["io_submit"]["bytes"], written + read, "replayed io_submit bytes")
    check_eq(s.report["errors"]["count"], 0, "failed calls of the replay")
    s.cleanup()


def mpiio_aio():
    ranks, iters, block = 2, 8, 65536
    s = Scenario("mpiio_aio", [iters, block], ranks=ranks).run_both()
    summary = s.post()
    ops = summary["ops"]
    # ROMIO's aio_write/aio_read are nested under the MPI-IO calls now: not
    # application calls, but their bytes are the file's (not nested_*).
    check_eq(ops.get("MPI_File_iwrite_at"), ranks * iters, "MPI_File_iwrite_at calls")
    check_eq(ops.get("MPI_File_iread_at"), ranks * iters, "MPI_File_iread_at calls")
    check_eq(ops.get("aio_write", 0), 0, "aio_write counted as an application call")
    check_eq(ops.get("MPI_Wait"), 2 * ranks * iters, "MPI_Wait calls")
    total = ranks * iters * block
    f = expect_bytes(summary, s.abs("mpiio.dat"), total, total)
    check_eq((f["nested_written"], f["nested_read"]), (0, 0), "bytes under MPI-IO counted as nested too")
    check_eq((f["mpiio"]["bytes_written"], f["mpiio"]["bytes_read"]), (total, total), "MPI-IO level bytes")
    dump = run([POST, "--dump", os.path.join(s.traces, "rank-000000.mpior")]).stdout
    check(re.search(r"MPI_File_iwrite_at .*\n\s+aio_write depth=1", dump) is not None,
          "the dump does not show aio_write nested under MPI_File_iwrite_at")
    s.replay_and_check()
    # Submitted once under MPI_File_iwrite_at, waited for at its completion.
    w = s.report["ops"]["aio_write"]
    check_eq((w["count"], w["bytes"]), (ranks * iters, total), "replayed aio_write calls and bytes")
    s.cleanup()


def files_more():
    s = Scenario("files_more").run_both()
    summary = s.post()
    expect_ops(summary, {
        "open": 5, "openat": 1, "close": 6, "lseek": 1, "pwritev2": 2, "preadv2": 1, "preadv64": 1,
        "pwritev64": 1, "posix_fallocate": 1, "fallocate": 1, "sync_file_range": 1, "syncfs": 1,
        "posix_fadvise": 2, "readahead": 1,
        "copy_file_range": 1, "sendfile": 1, "splice": 2, "truncate": 1, "mkdirat": 2, "write": 2,
        "renameat": 1, "renameat2": 1, "linkat": 1, "symlinkat": 1, "faccessat": 1, "unlinkat": 2,
        "opendir": 1, "readdir": 5, "closedir": 1, "puts": 1})
    # v2.dat: pwritev2 x2 (2000 each), pwritev64 (1000); read by preadv2
    # (2000), preadv64 (1000), copy_file_range (3000), sendfile (2048), splice (1024).
    expect_bytes(summary, s.abs("v2.dat"), 5000, 2000 + 1000 + 3000 + 2048 + 1024)
    expect_bytes(summary, s.abs("copy.dat"), 3000, 0)
    expect_bytes(summary, s.abs("sent.dat"), 2048, 0)
    expect_bytes(summary, s.abs("spliced.dat"), 1024, 0)
    # Bytes go under the name the file had when they moved.
    expect_bytes(summary, s.abs("d/a.tmp"), 100, 0)
    expect_bytes(summary, s.abs("d/a.dat"), 50, 0)
    d = file_entry(summary, s.abs("d"))
    check(d["directory"], "d is a directory")
    check_eq(d["ops"], 1 + 5 + 1 + 3, "calls on d (opendir, readdir x5, closedir, open, mkdirat, close)")
    # Cache hints are replayed (what the next reads cost depends on them); the one that failed when traced
    # is replayed as its duration.
    log = os.path.join(s.root, "strace.log")
    run(["strace", "-f", "-qq", "-e", "trace=fadvise64,readahead", "-o", log, "--", REPLAY, "-q", "--fs",
         os.path.join(s.root, "fs_strace"), s.plan])
    with open(log) as f:
        hints = [line.split("(")[0].split()[-1] for line in f if "(" in line]
    check_eq(sorted(hints), ["fadvise64", "readahead"], "cache hints the replay made")
    s.replay_and_check()  # v2.dat 8192 (posix_fallocate), copy.dat 1500 (truncate), d/final.dat 150 (renames)
    link = os.path.join(s.fs, s.abs("d/c.lnk").lstrip("/"))
    check_eq(os.readlink(link), "final.dat", "replayed symlink")
    s.cleanup()


def chdir_paths():
    """Relative paths resolve against the directory the program is in at each call: chdir, fchdir and
    syscall(SYS_chdir) each seen (the tracer keeps the working directory between them)."""
    s = Scenario("chdir_paths").run_both()
    summary = s.post()
    for name, size in (("f.dat", 100), ("a/f.dat", 200), ("b/f.dat", 300), ("g.dat", 400)):
        expect_bytes(summary, s.abs(name), size, 0)
    check_eq(file_entry(summary, s.abs("a/f.dat"))["ops"], 4, "calls on a/f.dat (open, write, close, stat)")
    s.replay_and_check()
    s.cleanup()


def restart_input(d):
    with open(os.path.join(d, "restart.dat"), "wb") as f:
        f.write(b"r" * 2 * 65536)


def restart():
    """A restart file each rank reads its part of, then rank 0 overwrites: the replay finds the bytes the
    reads before the truncation found (it made the file empty, and the reads came back short)."""
    ranks, n = 2, 65536
    s = Scenario("restart", [n, 60], ranks=ranks, prepare=restart_input).run_both()
    summary = s.post()
    f = expect_bytes(summary, s.abs("restart.dat"), ranks * n, ranks * n)
    check_eq((f["existed"], f["initial_size"]), (True, ranks * n), "restart.dat before the run")
    s.replay_and_check()
    check_eq(s.report["ops"]["pread"]["bytes"], ranks * n, "bytes the replay's preads read")
    check_eq(s.report["errors"]["count"], 0, "failed calls of the replay")
    check_eq(os.path.getsize(os.path.join(s.fs, s.abs("restart.dat").lstrip("/"))), ranks * n,
             "replayed restart.dat's size")
    s.cleanup()


def earlier_outputs(d):
    """What an earlier run of tempfiles left: an output and a directory holding one."""
    with open(os.path.join(d, "again.dat"), "w") as f:
        f.write("x" * 100)
    os.makedirs(os.path.join(d, "results"))
    with open(os.path.join(d, "results", "old.txt"), "w") as f:
        f.write("y" * 10)


def tempfiles():
    """mkstemp and mkostemps are opens of the names they made (glibc's own open is unseen: the unlink of
    one was replayed on a file never made); fstatat's AT_SYMLINK_NOFOLLOW is replayed (a dangling link
    failed, followed); fflush(NULL) flushes the rank's streams (it failed as stream -1); mkdtemp is a mkdir;
    tmpfile an O_TMPFILE open of /tmp (its stream's bytes were not seen);
    outputs an earlier run left, removed and made again, are made before the replay (its unlinks failed)."""
    s = Scenario("tempfiles", prepare=earlier_outputs).run_both()
    summary = s.post()
    expect_ops(summary, {"mkstemp": 1, "mkostemps": 1, "mkdtemp": 1, "open": 3, "write": 5, "close": 5,
                         "unlink": 6, "rmdir": 2, "mkdir": 1, "symlink": 1, "fstatat": 1, "puts": 1, "fflush": 1,
                         "tmpfile": 1, "fwrite": 1, "fseek": 1, "fread": 1, "fclose": 1})
    expect_bytes(summary, "/tmp", 40, 40)  # tmpfile's unnamed file, counted on its directory
    made_dir = [f for f in summary["files"] if re.search(r"/dir\w{6}$", f["path"])]
    check(len(made_dir) == 1 and made_dir[0]["directory"] and made_dir[0]["created"], "mkdtemp's directory, made")
    for name in ("again.dat", "results"):
        f = file_entry(summary, s.abs(name))
        check(f["created"] and f["existed"], name + " was there before the run and made again")
    made = [f for f in summary["files"] if re.search(r"/(plain\w{6}|sfx\w{6}\.dat)$", f["path"])]
    check_eq(sorted((os.path.basename(f["path"])[:3], f["bytes_written"], f["created"]) for f in made),
             [("pla", 64, True), ("sfx", 32, True)], "the temporary files, as made")
    s.replay_and_check()
    check_eq(s.report["errors"]["count"], 0, f"failed calls in the replay (first: {s.report['errors']['first']})")
    s.cleanup()


STDIO_COMMON = {"open": 1, "close": 1, "fopen": 2, "fclose": 2, "fputs_unlocked": 20, "fwrite_unlocked": 1,
                "fgetpos": 1, "fsetpos": 1, "getdelim": 1, "__isoc99_vfscanf": 1, "fread": 1, "fread_unlocked": 1}


def stdio_check(app, want):
    lines = 20
    s = Scenario(app, [lines]).run_both()
    summary = s.post()
    expect_ops(summary, {**STDIO_COMMON, **want})
    size = lines * 10 + 102
    # Read once through, plus the line read again after fsetpos.
    f = expect_bytes(summary, s.abs("lines.txt"), size, size + 10)
    check_eq(f["stdio_read"], size + 10, "bytes read through stdio")
    expect_bytes(summary, s.abs("dprintf.txt"), 15, 0)
    check_eq(file_entry(summary, "<stdout>")["bytes_written"], 3, "putchar bytes")
    s.replay_and_check()
    s.cleanup()


def stdio():
    stdio_check("stdio_more", {"getline": 18, "fgets_unlocked": 1, "fgets": 1, "fputc_unlocked": 1,
                               "putc_unlocked": 1, "fgetc_unlocked": 1, "getc_unlocked": 1, "fgetc": 1,
                               "dprintf": 1, "vdprintf": 1, "putchar": 3})


def stdio_chk():
    # Fortified: getline is inlined into __getdelim, putchar into putc, the
    # character _unlocked macros are not calls (the program uses fputc/fgetc).
    stdio_check("stdio_more_chk", {"__getdelim": 18, "__fgets_unlocked_chk": 1, "__fgets_chk": 1, "fputc": 2,
                                   "fgetc": 3, "__dprintf_chk": 1, "__vdprintf_chk": 1, "putc": 3})


def mmap():
    pages = 16
    s = Scenario("mmap_io", [pages]).run_both()
    summary = s.post()
    expect_ops(summary, {"open": 3, "close": 3, "ftruncate": 2, "mmap": 3, "msync": 4, "munmap": 2, "mremap": 1,
                         "mpior_map_exit": 1, "printf": 1})
    size = pages * 4096
    # out.dat's read-write mapping reads its range when mapped; each MS_SYNC
    # msync writes what the kernel holds dirty (all of it, then the quarter
    # written again), MS_ASYNC nothing, and munmap the half written since (the
    # kernel's dirty pages); the read-only one reads it.
    written = size + size // 4 + size // 2
    f = expect_bytes(summary, s.abs("out.dat"), written, 2 * size)
    check_eq((f["mapped_written"], f["mapped_read"]), (written, 2 * size), "out.dat bytes through mappings")
    # grow.dat: write-only, grown by mremap, synced, still mapped (clean) at exit.
    expect_bytes(summary, s.abs("grow.dat"), size, 0)
    s.replay_and_check()
    check_eq(s.report["ops"]["msync"]["bytes"], 2 * size + size // 4, "replayed msync bytes")
    s.cleanup()


def mmap_mpi(app="mmap_io_mpi", mmap_kind="mmap", env=None):
    """mmap_io as every rank of an MPI job, UCX's memory hooks on (MPICH's
    ch4:ucx, Open MPI's UCX PML): ucm takes over mmap, munmap and mremap, and
    every rank's mappings still count as alone."""
    pages, ranks = 16, 2
    s = Scenario(app, [pages], ranks=ranks, ucx=True, env=env).run_both()
    summary = s.post()
    ops = summary["ops"]
    want = {mmap_kind: 3, "msync": 4, "munmap": 2, "mremap": 1, "mpior_map_exit": 1, "MPI_Init": 1,
            "MPI_Finalize": 1}
    check_eq({k: ops.get(k, 0) for k in want}, {k: n * ranks for k, n in want.items()}, "calls in summary.json")
    size = pages * 4096
    written = size + size // 4 + size // 2
    for r in range(ranks):
        f = expect_bytes(summary, s.abs(f"out.{r}.dat"), written, 2 * size)
        check_eq((f["mapped_written"], f["mapped_read"]), (written, 2 * size), f"out.{r}.dat bytes through mappings")
        expect_bytes(summary, s.abs(f"grow.{r}.dat"), size, 0)
    s.replay_and_check()
    check_eq(s.report["ops"]["msync"]["bytes"], ranks * (2 * size + size // 4), "replayed msync bytes")
    s.cleanup()


def mmap64_mpi():
    """The same program built for large files maps through mmap64 (glibc's
    alias of mmap on 64-bit targets, a symbol of its own to the tracer and to
    ucm, which hooks mmap): recorded as mmap64, every byte counted."""
    mmap_mpi("mmap64_io_mpi", "mmap64")


def mmap_mpi_patcher():
    """mmap_mpi with ucm's mmap hooks off (UCX_MEM_MMAP_HOOK_MODE=none): under
    Open MPI's UCX PML, Open MPI's own memory patcher (opal/mca/memory/
    patcher, overwrite) is then the only one, and it overwrites libc's mmap,
    munmap and mremap (found with dlsym(RTLD_NEXT) from libopen-pal), not
    the tracer's wrappers, which see every call and call into it. Under
    MPICH nothing is patched: the wrappers alone."""
    mmap_mpi(env={"UCX_MEM_MMAP_HOOK_MODE": "none"})


def signal_writes():
    """Threads write while a timer's signal handler writes too: every byte the
    file holds is in the trace, the handler's included wherever the signal
    landed (in the program, in a write, in the tracer's work around one).
    Installed with sigaction, then with signal()."""
    threads, writes = 8, 4000
    for use_signal in (0, 1):
        s = Scenario("signal_writes", [threads, writes, use_signal])
        run(s.command(), cwd=s.work, env=s.environment(True))
        size = os.path.getsize(s.abs("sig.dat"))
        check(size > threads * writes, f"sig.dat holds {size} bytes: no handler wrote")
        summary = s.post()
        f = file_entry(summary, s.abs("sig.dat"))
        # The handler's writes inside the threads' writes are nested in them.
        check_eq(f["bytes_written"] + f["nested_written"], size, f"bytes written to sig.dat (use_signal={use_signal})")
        s.cleanup()


def signal_writes_mpi():
    """signal_writes as every rank of an MPI job, UCX's memory hooks on: each
    rank's handler writes are in its trace as its threads' writes are, under
    what the MPI library installs (its own signal handlers, ucm's hooks)."""
    threads, writes, ranks = 4, 2000, 2
    s = Scenario("signal_writes_mpi", [threads, writes, 0], ranks=ranks, ucx=True)
    run(s.command(), cwd=s.work, env=s.environment(True))
    summary = s.post()
    check_eq(summary["ops"].get("MPI_Init", 0), ranks, "MPI_Init calls")
    for r in range(ranks):
        size = os.path.getsize(s.abs(f"sig.{r}.dat"))
        check(size > threads * writes, f"sig.{r}.dat holds {size} bytes: no handler wrote")
        f = file_entry(summary, s.abs(f"sig.{r}.dat"))
        check_eq(f["bytes_written"] + f["nested_written"], size, f"bytes written to sig.{r}.dat")
    s.cleanup()


def signal_maps_mpi():
    """Mappings from a signal handler while every rank of an MPI job maps,
    UCX's memory hooks on (ucm's events record both): each mmap and munmap
    of main.<r>.dat and of handler.<r>.dat is a record (a handler's mmap that
    interrupted the tracer's own work too: its handler runs later), none is
    left mapped at exit, and every munmap counts its dirty page. (Before
    ucm's events were kept as a stack, a handler's mapping inside the
    program's closed the program's record: a deadlock or a lost call.)"""
    rounds, ranks, page = 3000, 2, 4096
    # Lossless: every record keeps its own file in the timeline (a folded loop keeps its positions').
    s = Scenario("signal_maps_mpi", [rounds], ranks=ranks, ucx=True, env={"MPIOR_TIMING": "lossless"})
    p = run(s.command(), cwd=s.work, env=s.environment(True))
    runs = {int(r): int(n) for r, n in re.findall(r"rank=(\d+) rounds=\d+ runs=(\d+)", p.stdout)}
    check_eq(sorted(runs), list(range(ranks)), "ranks that printed their handler's runs")
    check(all(n >= 100 for n in runs.values()), f"handler runs per rank {runs}: the timer barely fired")
    summary = s.post()
    events = timeline_events(s)
    calls = {}
    for e in events:
        if e.get("name") in ("mmap", "munmap", "mpior_map_exit") and e.get("args", {}).get("file"):
            key = (e["pid"], e["name"], os.path.basename(e["args"]["file"]))
            calls[key] = calls.get(key, 0) + 1
    pids = sorted({k[0] for k in calls})
    check_eq(len(pids), ranks, f"ranks with mapping records ({pids})")
    for pid, r in zip(pids, range(ranks)):
        got = {(n, f): c for (q, n, f), c in calls.items() if q == pid}
        check_eq(summary["per_rank"][r]["signal_calls_unrecorded"], 0, f"rank {r}: handler calls not recorded")
        # Every call, at whatever depth the signal put it (deferred when it interrupted the tracer).
        want = {("mmap", f"main.{r}.dat"): rounds, ("munmap", f"main.{r}.dat"): rounds,
                ("mmap", f"handler.{r}.dat"): runs[r], ("munmap", f"handler.{r}.dat"): runs[r]}
        check_eq(got, want, f"rank {r}: mapping records per file (none left mapped at exit)")
        # A program's munmap a handler's calls landed in may be kept nested in the
        # folded stream (as signal_writes' writes are): its bytes count at either depth.
        for name, n in ((f"main.{r}.dat", rounds), (f"handler.{r}.dat", runs[r])):
            f = file_entry(summary, s.abs(name))
            check_eq(f["mapped_written"] + f["nested_written"], n * page, f"rank {r}: bytes written through {name}'s mappings")
    s.cleanup()


def signal_files():
    """A timer's signal handler opens, writes and closes a file and fwrites to
    a stream while the program's loop makes traced calls: the opens, bytes
    and stdio bytes the program counted are all in the trace, wherever the
    signals landed (the tracer's work included: the handlers' calls there
    are recorded when the tracer is done), and nothing is said lost."""
    s = Scenario("signal_files", [20000, 500])
    p = run(s.command(), cwd=s.work, env=s.environment(True))
    got = dict(re.findall(r"(\w+)=(\d+)", p.stdout))
    runs, opens, written, stdio = (int(got[k]) for k in ("runs", "opens", "bytes", "stdio"))
    check(runs >= 500 and opens == runs, f"handler runs {runs}, opens {opens}")
    check("not recorded" not in p.stderr, f"the tracer said calls were lost: {p.stderr[-2000:]}")
    check_eq(os.path.getsize(s.abs("handler.dat")), written, "handler.dat's size")
    summary = s.post()
    f = file_entry(summary, s.abs("handler.dat"))
    check_eq(f["bytes_written"] + f["nested_written"], written, "bytes written to handler.dat")
    g = file_entry(summary, s.abs("handler_stdio.dat"))
    check_eq(g["bytes_written"] + g["nested_written"], stdio, "bytes fwritten to handler_stdio.dat")
    m = file_entry(summary, s.abs("main.dat"))
    check_eq(m["bytes_written"] + m["nested_written"], os.path.getsize(s.abs("main.dat")), "bytes written to main.dat")
    # Every open and close at every depth, per file (the timeline lists them all).
    events = timeline_events(s)
    calls = {}
    for e in events:
        if e.get("name") in ("open", "close"):
            key = (e["name"], os.path.basename(e["args"].get("file", "")))
            calls[key] = calls.get(key, 0) + 1
    want = {("open", "handler.dat"): opens, ("close", "handler.dat"): opens, ("open", "main.dat"): int(got["main_opens"]),
            ("close", "main.dat"): int(got["main_opens"])}
    check_eq(calls, want, "opens and closes per file")
    s.cleanup()


def signal_unrecorded():
    """The handler of signal_files also stats a file: a call the tracer can
    only count when the handler interrupted its own work. summary.json's
    per-rank signal_calls_unrecorded holds that count, the one the log says
    at exit, and with the stats recorded it makes the handler's stats."""
    s = Scenario("signal_files", [20000, 500, 1])
    p = run(s.command(), cwd=s.work, env=s.environment(True))
    got = dict(re.findall(r"(\w+)=(\d+)", p.stdout))
    stats = int(got["stats"])
    check(stats >= 500, f"handler stats {stats}")
    said = re.search(r"(\d+) calls of signal handlers that interrupted the tracer were not recorded", p.stderr)
    check(said is not None, f"no loss said at exit (did no handler interrupt the tracer?): {p.stderr[-2000:]}")
    summary = s.post()
    unrecorded = summary["per_rank"][0]["signal_calls_unrecorded"]
    check_eq(unrecorded, int(said.group(1)), "signal_calls_unrecorded against the log")
    # Recorded at every depth (a handler's stat inside a traced call is nested): the timeline lists them all.
    names = [e.get("name") for e in timeline_events(s)]
    recorded = sum(names.count(k) for k in ("stat", "stat64", "__xstat", "__xstat64"))
    check_eq(recorded + unrecorded, stats, f"stats recorded ({recorded}) and counted ({unrecorded})")
    s.cleanup()


def deepbind():
    """A library dlopen()ed with RTLD_DEEPBIND binds its calls to libc ahead
    of the preloaded tracer: its writes are not traced, and the tracer says
    so once, naming it. The same library loaded plainly is traced, and the
    program's own write too."""
    n = 10000
    libs = [os.path.join(APPS, f"libdeepbind_{name}.so") for name in ("plain", "deep")]
    s = Scenario("deepbind_io", libs + [n]).run_both()
    check_eq(s.traced_out.stdout, f"plain={n} deep={n} main=4\n", "the program's output")
    said = re.findall(r"(\S+) is loaded with RTLD_DEEPBIND: .* not traced", s.traced_out.stderr)
    check_eq(said, [libs[1]], "libraries the tracer said are loaded with RTLD_DEEPBIND")
    check("RTLD_DEEPBIND" not in s.plain_out.stderr, "the untraced run mentions RTLD_DEEPBIND")
    summary = s.post()
    expect_bytes(summary, s.abs("plain.dat"), n, 0)
    expect_bytes(summary, s.abs("main.dat"), 4, 0)
    check(s.abs("deep.dat") not in [f["path"] for f in summary["files"]], "deep.dat is in the trace")
    check_eq(os.path.getsize(s.abs("deep.dat")), n, "deep.dat's size")
    s.cleanup()


def aio_orphan():
    ranks, block = 2, 4096
    s = Scenario("aio_orphan", [block], ranks=ranks).run_both()
    summary = s.post()
    got = {k: v for k, v in summary["ops"].items() if v}
    got.pop("fstat", None)  # polls: as many as the writes took
    want = {"MPI_Init": ranks, "MPI_Finalize": ranks, "open": 2 * ranks, "close": ranks, "aio_write": 3 * ranks,
            "aio_read": ranks, "mpior_aio_done": ranks, "printf": 1}
    # The completion at exit is a record of its own, like mpior_map_exit; those at close are nested under it.
    check_eq(got, want, "calls in summary.json")
    for r in range(ranks):
        expect_bytes(summary, s.abs(f"orphan1.{r}.dat"), 3 * block, block)
        expect_bytes(summary, s.abs(f"orphan2.{r}.dat"), 3 * block, 0)
    text = run([POST, "--dump", os.path.join(s.traces, "rank-000000.mpior")]).stdout
    check(re.search(r"\bclose .*\n\s+RSD x3 \{\n\s+mpior_aio_done depth=1 ", text) is not None,
          "the dump does not show 3 completions nested under close")
    s.replay_and_check()
    check_eq(s.report["errors"]["count"], 0, f"failed calls in the replay (first: {s.report['errors']['first']})")
    check_eq(s.report["ops"]["aio_write"]["bytes"], ranks * 6 * block, "replayed aio_write bytes")
    s.cleanup()


def mmap_fixed(app="mmap_fixed", ranks=None):
    """Mappings whose ranges change under them (test/apps/mmap_fixed.c): a
    MAP_FIXED mapping over part of a traced one, partial munmaps, a munmap
    of a range holding several mappings, mremap shrinking, growing and
    moving (MREMAP_FIXED) over another: each part of a mapping that ends is
    counted once, by the call that ended it (a munmap record of its own, at
    that call's start, where that call names another range), and none is
    left mapped at exit."""
    page, n = 4096, ranks or 1
    s = Scenario(app, [], ranks=ranks, ucx=bool(ranks)).run_both()
    summary = s.post()
    # The program's munmaps (4; under MPI 5), and the parts other calls ended
    # (mpior_map_covered): in the MAP_FIXED mmap, the munmap of the whole first
    # range (3 pieces beside the one it names) and, alone, the MREMAP_FIXED mremap.
    want = {"open": 3, "close": 3, "ftruncate": 3, "mmap": 4, "munmap": 5 if ranks else 4, "mremap": 3,
            "mpior_map_covered": 4 if ranks else 5}
    if ranks:
        want.update(MPI_FRAME(1), MPI_Barrier=1)
    got = {k: v for k, v in summary["ops"].items() if v and k not in ("printf", "puts")}
    check_eq(got, {k: v * n for k, v in want.items()}, "calls in summary.json")
    name = (lambda f, r: f"{f}.{r}.dat") if ranks else (lambda f, r: f"{f}.dat")
    events = timeline_events(s)
    pids = sorted({e["pid"] for e in events if e.get("name") == "mremap"})
    check_eq(len(pids), n, "ranks with mremap records")
    for pid, r in zip(pids, range(n)):
        # What each mapping record counted, in order: (call, file, offset, bytes), in pages.
        kinds = ("mmap", "munmap", "mremap", "mpior_map_covered")
        got = [(e["name"], os.path.basename(e["args"]["file"]), e["args"]["offset"] // page, e["args"]["bytes"] // page)
               for e in events if e.get("pid") == pid and e.get("name") in kinds]
        f, o, k, cov = name("fixed", r), name("other", r), name("shrink", r), "mpior_map_covered"
        # Alone, moved over fixed.dat's read-only mapping (MREMAP_FIXED); under
        # UCX (its hook loses the new address) shrunk in place, both unmapped.
        last = ([(cov, f, 0, 0), ("mremap", k, 4, 2), ("munmap", k, 0, 4)] if not ranks else
                [("mremap", k, 4, 2), ("munmap", f, 0, 0), ("munmap", k, 0, 4)])
        check_eq(got, [("mmap", f, 0, 16), (cov, f, 4, 4), ("mmap", o, 0, 4), ("munmap", f, 12, 4),
                       ("munmap", f, 9, 2), (cov, o, 0, 4), (cov, f, 8, 1), (cov, f, 11, 1),
                       ("munmap", f, 0, 4), ("mmap", k, 0, 8), ("mremap", k, 2, 6), ("mremap", k, 0, 0),
                       ("mmap", f, 0, 4)] + last,
                 f"rank {r}: mapping records (call, file, offset, bytes in pages)")
        for stem, written, read in (("fixed", 16, 20), ("other", 4, 4), ("shrink", 12, 8)):
            e = expect_bytes(summary, s.abs(name(stem, r)), written * page, read * page)
            check_eq(e["mapped_written"], written * page, f"{name(stem, r)}: bytes written through mappings")
    s.replay_and_check()
    check_eq(s.report["errors"]["count"], 0, f"failed calls in the replay (first: {s.report['errors']['first']})")
    check_eq(s.report["ops"]["mremap"]["bytes"], n * 8 * page, "replayed mremap bytes (the shrinks' tails)")
    s.cleanup()


def mmap_fixed_mpi():
    """mmap_fixed as every rank of an MPI job, UCX's memory hooks on: ucm's
    events record the calls, MAP_FIXED and MREMAP_FIXED ones included."""
    mmap_fixed("mmap_fixed_mpi", 2)


if __name__ == "__main__":
    main({"aio": aio, "aio64": aio64, "libaio": libaio, "restart": restart, "mpiio_aio": mpiio_aio, "files_more": files_more, "chdir_paths": chdir_paths, "stdio": stdio, "stdio_chk": stdio_chk,
          "mmap": mmap, "aio_orphan": aio_orphan, "tempfiles": tempfiles, "mmap_mpi": mmap_mpi, "mmap64_mpi": mmap64_mpi, "mmap_mpi_patcher": mmap_mpi_patcher,
          "signal_writes": signal_writes, "signal_writes_mpi": signal_writes_mpi,
          "signal_files": signal_files, "signal_maps_mpi": signal_maps_mpi, "signal_unrecorded": signal_unrecorded,
          "deepbind": deepbind, "mmap_fixed": mmap_fixed, "mmap_fixed_mpi": mmap_fixed_mpi})
