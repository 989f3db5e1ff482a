#!/usr/bin/env python3
"""Computation the machine took (MPIOR_STOLEN_CHECK_US): a rank sharing its
CPU with a spinning process (test/apps/contended.c) waits for the CPU half the
time; the trace leaves that wait out of each computation, the summary shows it
as the rank's cpu wait, and the replay computes what the rank computed. With
MPIOR_STOLEN_CHECK_US=0 the computation is the wall time, waits included.
One scenario per meson test: contention_test.py NAME."""
import os
import re
import sys

from harness import POST, SKIP, Scenario, check, check_eq, main, run

ROUNDS, CPU_MS = 8, 25


def traced(env, ranks=1):
    s = Scenario("contended", [ROUNDS, CPU_MS], ranks=ranks, env=env).run_both()
    summary = s.post()
    text = run([POST, "--dump", s.plan]).stdout
    m = re.search(r"write .*\(x%d\) count=1 ret=1  \[gap ([0-9.]+)(ms|us|s)" % ROUNDS, text.split("ranks 1 ")[0])
    check(m, f"one loop of {ROUNDS} writes in the plan:\n{text}")
    scale = {"s": 1e3, "ms": 1.0, "us": 1e-3}[m.group(2)]
    return s, summary, float(m.group(1)) * scale


def stolen():
    s, summary, gap_ms = traced({})
    t = summary["time"]
    # The spinner takes about half the CPU: each round waits ~25 ms for it.
    check(t["cpu_wait_s"] >= 0.5 * ROUNDS * CPU_MS / 1e3, f"the rank's wait for its CPU is counted: {t}")
    check(gap_ms < 1.3 * CPU_MS, f"each computation is its CPU time ({CPU_MS} ms), not the wall time: {gap_ms} ms")
    check(abs(t["compute_s"] + t["cpu_wait_s"] + t["io_s"] + t["mpi_s"] - t["traced_s"]) < 1e-6,
          f"compute + cpu wait + I/O + MPI = traced: {t}")
    check_eq(summary["per_rank"][0]["cpu_wait_s"], t["cpu_wait_s"], "rank 0's cpu wait")
    # The tracer's own schedstat reading (through syscall(), a wrapped symbol)
    # is not a call of the program's nested in the call after the gap, whose
    # end moved back past its start by the time recording it took.
    negative = {k: v for k, v in summary["op_totals"].items() if v["time_s"] < 0}
    check(not negative, f"no function's time is negative: {negative}")
    s.replay_and_check()
    check(s.report["traced_cpu_wait_s"] == t["cpu_wait_s"], f"the replay reports the wait: {s.report}")
    replayed = s.report["after_startup_s"]
    check(replayed < 1.4 * ROUNDS * CPU_MS / 1e3, f"the replay computes the CPU time, not the waits: {replayed} s")
    s.cleanup()


def stolen_off():
    s, summary, gap_ms = traced({"MPIOR_STOLEN_CHECK_US": "0"})
    check_eq(summary["time"]["cpu_wait_s"], 0.0, "cpu wait with MPIOR_STOLEN_CHECK_US=0")
    check(gap_ms > 1.6 * CPU_MS, f"each computation is its wall time, the wait for the CPU included: {gap_ms} ms")
    s.cleanup()


def oversubscribed():
    """More ranks on the node than CPUs: they wait for each other's CPU, and
    every run of the job (its replay too) will: nothing is left out."""
    cpus = len(os.sched_getaffinity(0))
    if cpus + 1 > 8:
        print(f"skip oversubscribed: {cpus} CPUs here, and MPI tests run 8 ranks at most")
        sys.exit(SKIP)
    s, summary, gap_ms = traced({}, ranks=cpus + 1)
    check_eq(summary["time"]["cpu_wait_s"], 0.0, f"cpu wait with {cpus + 1} ranks on {cpus} CPUs")
    check(gap_ms > 1.6 * CPU_MS, f"rank 0's computations are wall time, its spinner's share included: {gap_ms} ms")
    s.cleanup()


if __name__ == "__main__":
    main({f.__name__: f for f in (stolen, stolen_off, oversubscribed)})
