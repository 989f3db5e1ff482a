"""bench.py section 'metadata' (issues 61 and 60): how much longer mdtest runs traced than untraced on a tmpfs,
where a metadata call takes a microsecond or two and whatever the tracer does per path shows. mdtest is IOR's
(MPIOR_BENCH_IOR=PREFIX: PREFIX/bin/mdtest, built apart; the row is skipped without it). Per round an untraced
and a traced run, taking turns going first; each run's time is the sum of mdtest's seven item phases (items /
rate: directory and file creation, stat, removal, file read), so start-up and the trace's writing at the end
are left out. mdtest runs in a scratch directory with -d md: relative paths, as the workloads bench runs it. Medians over the rounds of each run's time and of the paired overhead."""
import os
import re
import shutil
import statistics

RANKS = "2"
ITEMS = 3000
PHASE = re.compile(r"^\s+(File|Directory) (creation|stat|read|removal)\s+(\S+)", re.M)


def phases_s(out):
    """The seven item phases' seconds summed, from mdtest's rates (items over all ranks per second)."""
    rates = [float(m.group(3)) for m in PHASE.finditer(out)]
    if len(rates) != 7 or min(rates) <= 0:
        raise SystemExit(f"bench: mdtest printed {len(rates)} item phases:\n{out[-2000:]}")
    return sum(ITEMS * int(RANKS) / r for r in rates)


def one_run(b, mdtest, traced, i):
    d = b.scratch("/dev/shm", f"metadata{i}")
    env = b.traced(MPIOR_TRACE_DIR=os.path.join(b.work, f"metadata-traces{i}")) if traced else {}
    out = b.run(["mpirun.mpich", "-n", RANKS, mdtest, "-n", ITEMS, "-w", 4096, "-e", 4096, "-d", "md"], env=env,
                cwd=d)
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(os.path.join(b.work, f"metadata-traces{i}"), ignore_errors=True)
    return phases_s(out)


def run(b, table):
    prefix = os.environ.get("MPIOR_BENCH_IOR")
    mdtest = os.path.join(prefix, "bin", "mdtest") if prefix else ""
    if not mdtest or not os.access(mdtest, os.X_OK):
        print("\nmetadata: skipped: set MPIOR_BENCH_IOR to IOR's install prefix (PREFIX/bin/mdtest)")
        return
    rounds = 3 if b.quick else 9
    plain, traced, loads = [], [], [os.getloadavg()[0]]
    for i in range(rounds):
        for kind in ("plain", "traced") if i % 2 == 0 else ("traced", "plain"):
            (plain if kind == "plain" else traced).append(one_run(b, mdtest, kind == "traced", i))
    loads.append(os.getloadavg()[0])
    over = statistics.median((t - p) / p * 100 for p, t in zip(plain, traced))
    table(f"metadata: mdtest -n {ITEMS} -w 4096 -e 4096 -d md, {RANKS} ranks, on /dev/shm, untraced against traced "
          f"(the seven item phases' time; medians of {rounds} rounds, the overhead paired by round)",
          ["untraced ms", "untraced range", "traced ms", "traced range", "overhead", "load (1 min)"],
          [[f"{statistics.median(plain) * 1000:.1f}", f"{min(plain) * 1000:.1f}-{max(plain) * 1000:.1f}",
            f"{statistics.median(traced) * 1000:.1f}", f"{min(traced) * 1000:.1f}-{max(traced) * 1000:.1f}",
            f"{over:+.1f}%", f"{min(loads):.1f}-{max(loads):.1f}"]])
