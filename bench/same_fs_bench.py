"""bench.py section 'same_fs' (issue 13): each bundled program traced on the
build directory's file system and replayed there, by threads and by real MPI
processes (mpirun -n 2 mpior-replay --mpi): the replay's predicted time
against the traced run's time: each replay's error against its own trace
(the paired error the 5% target is for), medians of 6 to 31 rounds;
and against an untraced run there before each trace (the span a trace
covers: load to MPI_Finalize), which the traced time exceeds wherever the
tracer's own time on one rank made another wait for it, or its work between
calls slowed the program's own (comm_split: a call every 0.6 us, +4 to +7%).
MPIOR_BENCH_PROGRAMS=serial_gather,comm_split runs only those programs' rows.
Every run and MPI-mode replay is launched with mpirun's -bind-to core, and
the threads' replay places its threads as the trace says (--bind auto);
MPIOR_BENCH_BIND=none runs all unbound (fidelity_bench.py says why bound:
unbound, MPICH's Barrier right after an fsync sometimes leaves a scheduler
tick (4 ms) late, when the fsync's wake-up put both processes on one core)."""
import itertools
import json
import os
import shutil
import statistics

from fidelity_bench import BIND, error_pct as pct, lifetime_run, median_se, selected


def replay_json(b, cmd, report, fs):
    b.settle(os.path.dirname(fs))
    b.run(cmd)
    with open(report) as f:
        return json.load(f)


def untraced_run(b, cmd, d):
    """An untraced run in d: the slowest rank's load to MPI_Finalize (bench/libmpior_lifetime.so)."""
    b.settle(d)
    return max(lifetime_run(b, cmd, d)[0])


def case(b, app, args, runs, precision):
    """Rounds of: an untraced run and a traced run (taking turns going first), the trace's replay by threads and
    by MPI mode. Each replay predicts its own trace's run, so its error is paired with it; at least runs[0]
    rounds, more until the median of each paired error (threads', MPI mode's, MPI mode against threads) has a
    standard error of at most precision points, or runs[1]. Returns per round (traced s, threads s, MPI mode s,
    untraced s) and the largest standard error."""
    exe = b.exe(f"bench/{app}") if app.endswith("_shape") else b.exe(f"test/apps/{app}")
    cmd = ["mpirun.mpich", *BIND, "-n", "2", exe] + list(args)
    rounds = []
    for i in itertools.count():
        d = b.fresh(f"same_fs{i}")
        traces, plan = os.path.join(d, "traces"), os.path.join(d, "traces", "plan")
        # Either run may pay for the other's 590 MB (serial_gather) freed on ext4 just before it: they take turns.
        for untraced in (True, False) if i % 2 == 0 else (False, True):
            if untraced:
                real = untraced_run(b, cmd, b.fresh(f"same_fs_real{i}"))
                shutil.rmtree(os.path.join(b.work, f"same_fs_real{i}"), ignore_errors=True)
            else:
                b.settle(d)
                b.run(cmd, cwd=d, env=b.traced(MPIOR_TRACE_DIR=traces))
        b.run([b.post, traces])
        report, fs = os.path.join(d, "report.json"), os.path.join(d, "fs")
        modes = {"threads": [b.replay], "mpi": ["mpirun.mpich", *BIND, "-n", "2", b.replay, "--mpi"]}
        got = {}
        # The modes take turns going first, each on an empty --fs: the second of a fixed order would meet the
        # first's files and their writeback.
        for mode in sorted(modes, reverse=i % 2 == 1):
            got[mode] = replay_json(b, modes[mode] + ["-q", "--fs", fs, "--json", report, plan], report, fs)
            shutil.rmtree(fs, ignore_errors=True)
        threads, mpi = got["threads"], got["mpi"]
        shutil.rmtree(d, ignore_errors=True)
        rounds.append((threads["traced_s"], threads["replay_s"], mpi["replay_s"], real))
        se = max(median_se([pct(th, t) for t, th, _, _ in rounds]), median_se([pct(mp, t) for t, _, mp, _ in rounds]),
                 median_se([pct(mp, th) for _, th, mp, _ in rounds]))
        if i + 1 >= runs[1] or (i + 1 >= runs[0] and se <= precision):
            return rounds, se


def same_fs(b, table, programs):
    runs, precision = ((2, 2) if b.quick else (6, 31)), 1.5
    rows, worst, worst_paired, worst_agree, worst_real, worst_mpi_real = [], 0.0, 0.0, 0.0, 0.0, 0.0
    load0 = os.getloadavg()[0]
    programs = selected([p for p in programs if len(p) == 2])  # the traced ones: same-fs needs no unpruned trace
    for app, args in programs[:2] if b.quick else programs:
        rounds, se = case(b, app, args, runs, precision)
        t, th, mp, real = (statistics.median(v) for v in zip(*rounds))
        paired_th = statistics.median(pct(r[1], r[0]) for r in rounds)
        paired_mp = statistics.median(pct(r[2], r[0]) for r in rounds)
        agree = statistics.median(pct(r[2], r[1]) for r in rounds)
        worst = max(worst, abs(pct(th, t)), abs(pct(mp, t)))
        worst_paired = max(worst_paired, abs(paired_th), abs(paired_mp))
        worst_agree, worst_real = max(worst_agree, abs(agree)), max(worst_real, abs(pct(th, real)))
        worst_mpi_real = max(worst_mpi_real, abs(pct(mp, real)))
        rows.append([app, " ".join(args), len(rounds), f"{se:.1f}", f"{t:.3f}", f"{th:.3f}", f"{pct(th, t):+.1f}%",
                     f"{paired_th:+.1f}%", f"{mp:.3f}", f"{pct(mp, t):+.1f}%", f"{paired_mp:+.1f}%", f"{agree:+.1f}%",
                     f"{real:.3f}", f"{pct(th, real):+.1f}%", f"{pct(mp, real):+.1f}%", f"{pct(t, real):+.1f}%",
                     f"{os.getloadavg()[0]:.1f}"])
    bound = f" (mpirun -bind-to {BIND[1]})" if BIND else ""
    table(f"replay on the file system traced on (the build directory's), 2 ranks{bound}: predicted against the traced "
          f"run's time, threads and MPI mode, medians of at least {runs[0]} rounds, more until each paired "
          f"error's standard error (se: the largest) is {precision} points or less, at most {runs[1]} (paired: the "
          f"median of each replay's error against its own trace; load {load0:.2f} at start); worst paired error "
          f"{worst_paired:.1f}% (target <= 5%: a replay predicts the run its own trace came from), of the "
          f"medians (traced and replayed runs of different rounds) {worst:.1f}%; MPI mode against threads worst "
          f"{worst_agree:.1f}%; against "
          f"untraced runs there (real s: load to MPI_Finalize), the threads' worst {worst_real:.1f}%, MPI mode's "
          f"{worst_mpi_real:.1f}%, and how far "
          f"the traced time itself was from them",
          ["program", "args", "runs", "se", "traced s", "threads s", "error", "paired", "--mpi s", "error", "paired",
           "MPI vs threads", "real s", "threads vs real", "MPI vs real", "traced vs real", "load"], rows)
