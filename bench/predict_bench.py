"""bench.py section 'predict' (issues 17, 60): mpior-predict's ratio prediction and
its --check replay against the real I/O time on the target (a traced run
there, summary.json time.io_s), ext4 (below the build directory) -> tmpfs
(/dev/shm) and back, for a program of large checkpoints with fsync, one of
many small writes with a barrier after each, an IOR-like file per process
with fsync and an mdtest-like create/stat/unlink of small files (io_shapes);
with MPIOR_BENCH_IOR=DIR (IOR's install prefix: DIR/bin/ior, DIR/bin/mdtest,
built apart, never in the repository) also IOR (file per process, and one shared
file through collective MPI-IO) and mdtest themselves. Unbound,
as users run. Medians of 3 predictions, each
from the same 3 traced runs on the reference (their median: one traced run is
one draw of the reference's run-to-run spread), against the median of 7 real runs
(the real I/O time of a short I/O phase varies a lot from run to run; the
range shows it; "paired": the median of each prediction's error against the
real run just before it). --check replays the plan 3 times on the target;
their spread widens the interval."""
import json
import os
import shutil
import statistics

import settle as settle_mod
from fidelity_bench import selected

FILESYSTEMS = {"ext4": None, "tmpfs": "/dev/shm"}  # None: below the build directory
# Enough I/O that the time measured is tens of milliseconds or more, not a few: one stall of a few ms would
# otherwise move a run by tens of percent.
# (row, program below test/apps or an absolute path, its arguments, what it does)
PROGRAMS = (("checkpoint_sim", "checkpoint_sim", [200, 0, 2, 524288], "100 x 4 MiB pwrite + fsync + barrier"),
            ("nton_barrier", "nton_barrier", [4000, 16384], "4000 x 16 KiB write + barrier"),
            ("ior_like", "io_shapes", ["ior", 256, 1048576], "file per process, 256 x 1 MiB pwrite + fsync"),
            ("mdtest_like", "io_shapes", ["md", 3000, 4096], "3000 files of 4 KiB a rank: create, stat, unlink"))


def programs():
    """PROGRAMS, and IOR's and mdtest's rows where MPIOR_BENCH_IOR names their install prefix."""
    rows = list(PROGRAMS)
    ior = os.environ.get("MPIOR_BENCH_IOR")
    if ior:
        rows += [("ior", os.path.join(ior, "bin", "ior"), ["-a", "POSIX", "-F", "-e", "-b", "256m", "-t", "1m",
                                                            "-w", "-o", "ior.dat"], "IOR -F -e, 256 MiB a rank"),
                 # One shared file through collective MPI-IO (ROMIO's two-phase writes, MPI_File_sync): its
                 # pwrites scaled by their job's ratio, the collective's waits by that of the calls they were in.
                 ("ior_coll", os.path.join(ior, "bin", "ior"), ["-a", "MPIIO", "-c", "-e", "-b", "256m", "-t",
                                                                 "1m", "-w", "-o", "iorc.dat"],
                  "IOR -a MPIIO -c -e, one shared file, 256 MiB a rank"),
                 ("mdtest", os.path.join(ior, "bin", "mdtest"), ["-n", "3000", "-w", "4096", "-e", "4096", "-F",
                                                                  "-d", "md"], "mdtest -F -n 3000, 4 KiB files")]
    return rows
RANKS = 2
REAL_REPS = 7
TRACED_REPS = 3  # traced runs on the reference, predicted together (mpior-predict PLAN PLAN PLAN: their median)


def root_on(b, fs):
    """A new directory on fs for this run alone (Bench.scratch)."""
    return b.scratch(FILESYSTEMS[fs] or b.build, f"predict-bench-{fs}")


def settle(b, root, warm):
    """Before a measured run: the file system synced, and with warm memory touched too (Bench.settle); without,
    as a user's run finds the machine."""
    if warm:
        b.settle(root)
    else:
        settle_mod.sync_fs(root)


def traced_io(b, app, args, root, name, warm=True):
    """One traced run with its working directory below root: the plan and time.io_s. app: below test/apps or
    an absolute path."""
    d = os.path.join(root, name)
    shutil.rmtree(d, ignore_errors=True)
    work, traces = os.path.join(d, "work"), os.path.join(d, "traces")
    os.makedirs(work)
    settle(b, root, warm)  # no earlier run's dirty pages written back meanwhile
    exe = app if os.path.isabs(app) else b.exe(f"test/apps/{app}")
    b.run(["mpirun.mpich", "-n", RANKS, exe] + args, cwd=work,
          env=b.traced(MPIOR_TRACE_DIR=traces))
    b.run([b.post, traces])
    shutil.rmtree(work)
    plan = os.path.join(traces, "plan")
    with open(os.path.join(plan, "summary.json")) as f:
        return plan, json.load(f)["time"]["io_s"]


def predict_once(b, plans, ref_root, tgt_root, reps, warm=True, extra=()):
    ref, tgt = os.path.join(ref_root, "pref"), os.path.join(tgt_root, "ptgt")
    for d in (ref, tgt):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    settle(b, tgt_root, warm)
    out = os.path.join(b.work, "predict", "report.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    b.run([b.exe("predict/mpior-predict"), "--reference", ref, "--target", tgt, "--json", out, "--check",
           "--repeat", reps, "--job-seconds", "0.5", *extra] + plans)
    with open(out) as f:
        return json.load(f)


def predict(b):
    """Ratio-predicted and replay-predicted I/O time against the real one on the target."""
    reps = 3
    rows = []
    for label, app, args, what in selected(programs()):
        for ref_fs, tgt_fs in (("ext4", "tmpfs"), ("tmpfs", "ext4")):
            ref_root, tgt_root = root_on(b, ref_fs), root_on(b, tgt_fs)
            real, preds, traced, plans, loads = [], [], [], [], []
            for i in range(TRACED_REPS):  # the reference's traced runs, each beside a real run on the target
                plan, t = traced_io(b, app, args, ref_root, f"reference{i}")
                plans.append(plan)
                traced.append(t)
                real.append(traced_io(b, app, args, tgt_root, f"real{i}")[1])
            for i in range(reps):  # each prediction from all the traced runs, beside a real run of its own
                loads.append(os.getloadavg()[0])  # the 1-minute load average before each prediction and at the end
                real.append(traced_io(b, app, args, tgt_root, f"real{TRACED_REPS + i}")[1])
                preds.append(predict_once(b, plans, ref_root, tgt_root, 5 if not b.quick else 2))
            paired_real = real[TRACED_REPS:]
            for i in range(TRACED_REPS + reps, REAL_REPS if not b.quick else TRACED_REPS + reps):
                real.append(traced_io(b, app, args, tgt_root, f"real{i}")[1])
            loads.append(os.getloadavg()[0])
            real_m, traced = statistics.median(real), statistics.median(traced)
            mid = sorted(preds, key=lambda p: p["predicted_io_s"])[len(preds) // 2]
            ratio_m, replay_m = mid["predicted_io_s"], statistics.median(p["check"]["replay_io_s"] for p in preds)
            low, high = mid["interval"]
            err = (ratio_m - real_m) / real_m * 100
            rerr = (replay_m - real_m) / real_m * 100
            # Each prediction against the real run just before it (this machine's file systems drift by tens of
            # percent over minutes: the same prediction's error moved -27% to +18% from one run to the next).
            paired = statistics.median((p["predicted_io_s"] - r) / r * 100 for p, r in zip(preds, paired_real))
            rows.append([label, f"{ref_fs}->{tgt_fs}", f"{traced:.4f}", f"{real_m:.4f}",
                         f"{min(real):.4f}-{max(real):.4f}", f"{ratio_m:.4f}", f"{err:+.1f}%",
                         f"{paired:+.1f}%", f"[{low:.4f}, {high:.4f}]", "yes" if low <= real_m <= high else "no",
                         "yes" if abs(err) <= 10 else "no", f"{mid['interval_width'] * 100:.0f}%",
                         ",".join(map(str, mid["spread_over_20"])) or "-",
                         f"{mid['unmeasured_s'] / mid['traced_io_s'] * 100 if mid['traced_io_s'] else 0:.1f}%",
                         f"{mid['fio_target_rel_sd'] * 100:.0f}%",
                         f"{mid.get('target_rel_sd', 0) * 100:.0f}%", f"{replay_m:.4f}", f"{rerr:+.1f}%",
                         f"{min(loads):.1f}-{max(loads):.1f}"])
            print("  row: " + " | ".join(rows[-1]), flush=True)  # as it comes: a section of rows takes long
            for r in (ref_root, tgt_root):
                shutil.rmtree(r, ignore_errors=True)
    return rows, reps


def print_table(table, rows, reps, load0=None):
    load = f"load {load0:.2f} at start, {os.getloadavg()[0]:.2f} at end; " if load0 is not None else ""
    table(f"mpior-predict: I/O time on the target, {RANKS} ranks, summed over ranks (s; predictions: medians of "
          f"{reps}, each from the same {TRACED_REPS} traced runs on the reference (their median), real: of {REAL_REPS}; replay-predicted: full replays (--check); {load}"
          + "; ".join(f"{p[0]}: {p[3]}" for p in programs()) + ")",
          ["program", "ref->target", "traced on ref", "real on target", "real range", "ratio-predicted", "error",
           "paired", "interval", "holds real", "<=10%", "width", "rsd>20% (classes)", "unmeasured",
           "target spread (fio)", "(replays)", "replay-predicted", "error", "load (1 min) during"], rows)
