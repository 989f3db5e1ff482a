"""Section `memory` of bench.py: tracer memory and per-call cost against the
number of calls for test/apps/random_io (pread/pwrite at random offsets, one
rank), the memory cap on (MPIOR_MEMORY=16M) and off (0). Tracer memory is
the traced run's peak RSS (VmHWM) minus the untraced run's; the per-call cost
is the traced loop's time minus the untraced loop's, per call, and the same
for the CPU time of the application's thread (what the tracer adds to it:
steadier than the time when the machine is loaded; the flush thread's
snapshots and spills run elsewhere).
Counts: MPIOR_BENCH_MEMORY_CALLS (comma-separated; default 1e5,1e6,1e7, --quick
drops 1e7)."""
import os
import re


def counts(b):
    text = os.environ.get("MPIOR_BENCH_MEMORY_CALLS")
    if text:
        return [int(float(x)) for x in text.split(",") if x]
    return [100000, 1000000] + ([] if b.quick else [10000000])


def one_run(b, calls, env):
    d = b.fresh("memory")
    out = b.run(["mpirun.mpich", "-n", 1, b.exe("test/apps/random_io"), calls], env=env, cwd=d)
    m = re.search(r"vmhwm_kb=\s*(\d+) loop_ns=\s*(\d+) cpu_ns=\s*(\d+)", out)
    if not m:
        raise SystemExit(f"bench memory: random_io printed no figures:\n{out[-2000:]}")
    spill = os.path.join(d, "traces", "rank-000000.spill.mpior")
    size = os.path.getsize(spill) if os.path.exists(spill) else 0
    return int(m.group(1)) * 1024, int(m.group(2)), int(m.group(3)), size


def memory(b, table):
    rows = []
    for calls in counts(b):
        plain_hwm, plain_ns, plain_cpu, _ = one_run(b, calls, {"LD_PRELOAD": ""})
        for name, cap in (("16 MiB", "16M"), ("off", "0")):
            d = os.path.join(b.work, "memory")
            hwm, ns, cpu, spill = one_run(b, calls, b.traced(MPIOR_MEMORY=cap, MPIOR_TRACE_DIR=os.path.join(d, "traces")))
            rows.append([f"{calls:,}", name, f"{(hwm - plain_hwm) / 2**20:.1f}", f"{(ns - plain_ns) / calls:.0f}",
                         f"{(cpu - plain_cpu) / calls:.0f}", f"{plain_ns / calls:.0f}", f"{spill / 2**20:.1f}"])
    b_load = os.getloadavg()[0]
    table(f"memory: random_io (1 rank), tracer memory and added cost per call by MPIOR_MEMORY (load {b_load:.2f}; "
          "targets: flat at the cap, <= 100 ns)",
          ["calls", "cap", "tracer MiB", "added ns/call", "added CPU ns/call", "untraced ns/call", "spill MiB"], rows)
