"""A trace survives the way real jobs end (issue 12): 2 ranks make 20,000
writes each, then rank 0 computes 1.5 s and dies (a signal, abort, MPI_Abort, exit or return
without MPI_Finalize); mpior-post must succeed with a warning per unfinished
rank, count the writes made (all of them when the tracer caught the end or
the last flush saw them, at least 90% after a SIGKILL), record "complete":
false, and the plan must replay. MPICH's launcher SIGKILLs the other rank:
its trace is the last periodic flush. A program without MPI and a forked
child SIGKILLed keep what their own periodic flush wrote. Also: file names
that are not UTF-8, /dev/shm, excluded calls counted.
"""
import json
import os
import shutil
import subprocess
import tempfile

from harness import APPS, LIB, OPENMPI, POST, REPLAY, Failure, app_path, check, check_eq, main, mpirun, run

WRITES = 20000
CAUGHT = {"segv": -11, "bus": -7, "fpe": -8, "ill": -4, "abort": -6, "term": -15, "int": -2}


def traced_env(traces, **extra):
    env = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces)
    env.update(extra)
    return env


def writes_of(summary, name):
    for f in summary["files"]:
        if f["path"].endswith("/" + name):
            return f["bytes_written"] // 64
    return 0


def dies(mode, victim=0, full_victim=True, env=None):
    root = tempfile.mkdtemp(prefix="mpior-crash-")
    traces = os.path.join(root, "traces")
    app = [os.path.join(APPS, "crash_app"), mode, str(WRITES), str(victim)]
    # The victim of a death the tracer sees (a signal, exit) runs without the
    # periodic flush, so its trace can only come from that moment.
    own = ["-env", "MPIOR_FLUSH_INTERVAL", "0"] if full_victim and mode != "kill" else []
    segments = [["-n", "1"] + (own if r == victim else []) + app for r in (0, 1)]
    p = subprocess.run(["mpirun.mpich"] + segments[0] + [":"] + segments[1], cwd=root,
                       env=traced_env(traces, **(env or {})), capture_output=True, text=True, timeout=120)
    if mode != "return":  # hydra reports a return without MPI_Finalize as success
        check(p.returncode != 0, f"{mode}: the job should fail, exited {p.returncode}")
    post = run([POST, traces])
    check("warning" in post.stderr and "incomplete" in post.stderr, f"{mode}: no warning: {post.stderr}")
    with open(os.path.join(traces, "plan", "summary.json")) as f:
        summary = json.load(f)
    check_eq(summary["complete"], False, f"{mode}: summary complete")
    for r in (0, 1):
        n = writes_of(summary, f"crash_{r}.dat")
        want = WRITES if (r == victim and full_victim) else int(0.9 * WRITES)
        check(n >= want, f"{mode}: rank {r}: {n} of {WRITES} writes in the trace (want >= {want})")
    run([REPLAY, "--io-only", "--fs", os.path.join(root, "fs"), os.path.join(traces, "plan")])
    shutil.rmtree(root, ignore_errors=True)


def wrapped(mode):
    """The launcher started by a traced program (`timeout 100 mpirun ...`, as
    in a batch script): the ranks are traced as that program's descendants and
    install the crash handler at load and again at MPI_Init; the victim's
    signal must still end it (the handler chained to itself and looped)."""
    root = tempfile.mkdtemp(prefix="mpior-wrapped-")
    traces = os.path.join(root, "traces")
    app = [os.path.join(APPS, "crash_app"), mode, "2000", "0"]
    p = subprocess.run(["timeout", "100", "mpirun.mpich", "-n", "2"] + app, cwd=root, env=traced_env(traces),
                       capture_output=True, text=True, timeout=120)
    check(p.returncode not in (0, 124), f"{mode}: the job should fail by the signal, exited {p.returncode}")
    shutil.rmtree(root, ignore_errors=True)


def missing_rank():
    """Rank 1 runs without a periodic flush nor crash journal and is
    SIGKILLed by the launcher when rank 0 dies: no file holds it. mpior-post writes the summary and the
    HTML report of rank 0, names rank 1, writes no plan and exits 1."""
    root = tempfile.mkdtemp(prefix="mpior-missing-")
    traces = os.path.join(root, "traces")
    app = [os.path.join(APPS, "crash_app"), "kill", str(WRITES), "0"]
    cmd = ["mpirun.mpich", "-n", "1"] + app + [":", "-n", "1", "-env", "MPIOR_FLUSH_INTERVAL", "0"] + app
    subprocess.run(cmd, cwd=root, env=traced_env(traces, MPIOR_JOURNAL="0"), capture_output=True, text=True,
                   timeout=120)
    check(not os.path.exists(os.path.join(traces, "rank-000001.mpior")), "rank 1 should have left no trace")
    html = os.path.join(root, "report.html")
    post = subprocess.run([POST, traces, "--html", html], capture_output=True, text=True, timeout=120)
    check_eq(post.returncode, 1, f"exit status: {post.stderr}")
    check("1 of 2 ranks have no trace (rank 1)" in post.stderr, f"names the missing rank: {post.stderr}")
    check(os.path.getsize(html) > 0 and "wrote report" in post.stdout, f"the report is written: {post.stdout}")
    plan = os.path.join(traces, "plan")
    check(not os.path.exists(os.path.join(plan, "plan.mpior")), "no replay plan")
    with open(os.path.join(plan, "summary.json")) as f:
        summary = json.load(f)
    check_eq(summary["missing_ranks"], [1], "summary.json missing_ranks")
    check_eq(summary["complete"], False, "summary complete")
    n = writes_of(summary, "crash_0.dat")
    check(n >= int(0.9 * WRITES), f"rank 0: {n} of {WRITES} writes in the summary")
    shutil.rmtree(root, ignore_errors=True)


def partial():
    """Three ranks end normally, then rank 1's trace is deleted (as if it had
    been killed before its first flush). mpior-post writes the summary and
    HTML report of ranks 0 and 2, names rank 1 in both and refuses the plan;
    with --partial it writes a plan listing rank 1 as missing, which the
    threaded replay runs (ranks 0 and 2 meet at their barriers without rank
    1) and mpior-replay --mpi refuses with one message."""
    root = tempfile.mkdtemp(prefix="mpior-partial-")
    traces = os.path.join(root, "traces")
    env = traced_env(traces, MPIOR_MERGE="0")  # rank files, so one can go
    forward = ["-x", "LD_PRELOAD", "-x", "MPIOR_TRACE_DIR", "-x", "MPIOR_MERGE"] if OPENMPI else []
    p = subprocess.run(mpirun(3) + forward + [app_path("crash_app"), "none", "2000", "0"], cwd=root, env=env,
                       capture_output=True, text=True, timeout=120)
    check_eq(p.returncode, 0, f"job exit status: {p.stderr[-2000:]}")
    gone = [f for f in os.listdir(traces) if f.startswith("rank-000001.")]
    check(gone, f"rank 1's trace files: {os.listdir(traces)}")
    for f in gone:
        os.remove(os.path.join(traces, f))
    html = os.path.join(root, "report.html")
    post = subprocess.run([POST, traces, "--html", html], capture_output=True, text=True, timeout=120)
    check_eq(post.returncode, 1, f"exit status: {post.stderr}")
    check("1 of 3 ranks have no trace (rank 1)" in post.stderr and "--partial" in post.stderr,
          f"the refusal names rank 1 and --partial: {post.stderr}")
    plan = os.path.join(traces, "plan")
    check(not os.path.exists(os.path.join(plan, "plan.mpior")), "no replay plan")
    with open(html) as f:
        page = f.read()
    check("ranks without a trace" in page, "the report names the missing rank")
    with open(os.path.join(plan, "summary.json")) as f:
        summary = json.load(f)
    check_eq(summary["missing_ranks"], [1], "summary.json missing_ranks")
    parts = summary["missing_parts"]
    check(len(parts) == 1 and parts[0]["rank"] == 1 and parts[0]["collectives_without_it"] >= 1,
          f"rank 1's collectives: {parts}")
    for r in (0, 2):
        check_eq(writes_of(summary, f"crash_{r}.dat"), 2000, f"rank {r}'s writes in the summary")
    check_eq(writes_of(summary, "crash_1.dat"), 0, "rank 1's writes")
    post = subprocess.run([POST, traces, "--partial"], capture_output=True, text=True, timeout=120)
    check_eq(post.returncode, 0, f"--partial exit status: {post.stderr}")
    check("partial plan: 1 of 3 ranks have no trace (rank 1)" in post.stdout, f"--partial says so: {post.stdout}")
    dump = run([POST, "--dump", plan])
    check("partial plan: ranks without a trace, their parts absent: [1]" in dump.stdout, "--dump names rank 1")
    fs = os.path.join(root, "fs")
    replay = subprocess.run([REPLAY, "--fs", fs, plan], capture_output=True, text=True, timeout=120)
    check_eq(replay.returncode, 0, f"threaded replay of the partial plan: {replay.stderr[-2000:]}")
    check("partial plan" in replay.stderr, f"the replay says the plan is partial: {replay.stderr}")
    for r in (0, 2):
        replayed = os.path.join(fs, root.lstrip("/"), f"crash_{r}.dat")
        check_eq(os.path.getsize(replayed), 2000 * 64, f"replayed crash_{r}.dat")
    check(not os.path.exists(os.path.join(fs, root.lstrip("/"), "crash_1.dat")), "rank 1 replayed nothing")
    mpi = subprocess.run(["mpirun.mpich", "-n", "1", REPLAY, "--mpi", "--fs", fs + "2", plan], capture_output=True,
                         text=True, timeout=120)
    check(mpi.returncode != 0 and "a partial plan (1 of 3 ranks left no trace) cannot be replayed with --mpi"
          in mpi.stderr + mpi.stdout, f"--mpi refuses: {mpi.returncode} {mpi.stderr[-2000:]}")
    shutil.rmtree(root, ignore_errors=True)


def names():
    root = tempfile.mkdtemp(prefix="mpior-names-")
    traces = os.path.join(root, "traces")
    tag = str(os.getpid())
    run([os.path.join(APPS, "names_app"), tag], cwd=root, env=traced_env(traces))
    run([POST, traces])
    raw = open(os.path.join(traces, "plan", "summary.json"), "rb").read()
    summary = json.loads(raw.decode("utf-8"))
    paths = {f["path"]: f for f in summary["files"]}
    want = os.path.join(root, "name_\\xFF\\xFE.dat")
    check(want in paths, f"escaped name {want} not in {sorted(paths)}")
    check_eq(paths[want]["bytes_written"], 100, "bytes of the non-UTF-8 file")
    shm = f"/dev/shm/mpior_names_{tag}"
    check(shm in paths and paths[shm]["bytes_written"] == 200, f"/dev/shm file traced: {sorted(paths)}")
    check(summary["excluded"].get("open", 0) >= 2, f"excluded opens counted: {summary['excluded']}")
    dump = subprocess.run([POST, "--dump", os.path.join(traces, "rank-000000.mpior")], capture_output=True)
    check_eq(dump.returncode, 0, "--dump exit status")
    check(b"name_\\xFF\\xFE.dat" in dump.stdout, "--dump shows the escaped name")
    fs = os.path.join(root, "fs")
    run([REPLAY, "--fs", fs, os.path.join(traces, "plan")])
    replayed = os.path.join(fs.encode(), root.encode().lstrip(b"/"), b"name_\xff\xfe.dat")
    check(os.path.isfile(replayed), f"replay recreated the byte name {replayed!r}")
    check_eq(os.path.getsize(replayed), 100, "replayed size")
    shutil.rmtree(root, ignore_errors=True)


def killed_standalone(mode):
    """A program without MPI ("self"), or its forked child ("child"), makes
    20,000 writes, waits 1.5 s and is SIGKILLed: the periodic flush of that
    process (started at its first recorded call) has its writes."""
    root = tempfile.mkdtemp(prefix="mpior-killed-")
    traces = os.path.join(root, "traces")
    p = subprocess.run([os.path.join(APPS, "killed_standalone"), mode, str(WRITES)], cwd=root,
                       env=traced_env(traces), capture_output=True, text=True, timeout=60)
    if mode == "self":
        check_eq(p.returncode, -9, "the program's exit status")
    else:
        check_eq((p.returncode, p.stdout.strip()), (0, "child killed by signal 9"), "the parent's exit and output")
    post = run([POST, traces])
    with open(os.path.join(traces, "plan", "summary.json")) as f:
        summary = json.load(f)
    name = "standalone.dat" if mode == "self" else "child.dat"
    n = writes_of(summary, name)
    check(n >= int(0.9 * WRITES), f"{mode}: {n} of {WRITES} writes to {name} in the trace")
    if mode == "self":
        check("incomplete" in post.stderr, f"no warning for the killed program: {post.stderr}")
        check_eq(summary["complete"], False, "summary complete")
    else:
        check_eq(writes_of(summary, "parent.dat"), 1, "the parent's write")
    run([REPLAY, "--io-only", "--fs", os.path.join(root, "fs"), os.path.join(traces, "plan")])
    replayed = os.path.join(root, "fs", root.lstrip("/"), name)
    check(os.path.getsize(replayed) >= 64 * int(0.9 * WRITES), f"replayed {name}: {os.path.getsize(replayed)} bytes")
    shutil.rmtree(root, ignore_errors=True)


def scenario(mode, **kw):
    f = lambda: dies(mode, **kw)  # noqa: E731
    f.__name__ = mode
    return f


if __name__ == "__main__":
    cases = {m: scenario(m) for m in list(CAUGHT) + ["mpi_abort", "exit", "return"]}
    cases["kill"] = scenario("kill", full_victim=False)
    cases["mpi_abort1"] = scenario("mpi_abort", victim=1)
    cases["names"] = names
    cases["wrapped_segv"] = lambda: wrapped("segv")
    cases["wrapped_term"] = lambda: wrapped("term")
    cases["missing_rank"] = missing_rank
    cases["partial"] = partial
    cases["killed_standalone"] = lambda: killed_standalone("self")
    cases["killed_child"] = lambda: killed_standalone("child")
    main(cases)
