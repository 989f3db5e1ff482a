"""Section `memory` of bench.py: tracer memory and per-call cost against the
number of calls for test/apps/random_io (pread/pwrite at random offsets, one
rank), the memory cap on (MPIOR_MEMORY=16M) and off (0). Tracer memory is
the traced run's peak RSS (VmHWM) minus the untraced run's; the per-call cost
is the traced loop's time minus the untraced loop's, per call, and the same
for the CPU time of the application's thread (what the tracer adds to it:
steadier than the time when the machine is loaded; the flush thread's
snapshots and spills run elsewhere), and the page faults that thread took
in the loop (fresh tracer memory it touched: a startup cost).
Counts: MPIOR_BENCH_MEMORY_CALLS (comma-separated; default 1e5,1e6,1e7, --quick
drops 1e7)."""
import os
import re
import resource


def counts(b):
    text = os.environ.get("MPIOR_BENCH_MEMORY_CALLS")
    if text:
        return [int(float(x)) for x in text.split(",") if x]
    return [100000, 1000000] + ([] if b.quick else [10000000])


def children_cpu_ns():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int((u.ru_utime + u.ru_stime) * 1e9)


def one_run(b, calls, env):
    d = b.fresh("memory")
    cpu0 = children_cpu_ns()
    out = b.run(["mpirun.mpich", "-n", 1, b.exe("test/apps/random_io"), calls], env=env, cwd=d)
    all_cpu = children_cpu_ns() - cpu0
    m = re.search(r"vmhwm_kb=\s*(\d+) loop_ns=\s*(\d+) cpu_ns=\s*(\d+) faults=\s*(\d+)", out)
    if not m:
        raise SystemExit(f"bench memory: random_io printed no figures:\n{out[-2000:]}")
    spill = os.path.join(d, "traces", "rank-000000.spill.mpior")
    size = os.path.getsize(spill) if os.path.exists(spill) else 0
    return int(m.group(1)) * 1024, int(m.group(2)), int(m.group(3)), size, all_cpu, int(m.group(4))


# (name, MPIOR_MEMORY, MPIOR_FOLD_BEHIND): the cap on and off, and the cap
# with the calling thread folding its own calls (no fold behind).
MODES = (("16 MiB", "16M", "1"), ("16 MiB, inline fold", "16M", "0"), ("off", "0", "1"))


def repetitions(b, calls):
    """Interleaved rounds per count: a short run's per-call figure is noisy (the calls themselves vary by 100 ns)."""
    return 1 if b.quick else (7 if calls <= 100000 else 5 if calls <= 1000000 else 3)


def medians(runs):
    return [sorted(col)[len(col) // 2] for col in zip(*runs)]


def memory(b, table):
    rows = []
    for calls in counts(b):
        plain_runs, mode_runs = [], {name: [] for name, _, _ in MODES}
        for _ in range(repetitions(b, calls)):
            plain_runs.append(one_run(b, calls, {"LD_PRELOAD": ""}))
            for name, cap, behind in MODES:
                d = os.path.join(b.work, "memory")
                env = b.traced(MPIOR_MEMORY=cap, MPIOR_FOLD_BEHIND=behind, MPIOR_TRACE_DIR=os.path.join(d, "traces"))
                mode_runs[name].append(one_run(b, calls, env))
        plain_hwm, plain_ns, plain_cpu, _, plain_all, plain_faults = medians(plain_runs)
        for name, _, _ in MODES:
            hwm, ns, cpu, spill, all_cpu, faults = medians(mode_runs[name])
            rows.append([f"{calls:,}", name, len(plain_runs), f"{(hwm - plain_hwm) / 2**20:.1f}",
                         f"{(ns - plain_ns) / calls:.0f}", f"{(cpu - plain_cpu) / calls:.0f}",
                         f"{(all_cpu - plain_all) / calls:.0f}", f"{plain_ns / calls:.0f}", f"{spill / 2**20:.1f}",
                         faults - plain_faults])
    b_load = os.getloadavg()[0]
    table(f"memory: random_io (1 rank), tracer memory and added cost per call by MPIOR_MEMORY and MPIOR_FOLD_BEHIND "
          f"(load {b_load:.2f}; targets: flat at the cap, <= 100 ns; the application's thread's CPU, and the whole "
          "job's CPU: the fold-behind thread's included)",
          ["calls", "cap", "runs (medians)", "tracer MiB", "added ns/call", "added app-thread CPU ns/call", "added job CPU ns/call",
           "untraced ns/call", "spill MiB", "added app-thread page faults"], rows)
