"""bench.py section 'same_fs' (issue 13): each bundled program traced on the
build directory's file system and replayed there, by threads and by real MPI
processes (mpirun -n 2 mpior-replay --mpi): the replay's predicted time
against the traced run's time, medians of 3 (each from a trace of its own);
and against an untraced run there before each trace (the span a trace
covers: load to MPI_Finalize), which the traced time exceeds wherever the
tracer's own time on one rank made another wait for it."""
import json
import os
import shutil
import statistics


def replay_json(b, cmd, report, fs):
    b.settle(os.path.dirname(fs))
    b.run(cmd)
    with open(report) as f:
        return json.load(f)


def untraced_run(b, cmd, d):
    """An untraced run in d: the slowest rank's load to MPI_Finalize (bench/libmpior_lifetime.so)."""
    import fidelity_bench
    life = os.path.join(d, "lifetime")
    b.settle(d)
    b.run(cmd, cwd=d, env={"LD_PRELOAD": b.exe("bench/libmpior_lifetime.so"), "MPIOR_LIFETIME_FILE": life})
    return max(fidelity_bench.lifetimes(life, "finalize_ns"))


def case(b, app, args, reps):
    """Medians over reps of (traced s, threads' replay s, MPI mode's replay s, untraced s)."""
    exe = b.exe(f"bench/{app}") if app.endswith("_shape") else b.exe(f"test/apps/{app}")
    cmd = ["mpirun.mpich", "-n", "2", exe] + list(args)
    traced, threads, mpi, real = [], [], [], []
    for i in range(reps):
        d = b.fresh(f"same_fs{i}")
        real.append(untraced_run(b, cmd, b.fresh(f"same_fs_real{i}")))
        shutil.rmtree(os.path.join(b.work, f"same_fs_real{i}"), ignore_errors=True)
        traces, plan = os.path.join(d, "traces"), os.path.join(d, "traces", "plan")
        b.settle(d)
        b.run(cmd, cwd=d, env=b.traced(MPIOR_TRACE_DIR=traces))
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
    return tuple(statistics.median(v) for v in (traced, threads, mpi, real))


def same_fs(b, table, programs):
    reps = 2 if b.quick else 3
    rows, worst, worst_real = [], 0.0, 0.0
    load0 = os.getloadavg()[0]
    programs = [p for p in programs if len(p) == 2]  # the traced ones: same-fs needs no unpruned trace
    for app, args in programs[:2] if b.quick else programs:
        t, th, mp, real = case(b, app, args, reps)
        e_th, e_mp, agree = (th - t) / t * 100, (mp - t) / t * 100, (mp - th) / th * 100
        worst = max(worst, abs(e_th), abs(e_mp))
        worst_real = max(worst_real, abs(th - real) / real * 100)
        rows.append([app, " ".join(args), f"{t:.3f}", f"{th:.3f}", f"{e_th:+.1f}%", f"{mp:.3f}", f"{e_mp:+.1f}%",
                     f"{agree:+.1f}%", f"{real:.3f}", f"{(th - real) / real * 100:+.1f}%",
                     f"{(t - real) / real * 100:+.1f}%", f"{os.getloadavg()[0]:.1f}"])
    table(f"replay on the file system traced on (the build directory's), 2 ranks, medians of {reps}: predicted "
          f"against the traced run's time, threads and MPI mode (load {load0:.2f} at start); worst error "
          f"{worst:.1f}% (target <= 5%); against untraced runs there (real s: load to MPI_Finalize), the threads' "
          f"worst {worst_real:.1f}%, and how far the traced time itself was from them",
          ["program", "args", "traced s", "threads s", "error", "--mpi s", "error", "MPI vs threads", "real s",
           "threads vs real", "traced vs real", "load"], rows)
