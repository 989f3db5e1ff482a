"""A rank's trace survives any death from its first event (issue 62): 2
ranks make 20,000 writes each, then rank 0 dies at once ("early": ~0.2 s
into the job, before any periodic flush; rank 1 runs with no periodic flush
at all, so only its crash journal can hold its writes) or after 3 s ("late":
periodic flushes came first, the journal holds what followed them). The
launcher then kills rank 1 (MPICH's hydra: SIGKILL). mpior-post must
recover both ranks from their journals: the summary and the replay plan are
written and hold >= 99% (and never more than 100%) of every rank's writes.
Deterministic: rank 0 dies after its writes and a barrier, not after a
measured time (WAIT_MS only delays the death past the flushes).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

from harness import LIB, OPENMPI, POST, REPLAY, app_path, check, check_eq, main, mpirun

WRITES = 20000
MODES = ["none", "segv", "abort", "mpi_abort", "term", "exit", "kill"]


def writes_of(summary, name):
    for f in summary["files"]:
        if f["path"].endswith("/" + name):
            return f["bytes_written"] // 64
    return 0


def launch(root, traces, mode, wait_ms, early, app_args=(), writes=WRITES, **extra_env):
    app = [app_path("crash_app"), mode, str(writes), "0", str(wait_ms)] + list(app_args)
    env = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces, **extra_env)
    if OPENMPI:  # both ranks alike: without a periodic flush in the early death
        extra = ["-x", "MPIOR_FLUSH_INTERVAL=0"] if early else []
        extra += [x for k in extra_env for x in ("-x", k)]
        cmd = mpirun(2) + ["-x", "LD_PRELOAD", "-x", "MPIOR_TRACE_DIR"] + extra + app
    else:
        quiet = ["-env", "MPIOR_FLUSH_INTERVAL", "0"] if early else []
        cmd = ["mpirun.mpich", "-n", "1"] + app + [":", "-n", "1"] + quiet + app
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)


def dies(mode, early, writes=WRITES):
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    traces = os.path.join(root, "traces")
    p = launch(root, traces, mode, 0 if early else 3000, early, writes=writes)
    check(os.path.isdir(traces), f"{mode}: no trace directory; the job said: {p.stdout[-1000:]} {p.stderr[-2000:]}")
    if mode == "none":
        check_eq(p.returncode, 0, f"{mode}: job exit status: {p.stderr[-2000:]}")
        check(not [f for f in os.listdir(traces) if f.endswith(".journal")], "journals removed at a normal end")
    else:
        check(p.returncode != 0, f"{mode}: the job should fail, exited {p.returncode}")
    post = subprocess.run([POST, traces], capture_output=True, text=True, timeout=300)
    check_eq(post.returncode, 0, f"{mode}: mpior-post exit status: {post.stderr}")
    plan = os.path.join(traces, "plan")
    check(os.path.exists(os.path.join(plan, "plan.mpior")), f"{mode}: a replay plan")
    with open(os.path.join(plan, "summary.json")) as f:
        summary = json.load(f)
    check_eq(summary.get("missing_ranks", []), [], f"{mode}: missing ranks")
    check_eq(summary["complete"], mode == "none", f"{mode}: summary complete")
    for r in (0, 1):
        n = writes_of(summary, f"crash_{r}.dat")
        check(int(0.99 * writes) <= n <= writes, f"{mode}: rank {r}: {n} of {writes} writes in the trace")
    check(not [f for f in os.listdir(traces) if f.endswith(".journal")], f"{mode}: journals left after recovery")
    again = subprocess.run([POST, traces], capture_output=True, text=True, timeout=300)
    with open(os.path.join(plan, "summary.json")) as f:
        check_eq(writes_of(json.load(f), "crash_1.dat"), writes_of(summary, "crash_1.dat"), "a second post")
    check_eq(again.returncode, 0, f"{mode}: second mpior-post: {again.stderr}")
    r = subprocess.run([REPLAY, "--io-only", "--fs", os.path.join(root, "fs"), plan], capture_output=True, text=True,
                       timeout=300)
    check_eq(r.returncode, 0, f"{mode}: replay exit status: {r.stderr[-3000:]}")
    shutil.rmtree(root, ignore_errors=True)


def tear_last_write(path):
    """Makes a thread journal's last write record (the one before its newest,
    the barrier after the writes) what a death in the middle of its store
    leaves: its opening word new, a byte of its start time changed, its
    commit word still the one of the record it overwrote (trace/journal_format.hpp
    layout: commit word, event, opening word)."""
    with open(path, "r+b") as f:
        data = f.read()
        capacity = struct.unpack_from("<Q", data, 32)[0]
        size = struct.unpack_from("<I", data, 12)[0]
        seqs = sorted((struct.unpack_from("<Q", data, 4096 + i * size + size - 8)[0], i) for i in range(capacity))
        opened, slot = seqs[-2]
        at = 4096 + slot * size
        f.seek(at)
        f.write(struct.pack("<Q", max(0, opened - capacity)))
        f.seek(at + 8 + 8)  # the record's start time
        f.write(bytes([data[at + 16] ^ 0x5A]))


def torn():
    """A record torn by the death is dropped with a warning; the rest of the
    rank is recovered."""
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    traces = os.path.join(root, "traces")
    launch(root, traces, "kill", 0, True)
    tear_last_write(os.path.join(traces, "rank-000001.t0000.journal"))
    post = subprocess.run([POST, traces], capture_output=True, text=True, timeout=300)
    check_eq(post.returncode, 0, f"mpior-post exit status: {post.stderr}")
    check("rank-000001.t0000.journal: 1 torn record(s) dropped" in post.stderr, f"torn warning: {post.stderr}")
    with open(os.path.join(traces, "plan", "summary.json")) as f:
        n = writes_of(json.load(f), "crash_1.dat")
    check(int(0.99 * WRITES) <= n <= WRITES, f"rank 1: {n} of {WRITES} writes in the trace")
    shutil.rmtree(root, ignore_errors=True)


def lossless():
    """MPIOR_TIMING=lossless: the events recovered from rank 1's journal keep
    every call's times, as the rest of its stream does (--dump: "N of N
    exact" at every position)."""
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    traces = os.path.join(root, "traces")
    launch(root, traces, "kill", 0, True, MPIOR_TIMING="lossless")
    post = subprocess.run([POST, traces], capture_output=True, text=True, timeout=300)
    check_eq(post.returncode, 0, f"mpior-post exit status: {post.stderr}")
    check("events recovered from its crash journal" in post.stderr, f"rank 1 recovered: {post.stderr}")
    # The rank file and, where a journal rewrite spilled the folded part (a ring half full of 20,000
    # records), its spill segments: one trace.
    exact = []
    for name in ("rank-000001.mpior", "rank-000001.spill.mpior"):
        if os.path.exists(os.path.join(traces, name)):
            dump = subprocess.run([POST, "--dump", os.path.join(traces, name)], capture_output=True, text=True,
                                  timeout=300)
            exact += re.findall(r"(\d+) of (\d+) exact", dump.stdout)
    check(exact, f"no lossless positions in rank 1's trace: {dump.stdout[:2000]}")
    partial = [(k, n) for k, n in exact if k != n]
    check(not partial, f"positions without every call's times (kept, calls): {partial[:10]}")
    calls = sum(int(n) for _, n in exact)
    check(calls >= WRITES, f"rank 1's positions hold {calls} calls, fewer than its {WRITES} writes")
    shutil.rmtree(root, ignore_errors=True)


def inside():
    """Rank 1 dies inside a collective rank 0 completed: held inside an
    MPI_Bcast from rank 0 (crash_app ... inside) when rank 0 completes it
    and dies by SIGKILL, before any flush. Its recovered trace lacks the
    Bcast; mpior-post completes it as entered (a warning naming the rank,
    the call and the count; summary.json's entered_collectives), and the
    plan, checked against the traces (--verify), replays."""
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    traces = os.path.join(root, "traces")
    p = launch(root, traces, "kill", 0, True, app_args=["inside"])
    check(p.returncode != 0, f"the job should fail, exited {p.returncode}")
    post = subprocess.run([POST, "--verify", traces], capture_output=True, text=True, timeout=300)
    check_eq(post.returncode, 0, f"mpior-post exit status: {post.stderr}")
    want = ("rank 1 died inside a collective: its trace lacks the last 1 collective call(s) rank 0 completed on "
            "communicator 0 (from MPI_Bcast")
    check(want in post.stderr, f"warning: {post.stderr}")
    check("verified" in post.stdout, f"--verify: {post.stdout}")
    plan = os.path.join(traces, "plan")
    with open(os.path.join(plan, "summary.json")) as f:
        summary = json.load(f)
    check_eq(summary.get("entered_collectives"),
             [{"rank": 1, "comm": 0, "calls": 1, "first": "MPI_Bcast", "as_rank": 0}], "summary")
    for r in (0, 1):  # one more block each before the Bcast
        n = writes_of(summary, f"crash_{r}.dat")
        check(int(0.99 * WRITES) <= n <= WRITES + 1, f"rank {r}: {n} of {WRITES + 1} writes in the trace")
    with open(os.path.join(plan, "summary.txt")) as f:
        check("rank 1: 1 on communicator 0 (MPI_Bcast)" in f.read(), "summary.txt names the completed call")
    subprocess.run([REPLAY, "--io-only", "--fs", os.path.join(root, "fs"), plan], check=True, capture_output=True,
                   timeout=300)
    shutil.rmtree(root, ignore_errors=True)


UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def write_gaps(dump):
    """Seconds between the writes of a --dump: each write position's mean
    gap times its calls (the RSD around it)."""
    total, calls = 0.0, 1
    for line in dump.splitlines():
        m = re.match(r"\s*RSD x(\d+) {", line)
        if m:
            calls = int(m.group(1))
            continue
        m = re.match(r"\s*write .*\[gap ([-\d.e+]+)(ns|us|ms|s)\b", line)
        if m:
            total += float(m.group(1)) * UNITS[m.group(2)] * calls
            calls = 1
    return total


def gap():
    """The first events recovered after a rank file's flush are timed from
    the rank file's last event, not from the trace's start: 200,000 writes
    (flushes come first), then rank 0 is SIGKILLed; the gaps between each
    rank's writes add up to a fraction of a second, as they were (a gap
    from the start would add the seconds before the flush).

    Every rank must die with records its rank file lacks. Rings of 2,048
    records without a periodic flush make each rewrite one the writer asks
    for at a check (every 1,024 records) and waits for, its records up to
    there included; the records after the last check are only in the
    journal. With the default ring a rewrite asked for near the end could
    run after the last record while the victim was held before its kill,
    and nothing was left to recover."""
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    traces = os.path.join(root, "traces")
    app = [app_path("crash_app"), "kill", "200000", "0", "0"]
    rings = {"MPIOR_FLUSH_INTERVAL": "0", "MPIOR_JOURNAL": "2048"}
    env = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces, **rings)
    forwarded = [x for k in ["LD_PRELOAD", "MPIOR_TRACE_DIR", *rings] for x in ("-x", k)] if OPENMPI else []
    subprocess.run(mpirun(2) + forwarded + app, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    post = subprocess.run([POST, traces], capture_output=True, text=True, timeout=300)
    check_eq(post.returncode, 0, f"mpior-post exit status: {post.stderr}")
    for r in (0, 1):
        check(f"rank {r}: " in post.stderr and "events recovered" in post.stderr, f"recovered: {post.stderr}")
        dump = subprocess.run([POST, "--dump", os.path.join(traces, f"rank-00000{r}.mpior")], capture_output=True,
                              text=True, timeout=300).stdout
        check(dump.count("RSD x") >= 2, f"rank {r}: no flushed and recovered parts: {dump[-1500:]}")
        gaps = write_gaps(dump)
        check(gaps < 0.25, f"rank {r}: the gaps between its writes add up to {gaps:.3f} s")
    shutil.rmtree(root, ignore_errors=True)


def kill_many():
    """More writes than a journal ring holds (65,536 records), on a rank
    without a periodic flush: the ring half full still has the rank file
    rewritten, so a SIGKILL loses none of the older writes."""
    dies("kill", True, writes=150000)


def many_threads():
    """Each rank runs 100 threads making 2,000 writes each at once, with
    MPIOR_MEMORY=16M (the journal rings' share: an eighth, 2 MiB; a few
    threads get rings of their own, the others share one) and no periodic
    flush; rank 0 dies by SIGKILL after them, the launcher kills rank 1.
    Every rank left a shared journal, its journal rings stay within their
    share of MPIOR_MEMORY, and the posted trace holds >= 99% of every
    thread's writes."""
    threads, writes, memory = 100, 2000, 16 << 20
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    traces = os.path.join(root, "traces")
    p = launch(root, traces, "kill", 0, True, app_args=[f"threads{threads}"], writes=writes, MPIOR_MEMORY="16M",
               MPIOR_FLUSH_INTERVAL="0")
    check(p.returncode != 0, f"the job should fail, exited {p.returncode}: {p.stderr[-2000:]}")
    names = os.listdir(traces)
    for r in (0, 1):
        rings = [f for f in names if re.fullmatch(rf"rank-00000{r}\.(t\d+|shared)\.journal", f)]
        check(f"rank-00000{r}.shared.journal" in rings, f"rank {r}: no shared journal: {sorted(names)}")
        size = sum(os.path.getsize(os.path.join(traces, f)) for f in rings)
        check(size <= memory // 8, f"rank {r}: journal rings of {size} bytes, over an eighth of MPIOR_MEMORY")
    post = subprocess.run([POST, traces], capture_output=True, text=True, timeout=300)
    check_eq(post.returncode, 0, f"mpior-post exit status: {post.stderr[-3000:]}")
    with open(os.path.join(traces, "plan", "summary.json")) as f:
        summary = json.load(f)
    check_eq(summary.get("missing_ranks", []), [], "missing ranks")
    short = [(r, t, n) for r in (0, 1) for t in range(threads)
             for n in [writes_of(summary, f"crash_{r}_{t}.dat")] if not int(0.99 * writes) <= n <= writes]
    check(not short, f"threads without >= 99% of their {writes} writes (rank, thread, writes): {short[:20]}")
    check(not [f for f in os.listdir(traces) if f.endswith(".journal")], "journals left after recovery")
    shutil.rmtree(root, ignore_errors=True)


def recovered_and_replayed(root, traces):
    """After a post that recovered the journals: none is left, and the plan
    replays; the test's files go."""
    check(not [f for f in os.listdir(traces) if f.endswith(".journal")], "journals left after recovery")
    r = subprocess.run([REPLAY, "--io-only", "--fs", os.path.join(root, "fs"), os.path.join(traces, "plan")],
                       capture_output=True, text=True, timeout=300)
    check_eq(r.returncode, 0, f"replay exit status: {r.stderr[-3000:]}")
    shutil.rmtree(root, ignore_errors=True)


def standalone(writes, **env):
    """A program without MPI (killed_standalone self) makes its writes, then
    waits 0.3 s, less than the flush interval, and dies by SIGKILL: its
    first periodic flush never came, and it has no flush thread (still
    single-threaded: the tracer flushes from the program's own thread). Its
    crash journal holds the writes: mpior-post recovers >= 99% of them and
    removes the journal files."""
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    traces = os.path.join(root, "traces")
    p = subprocess.run([app_path("killed_standalone"), "self", str(writes), "300"], cwd=root,
                       env=dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces, **env), capture_output=True,
                       text=True, timeout=120)
    check_eq(p.returncode, -9, f"the program's exit status: {p.stderr[-2000:]}")
    check_eq(p.stdout.strip(), "single-threaded 1", "no thread of the tracer's in the program")
    check(any(f.endswith(".journal") for f in os.listdir(traces)), f"journal files: {os.listdir(traces)}")
    post = subprocess.run([POST, traces], capture_output=True, text=True, timeout=300)
    check_eq(post.returncode, 0, f"mpior-post exit status: {post.stderr}")
    check("events recovered from its crash journal" in post.stderr, f"recovered: {post.stderr}")
    with open(os.path.join(traces, "plan", "summary.json")) as f:
        summary = json.load(f)
    check_eq(summary["complete"], False, "summary complete")
    n = writes_of(summary, "standalone.dat")
    check(int(0.99 * writes) <= n <= writes, f"{n} of {writes} writes in the trace")
    recovered_and_replayed(root, traces)


def standalone_many():
    """More writes than a ring holds (65,536 records) and no periodic flush:
    the program's own thread rewrites the trace each time the ring is half
    full, so the SIGKILL loses none of the older writes."""
    standalone(150000, MPIOR_FLUSH_INTERVAL="0")


def low_fds():
    """The crash journal's meta file stays off the low fds: a program whose first traced call is close(0) gets 0
    back from its dup (test/apps/low_fds), and `tar czf` (whose child puts the pipe to gzip on fd 0 so) writes
    its archive, which lists every file."""
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    try:
        env = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=os.path.join(root, "traces"))
        p = subprocess.run([app_path("low_fds")], cwd=root, env=env, capture_output=True, text=True, timeout=120)
        check_eq(p.returncode, 0, f"low_fds under the tracer: {p.stderr[-1000:]}")
        if not shutil.which("tar") or not shutil.which("gzip"):
            return print("skip the tar run: no tar or gzip")
        os.makedirs(os.path.join(root, "src"))
        for i in range(5):
            with open(os.path.join(root, "src", f"f{i}"), "wb") as f:
                f.write(os.urandom(5000 * (i + 1)))
        env["MPIOR_TRACE_DIR"] = os.path.join(root, "tar-traces")
        p = subprocess.run(["tar", "czf", "src.tgz", "src"], cwd=root, env=env, capture_output=True, text=True,
                           timeout=120)
        check_eq(p.returncode, 0, f"tar czf under the tracer: {p.stderr[-1000:]}")
        listed = subprocess.run(["tar", "tzf", "src.tgz"], cwd=root, capture_output=True, text=True).stdout.split()
        check_eq(len(listed), 6, f"files in the archive: {listed}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def forked_child():
    """Rank 0's forked child makes 20,000 writes, then the whole job dies by
    SIGKILL: rank 0 kills the child and itself, the launcher rank 1. No
    process has a periodic flush: the child's writes are only in its own
    crash journal (rank-000000.child-PID-SERIAL.*.journal), recovered into
    its trace and folded into rank 0's with >= 99% of them."""
    root = tempfile.mkdtemp(prefix="mpior-journal-")
    traces = os.path.join(root, "traces")
    # A ring of 65,536 records (MPIOR_MEMORY's eighth holds it) is never half full of 20,000: no process rewrites
    # its trace after its first write, whose flush thread (Open MPI's child starts one) would be quick enough to
    # take the child's last writes before the kill in some runs, leaving its journal nothing to recover.
    env = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces, MPIOR_FLUSH_INTERVAL="0", MPIOR_MEMORY="512M")
    forwarded = ("LD_PRELOAD", "MPIOR_TRACE_DIR", "MPIOR_FLUSH_INTERVAL", "MPIOR_MEMORY")
    fwd = [x for k in forwarded for x in ("-x", k)] if OPENMPI else []
    p = subprocess.run(mpirun(2) + fwd + [app_path("forked_writer"), str(WRITES)], cwd=root, env=env,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode != 0, f"the job should die, exited {p.returncode}: {p.stderr[-2000:]}")
    child = [f for f in os.listdir(traces) if re.fullmatch(r"rank-000000\.child-\d+-[0-9a-f]+\.t0000\.journal", f)]
    check_eq(len(child), 1, f"the child's thread journal: {sorted(os.listdir(traces))}")
    post = subprocess.run([POST, traces], capture_output=True, text=True, timeout=300)
    check_eq(post.returncode, 0, f"mpior-post exit status: {post.stderr}")
    check("a child process of rank 0: " in post.stderr and "events recovered" in post.stderr,
          f"the child recovered: {post.stderr}")
    with open(os.path.join(traces, "plan", "summary.json")) as f:
        summary = json.load(f)
    for name in ("child.dat", "rank_0.dat", "rank_1.dat"):
        n = writes_of(summary, name)
        check(int(0.99 * WRITES) <= n <= WRITES, f"{n} of {WRITES} writes to {name} in the trace")
    recovered_and_replayed(root, traces)


def scenario(mode, early):
    f = lambda: dies(mode, early)  # noqa: E731
    f.__name__ = mode
    return f


if __name__ == "__main__":
    cases = {}
    for m in MODES:
        cases[m + "_early"] = scenario(m, True)
        cases[m + "_late"] = scenario(m, False)
    cases["torn"] = torn
    cases["kill_many"] = kill_many
    cases["many_threads"] = many_threads
    cases["lossless"] = lossless
    cases["inside"] = inside
    cases["gap"] = gap
    cases["standalone"] = lambda: standalone(WRITES)
    cases["standalone_many"] = standalone_many
    cases["forked_child"] = forked_child
    cases["low_fds"] = low_fds
    main(cases)
