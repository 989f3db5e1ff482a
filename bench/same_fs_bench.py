"""bench.py section 'same_fs' (issue 13): each bundled program traced on the
build directory's file system and replayed there, by threads and by real MPI
processes (mpirun -n 2 mpior-replay --mpi): the replay's predicted time
against the traced run's time, medians of 3 (each from a trace of its own)."""
import json
import os
import shutil
import statistics


def replay_json(b, cmd, report, fs):
    b.settle(os.path.dirname(fs))
    b.run(cmd)
    with open(report) as f:
        return json.load(f)


def case(b, app, args, reps):
    """Medians over reps of (traced s, threads' replay s, MPI mode's replay s)."""
    exe = b.exe(f"bench/{app}") if app.endswith("_shape") else b.exe(f"test/apps/{app}")
    traced, threads, mpi = [], [], []
    for i in range(reps):
        d = b.fresh(f"same_fs{i}")
        traces, plan = os.path.join(d, "traces"), os.path.join(d, "traces", "plan")
        b.settle(d)
        b.run(["mpirun.mpich", "-n", "2", exe] + list(args), cwd=d, env=b.traced(MPIOR_TRACE_DIR=traces))
        b.run([b.post, traces])
        report = os.path.join(d, "report.json")
        fs = os.path.join(d, "fs-threads")
        r = replay_json(b, [b.replay, "-q", "--fs", fs, "--json", report, plan], report, fs)
        traced.append(r["traced_s"])
        threads.append(r["replay_s"])
        fs = os.path.join(d, "fs-mpi")
        r = replay_json(b, ["mpirun.mpich", "-n", "2", b.replay, "-q", "--mpi", "--fs", fs, "--json", report, plan],
                        report, fs)
        mpi.append(r["replay_s"])
        shutil.rmtree(d, ignore_errors=True)
    return statistics.median(traced), statistics.median(threads), statistics.median(mpi)


def same_fs(b, table, programs):
    reps = 2 if b.quick else 3
    rows, worst = [], 0.0
    load0 = os.getloadavg()[0]
    programs = [p for p in programs if len(p) == 3]  # the traced ones: same-fs needs no unpruned trace
    for app, args, _ in programs[:2] if b.quick else programs:
        t, th, mp = case(b, app, args, reps)
        e_th, e_mp, agree = (th - t) / t * 100, (mp - t) / t * 100, (mp - th) / th * 100
        worst = max(worst, abs(e_th), abs(e_mp))
        rows.append([app, " ".join(args), f"{t:.3f}", f"{th:.3f}", f"{e_th:+.1f}%", f"{mp:.3f}", f"{e_mp:+.1f}%",
                     f"{agree:+.1f}%", f"{os.getloadavg()[0]:.1f}"])
    table(f"replay on the file system traced on (the build directory's), 2 ranks, medians of {reps}: predicted "
          f"against the traced run's time, threads and MPI mode (load {load0:.2f} at start); worst error "
          f"{worst:.1f}% (target <= 5%)",
          ["program", "args", "traced s", "threads s", "error", "--mpi s", "error", "MPI vs threads", "load"], rows)
