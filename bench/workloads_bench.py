"""bench.py section 'workloads' (issue 60): the replay's and mpior-predict's I/O time on the target against the
real one, on workloads as users run them: 2 ranks, unbound, no memory warmed before a run (only the file
system synced), ext4 (below the build directory) -> tmpfs (/dev/shm) and back. Rows: a checkpointing solver of
ours (test/apps/checkpoint_sim, always), and with MPIOR_BENCH_IOR=PREFIX (IOR's install prefix: PREFIX/bin/ior,
PREFIX/bin/mdtest, built apart: the project never vendors IOR) IOR file per process with fsync, IOR one shared
file through collective MPI-IO, and mdtest. Each row: REF traced runs on the reference, each beside a real
(traced) run on the target; then PREDICTIONS rounds of a real run and one mpior-predict --check of the REF plans
(its ratio prediction, and one full replay on the target). Errors are the medians' against the real runs'
median; the interval is the median prediction's. A second table replays each workload on the file system it
was traced on (ext4), unbound: each round's plan by threads and by MPI mode (mpirun -n 2 mpior-replay --mpi),
their I/O time against the traced run's own (the paired error the 5% goal is for). A row measured at a
1-minute load over BUSY_LOAD is flagged BUSY in its load column and named under its table."""
import json
import os
import shutil
import statistics

import predict_bench
from fidelity_bench import selected

REF = 3
PREDICTIONS = 3
SOLVER = ("solver", "checkpoint_sim", [60, 2000, 3, 524288],
          "checkpoint_sim: 60 steps of 2 ms, halo, allreduce; 20 checkpoints of 4 MiB a rank, pwrite + fsync")


def foreign(prefix):
    ior, md = os.path.join(prefix, "bin", "ior"), os.path.join(prefix, "bin", "mdtest")
    return [("ior_fpp", ior, ["-a", "POSIX", "-F", "-e", "-w", "-b", "256m", "-t", "1m", "-o", "ior.dat"],
             "IOR -a POSIX -F -e -w, 256 MiB a rank in 1 MiB writes, fsync"),
            ("ior_coll", ior, ["-a", "MPIIO", "-c", "-w", "-b", "256m", "-t", "1m", "-o", "ior.dat"],
             "IOR -a MPIIO -c -w, one shared file, 256 MiB a rank in 1 MiB collective writes"),
            ("mdtest", md, ["-n", "3000", "-w", "4096", "-e", "4096", "-d", "md"],
             "mdtest -n 3000 -w 4096 -e 4096: files and directories, 3000 a rank")]


def workloads():
    """The rows to run, and a sentence on the IOR/mdtest rows when they are skipped (empty when they run)."""
    prefix = os.environ.get("MPIOR_BENCH_IOR")
    if not prefix:
        return [SOLVER], ("ior_fpp, ior_coll, mdtest skipped: set MPIOR_BENCH_IOR to IOR's install prefix "
                          "(PREFIX/bin/ior, PREFIX/bin/mdtest; IOR is not part of mpior)")
    rows = foreign(prefix)
    missing = sorted({r[1] for r in rows if not os.access(r[1], os.X_OK)})
    if missing:
        return [SOLVER], f"ior_fpp, ior_coll, mdtest skipped: MPIOR_BENCH_IOR={prefix}: no {', '.join(missing)}"
    return [SOLVER] + rows, ""


# A row measured while the machine's 1-minute load was above this (other work beside it on 2 cores) is
# flagged in its table: its errors say as much about that work as about the prediction.
BUSY_LOAD = 2.0


def load_cell(loads):
    """The load range a row was measured at, flagged when over BUSY_LOAD."""
    cell = f"{min(loads):.1f}-{max(loads):.1f}"
    return cell + " BUSY" if max(loads) > BUSY_LOAD else cell


def busy_note(rows):
    busy = [" ".join(r[:2]) if "->" in r[1] else r[0] for r in rows if r[-1].endswith(" BUSY")]
    if busy:
        print(f"BUSY: measured at a load over {BUSY_LOAD:g} (other work on the machine): {', '.join(busy)}; "
              f"measure again on a quieter machine before reading their errors")


def pct(x, real):
    return (x - real) / real * 100 if real else float("nan")


def predictions(b):
    return 1 if b.quick else PREDICTIONS


def one_row(b, label, app, args, ref_fs, tgt_fs):
    ref_root, tgt_root = predict_bench.root_on(b, ref_fs), predict_bench.root_on(b, tgt_fs)
    plans, traced, real, preds, loads = [], [], [], [], [os.getloadavg()[0]]
    for i in range(REF):
        plan, t = predict_bench.traced_io(b, app, args, ref_root, f"reference{i}", warm=False)
        plans.append(plan)
        traced.append(t)
        real.append(predict_bench.traced_io(b, app, args, tgt_root, f"real{i}", warm=False)[1])
    for i in range(predictions(b)):
        real.append(predict_bench.traced_io(b, app, args, tgt_root, f"real{REF + i}", warm=False)[1])
        preds.append(predict_bench.predict_once(b, plans, ref_root, tgt_root, 3, warm=False,
                                                extra=("--check-repeat", "1")))
    loads.append(os.getloadavg()[0])
    for r in (ref_root, tgt_root):
        shutil.rmtree(r, ignore_errors=True)
    real_m = statistics.median(real)
    mid = sorted(preds, key=lambda p: p["predicted_io_s"])[len(preds) // 2]
    replay_m = statistics.median(p["check"]["replay_io_s"] for p in preds)
    low, high = mid["interval"]
    return [label, f"{ref_fs}->{tgt_fs}", f"{statistics.median(traced):.3f}", f"{real_m:.3f}",
            f"{min(real):.3f}-{max(real):.3f}", f"{replay_m:.3f}", f"{pct(replay_m, real_m):+.1f}%",
            f"{mid['predicted_io_s']:.3f}", f"{pct(mid['predicted_io_s'], real_m):+.1f}%",
            f"[{low:.3f}, {high:.3f}]", "yes" if low <= real_m <= high else "no",
            ",".join(map(str, mid["spread_over_20"])) or "-", load_cell(loads)]


def replay_io(b, cmd, plan, root):
    """The I/O time a replay predicts (summed over the ranks), replayed below root."""
    fs, report = os.path.join(root, "fs"), os.path.join(root, "replay.json")
    shutil.rmtree(fs, ignore_errors=True)
    predict_bench.settle(b, root, False)  # as before a traced run: no earlier removal's write-back meanwhile
    b.run(cmd + ["-q", "--fs", fs, "--json", report, plan])
    shutil.rmtree(fs, ignore_errors=True)
    with open(report) as f:
        return sum(t["predicted"]["io_s"] for t in json.load(f)["per_rank"])


def same_fs_row(b, label, app, args):
    """Rounds of a traced run on ext4 and its plan's replays there, by threads and by MPI mode (taking turns
    going first): each replay's error against its own trace; medians and ranges over the rounds."""
    root = predict_bench.root_on(b, "ext4")
    modes = {"threads": [b.replay], "mpi": ["mpirun.mpich", "-n", "2", b.replay, "--mpi"]}
    traced, errs, loads = [], {m: [] for m in modes}, [os.getloadavg()[0]]
    for i in range(predictions(b)):
        plan, t = predict_bench.traced_io(b, app, args, root, f"round{i}", warm=False)
        traced.append(t)
        for mode in sorted(modes, reverse=i % 2 == 1):
            errs[mode].append(pct(replay_io(b, modes[mode], plan, root), t))
    loads.append(os.getloadavg()[0])
    shutil.rmtree(root, ignore_errors=True)
    cells = [label, str(len(traced)), f"{statistics.median(traced):.3f}", f"{min(traced):.3f}-{max(traced):.3f}"]
    for m in modes:
        cells += [f"{statistics.median(errs[m]):+.1f}%", f"{min(errs[m]):+.1f} to {max(errs[m]):+.1f}%"]
    return cells + [load_cell(loads)]


def run(b, table):
    progs, skipped = workloads()
    if skipped:
        print(f"\nworkloads: {skipped}")
    rows = []
    for label, app, args, _ in selected(progs):
        for ref_fs, tgt_fs in (("ext4", "tmpfs"), ("tmpfs", "ext4")):
            rows.append(one_row(b, label, app, args, ref_fs, tgt_fs))
            print("  row: " + " | ".join(rows[-1]), flush=True)
    table(f"workloads: I/O time on the target (s, summed over 2 ranks), unbound, no memory warm-up; real: median "
          f"of {REF + predictions(b)} traced runs there; replay (mpior-predict --check) and ratio prediction: "
          f"median of {predictions(b)}, each from {REF} traced runs on the reference; goals: replay within 5%, "
          f"ratio within 10% with its interval holding the real time; " + "; ".join(f"{p[0]}: {p[3]}" for p in progs),
          ["workload", "direction", "traced on ref", "real on target", "real range", "replay", "replay error",
           "ratio-predicted", "ratio error", "interval", "holds real", "rsd>20% (classes)", "load (1 min)"], rows)
    busy_note(rows)
    same = []
    for label, app, args, _ in selected(progs):
        same.append(same_fs_row(b, label, app, args))
        print("  same fs: " + " | ".join(same[-1]), flush=True)
    table(f"workloads replayed on the file system traced on (ext4), unbound, no memory warm-up: each round's "
          f"plan replayed by threads and by MPI mode, the predicted I/O time (summed over 2 ranks) against the "
          f"traced run's own; medians of {predictions(b)} rounds and the range; goal: within 5%",
          ["workload", "rounds", "traced I/O s", "traced range", "threads error", "threads range", "--mpi error",
           "--mpi range", "load (1 min)"], same)
    busy_note(same)
