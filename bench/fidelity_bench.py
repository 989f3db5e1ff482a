"""bench.py section 'fidelity' (issue 13): each bundled program traced on the build directory's file system and
replayed on a tmpfs, and the reverse, against untraced runs on the target; and the replay's own cost per event."""
import json
import os
import shutil
import statistics
import tempfile


def lifetimes(path, what):
    with open(path) as f:
        return [int(line.split()[1]) / 1e9 for line in f if line.startswith(what)]



# checkpoint_sim: steps, compute us, checkpoint (pwrite + fsync + barrier) every, cells per rank. The others
# run 0.3-0.5 s idle (iterations, block), so start-up (launch to MPI_Init's return: 35-70 ms, varying from
# launch to launch) is not most of the time: at 4000 iterations nton_barrier's real runs were 60% start-up and
# spread 15%; comm_split at 24000 ran 0.08 s, 45% start-up. Each run writes at most 500 MB, less than the
# memory touched before it (FIDELITY_WARM_MIB): comm_split writing 1 GB to a tmpfs replayed in 0.28-0.46 s
# with 512 MiB touched first, 0.30 s with 2 GiB. This machine's speed drifts by 10-20% over minutes (a VM:
# 15 real nton_barrier runs spread 0.16-0.22 s and their median moved 5% from one batch of 15 to the next):
# 7 runs each, 9 for the programs mostly waiting in collectives, and beside the medians each replay against
# the real run just before it.
# A fourth element: the tracer's environment. checkpoint_sim traced on ext4 spends 8-16% of its time in pruned
# Allreduces waiting for the other rank (the replay warns: that waiting is replayed as compute on any target),
# so it is traced again with MPIOR_PRUNE=0, as the README advises for predicting another file system.
FIDELITY_PROGRAMS = (("checkpoint_sim", ["40", "10000", "5", "262144"], 7),
            ("checkpoint_sim", ["40", "10000", "5", "262144"], 7, {"MPIOR_PRUNE": "0"}),
            ("checkpoint_sim", ["100", "3000", "10", "65536"], 7), ("lammps_shape", [], 7),
            ("pseudo_shape", [], 7), ("nton_barrier", ["100000", "2048"], 9), ("nto1", ["150000", "1024"], 7),
            ("serial_gather", ["9000", "4096"], 9), ("comm_split", ["120000", "2048"], 9))
FIDELITY_WARM_MIB = 1024


def fidelity_case(b, exe, args, ranks, src, dst, reps, tracer_env):
    """Medians of reps: the replay's prediction on dst of a trace made on src, and the real untraced run on dst
    over the span a trace covers (each rank from load to its MPI_Finalize call; the slowest rank); the same
    after start-up (from MPI_Init's return: the launch and MPI_Init took 15-70 ms, varying from launch to
    launch, a third of a 0.1 s program); and the median of the paired errors (each replay against the real
    run just before it)."""
    pred, real, pred_after, real_after = [], [], [], []
    lib = b.exe("bench/libmpior_lifetime.so")
    cmd = ["mpirun.mpich", "-n", ranks, exe] + list(args)
    for i in range(reps):  # interleaved: real run, traced run, replay
        wd = os.path.join(dst, f"real{i}")
        shutil.rmtree(wd, ignore_errors=True)
        os.makedirs(wd)
        life = os.path.join(wd, "lifetime")
        b.settle(dst, FIDELITY_WARM_MIB)
        b.run(cmd, cwd=wd, env={"LD_PRELOAD": lib, "MPIOR_LIFETIME_FILE": life})
        spans, inits = lifetimes(life, "finalize_ns"), lifetimes(life, "init_ns")
        real.append(max(spans))
        real_after.append(max(s - i for s, i in zip(spans, inits)))
        shutil.rmtree(wd, ignore_errors=True)
        tw = os.path.join(src, f"trace{i}")
        shutil.rmtree(tw, ignore_errors=True)
        os.makedirs(tw)
        traces = os.path.join(tw, "traces")
        b.settle(src, FIDELITY_WARM_MIB)
        b.run(cmd, cwd=tw, env=b.traced(MPIOR_TRACE_DIR=traces, **tracer_env))
        b.run([b.post, traces])
        fs, report = os.path.join(dst, f"replay{i}"), os.path.join(tw, "report.json")
        shutil.rmtree(fs, ignore_errors=True)
        b.settle(dst, FIDELITY_WARM_MIB)
        b.run([b.replay, "-q", "--fs", fs, "--json", report, os.path.join(traces, "plan")])
        with open(report) as f:
            rep = json.load(f)
        pred.append(rep["replay_s"])
        pred_after.append(rep["after_startup_s"])
        shutil.rmtree(fs, ignore_errors=True)
        shutil.rmtree(tw, ignore_errors=True)
    paired = statistics.median((p - r) / r * 100 for p, r in zip(pred, real))
    return {"pred": statistics.median(pred), "real": statistics.median(real), "spread": spread_pct(real),
            "pred_spread": spread_pct(pred), "paired": paired, "pred_after": statistics.median(pred_after),
            "real_after": statistics.median(real_after), "spread_after": spread_pct(real_after)}


def spread_pct(values):
    """Range over median, in percent: how far one run can be from another."""
    return (max(values) - min(values)) / statistics.median(values) * 100


def fidelity(b, table, elapsed):
    """Prediction against reality (issue 13): each program traced on the build directory's file system and
    replayed on a tmpfs, and the reverse, against untraced runs on the target (medians of 7, of 9 for the
    programs whose real runs spread most; and the median of the paired errors); and what the replay adds per
    replayed event.
    MPIOR_BENCH_PROGRAMS=serial_gather,comm_split runs only those programs' rows."""
    disk = os.path.join(b.build, "fidelity-work")
    shm = tempfile.mkdtemp(prefix="mpior-fidelity-", dir="/dev/shm")
    programs = FIDELITY_PROGRAMS
    if b.quick:
        programs = programs[:2]
    only = [p for p in os.environ.get("MPIOR_BENCH_PROGRAMS", "").split(",") if p]
    programs = [p for p in programs if not only or p[0] in only]
    rows, worst, worst_paired, worst_after = [], 0.0, 0.0, 0.0
    load0 = os.getloadavg()[0]
    try:
        for app, args, reps, *env in programs:
            tracer_env = env[0] if env else {}
            exe = b.exe(f"bench/{app}") if app.endswith("_shape") else b.exe(f"test/apps/{app}")
            for src, dst, name in ((disk, shm, "disk -> tmpfs"), (shm, disk, "tmpfs -> disk")):
                os.makedirs(src, exist_ok=True)
                os.makedirs(dst, exist_ok=True)
                c = fidelity_case(b, exe, args, 2, src, dst, reps, tracer_env)
                err = (c["pred"] - c["real"]) / c["real"] * 100
                after = (c["pred_after"] - c["real_after"]) / c["real_after"] * 100
                worst, worst_paired = max(worst, abs(err)), max(worst_paired, abs(c["paired"]))
                worst_after = max(worst_after, abs(after))
                rows.append([app, " ".join(args + [f"{k}={v}" for k, v in tracer_env.items()]), name, reps,
                             f"{c['pred']:.3f}", f"{c['real']:.3f}",
                             f"{c['spread']:.1f}%", f"{c['pred_spread']:.1f}%", f"{err:+.1f}%", f"{c['paired']:+.1f}%",
                             f"{c['pred_after']:.3f}", f"{c['real_after']:.3f}", f"{c['spread_after']:.1f}%",
                             f"{after:+.1f}%", f"{os.getloadavg()[0]:.1f}"])
        table(f"replay fidelity, 2 ranks: predicted (replay of a trace from the other file system) against the "
              f"real untraced run on the target, load to MPI_Finalize as a trace covers it (medians of runs; "
              f"spreads: range / median; load {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end); "
              f"worst error {worst:.1f}% (target <= 5%), of the paired errors {worst_paired:.1f}% (paired: the "
              f"median of each replay's error against the real run beside it); after start-up (from MPI_Init's "
              f"return) worst error {worst_after:.1f}%",
              ["program", "args", "traced -> target", "runs", "predicted s", "real s", "real spread", "pred spread",
               "error", "paired", "after init: pred s", "real s", "real spread", "error", "load"], rows)
    finally:
        shutil.rmtree(shm, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)
    replay_event_cost(b, table, elapsed)


def replay_event_cost(b, table, elapsed):
    """The replay's own cost per event: N 1-byte pwrites on tmpfs, replayed with --io-only, against the same
    loop untraced."""
    n = 200000 if b.quick else 1000000
    shm = tempfile.mkdtemp(prefix="mpior-events-", dir="/dev/shm")
    try:
        per = []
        for i in range(3):
            untraced = elapsed(b.run([b.exe("bench/event_loop"), n, shm]))
            traces = os.path.join(b.work, f"events{i}")
            shutil.rmtree(traces, ignore_errors=True)
            b.run([b.exe("bench/event_loop"), n, shm], env=b.traced(MPIOR_TRACE_DIR=traces))
            b.run([b.post, traces])
            report = os.path.join(b.work, "events.json")
            b.run([b.replay, "-q", "--io-only", "--fs", os.path.join(shm, "fs"), "--json", report,
                   os.path.join(traces, "plan")])
            with open(report) as f:
                per.append((json.load(f)["replay_s"] - untraced) / n * 1e9)
        table(f"replay cost per event: {n} 1-byte pwrites on tmpfs replayed with --io-only, minus the same loop "
              "untraced (3 runs)", ["median ns/event", "min", "max"],
              [[f"{statistics.median(per):.1f}", f"{min(per):.1f}", f"{max(per):.1f}"]])
    finally:
        shutil.rmtree(shm, ignore_errors=True)
