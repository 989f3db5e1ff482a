"""bench.py section 'perturbation' (issue 13): how much longer a program runs traced than untraced, on the
build directory's file system, and which part of that the replay does not reproduce. A replay predicts the
program as it runs untraced (compute gaps leave the tracer's own time out), so where the traced run is longer
than the untraced one for reasons the tracer cannot see, the same-fs figure (predicted against traced) is off
by that much. Per round, after MPI_Init (start-up varies from launch to launch): an untraced run, one with the
tracer loaded and MPIOR_DISABLE=1 (its wrappers in the path, nothing recorded), a traced one (the trace's
timeline) and that trace's replay by threads. Each figure is the median of its paired ratios to the round's
untraced run."""
import json
import os
import shutil
import statistics

from fidelity_bench import error_pct as pct, lifetime_run, selected


def after_init(b, cmd, d, preload=None, env=None):
    """An untraced (or disabled) run in d: the slowest rank's MPI_Init return to its MPI_Finalize call."""
    b.settle(d)
    finalized, initialized = lifetime_run(b, cmd, d, preload, env)
    return max(f - i for f, i in zip(finalized, initialized))


def one_round(b, cmd, i):
    """(untraced, disabled, traced, replay) seconds after init, the first two taking turns going first."""
    d = b.fresh(f"perturbation{i}")
    runs = {}
    for kind in ("untraced", "disabled") if i % 2 == 0 else ("disabled", "untraced"):
        real = b.fresh(f"perturbation_real{i}")
        if kind == "untraced":
            runs[kind] = after_init(b, cmd, real)
        else:
            runs[kind] = after_init(b, cmd, real, b.lib, {"MPIOR_DISABLE": "1"})
        shutil.rmtree(real, ignore_errors=True)
    traces = os.path.join(d, "traces")
    b.settle(d)
    b.run(cmd, cwd=d, env=b.traced(MPIOR_TRACE_DIR=traces))
    b.run([b.post, "-q", traces])
    report, fs = os.path.join(d, "report.json"), os.path.join(d, "fs")
    b.settle(d)
    b.run([b.replay, "-q", "--fs", fs, "--json", report, os.path.join(traces, "plan")])
    with open(report) as f:
        r = json.load(f)
    shutil.rmtree(d, ignore_errors=True)
    return runs["untraced"], runs["disabled"], r["traced_after_startup_s"], r["after_startup_s"]


def perturbation(b, table, programs):
    rounds_per_row = 2 if b.quick else 10
    programs = [p for p in programs if len(p) == 2]  # the default tracer settings
    programs = selected(programs)
    load0 = os.getloadavg()[0]
    rows = []
    for app, args in programs[:2] if b.quick else programs:
        exe = b.exe(f"bench/{app}") if app.endswith("_shape") else b.exe(f"test/apps/{app}")
        cmd = ["mpirun.mpich", "-n", "2", exe] + list(args)
        rounds = [one_round(b, cmd, i) for i in range(rounds_per_row)]

        def paired(j, k=0):
            return statistics.median(pct(r[j], r[k]) for r in rounds)

        rows.append([app, " ".join(args), len(rounds), f"{statistics.median(r[0] for r in rounds):.3f}",
                     f"{paired(1):+.1f}%", f"{paired(2):+.1f}%", f"{paired(3):+.1f}%", f"{paired(3, 2):+.1f}%",
                     f"{os.getloadavg()[0]:.1f}"])
    table(f"perturbation, 2 ranks on the build directory's file system, after MPI_Init: a traced run against an "
          f"untraced one, and the tracer loaded with MPIOR_DISABLE=1 (wrappers only) against it; the traced "
          f"run's excess the replay does not reproduce (replay vs untraced near 0) is what its error against "
          f"the traced run is made of (medians of {rounds_per_row} rounds' paired ratios; load {load0:.2f} at "
          f"start)",
          ["program", "args", "rounds", "untraced s", "disabled vs untraced", "traced vs untraced",
           "replay vs untraced", "replay vs traced", "load"], rows)
