"""bench.py section 'fidelity' (issue 13): each bundled program traced on the build directory's file system and
replayed on a tmpfs, and the reverse, against untraced runs on the target; and the replay's own cost per event."""
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile


def lifetimes(path, what):
    with open(path) as f:
        return [int(line.split()[1]) / 1e9 for line in f if line.startswith(what)]


def lifetime_run(b, cmd, wd, preload=None, env=None):
    """Runs cmd in wd with bench/libmpior_lifetime.so first in LD_PRELOAD (preload after it: it calls on into
    that library's MPI_Init and MPI_Finalize). Per rank, in s from load: its MPI_Finalize call, its MPI_Init
    return."""
    life = os.path.join(wd, "lifetime")
    lib = b.exe("bench/libmpior_lifetime.so")
    run_env = {"LD_PRELOAD": f"{lib}:{preload}" if preload else lib, "MPIOR_LIFETIME_FILE": life}
    run_env.update(env or {})
    b.run(cmd, cwd=wd, env=run_env)
    return lifetimes(life, "finalize_ns"), lifetimes(life, "init_ns")



# checkpoint_sim: steps, compute us, checkpoint (pwrite + fsync + barrier) every, cells per rank. The others
# run long enough (iterations, block) that start-up (launch to MPI_Init's return, varying from launch to
# launch) is not most of the time. Each run writes less than the memory bench/settle.py touches before it.
# A run, real or replayed, spreads from run to run more than it drifts, so a replay's error against the real
# run beside it spreads as much as two unpaired runs, and medians of a fixed few runs move from batch to batch
# by as much as the 5% target. So each row runs until its error's standard error is small enough
# (FIDELITY_RUNS, FIDELITY_PRECISION), and beside the medians come the interquartile means (the mean of the
# middle half, as robust to an outlier and more precise from the same runs) and each replay against the real
# run of its round.
# The tracer's environment: checkpoint_sim traced on ext4 spends part of its time in pruned Allreduces waiting
# for the other rank (the replay warns: that waiting is replayed as compute on any target), so it is traced
# again with MPIOR_PRUNE=0, as the docs advise for predicting another file system.
# Placement: every run, traced or not, is launched bound (mpirun -bind-to core, as batch systems bind ranks), and
# the replay places its threads as the trace says the ranks ran (mpior-replay --bind auto): unbound on few
# cores, an fsync's wake-up can put both ranks on one core, where MPICH's busy poll waits a scheduler tick for
# the other, as often as the host decides. MPIOR_BENCH_BIND=none runs it all unbound,
# MPIOR_BENCH_BIND=<mpirun -bind-to value> otherwise.
BIND_MODE = os.environ.get("MPIOR_BENCH_BIND", "core")
BIND = [] if BIND_MODE == "none" else ["-bind-to", BIND_MODE]
FIDELITY_PROGRAMS = (("checkpoint_sim", ["40", "10000", "5", "262144"]),
            ("checkpoint_sim", ["40", "10000", "5", "262144"], {"MPIOR_PRUNE": "0"}),
            ("checkpoint_sim", ["100", "3000", "10", "65536"]), ("lammps_shape", []), ("pseudo_shape", []),
            ("nton_barrier", ["100000", "2048"]), ("nto1", ["150000", "1024"]), ("serial_gather", ["9000", "4096"]),
            ("comm_split", ["120000", "2048"]))
FIDELITY_RUNS = (9, 31)  # at least, at most
# Points of standard error on a row's error: 18 rows off by chance alone, each with a standard error of 2
# points, give a worst of about 4.5 (the largest of 18 half-normal draws is ~2.2 standard deviations); at 1.5
# points, about 3.3, and a 5% miss is 3.3 of them away.
FIDELITY_PRECISION = 1.5


def selected(programs):
    """The rows of programs whose program MPIOR_BENCH_PROGRAMS names (comma-separated), or all when it is unset."""
    only = [p for p in os.environ.get("MPIOR_BENCH_PROGRAMS", "").split(",") if p]
    return [p for p in programs if not only or p[0] in only]


def fidelity_case(b, exe, args, ranks, src, dst, runs, tracer_env):
    """Medians of runs: the replay's prediction on dst of a trace made on src, and the real untraced run on dst
    over the span a trace covers (each rank from load to its MPI_Finalize call; the slowest rank); the same
    after start-up (from MPI_Init's return: the launch and MPI_Init took 15-70 ms, varying from launch to
    launch, a third of a 0.1 s program); the error of the interquartile means; and the median of the paired
    errors (each replay against the real run of its round). Runs: at least runs[0], then more until the
    error's standard error is at most FIDELITY_PRECISION points, or runs[1]: the rule looks at the runs'
    spread, never at the error itself."""
    pred, real, pred_after, real_after = [], [], [], []
    cmd = ["mpirun.mpich", *BIND, "-n", ranks, exe] + list(args)
    for i in itertools.count():
        r, r_after, p, p_after = fidelity_run(b, cmd, src, dst, i, tracer_env)
        real.append(r), real_after.append(r_after), pred.append(p), pred_after.append(p_after)
        se = error_se(pred, real)
        if i + 1 >= runs[1] or (i + 1 >= runs[0] and se <= FIDELITY_PRECISION):
            break
    paired = statistics.median((p - r) / r * 100 for p, r in zip(pred, real))
    return {"runs": len(real), "pred": statistics.median(pred), "real": statistics.median(real), "se": se,
            "spread": spread_pct(real), "pred_spread": spread_pct(pred), "paired": paired,
            "iqm": error_pct(iqm(pred), iqm(real)), "pred_after": statistics.median(pred_after),
            "real_after": statistics.median(real_after), "spread_after": spread_pct(real_after)}


def fidelity_run(b, cmd, src, dst, i, tracer_env):
    """One round, interleaved: the real run on dst, then the traced run on src and its replay on dst; odd rounds
    the real run last (what runs before a measured run leaves the disk in a state: the same order every round
    could favour one side). Returns the real and the predicted times, whole and after start-up."""
    if i % 2:
        pred = traced_replay(b, cmd, src, dst, i, tracer_env)
        return real_run(b, cmd, src, dst, i) + pred
    real = real_run(b, cmd, src, dst, i)
    return real + traced_replay(b, cmd, src, dst, i, tracer_env)


def settle_both(b, src, dst):
    """Before a measured run: both file systems synced (what the other side left on either is written back before,
    not during it), then memory warmed."""
    subprocess.run(["sync", "-f", src], check=False)
    b.settle(dst)


def real_run(b, cmd, src, dst, i):
    """The untraced run on dst: the slowest rank's time from load to its MPI_Finalize call, and from its
    MPI_Init's return."""
    wd = os.path.join(dst, f"real{i}")
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    settle_both(b, src, dst)
    spans, inits = lifetime_run(b, cmd, wd)
    shutil.rmtree(wd, ignore_errors=True)
    return max(spans), max(s - i for s, i in zip(spans, inits))


def traced_replay(b, cmd, src, dst, i, tracer_env):
    """The run traced on src, post-processed, replayed on dst: the prediction, whole and after start-up."""
    tw = os.path.join(src, f"trace{i}")
    shutil.rmtree(tw, ignore_errors=True)
    os.makedirs(tw)
    traces = os.path.join(tw, "traces")
    b.settle(src)
    b.run(cmd, cwd=tw, env=b.traced(MPIOR_TRACE_DIR=traces, **tracer_env))
    b.run([b.post, traces])
    fs, report = os.path.join(dst, f"replay{i}"), os.path.join(tw, "report.json")
    shutil.rmtree(fs, ignore_errors=True)
    settle_both(b, src, dst)
    b.run([b.replay, "-q", "--fs", fs, "--json", report, os.path.join(traces, "plan")])
    with open(report) as f:
        rep = json.load(f)
    shutil.rmtree(fs, ignore_errors=True)
    shutil.rmtree(tw, ignore_errors=True)
    return rep["replay_s"], rep["after_startup_s"]


def median_se(values, rounds=500):
    """The standard error of the median of values, over bootstrap resamples (a fixed seed)."""
    rng = random.Random(1)
    return statistics.stdev(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))


def error_se(pred, real, rounds=500):
    """The standard error of the medians' error, in points: its spread over bootstrap resamples of both sides
    (a fixed seed: the same runs give the same answer)."""
    rng = random.Random(1)
    errors = [error_pct(statistics.median(rng.choices(pred, k=len(pred))),
                        statistics.median(rng.choices(real, k=len(real)))) for _ in range(rounds)]
    return statistics.stdev(errors)


def iqm(values):
    """The interquartile mean: the mean of the middle half, as blind as the median to a few runs far out and
    nearer the centre from the same runs (it averages half of them, the median one or two)."""
    v = sorted(values)
    quarter = len(v) // 4
    return statistics.fmean(v[quarter:len(v) - quarter])


def error_pct(predicted, real):
    return (predicted - real) / real * 100


def spread_pct(values):
    """Range over median, in percent: how far one run can be from another."""
    return (max(values) - min(values)) / statistics.median(values) * 100


def fidelity(b, table, elapsed):
    """Prediction against reality (issue 13): each program traced on the build directory's file system and
    replayed on a tmpfs, and the reverse, against untraced runs on the target (medians of FIDELITY_RUNS, 3
    with --quick; the interquartile means; the median of the paired errors); and what the replay adds per
    replayed event.
    MPIOR_BENCH_PROGRAMS=serial_gather,comm_split runs only those programs' rows."""
    disk = os.path.join(b.build, "fidelity-work")
    shm = tempfile.mkdtemp(prefix="mpior-fidelity-", dir="/dev/shm")
    programs = FIDELITY_PROGRAMS
    if b.quick:
        programs = programs[:2]
    programs = selected(programs)
    runs = (3, 3) if b.quick else FIDELITY_RUNS
    rows, worst, worst_iqm, worst_paired, worst_after = [], 0.0, 0.0, 0.0, 0.0
    load0 = os.getloadavg()[0]
    try:
        for app, args, *env in programs:
            tracer_env = env[0] if env else {}
            exe = b.exe(f"bench/{app}") if app.endswith("_shape") else b.exe(f"test/apps/{app}")
            for src, dst, name in ((disk, shm, "disk -> tmpfs"), (shm, disk, "tmpfs -> disk")):
                os.makedirs(src, exist_ok=True)
                os.makedirs(dst, exist_ok=True)
                c = fidelity_case(b, exe, args, 2, src, dst, runs, tracer_env)
                err, after = error_pct(c["pred"], c["real"]), error_pct(c["pred_after"], c["real_after"])
                worst, worst_paired = max(worst, abs(err)), max(worst_paired, abs(c["paired"]))
                worst_iqm, worst_after = max(worst_iqm, abs(c["iqm"])), max(worst_after, abs(after))
                rows.append([app, " ".join(args + [f"{k}={v}" for k, v in tracer_env.items()]), name, c["runs"],
                             f"{c['pred']:.3f}", f"{c['real']:.3f}", f"{c['spread']:.1f}%", f"{c['pred_spread']:.1f}%",
                             f"{err:+.1f}%", f"{c['se']:.1f}", f"{c['iqm']:+.1f}%", f"{c['paired']:+.1f}%",
                             f"{c['pred_after']:.3f}", f"{c['real_after']:.3f}", f"{c['spread_after']:.1f}%",
                             f"{after:+.1f}%", f"{os.getloadavg()[0]:.1f}"])
        bound = f"mpirun -bind-to {BIND[1]}, replay --bind auto" if BIND else "unbound"
        table(f"replay fidelity, 2 ranks ({bound}): predicted (replay of a trace from the other file system) against the "
              f"real untraced run on the target, load to MPI_Finalize as a trace covers it (medians of at least "
              f"{runs[0]} runs, more until the error's standard error (se, bootstrap) is {FIDELITY_PRECISION} "
              f"points or less, at most {runs[1]}; spreads: range / median; load {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end); "
              f"worst error {worst:.1f}% (target <= 5%), of the interquartile means {worst_iqm:.1f}% (iqm: the "
              f"means of the middle half of the runs), of the paired errors {worst_paired:.1f}% (paired: the "
              f"median of each replay's error against the real run beside it); after start-up (from MPI_Init's "
              f"return) worst error {worst_after:.1f}%",
              ["program", "args", "traced -> target", "runs", "predicted s", "real s", "real spread", "pred spread",
               "error", "se", "iqm error", "paired", "after init: pred s", "real s", "real spread", "error", "load"], rows)
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)
    replay_event_cost(b, table, elapsed)


def replay_event_cost(b, table, elapsed):
    """The replay's own cost per event: N 1-byte pwrites on tmpfs, traced once, replayed with --io-only against
    the same loop untraced, in rounds taking turns going first (paired: each replay against the untraced run
    beside it; runs spread 10-30% here, one unpaired run against another moved this figure by 100 ns). Beside
    it, what the replay measured of itself: its own time around the calls (own_s) and the real calls' time,
    per event."""
    n = 200000 if b.quick else 1000000
    rounds = 3 if b.quick else 9
    shm = tempfile.mkdtemp(prefix="mpior-events-", dir="/dev/shm")
    traces = os.path.join(b.work, "events")
    try:
        shutil.rmtree(traces, ignore_errors=True)
        b.run([b.exe("bench/event_loop"), n, shm], env=b.traced(MPIOR_TRACE_DIR=traces))
        b.run([b.post, traces])
        added, own, calls, untraced_call = [], [], [], []
        for i in range(rounds):
            got = {}
            for kind in ("untraced", "replay") if i % 2 == 0 else ("replay", "untraced"):
                b.settle(shm)
                if kind == "untraced":
                    got[kind] = elapsed(b.run([b.exe("bench/event_loop"), n, shm]))
                    continue
                report = os.path.join(b.work, "events.json")
                b.run([b.replay, "-q", "--io-only", "--fs", os.path.join(shm, "fs"), "--json", report,
                       os.path.join(traces, "plan")])
                with open(report) as f:
                    got[kind] = json.load(f)
            rep = got["replay"]
            rank = rep["per_rank"][0]
            events = max(1, rank["events"])
            added.append((rep["replay_s"] - got["untraced"]) / n * 1e9)
            own.append(rank["predicted"]["own_s"] / events * 1e9)
            calls.append(rank["predicted"]["io_s"] / events * 1e9)
            untraced_call.append(got["untraced"] / n * 1e9)
        table(f"replay cost per event: {n} 1-byte pwrites on tmpfs replayed with --io-only, minus the same loop "
              f"untraced ({rounds} rounds, paired, taking turns going first); the replay's own measure of its time "
              "around each call, and of the calls, against the untraced loop's time a call",
              ["median ns/event", "min", "max", "own ns/event (replay's measure)", "call ns (replayed)",
               "call ns (untraced loop)"],
              [[f"{statistics.median(added):.1f}", f"{min(added):.1f}", f"{max(added):.1f}",
                f"{statistics.median(own):.1f}", f"{statistics.median(calls):.1f}",
                f"{statistics.median(untraced_call):.1f}"]])
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(traces, ignore_errors=True)
