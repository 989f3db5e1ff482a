#!/usr/bin/env python3
"""Ranks' clocks aligned at MPI_Init (issue 13): each rank trace holds its
clock's offset to rank 0's, mpior-post puts every rank's trace start on rank
0's clock (the plan's per-rank start), and the replay starts the ranks as
they started. The test hook MPIOR_TEST_CLOCK_SKEW_NS=N sets rank r's clock
N x r ns ahead: the offsets must undo it and the plan's starts must not show
it. One scenario per meson test: clock_align_test.py NAME."""
import json
import os
import re

from harness import POST, REPLAY, Scenario, check, main, run

RANKS = 3
SKEW = 3_000_000_000  # 3 s per rank: far beyond any launch delay
TOLERANCE = 50_000_000  # half the fastest of four round trips, on a loaded machine


def traced(skew):
    env = {"MPIOR_MERGE": "0"}  # one rank file each, to dump
    if skew:
        env["MPIOR_TEST_CLOCK_SKEW_NS"] = str(skew)
    s = Scenario("nton_barrier", [20, 4096], ranks=RANKS, env=env).run_both()
    s.post()
    return s


def dump(path):
    return run([POST, "--dump", path]).stdout


def offsets_and_starts(s):
    offsets, monos = [], []
    for r in range(RANKS):
        text = dump(os.path.join(s.traces, f"rank-{r:06d}.mpior"))
        offsets.append(int(re.search(r"clock offset to rank 0: (-?\d+) ns", text).group(1)))
        monos.append(int(re.search(r"clocks at start: monotonic (-?\d+) ns", text).group(1)))
    plan = dump(os.path.join(s.plan, "plan.mpior"))
    starts = [float(x) for x in re.findall(r"started at (\d+\.\d+) s", plan)]
    check(len(starts) == RANKS, f"the plan gives each rank's start: {starts}")
    return offsets, monos, starts


def skewed():
    s = traced(SKEW)
    offsets, monos, starts = offsets_and_starts(s)
    check(offsets[0] == 0, f"rank 0's offset to itself is 0, got {offsets[0]}")
    for r in range(1, RANKS):
        check(monos[r] - monos[0] > SKEW * r - 1_000_000_000, f"rank {r}'s clock reads skewed: {monos}")
        check(abs(offsets[r] + SKEW * r) < TOLERANCE, f"rank {r}'s offset {offsets[r]} undoes its skew {SKEW * r}")
    check(max(starts) < 1.0 and min(starts) == 0.0, f"aligned starts are launch delays, not the skew: {starts}")
    # The replay starts the ranks as aligned: with the skew it would take over 6 s.
    s.replay_and_check()
    check(s.report["replay_s"] < 0.5 * SKEW * (RANKS - 1) / 1e9, f"replay took {s.report['replay_s']} s")
    s.cleanup()


def unskewed():
    s = traced(0)
    offsets, _, starts = offsets_and_starts(s)
    for r in range(RANKS):
        check(abs(offsets[r]) < TOLERANCE, f"one host, one clock: rank {r}'s offset {offsets[r]} ns")
    check(max(starts) < 1.0, f"aligned starts are launch delays: {starts}")
    report = os.path.join(s.root, "io.json")
    run([REPLAY, "--io-only", "--fs", s.fs, "--json", report, s.plan])
    with open(report) as f:
        check(json.load(f)["replay_s"] < 1.0, "--io-only starts every rank at once")
    s.cleanup()


if __name__ == "__main__":
    main({"skewed": skewed, "unskewed": unskewed})
