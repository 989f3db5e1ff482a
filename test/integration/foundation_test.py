#!/usr/bin/env python3
"""Foundation integration tests: trace real programs (test/apps) under mpirun
with libmpior.so, post-process, replay, and check outputs, summaries and
replayed files. One scenario per meson test: foundation_test.py NAME."""
import os

import shutil

from harness import (APPS, BUILD, OPENMPI, Scenario, check, check_eq, expect_ops, file_entry, main, run, POST, tree)

MPI_FRAME = lambda n: {"MPI_Init": n, "MPI_Finalize": n}  # noqa: E731


def nton():
    ranks, iters, block = 4, 20, 4096
    s = Scenario("nton_barrier", [iters, block], ranks=ranks).run_both()
    summary = s.post()
    check_eq(summary["ranks"], ranks, "ranks")
    expect_ops(summary, {**MPI_FRAME(ranks), "open": ranks, "write": ranks * iters, "MPI_Barrier": ranks * iters,
                         "close": ranks, "printf": 1})
    for r in range(ranks):
        f = file_entry(summary, s.abs(f"nton.{r}"))
        check_eq(f["bytes_written"], iters * block, f"bytes written to nton.{r}")
        check_eq(f["ops"], iters + 2, f"calls on nton.{r}")
    check_eq(file_entry(summary, "<stdout>")["bytes_written"], len(s.plain_out.stdout), "bytes to stdout")
    check_eq(summary["mpi"]["events"], 2 * ranks + ranks * iters, "MPI events")
    s.replay_and_check()
    s.cleanup()


def nto1():
    ranks, iters, block = 4, 10, 8192
    s = Scenario("nto1", [iters, block], ranks=ranks).run_both()
    summary = s.post()
    expect_ops(summary, {**MPI_FRAME(ranks), "open": ranks + 1, "close": ranks + 1, "MPI_Barrier": 2 * ranks,
                         "pwrite": ranks * iters, "fsync": ranks, "pread": ranks, "printf": 1})
    f = file_entry(summary, s.abs("shared.dat"))
    check_eq(f["bytes_written"], ranks * iters * block, "bytes written to shared.dat")
    check_eq(f["bytes_read"], ranks * block, "bytes read from shared.dat")
    s.replay_and_check()
    s.cleanup()


def serial():
    ranks, steps, n = 4, 12, 256
    s = Scenario("serial_gather", [steps, n], ranks=ranks).run_both()
    summary = s.post()
    expect_ops(summary, {**MPI_FRAME(ranks), "MPI_Gather": ranks * steps, "fopen": 2, "fwrite": steps,
                         "fprintf": steps, "fclose": 2, "printf": 1})
    check_eq(file_entry(summary, s.abs("serial.dat"))["bytes_written"], steps * n * ranks * 8, "serial.dat bytes")
    log_size = os.path.getsize(os.path.join(s.plain, "serial.log"))
    check_eq(file_entry(summary, s.abs("serial.log"))["bytes_written"], log_size, "serial.log bytes")
    s.replay_and_check()
    s.cleanup()


def comm_split():
    ranks, steps, block = 4, 4, 1024
    s = Scenario("comm_split", [steps, block], ranks=ranks).run_both()
    summary = s.post()
    expect_ops(summary, {**MPI_FRAME(ranks), "MPI_Comm_split": ranks, "fopen": 2, "fwrite": 2 * steps, "fclose": 2,
                         "MPI_Gather": ranks * steps, "MPI_Bcast": ranks * steps, "MPI_Comm_dup": ranks,
                         "MPI_Cart_create": ranks, "MPI_Cart_sub": ranks, "MPI_Allreduce": 2 * ranks,
                         "MPI_Barrier": ranks, "MPI_Comm_free": 4 * ranks, "printf": 1})
    for color in (0, 1):
        check_eq(file_entry(summary, s.abs(f"group{color}.dat"))["bytes_written"], steps * block * ranks // 2,
                 f"group{color}.dat bytes")
    s.replay_and_check()
    s.cleanup()


def wildcard():
    ranks, rounds = 4, 6
    s = Scenario("wildcard", [rounds], ranks=ranks).run_both()
    summary = s.post()
    got = dict(summary["ops"])
    # How many Testall / Waitsome calls it takes depends on message timing.
    check(got.pop("MPI_Testall", 0) >= ranks * rounds, "MPI_Testall calls")
    waitsome = got.pop("MPI_Waitsome", 0)
    check(rounds // 3 <= waitsome <= (rounds // 3) * (ranks - 1), f"MPI_Waitsome calls ({waitsome})")
    others = ranks - 1
    by_mode = [sum(1 for r in range(rounds) if r % 3 == m) for m in range(3)]
    want = {**MPI_FRAME(ranks), "MPI_Comm_dup": ranks, "MPI_Comm_free": ranks, "MPI_Barrier": ranks * rounds, "MPI_Send": others * rounds, "MPI_Recv": others * by_mode[0],
            "MPI_Irecv": others * (by_mode[1] + by_mode[2]) + ranks * rounds, "MPI_Waitany": others * by_mode[1],
            "MPI_Sendrecv": ranks * rounds, "MPI_Isend": ranks * rounds, "fopen": 1, "fprintf": others * rounds,
            "fclose": 1, "printf": 1}
    check_eq({k: v for k, v in got.items() if v}, want, "application-level calls")
    s.replay_and_check()
    s.cleanup()


def threads():
    ranks, nthreads, writes, block = 2, 3, 40, 2048
    s = Scenario("threads_io", [nthreads, writes, block], ranks=ranks).run_both()
    summary = s.post()
    expect_ops(summary, {"MPI_Init_thread": ranks, "MPI_Finalize": ranks, "fopen": ranks * nthreads,
                         "fwrite": ranks * nthreads * writes, "fclose": ranks * nthreads, "MPI_Barrier": 2 * ranks,
                         "printf": 1})
    for r in range(ranks):
        for t in range(nthreads):
            check_eq(file_entry(summary, s.abs(f"thread.{r}.{t}"))["bytes_written"], writes * block, "thread file")
    s.replay_and_check()
    s.cleanup()


def make_input(d):
    with open(os.path.join(d, "input.dat"), "wb") as f:
        f.write(bytes(range(256)) * 40)  # 10,240 bytes


def nonmpi():
    records = 16
    # Exact counts of the program's own calls: the processes it starts are
    # left untraced here (children_test.py traces them).
    s = Scenario("nonmpi", [records], prepare=make_input, env={"MPIOR_CHILDREN": "0"}).run_both()
    summary = s.post()
    check_eq(summary["ranks"], 1, "a non-MPI program is one rank")
    # 10,240 input bytes read 4 KiB at a time: 3 reads with data and one at EOF.
    # The compiler turns fputs of a literal into fwrite (one more fwrite).
    expect_ops(summary, {
        "mkdir": 1, "open": 2, "writev": records, "lseek": 1, "read": 1 + 4, "pread": 1, "dup": 1, "fcntl": 1,
        "pwrite": 1, "fstat": 1, "ftruncate": 1, "fsync": 1, "close": 5, "stat": 1, "rename": 1, "creat": 1,
        "write": 1, "unlink": 1, "printf": 1, "fopen": 3, "fprintf": records, "fputc": 1, "putc": 1,
        "fflush": 2, "rewind": 1, "fgets": 1, "__isoc99_fscanf": 1, "fgetc": 1, "getc": 1, "fseek": 1, "ftell": 1,
        "fclose": 3, "fwrite": records + 1, "fread": 1, "puts": 1})
    check_eq(file_entry(summary, s.abs("input.dat"))["bytes_read"], 10240, "input bytes read")
    # child.txt and copied.txt come from processes the program started, which
    # are not traced with MPIOR_CHILDREN=0 (a forked child, and a shell run by system()).
    for untraced in ("child.txt", "copied.txt"):
        check(untraced in s.written, f"{untraced} was written")
        del s.written[untraced]
    # The replay has to create input.dat (read, never written) at its size.
    s.replay_and_check()
    check_eq(os.path.getsize(os.path.join(s.fs, s.abs("input.dat").lstrip("/"))), 10240, "input.dat created by replay")
    s.cleanup()


def fortran():
    ranks, lines = 2, 20
    s = Scenario("fortran_mpi", [lines], ranks=ranks).run_both()
    summary = s.post()
    got = summary["ops"]
    for name, n in {**MPI_FRAME(ranks), "MPI_Barrier": ranks, "MPI_Allreduce": ranks}.items():
        check_eq(got.get(name), n, f"{name} calls")
    for r in range(ranks):
        size = s.written[f"fortran.{r}.txt"]
        check_eq(file_entry(summary, s.abs(f"fortran.{r}.txt"))["bytes_written"], size, f"fortran.{r}.txt bytes")
    s.replay_and_check()
    s.cleanup()


def example():
    ranks, steps, every = 4, 20, 5
    s = Scenario("checkpoint_sim", [steps, 1000, every, 4096], ranks=ranks).run_both()
    summary = s.post()
    ckpts = steps // every
    expect_ops(summary, {**MPI_FRAME(ranks), "open": ranks + 1, "close": ranks + 1,
                         "MPI_Barrier": ranks * (1 + ckpts), "MPI_Irecv": 2 * ranks * steps,
                         "MPI_Isend": 2 * ranks * steps, "MPI_Waitall": ranks * steps,
                         "MPI_Allreduce": ranks * steps, "pwrite": ranks * ckpts, "fsync": ranks * ckpts,
                         "fopen": 1, "fprintf": ckpts, "fclose": 1, "printf": 1})
    s.replay_and_check()
    check(s.report["replay_s"] > 0 and "error_pct" in s.report, "replay report has times")
    s.cleanup()


def unwritable_dir():
    """An unwritable trace directory: one clear message, the program completes."""
    s = Scenario("nton_barrier", [3, 512], ranks=4)
    blocker = os.path.join(s.root, "a-file")
    open(blocker, "w").close()
    s.traces = os.path.join(blocker, "traces")  # a path below a regular file
    s.plain_out = run(s.command(), cwd=s.plain, env=s.environment(False))
    out = run(s.command(), cwd=s.work, env=s.environment(True))
    check_eq(out.stdout, s.plain_out.stdout, "stdout with an unwritable trace directory")
    lines = [l for l in out.stderr.splitlines() if "mpior" in l]
    check_eq(len(lines), 1, f"mpior messages on stderr ({lines})")
    check("cannot write traces" in lines[0] and blocker in lines[0], f"message names the directory: {lines[0]}")
    check_eq(sorted(tree(s.work)), sorted(tree(s.plain)), "files written")
    s.cleanup()


def runs_never_mix():
    """A second job in the same directory writes beside the first, in job-<id>/, and says so."""
    s = Scenario("nton_barrier", [3, 512], ranks=4).run_both()
    first = sorted(os.listdir(s.traces))
    check_eq(first, ["job.mpior", "merged.mpior"], "the first job's files (its ranks merged at finalize)")
    s.ranks = 2
    out = run(s.command(), cwd=s.work, env=s.environment(True))
    check(set(first) <= set(os.listdir(s.traces)), "the first job's files are kept")
    subs = [d for d in os.listdir(s.traces) if d.startswith("job-")]
    check_eq(len(subs), 1, f"one job-<id> directory ({os.listdir(s.traces)})")
    check(subs[0] in out.stderr, f"stderr names where the trace went: {out.stderr}")
    second = sorted(os.listdir(os.path.join(s.traces, subs[0])))
    check_eq(second, ["job.mpior", "merged.mpior"], "files of the second job")
    check_eq(s.post()["ranks"], 4, "the first job's summary")
    s.traces = os.path.join(s.traces, subs[0])
    check_eq(s.post()["ranks"], 2, "the second job's summary")
    s.cleanup()


def bad_traces():
    """mpior-post rejects a corrupt, a missing and a foreign rank file (rank files: MPIOR_MERGE=0)."""
    s = Scenario("nton_barrier", [3, 512], ranks=2, env={"MPIOR_MERGE": "0"}).run_both()
    victim = os.path.join(s.traces, "rank-000001.mpior")
    data = bytearray(open(victim, "rb").read())
    data[len(data) // 2] ^= 0x40
    open(victim, "wb").write(bytes(data))
    out = run([POST, s.traces], expect_rc=1)
    check(victim in out.stderr and "corrupt" in out.stderr, f"corrupt file named: {out.stderr}")
    check(not os.path.exists(os.path.join(s.traces, "plan", "plan.mpior")), "no plan from a corrupt trace")
    os.remove(victim)
    out = run([POST, s.traces], expect_rc=1)
    check("rank-000001.mpior" in out.stderr, f"missing file named: {out.stderr}")
    s.cleanup()


def mpiio():
    """Collective MPI-IO through a file view (ROMIO under MPICH, OMPIO under
    Open MPI): the MPI-IO calls, the file's bytes at both levels, the replay."""
    ranks, steps, pieces = 2, 2, 64
    s = Scenario("mpiio_scaling", [steps, pieces, 0], ranks=ranks).run_both()
    summary = s.post()
    expect_ops(summary, {**MPI_FRAME(ranks), "MPI_File_open": ranks, "MPI_File_set_view": ranks,
                         "MPI_File_write_at_all": ranks * steps, "MPI_File_close": ranks, "printf": 1})
    size = s.written["collective.dat"]
    check_eq(size, ranks * steps * pieces * 1024, "collective.dat size")
    f = file_entry(summary, s.abs("collective.dat"))
    check_eq((f["bytes_written"], f["mpiio"]["bytes_written"]), (size, size), "collective.dat bytes (POSIX, MPI-IO)")
    s.replay_and_check()
    check_eq(s.report["errors"]["count"], 0, f"failed calls in the replay (first: {s.report['errors']['first']})")
    s.cleanup()


def wrong_pairing():
    """The other MPI's tracer preloaded (libmpior.so under Open MPI, or
    libmpior-openmpi.so under MPICH): one message, the program runs
    untraced and behaves as without it."""
    other = os.path.join(BUILD, "preload", "libmpior.so" if OPENMPI else "libmpior-openmpi.so")
    if not os.path.exists(other) or not shutil.which("mpirun.openmpi"):
        print("skip the MPICH program with libmpior-openmpi.so: Open MPI is not installed")
        return
    s = Scenario("nton_barrier", [3, 512], ranks=4)
    s.plain_out = run(s.command(), cwd=s.plain, env=s.environment(False))
    env = s.environment(False)
    env.update(LD_PRELOAD=other, MPIOR_TRACE_DIR=s.traces)
    out = run(s.command(), cwd=s.work, env=env)
    check_eq(out.stdout, s.plain_out.stdout, "stdout with the wrong tracer")
    lines = [l for l in out.stderr.splitlines() if "mpior" in l]
    check_eq(len(lines), 1, f"mpior messages on stderr ({lines})")
    want = "libmpior-openmpi.so" if OPENMPI else "libmpior.so"
    check("runs untraced" in lines[0] and want in lines[0], f"the message says what to preload: {lines[0]}")
    check_eq(sorted(tree(s.work)), sorted(tree(s.plain)), "files written")
    check(not os.path.exists(os.path.join(s.traces, "job.mpior")), "no trace from the wrong tracer")
    # A program without MPI loads either tracer and is traced by it.
    s2 = Scenario("nonmpi", [4], prepare=make_input)
    env = s2.environment(False)
    env.update(LD_PRELOAD=other, MPIOR_TRACE_DIR=s2.traces)
    run([os.path.join(APPS, "nonmpi"), "4"], cwd=s2.work, env=env)
    check(os.path.exists(os.path.join(s2.traces, "job.mpior")), "the other tracer traces a program without MPI")
    s.cleanup()
    s2.cleanup()


def pmpi_init():
    """A program that starts and ends MPI through the profiling interface
    (PMPI_Init_thread, PMPI_Finalize; ROMIO's test psimple) is still a rank
    of the job: both ranks' traces, their I/O and MPI_Barrier, and a
    finished job; its PMPI_Bcast is MPI's own, not traced."""
    s = Scenario("pmpi_init", [], ranks=2).run_both()
    summary = s.post()
    check_eq(summary["ranks"], 2, "ranks")
    got = summary["ops"]
    for kind, n in (("MPI_Init_thread", 2), ("MPI_Barrier", 2), ("MPI_Finalize", 2), ("open", 2), ("write", 2),
                    ("close", 2)):
        check_eq(got.get(kind, 0), n, f"{kind} calls")
    check_eq(got.get("MPI_Bcast", 0), 0, "PMPI_Bcast calls traced")
    # --dump takes the plan directory itself (what mpior-replay takes) too.
    text = run([POST, "--dump", s.plan]).stdout
    check("MPI_Init_thread" in text and "plan.mpior" in text, f"--dump of the plan directory:\n{text[:400]}")
    s.replay_and_check()
    s.cleanup()


if __name__ == "__main__":
    main({f.__name__: f for f in (nton, nto1, serial, comm_split, wildcard, threads, nonmpi, fortran, example,
                                   unwritable_dir, runs_never_mix, bad_traces, wrong_pairing, mpiio, pmpi_init)})
