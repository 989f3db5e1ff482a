"""Extrapolation figures (scripts/bench.sh --only extrap): test/apps/scaling
traced at 4, 5, 6 and 7 ranks, extrapolated to 8,192 and 65,536 ranks
(mpior-post --extrapolate, whole command: reading the plans, extrapolating,
the summary, writing), the plan's size, and the 8,192-rank plan replayed
with 8,192 threads on a tmpfs (--io-only: the extrapolated MPI timing of an
oversubscribed 2-core machine would otherwise dominate): setup_s, wall time
and peak RSS."""
import json
import os
import shutil
import statistics
import subprocess
import time

# Divisible by 4, 5, 6, 7 and 65,536: the strong-scaled file splits evenly.
TOTAL = 420 * 65536


def run_measured(cmd, cwd):
    """Wall seconds and peak RSS (KiB) of one command."""
    start = time.monotonic()
    p = subprocess.Popen([str(c) for c in cmd], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    out, err = p.communicate()
    if status != 0:
        raise SystemExit(f"bench: {' '.join(map(str, cmd))} failed:\n{err.decode()[-2000:]}")
    return wall, usage.ru_maxrss, out.decode()


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
    rows = []
    for target in (8192, 65536):
        out = os.path.join(d, f"p{target}")
        times, rss = [], []
        for _ in range(reps):
            shutil.rmtree(out, ignore_errors=True)
            wall, kib, _ = run_measured([b.post, "--extrapolate", target, "-o", out] + plans, d)
            times.append(wall)
            rss.append(kib)
        size = os.path.getsize(os.path.join(out, "plan.mpior"))
        one_rank = os.path.getsize(os.path.join(plans[-1], "plan.mpior"))
        rows.append([target, f"{statistics.median(times):.3f}", f"{min(times):.3f}-{max(times):.3f}",
                     f"{max(rss) / 1024:.1f}", size, one_rank])
    table(f"extrapolation from 4-7 ranks (medians of {reps})",
          ["target ranks", "mpior-post s", "range", "peak MiB", "plan bytes", "7-rank plan bytes"], rows)
    fs = "/dev/shm/mpior-bench-fs"
    shutil.rmtree(fs, ignore_errors=True)
    os.makedirs(fs)
    report = os.path.join(d, "r.json")
    try:
        wall, kib, _ = run_measured([b.replay, "--threads", 8192, "--fs", fs, "--stdio", "null", "--io-only", "--json",
                                     report, os.path.join(d, "p8192")], d)
    finally:
        shutil.rmtree(fs, ignore_errors=True)
    with open(report) as f:
        r = json.load(f)
    table("replay of the 8,192-rank plan, 8,192 threads on /dev/shm (--io-only)",
          ["threads", "setup_s", "replay_s", "wall s", "peak RSS MiB", "failed calls"],
          [[r["threads"], f"{r['setup_s']:.3f}", f"{r['replay_s']:.3f}", f"{wall:.2f}", f"{kib / 1024:.1f}",
            r["errors"]["count"]]])
