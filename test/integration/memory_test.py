#!/usr/bin/env python3
"""Bounded tracer memory (issue 19): a program making 10^6 pread/pwrite calls
at random offsets per rank (test/apps/random_io.c, 2 ranks) under
MPIOR_MEMORY spills the older part of its trace to rank-NNNNNN.spill.mpior;
its peak RSS stays within the cap plus a fixed margin of the untraced run's,
mpior-post counts every call and byte, the plan is the same with the cap on
and off, and a SIGKILLed run recovers every call up to its last flush.
One scenario per meson test: memory_test.py NAME."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from harness import APPS, LIB, POST, check, check_eq, main, mpirun, run

RANKS, CALLS, BLOCK = 2, 1000000, 64
CAP = 16 << 20
MARGIN = 12 << 20  # the tracer's own fixed memory (libraries, tables, buffers) and allocator slack


def job(root, calls=CALLS, traced=True, kill_after=0, traces_name="traces", **env_extra):
    """Runs random_io in root/run; returns (traces dir, per-rank VmHWM in bytes, process)."""
    work = os.path.join(root, "run")
    os.makedirs(work, exist_ok=True)
    traces = os.path.join(root, traces_name)
    env = dict(os.environ, LD_PRELOAD=LIB if traced else "", MPIOR_TRACE_DIR=traces)
    env.update(env_extra)
    cmd = mpirun(RANKS) + [os.path.join(APPS, "random_io"), str(calls), str(kill_after)]
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=120)
    if not kill_after:
        check_eq(p.returncode, 0, f"random_io exit status\n{p.stderr[-2000:]}")
    hwm = {int(r): int(kb) * 1024 for r, kb in re.findall(r"rank=(\d+) calls=\d+ bytes=\d+ vmhwm_kb=\s*(\d+)", p.stdout)}
    check_eq(sorted(hwm), list(range(RANKS)), f"ranks that reported (stdout: {p.stdout!r})")
    return traces, hwm, p


def post(traces, *extra):
    p = run([POST, traces] + list(extra))
    with open(os.path.join(traces, "plan", "summary.json")) as f:
        return json.load(f), p


def expect_every_call(summary, traces):
    ops = summary["ops"]
    check_eq(ops.get("pread", 0), RANKS * CALLS // 2, "pread calls in summary.json")
    check_eq(ops.get("pwrite", 0), RANKS * CALLS // 2, "pwrite calls in summary.json")
    for r in range(RANKS):
        f = [f for f in summary["files"] if f["path"].endswith(f"/random_io.{r}.dat")]
        check_eq(len(f), 1, f"random_io.{r}.dat in summary.json")
        check_eq(f[0]["bytes_read"], CALLS // 2 * BLOCK, f"bytes read from random_io.{r}.dat")
        check_eq(f[0]["bytes_written"], CALLS // 2 * BLOCK, f"bytes written to random_io.{r}.dat")


def spilled(traces):
    return [r for r in range(RANKS) if os.path.exists(os.path.join(traces, f"rank-{r:06d}.spill.mpior"))]


def cap():
    """10^6 calls per rank under MPIOR_MEMORY=16M: spills, peak RSS within
    cap + margin of the untraced run's, every call and byte counted."""
    root = tempfile.mkdtemp(prefix="mpior-mem-")
    _, plain, _ = job(root, traced=False)
    traces, traced, _ = job(root, MPIOR_MEMORY=str(CAP))
    check_eq(spilled(traces), list(range(RANKS)), "ranks with a spill file")
    for r in range(RANKS):
        added = traced[r] - plain[r]
        print(f"rank {r}: VmHWM untraced {plain[r] >> 10} KiB, traced {traced[r] >> 10} KiB, added {added >> 20} MiB")
        check(added <= CAP + MARGIN, f"rank {r}: tracer memory {added >> 20} MiB > cap {CAP >> 20} + {MARGIN >> 20} MiB")
    summary, _ = post(traces)
    expect_every_call(summary, traces)
    shutil.rmtree(root, ignore_errors=True)


def same_plan():
    """The plan with a 4 MiB cap (many spills) and without a cap: the same
    events per rank (mpior-post --compare --events-only: loops split at a
    spill point do not count)."""
    root = tempfile.mkdtemp(prefix="mpior-mem-")
    plans = []
    for name, memory in (("capped", "4M"), ("uncapped", "0")):
        traces, _, _ = job(root, traces_name=name, MPIOR_MEMORY=memory)
        check_eq(bool(spilled(traces)), memory != "0", f"{name}: spill files")
        summary, _ = post(traces)
        expect_every_call(summary, traces)
        plans.append(os.path.join(traces, "plan"))
    out = run([POST, "--events-only", "--compare"] + plans).stdout
    check("identical except timing" in out, f"plans differ: {out}")
    shutil.rmtree(root, ignore_errors=True)


def killed():
    """SIGKILL 1.5 s after the calls (flushes every 200 ms): the spill file
    and the last flush give back every call."""
    root = tempfile.mkdtemp(prefix="mpior-mem-")
    traces, _, p = job(root, kill_after=1500, MPIOR_MEMORY="4M", MPIOR_FLUSH_INTERVAL="200")
    check(p.returncode != 0, f"the killed job exited {p.returncode}")
    check_eq(spilled(traces), list(range(RANKS)), "ranks with a spill file")
    summary, out = post(traces)
    check("incomplete" in out.stderr, f"no warning for the killed ranks: {out.stderr}")
    check_eq(summary["complete"], False, "summary complete")
    expect_every_call(summary, traces)
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main({f.__name__: f for f in (cap, same_plan, killed)})
