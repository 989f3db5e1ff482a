"""Extrapolation figures (scripts/bench.sh --only extrap): test/apps/scaling
traced at 4, 5, 6 and 7 ranks, extrapolated to 8,192 and 65,536 ranks
(mpior-post --extrapolate, whole command: reading the plans, extrapolating,
the summary, writing), the plan's size, and the 8,192-rank plan replayed
with 8,192 threads on a tmpfs (--io-only: the extrapolated MPI timing of an
oversubscribed 2-core machine would otherwise dominate): setup CPU time
(setup_cpu_s) and setup_s, wall time and peak RSS. Times of mpior-post are
CPU seconds (user and system), which a shared machine disturbs least. The same for test/apps/ior_like's three patterns traced at 4,
8, 12 and 16 ranks (--only extrap_ior): a program with a stdout, a log and
MPICH's own reads, whose incidentals take the best fit."""
import json
import os
import shutil
import statistics
import subprocess
import time

# Divisible by 4, 5, 6, 7 and 65,536: the strong-scaled file splits evenly.
TOTAL = 420 * 65536


def run_measured(cmd, cwd):
    """Wall seconds, peak RSS (KiB), stdout and CPU seconds (user and system) of one command."""
    start = time.monotonic()
    p = subprocess.Popen([str(c) for c in cmd], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    out, err = p.communicate()
    if status != 0:
        raise SystemExit(f"bench: {' '.join(map(str, cmd))} failed:\n{err.decode()[-2000:]}")
    return wall, usage.ru_maxrss, out.decode(), usage.ru_utime + usage.ru_stime


def timed_extrapolations(b, plans, d, reps):
    """Rows [target, median CPU s, range, median wall s, peak MiB, plan bytes] for 8,192 and 65,536 ranks; plans
    in d/p<target>. CPU time (user and system, the command's threads) is what a loaded machine changes least."""
    rows = []
    for target in (8192, 65536):
        out = os.path.join(d, f"p{target}")
        times, cpus, rss = [], [], []
        for _ in range(reps):
            shutil.rmtree(out, ignore_errors=True)
            wall, kib, _, cpu = run_measured([b.post, "--extrapolate", target, "-o", out] + plans, d)
            times.append(wall)
            cpus.append(cpu)
            rss.append(kib)
        rows.append([target, f"{statistics.median(cpus):.3f}", f"{min(cpus):.3f}-{max(cpus):.3f}",
                     f"{statistics.median(times):.3f}", f"{max(rss) / 1024:.1f}",
                     os.path.getsize(os.path.join(out, "plan.mpior"))])
    return rows


def runnable_tasks():
    """Tasks running or ready to run on the machine now, this one included (/proc/stat procs_running): the load
    an 8,192-thread replay meets, which the load average, raised by the replays' own threads, does not tell."""
    with open("/proc/stat") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("procs_running "))


def replay_8192(b, d, title, table, reps=1):
    """The 8,192-rank plan of d replayed with 8,192 threads on /dev/shm (--io-only), reps times: the medians of
    setup_cpu_s (the replayer's CPU time, every thread's, from its start until every thread waits at the start
    gate), setup_s (the same in wall time), replay_s, wall and CPU time of the whole command; the largest peak RSS;
    the tasks runnable on the machine before each run (median and range)."""
    fs = os.path.join(b.scratch("/dev/shm", "bench-replay"), "fs")
    report = os.path.join(d, "r.json")
    runs = []
    for _ in range(reps):
        shutil.rmtree(fs, ignore_errors=True)
        os.makedirs(fs)
        busy = runnable_tasks()
        try:
            wall, kib, _, cpu = run_measured([b.replay, "--threads", 8192, "--fs", fs, "--stdio", "null",
                                              "--io-only", "--json", report, os.path.join(d, "p8192")], d)
        finally:
            shutil.rmtree(fs, ignore_errors=True)
        with open(report) as f:
            r = json.load(f)
        runs.append(dict(r=r, wall=wall, kib=kib, cpu=cpu, busy=busy))
    med = lambda key: statistics.median(key(x) for x in runs)
    span = lambda key: f"{min(key(x) for x in runs):.3f}-{max(key(x) for x in runs):.3f}"
    setup_cpu, setup = lambda x: x["r"]["setup_cpu_s"], lambda x: x["r"]["setup_s"]
    table(title, ["threads", "setup CPU s", "range", "setup_s", "range", "replay_s", "wall s", "CPU s", "peak RSS MiB",
                  "runnable tasks", "failed calls"],
          [[runs[0]["r"]["threads"], f"{med(setup_cpu):.3f}", span(setup_cpu), f"{med(setup):.3f}", span(setup),
            f"{med(lambda x: x['r']['replay_s']):.3f}", f"{med(lambda x: x['wall']):.2f}",
            f"{med(lambda x: x['cpu']):.2f}", f"{max(x['kib'] for x in runs) / 1024:.1f}",
            f"{med(lambda x: x['busy']):.0f} ({min(x['busy'] for x in runs)}-{max(x['busy'] for x in runs)})",
            max(x["r"]["errors"]["count"] for x in runs)]])


# test/apps/ior_like's patterns as the bench runs them: small blocks, so that
# 8,192 ranks' files fit a tmpfs.
IOR_PATTERNS = (("fpp", "posix"), ("shared", "posix"), ("interleaved", "mpiio"))
IOR_ARGS = (8192, 4096, 2, 2)


def traced_plans(b, d, cmd_of, counts=(4, 8, 12, 16)):
    """cmd_of(work) traced at each rank count into d/t<n>, posted; the plans. Every run starts in a fresh working
    directory d/work, without the files (ROMIO opens an existing file another way)."""
    plans = []
    for n in counts:
        traces = os.path.join(d, f"t{n}")
        work = b.fresh(os.path.join(os.path.basename(d), "work"))
        b.run(["mpirun.mpich", "-n", n] + cmd_of(work), cwd=work, env=b.traced(MPIOR_TRACE_DIR=traces))
        b.run([b.post, "-q", traces])
        plans.append(os.path.join(traces, "plan"))
    return plans


def ior_like(b, table):
    """test/apps/ior_like (stdout, a log, MPICH's own reads) in its three patterns, traced at 4, 8, 12 and 16 ranks
    (oversubscribed), extrapolated to 8,192 and 65,536 ranks; the file-per-process plan replayed with 8,192 threads."""
    reps = 3 if b.quick else 5
    rows = []
    for pattern, api in IOR_PATTERNS:
        d = b.fresh(f"ior-{pattern}")
        plans = traced_plans(b, d, lambda work: [b.exe("test/apps/ior_like"), pattern, api, *IOR_ARGS])
        rows += [[f"{pattern} {api}"] + r for r in timed_extrapolations(b, plans, d, reps)]
        if pattern == "fpp":
            fpp = d
    table(f"ior_like extrapolated from 4, 8, 12, 16 ranks (medians of {reps}; goal < 0.2 s at 8,192)",
          ["pattern", "target ranks", "mpior-post CPU s", "range", "wall s", "peak MiB", "plan bytes"], rows)
    replay_8192(b, fpp, f"replay of ior_like fpp at 8,192 ranks, 8,192 threads on /dev/shm (--io-only; medians of "
                f"{reps}; goal: setup < 2 s, RSS < 1 GiB)", table, reps)


def extrapolation(b, table):
    d = b.fresh("extrap")
    plans = []
    for n in (4, 5, 6, 7):
        traces = os.path.join(d, f"t{n}")
        b.run(["mpirun.mpich", "-n", n, b.exe("test/apps/scaling"), 3, 0, TOTAL], cwd=d,
              env=b.traced(MPIOR_TRACE_DIR=traces))
        b.run([b.post, traces])
        plans.append(os.path.join(traces, "plan"))
    reps = 3 if b.quick else 5
    one_rank = os.path.getsize(os.path.join(plans[-1], "plan.mpior"))
    rows = [r + [one_rank] for r in timed_extrapolations(b, plans, d, reps)]
    table(f"extrapolation from 4-7 ranks (medians of {reps})",
          ["target ranks", "mpior-post CPU s", "range", "wall s", "peak MiB", "plan bytes", "7-rank plan bytes"], rows)
    replay_8192(b, d, f"replay of the 8,192-rank plan, 8,192 threads on /dev/shm (--io-only; medians of {reps})",
                table, reps)


# IOR's HDF5 collective run (--only extrap_hdf5, when MPIOR_BENCH_IOR names an
# IOR built with HDF5): small blocks, so the four traced runs take a minute.
IOR_HDF5_ARGS = ("-a", "HDF5", "-c", "-b", "64k", "-t", "16k", "-s", "2", "-w", "-r", "-k")


def hdf5(b, table):
    """HDF5 on one shared file, its metadata a table dealt over the ranks (extrap/dealt.cpp): test/apps/hdf5_blocks
    (IOR's -a HDF5 pattern) and, when MPIOR_BENCH_IOR names an IOR built with HDF5, IOR -a HDF5 -c itself, traced at
    4, 8, 12 and 16 ranks and extrapolated to 8,192 and 65,536 ranks."""
    reps = 3 if b.quick else 5
    load = os.getloadavg()[0]
    programs = [("hdf5_blocks 4", lambda work: [b.exe("test/apps/hdf5_blocks"), 4])]
    ior = os.environ.get("MPIOR_BENCH_IOR")
    if ior and os.path.exists(ior):
        programs.append(("IOR " + " ".join(IOR_HDF5_ARGS),
                         lambda work: [ior, *IOR_HDF5_ARGS, "-o", os.path.join(work, "ior.h5")]))
    rows = []
    for i, (name, cmd_of) in enumerate(programs):
        d = b.fresh(f"hdf5-{i}")
        plans = traced_plans(b, d, cmd_of)
        rows += [[name] + r for r in timed_extrapolations(b, plans, d, reps)]
    table(f"HDF5 extrapolated from 4, 8, 12, 16 ranks (medians of {reps}, load {load:.1f} at the start; goal < 0.2 s "
          "at 8,192)", ["program", "target ranks", "mpior-post CPU s", "range", "wall s", "peak MiB", "plan bytes"], rows)
