#!/usr/bin/env python3
"""mpior's benchmarks: the figures the issues ask for, one table each.
scripts/bench.sh builds a release tree and runs this; run it directly as
  bench.py BUILD_DIR [--quick] [--only SECTION ...]
Sections: calls, overhead, families, latency, sizes, builder, merge, apps, replay, mpiio, lammps, fidelity, predict,
workloads, memory, merge_job, merge_tree, flush, extrap_ior, extrap_hdf5.
Every ratio is traced against untraced on the same machine in the same
session, interleaved, medians of repetitions: the machine's noise shows in
the spread column where there is one."""
import argparse
import atexit
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import settle


class Bench:
    def __init__(self, build, quick):
        self.build = os.path.abspath(build)
        self.quick = quick
        self.lib = os.path.join(self.build, "preload", "libmpior.so")
        # The Open MPI tracer, when the build has it (Open MPI installed).
        self.lib_ompi = os.path.join(self.build, "preload", "libmpior-openmpi.so")
        self.has_ompi = os.path.exists(self.lib_ompi) and shutil.which("mpirun.openmpi") is not None
        self.post = os.path.join(self.build, "postproc", "mpior-post")
        self.replay = os.path.join(self.build, "replayer", "mpior-replay")
        self.work = tempfile.mkdtemp(prefix="mpior-bench-")

    def scratch(self, parent, name):
        """A new directory below parent for this run alone (two benches at once must not share one), removed
        when the bench exits."""
        d = tempfile.mkdtemp(prefix=f"mpior-{name}-", dir=parent)
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        return d

    def exe(self, rel):
        return os.path.join(self.build, rel)

    def run(self, cmd, env=None, cwd=None):
        full = dict(os.environ)
        full.update(env or {})
        p = subprocess.run([str(c) for c in cmd], env=full, cwd=cwd or self.work, capture_output=True, text=True,
                           timeout=900)
        if p.returncode != 0:
            sys.exit(f"bench: {' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        return p.stdout + p.stderr

    def traced(self, lib=None, **env):
        base = {"LD_PRELOAD": lib or self.lib, "MPIOR_TRACE_DIR": os.path.join(self.work, "traces")}
        base.update({k: str(v) for k, v in env.items()})
        return base

    def settle(self, directory, mib=settle.WARM_MIB):
        """Before a measured run: see settle.settle()."""
        settle.settle(directory, mib)

    def fresh(self, name):
        d = os.path.join(self.work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d


def table(title, header, rows):
    print(f"\n== {title}")
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    for r in [header] + rows:
        print("  ".join(str(x).rjust(w) if i else str(x).ljust(w) for i, (x, w) in enumerate(zip(r, widths))))


def overhead(b):
    """Added ns per call, write/pwrite/fwrite/fprintf, at several call-site stack depths."""
    rows = []
    calls = 200000 if b.quick else 1000000
    for depth in (1, 2, 4, 8):
        out = b.run([b.exe("bench/tracer_overhead"), calls, 5, b.work], env=b.traced(MPIOR_STACK_DEPTH=depth))
        added = {m.group(1): m.group(2) for m in re.finditer(r"^(\w+) 1 B\s+\S+\s+\S+\s+(\S+)$", out, re.M)}
        rows.append(["libmpior.so", depth] + [added.get(f, "?") for f in ("write", "pwrite", "fwrite", "fprintf")])
    if b.has_ompi:  # the same calls through the Open MPI build of the tracer
        for depth in (1, 2):
            out = b.run([b.exe("bench/tracer_overhead"), calls, 5, b.work],
                        env=b.traced(lib=b.lib_ompi, MPIOR_STACK_DEPTH=depth))
            added = {m.group(1): m.group(2) for m in re.finditer(r"^(\w+) 1 B\s+\S+\s+\S+\s+(\S+)$", out, re.M)}
            rows.append(["libmpior-openmpi.so", depth] + [added.get(f, "?") for f in ("write", "pwrite", "fwrite",
                                                                                       "fprintf")])
    table(f"tracer overhead: added ns per 1-byte call ({calls} calls x 5, traced vs untraced in one run)",
          ["tracer", "MPIOR_STACK_DEPTH", "write", "pwrite", "fwrite", "fprintf"], rows)


CALLS = ("pwrite", "write", "fwrite", "fprintf", "stat")


def call_instructions(b, call, env):
    """Instructions per call under callgrind: the difference between runs of two call counts, so start-up and
    exit drop out; the process's threads all count (the flush thread's share too). Debian's `valgrind` is a
    shell script: traced, the shell would make the program a child of its trace (which flushes from a thread);
    its launcher valgrind.bin, untraced, leaves the program traced as the standalone program it is."""
    launcher = shutil.which("valgrind.bin") or "valgrind"
    env = {**env, "MPIOR_EXCLUDE_EXE": "valgrind*"} if "LD_PRELOAD" in env else env
    counts = []
    for n in (20000, 60000):
        p = subprocess.run([launcher, "--tool=callgrind", "--callgrind-out-file=/dev/null",
                            b.exe("bench/tracer_overhead"), str(n), "1", b.work, "alone", call],
                           env={**os.environ, **env}, cwd=b.work, capture_output=True, text=True, timeout=900)
        m = re.search(r"Collected : (\d+)", p.stderr)
        if p.returncode != 0 or not m:
            sys.exit(f"bench: callgrind of {call} failed ({p.returncode}):\n{p.stderr[-2000:]}")
        counts.append(int(m.group(1)))
    return (counts[1] - counts[0]) / 40000


def calls(b):
    """Added ns and instructions per 1-byte call (issue 61): untraced, traced with the defaults (crash safety
    and periodic flushing on) and with MPIOR_FLUSH_INTERVAL=0, each in its own process (a thread the tracer
    starts changes libc's own cost), medians of interleaved runs; instructions per call from callgrind."""
    n, reps = (100000, 3) if b.quick else (300000, 5)
    configs = {"untraced": {}, "default": b.traced(), "interval 0": b.traced(MPIOR_FLUSH_INTERVAL=0)}
    ns = {c: {k: [] for k in CALLS} for c in configs}
    for _ in range(reps):
        for c, env in configs.items():
            out = b.run([b.exe("bench/tracer_overhead"), n, 1, b.work, "alone"], env=env)
            for m in re.finditer(r"^(\w+) (?:1 B|path)\s+(\S+)$", out, re.M):
                ns[c][m.group(1)].append(float(m.group(2)))
    have_vg = shutil.which("valgrind") is not None
    rows = []
    for k in CALLS:
        med = {c: statistics.median(ns[c][k]) for c in configs}
        spread = max(max(ns[c][k]) - min(ns[c][k]) for c in configs)
        ins = {c: call_instructions(b, k, env) for c, env in configs.items()} if have_vg else {}
        row = [k, f"{med['untraced']:.1f}"]
        for c in ("default", "interval 0"):
            row += [f"{med[c]:.1f}", f"{med[c] - med['untraced']:+.1f}",
                    f"{ins[c] - ins['untraced']:+.0f}" if ins else "-"]
        rows.append(row + [f"{spread:.1f}", f"{ins['untraced']:.0f}" if ins else "-"])
    table(f"tracer cost per 1-byte call, stat of the file by its absolute path ({n} calls, medians of {reps} interleaved runs; instr = callgrind "
          f"instructions added per call; load {os.getloadavg()[0]:.2f})",
          ["call", "untraced ns", "default ns", "added", "instr", "MPIOR_FLUSH_INTERVAL=0 ns", "added", "instr",
           "spread ns", "untraced instr"], rows)


def families(b):
    """Added ns per AIO round, getline, fwrite_unlocked, msync of 1 MiB with a page written (the tracer asks the
    kernel what is dirty), a libaio io_submit + io_getevents round (issue 18)."""
    calls = 20000 if b.quick else 100000
    out = b.run([b.exe("bench/family_overhead"), calls, 5, b.work], env=b.traced())
    rows = [[m.group(1).strip(), m.group(2), m.group(3), m.group(4)]
            for m in re.finditer(r"^(.{12}) +(\S+) +(\S+) +(-?\d+\.\d+)$", out, re.M)]
    table(f"tracer overhead, more families: added ns per call ({calls} calls x 5, traced vs untraced in one run)",
          ["call", "untraced ns", "traced ns", "added ns"], rows)


def latency(b):
    """MPI latency traced against untraced, pruning on and off, under MPICH and Open MPI. Each figure is the
    median over several launches (each a median of repetitions): where the two ranks land on this machine's
    cores moves a round trip by up to 1 us between launches, more than the tracer adds."""
    iters = 2000 if b.quick else 10000
    launches = 2 if b.quick else 5
    rows = []
    runs = [("MPICH", ["mpirun.mpich", "-n", 2], "bench/mpi_latency", b.lib)]
    if b.has_ompi:
        runs.append(("Open MPI", openmpi_run(2), "bench/mpi_latency_openmpi", b.lib_ompi))
    for mpi, launcher, exe, lib in runs:
        results = {}
        for _ in range(launches):
            for prune in ("1", "0"):
                out = b.run(launcher + [b.exe(exe), iters, 5], env=b.traced(lib=lib, MPIOR_PRUNE=prune))
                for m in re.finditer(r"^(.+?)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(-?\d+\.\d+)\s+(\d+\.\d+)$", out, re.M):
                    results.setdefault(m.group(1).strip(), {}).setdefault(prune, []).append(
                        tuple(float(m.group(i)) for i in (2, 3, 4)))
        for op, r in results.items():
            on, off = r["1"], r["0"]
            med = lambda xs, i: f"{statistics.median(x[i] for x in xs):.2f}"
            spread = lambda xs: f"{min(x[2] for x in xs):.2f}-{max(x[2] for x in xs):.2f}"
            rows.append([mpi, op, med(on, 0), med(on, 1), med(on, 2), spread(on), med(off, 1), med(off, 2)])
    table(f"MPI latency, 2 ranks, us per operation ({iters} x 5 per launch, medians of {launches} launches; "
          f"Comm_dup + Comm_free {iters // 10} x 5)",
          ["MPI", "operation", "untraced", "pruning on", "added", "added range", "pruning off", "added"], rows)


def openmpi_run(ranks):
    """mpirun.openmpi for a small shared machine (as the integration tests run it)."""
    cmd = ["mpirun.openmpi", "-n", ranks, "--oversubscribe", "--mca", "btl", "self,vader"]
    return cmd + (["--allow-run-as-root"] if os.geteuid() == 0 else [])


INFO = re.compile(r"rank 0: (\d+) events in (\d+) streams, tracer memory (\d+) bytes, trace (\d+) bytes")


def traced_size(b, app, args, ranks=2):
    d = b.fresh("sizes")
    out = b.run(["mpirun.mpich", "-n", ranks, b.exe(f"test/apps/{app}")] + list(args), cwd=d,
                env=b.traced(MPIOR_LOG="info", MPIOR_TRACE_DIR=os.path.join(d, "traces")))
    m = INFO.search(out)
    if not m:
        sys.exit(f"bench: no tracer summary line from {app}:\n{out[-1000:]}")
    events, streams, memory, size = map(int, m.groups())
    b.run([b.post, os.path.join(d, "traces")])
    plan = os.path.getsize(os.path.join(d, "traces", "plan", "plan.mpior"))
    fs = os.path.join(d, "fs")
    os.makedirs(fs)
    # The replayer's peak memory, measured in a child of its own.
    rss = b.run([sys.executable, "-c", "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
                 "stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                 b.replay, "--fs", fs, os.path.join(d, "traces", "plan")])
    return [app, " ".join(map(str, args)), events, size, f"{size / events:.4f}", f"{memory / 1024:.1f} KiB", plan,
            f"{int(rss.split()[-1]) / 1024:.1f} MiB"]


def sizes(b):
    """Trace bytes per rank and per event, tracer memory, plan size at growing iteration counts."""
    counts = (10**3, 10**4, 10**5) if b.quick else (10**3, 10**4, 10**5, 10**6)
    rows = [traced_size(b, "nton_barrier", [n, 16]) for n in counts]
    rows += [traced_size(b, "checkpoint_sim", [n, 0, 10, 1024]) for n in counts[:3]]
    rows += [traced_size(b, "wildcard", [n]) for n in (100, 1000)]
    table("trace size, 2 ranks (rank 0's compressed trace, MPIOR_LOG=info figures; the plan replayed)",
          ["program", "args", "events", "trace B", "B/event", "tracer memory", "plan B", "replay max RSS"], rows)


def passthrough(b, title, cmd):
    print(f"\n== {title}")
    print(b.run(cmd).rstrip())


def builder(b):
    passthrough(b, "online loop folding (trace/builder), per appended event",
                [b.exe("bench/builder_bench")] + (["100000"] if b.quick else []))


def merge(b):
    passthrough(b, "cross-rank merge (mpior-post), plan size against ranks", [b.exe("bench/plan_merge_bench")])


def elapsed(out):
    m = re.search(r"elapsed_s (\S+)", out)
    if not m:
        sys.exit(f"bench: no elapsed_s line in:\n{out[-1000:]}")
    return float(m.group(1))


def apps(b):
    """Traced/untraced run time of the LAMMPS-shaped and Pseudo-shaped programs."""
    reps = 3 if b.quick else 5
    modes = (("untraced", None), ("pruning on", "1"), ("pruning off", "0"))
    rows = []
    for shape, args in (("lammps_shape", []), ("pseudo_shape", [])):
        for ranks in (2, 4):
            times = {name: [] for name, _ in modes}
            for _ in range(reps):
                for name, prune in modes:  # interleaved: all modes see the same machine state
                    d = b.fresh("apps")
                    env = b.traced(MPIOR_PRUNE=prune, MPIOR_TRACE_DIR=os.path.join(d, "traces")) if prune else {}
                    times[name].append(elapsed(b.run(["mpirun.mpich", "-n", ranks, b.exe(f"bench/{shape}")] + args,
                                                     env=env, cwd=d)))
            base = statistics.median(times["untraced"])
            spread = (max(times["untraced"]) - min(times["untraced"])) / base * 100
            row = [shape, ranks, f"{base:.3f}", f"{spread:.1f}%"]
            for name, _ in modes[1:]:
                row.append(f"{statistics.median(times[name]) / base:.3f}")
            rows.append(row)
    table(f"application-shaped programs: run time traced / untraced (medians of {reps}, interleaved)",
          ["program", "ranks", "untraced s", "untraced spread", "pruning on", "pruning off"], rows)


def replay_once(b, app, args, prune):
    d = b.fresh("replay")
    traces = os.path.join(d, "traces")
    b.run(["mpirun.mpich", "-n", 2, b.exe(f"test/apps/{app}")] + list(args), cwd=d,
          env=b.traced(MPIOR_PRUNE=prune, MPIOR_TRACE_DIR=traces))
    b.run([b.post, traces])
    fs, report = os.path.join(d, "fs"), os.path.join(d, "report.json")
    os.makedirs(fs)
    b.run([b.replay, "--fs", fs, "--json", report, os.path.join(traces, "plan")])
    with open(report) as f:
        r = json.load(f)
    return r["traced_s"], r["replay_s"]


def replay(b):
    """Replay time against traced time, for plans traced with pruning on and off."""
    reps = 2 if b.quick else 5
    rows = []
    # Steps of 20 ms, 10 ms and 5 ms of compute between halo exchanges, with
    # checkpoints (pwrite + fsync + barrier) every 5, 1 and 10 steps.
    cases = (("checkpoint_sim", [40, 20000, 5, 65536]), ("checkpoint_sim", [60, 10000, 1, 65536]),
             ("checkpoint_sim", [150, 5000, 10, 65536]))
    for app, args in cases:
        got = {"0": [], "1": []}
        for _ in range(reps):
            for prune in ("0", "1"):
                got[prune].append(replay_once(b, app, args, prune))
        med = {p: (statistics.median(t for t, _ in v), statistics.median(r for _, r in v)) for p, v in got.items()}
        err = {p: (r - t) / t * 100 for p, (t, r) in med.items()}
        gap = (med["1"][1] - med["0"][1]) / med["0"][1] * 100
        rows.append([app, " ".join(map(str, args)), f"{med['0'][0]:.3f}", f"{med['0'][1]:.3f}", f"{err['0']:+.1f}%",
                     f"{med['1'][0]:.3f}", f"{med['1'][1]:.3f}", f"{err['1']:+.1f}%", f"{gap:+.1f}%"])
    table(f"replay against trace, 2 ranks (medians of {reps})",
          ["program", "args", "unpruned traced s", "replay s", "error", "pruned traced s", "replay s", "error",
           "pruned vs unpruned replay"], rows)


def extrap(b):
    """Extrapolation time and plan size to 8,192 and 65,536 ranks; 8,192-thread replay (bench/extrap_bench.py)."""
    import extrap_bench
    extrap_bench.extrapolation(b, table)


def mpiio(b):
    """MPI-IO: added ns per independent 1-byte MPI_File_write_at on tmpfs, and trace bytes per call of a
    parallel HDF5 time-step loop (loops must fold through the MPI-IO and POSIX levels)."""
    calls = 20000 if b.quick else 100000
    # /dev is excluded by default: trace the tmpfs file's POSIX calls too.
    shm = b.scratch("/dev/shm", "bench-mpiio")
    out = b.run(["mpirun.mpich", "-n", 1, b.exe("bench/mpiio_overhead"), calls, 5, os.path.join(shm, "mpiio.dat")],
                env=b.traced(MPIOR_EXCLUDE="/proc,/sys"))
    print(f"\n== MPI-IO tracer overhead ({calls} calls x 5, traced vs untraced (PMPI) in one run, medians)")
    print("  " + out.strip().splitlines()[-1])
    steps = (10**2, 10**3) if b.quick else (10**2, 10**4)
    rows = [traced_size(b, "hdf5_steps", [n]) for n in steps]
    table("HDF5 time-step loop, 2 ranks: rank 0's trace (MPI-IO calls and the POSIX calls under them)",
          ["program", "steps", "events", "trace B", "B/event", "tracer memory", "plan B", "replay max RSS"], rows)


def crash(b):
    """Cost of crash safety: run time of a 2-rank LAMMPS-shaped program with the periodic flush off, every
    1 s (the default) and every 100 ms, and the time per flush (the rank trace rewritten)."""
    reps = 3 if b.quick else 5
    modes = (("flush off", "0"), ("1 s", "1000"), ("100 ms", "100"))
    times = {name: [] for name, _ in modes}
    for _ in range(reps):
        for name, ms in modes:
            d = b.fresh("crash")
            env = b.traced(MPIOR_FLUSH_INTERVAL=ms, MPIOR_TRACE_DIR=os.path.join(d, "traces"))
            times[name].append(elapsed(b.run(["mpirun.mpich", "-n", 2, b.exe("bench/lammps_shape")], env=env, cwd=d)))
    base = statistics.median(times["flush off"])
    rows = [[name, f"{statistics.median(times[name]):.3f}", f"{statistics.median(times[name]) / base:.3f}"]
            for name, _ in modes]
    table(f"crash safety: lammps_shape at 2 ranks, traced, by MPIOR_FLUSH_INTERVAL (medians of {reps})",
          ["flush", "run s", "vs flush off"], rows)


def fuzz(b):
    """The readers' mutation fuzzer: 10,000 mutated inputs per reader (1,000 with --quick)."""
    count = 1000 if b.quick else 10000
    env = {"MPIOR_BUILD_ROOT": b.build, "MPIOR_FUZZ": b.exe("test/fuzz/fuzz_readers")}
    here = os.path.dirname(os.path.abspath(__file__))
    start = time.time()
    p = subprocess.run([sys.executable, os.path.join(here, "..", "test", "fuzz", "fuzz_test.py"), "--count", str(count)],
                       env=dict(os.environ, **env), capture_output=True, text=True)
    rows = []
    for m in re.finditer(r"^fuzz (\S+): (\d+) inputs, (\d+) runs accepted, (\d+) rejected with a message, (\d+) failures",
                         p.stdout, re.M):
        rows.append(list(m.groups()))
    table(f"fuzzing the readers: mutated bodies with a valid CRC ({time.time() - start:.0f} s in all)",
          ["file", "inputs", "tool runs accepted", "rejected with a message", "crashes/hangs"], rows)
    if p.returncode != 0:
        print(p.stderr[-3000:])


# A Lennard-Jones melt from lammps-examples with its output on (atom dump every
# 50 steps, restart files every 100, log): 4,000 atoms, 200 steps.
LAMMPS_MELT = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 10 0 10 0 10
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify every 20 delay 0 check no
fix 1 all nve
dump id all atom 50 dump.melt
restart 100 melt.restart
thermo 50
run 200
"""


def lammps(b):
    """Debian's LAMMPS (Open MPI) traced with libmpior-openmpi.so: run time traced / untraced at 2 and 4
    ranks, pruning on and off, next to the thesis' 22% (its LAMMPS overhead)."""
    if not b.has_ompi or not shutil.which("lmp"):
        print("\n== LAMMPS: skipped (needs lmp, mpirun.openmpi and libmpior-openmpi.so: scripts/setup.sh)")
        return
    reps = 3 if b.quick else 5
    modes = (("untraced", None), ("pruning on", "1"), ("pruning off", "0"))
    rows = []
    for ranks in (2, 4):
        wall = {name: [] for name, _ in modes}
        loop = {name: [] for name, _ in modes}
        for _ in range(reps):
            for name, prune in modes:  # interleaved: all modes see the same machine state
                d = b.fresh("lammps")
                with open(os.path.join(d, "in.melt"), "w") as f:
                    f.write(LAMMPS_MELT)
                env = {"OMP_NUM_THREADS": "1"}
                if prune:
                    env.update(b.traced(lib=b.lib_ompi, MPIOR_PRUNE=prune, MPIOR_TRACE_DIR=os.path.join(d, "traces")))
                start = time.monotonic()
                out = b.run(openmpi_run(ranks) + ["lmp", "-in", "in.melt", "-log", "log.melt"], env=env, cwd=d)
                wall[name].append(time.monotonic() - start)
                loop[name].append(float(re.search(r"Loop time of (\S+)", out).group(1)))
        base = statistics.median(wall["untraced"])
        spread = (max(wall["untraced"]) - min(wall["untraced"])) / base * 100
        row = [ranks, f"{base:.2f}", f"{spread:.0f}%"]
        for times, pick in ((wall, statistics.median), (loop, statistics.median), (loop, min)):
            row += [f"{pick(times[n]) / pick(times['untraced']):.3f}" for n, _ in modes[1:]]
        rows.append(row + ["1.22"])
    table(f"LAMMPS melt (lmp, Open MPI, 4,000 atoms, 200 steps, dump + restarts): traced / untraced, "
          f"{reps} runs each, interleaved; whole run (median) and LAMMPS' loop time (median, best)",
          ["ranks", "untraced s", "spread", "run: pruning on", "off", "loop: on", "off", "best loop: on", "off",
           "thesis"], rows)


def fidelity(b):
    """Prediction against reality (issue 13): each program traced on one file system and replayed on another,
    against untraced runs on the target (bench/fidelity_bench.py); and what the replay adds per replayed event."""
    import fidelity_bench
    fidelity_bench.fidelity(b, table, elapsed)



def merge_job(b):
    """The job's trace at MPI_Finalize at 8-64 ranks, merging off, aggregated and merged (bench/merge_job_bench.py)."""
    import merge_job_bench
    merge_job_bench.merge_job(b, table, elapsed)


def merge_tree(b):
    """The in-job merge's reduction simulated in one process at 1,024 to 65,536 ranks (bench/merge_job_bench.py)."""
    import merge_job_bench
    merge_job_bench.merge_tree(b, table)


def extrap_ior(b):
    """ior_like's three patterns extrapolated to 8,192 and 65,536 ranks; 8,192-thread replay (bench/extrap_bench.py)."""
    import extrap_bench
    extrap_bench.ior_like(b, table)


def extrap_hdf5(b):
    """HDF5's shared file (hdf5_blocks; IOR -a HDF5 -c with MPIOR_BENCH_IOR) extrapolated to 8,192 and 65,536 ranks."""
    import extrap_bench
    extrap_bench.hdf5(b, table)


SECTIONS = {"calls": calls, "overhead": overhead, "families": families, "latency": latency, "sizes": sizes, "builder": builder,
            "merge": merge, "merge_tree": merge_tree, "apps": apps, "replay": replay, "mpiio": mpiio, "extrap": extrap,
            "crash": crash, "fuzz": fuzz, "lammps": lammps, "fidelity": fidelity, "merge_job": merge_job,
            "extrap_ior": extrap_ior, "extrap_hdf5": extrap_hdf5}


def predict(b):
    """mpior-predict against the real I/O time on the target: ext4 <-> tmpfs (bench/predict_bench.py)."""
    import predict_bench
    load0 = os.getloadavg()[0]
    rows, reps = predict_bench.predict(b)
    predict_bench.print_table(table, rows, reps, load0)


SECTIONS["predict"] = predict


def workloads(b):
    """Replay and ratio prediction on IOR, mdtest and a checkpointing solver, unbound (bench/workloads_bench.py)."""
    import workloads_bench
    workloads_bench.run(b, table)


SECTIONS["workloads"] = workloads


def metadata(b):
    """mdtest traced against untraced on a tmpfs: the tracer's cost per path call (bench/metadata_bench.py)."""
    import metadata_bench
    metadata_bench.run(b, table)


SECTIONS["metadata"] = metadata


def memory(b):
    """Tracer memory and per-call cost against calls, cap on and off (bench/memory_bench.py)."""
    import memory_bench
    memory_bench.memory(b, table)


SECTIONS["memory"] = memory


def flush(b):
    """A periodic flush's cost to the recording thread against the folded trace's size (bench/flush_lock_bench.cpp)."""
    passthrough(b, f"flush: snapshot of an irregular trace while its thread records (load {os.getloadavg()[0]:.2f}; "
                "the thread's worst record() during a snapshot against without one; before the builder was frozen "
                "for snapshots it was the snapshot's time)",
                [b.exe("bench/flush_lock_bench")] + (["2", "3"] if b.quick else ["8", "7"]))


SECTIONS["flush"] = flush


def comm_table(b):
    """A periodic flush's cost for the communicator table against its size (bench/comm_table_bench.cpp)."""
    passthrough(b, f"comm_table: a flush's communicator table, whole (before) against appended since the last flush "
                f"(1000 new entries), for a rank that made N communicators (load {os.getloadavg()[0]:.2f})",
                [b.exe("bench/comm_table_bench")] + (["20000", "3"] if b.quick else []))


SECTIONS["comm_table"] = comm_table


def same_fs(b):
    """Replay on the file system traced on, threads and MPI mode, against the traced time (bench/same_fs_bench.py)."""
    import fidelity_bench
    import same_fs_bench
    same_fs_bench.same_fs(b, table, fidelity_bench.FIDELITY_PROGRAMS)


SECTIONS["same_fs"] = same_fs


def perturbation(b):
    """A traced run against an untraced one and one with the wrappers only (bench/perturbation_bench.py)."""
    import fidelity_bench
    import perturbation_bench
    perturbation_bench.perturbation(b, table, fidelity_bench.FIDELITY_PROGRAMS)


SECTIONS["perturbation"] = perturbation


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", help="a release build directory")
    ap.add_argument("--quick", action="store_true", help="fewer calls and repetitions")
    ap.add_argument("--only", nargs="+", choices=sorted(SECTIONS), help="run only these sections")
    a = ap.parse_args()
    b = Bench(a.build, a.quick)
    try:
        print(f"mpior benchmarks, build {b.build}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
              f"{settle.page_reporting()}")
        for name in a.only or SECTIONS:
            SECTIONS[name](b)
        print(f"\n{settle.warm_summary()}")
    finally:
        shutil.rmtree(b.work, ignore_errors=True)


if __name__ == "__main__":
    main()
