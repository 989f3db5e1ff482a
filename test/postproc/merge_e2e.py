#!/usr/bin/env python3
"""The cross-rank merge on real traced MPI runs: mpior-post --verify reads the
written plan back and proves every rank and thread yields exactly its traced
events; the summary says how ranks merged; the merged plan replays.
One scenario per meson test: merge_e2e.py NAME."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))

from harness import Scenario, check, check_eq, main, run, POST  # noqa: E402


def post_verified(s, ranks, threads=1):
    """Post-processes with --verify; returns summary.json's "plan" entry."""
    out = run([POST, s.traces, "--verify"])
    check("verified" in out.stdout and "exactly" in out.stdout, f"--verify output: {out.stdout}")
    s.plan = os.path.join(s.traces, "plan")
    with open(os.path.join(s.plan, "summary.json")) as f:
        plan = json.load(f)["plan"]
    check_eq(sum(p["ranks"] for p in plan["per_stream"]), ranks * threads, "rank threads the streams stand for")
    check_eq(plan["rank_threads"], ranks * threads, "rank threads in summary.json")
    return plan


def dump(s):
    return run([POST, "--dump", os.path.join(s.plan, "plan.mpior")]).stdout


def nton():
    ranks = 6
    s = Scenario("nton_barrier", [12, 4096], ranks=ranks).run_both()
    plan = post_verified(s, ranks)
    # Rank 0 prints; the others do the same thing and share one stream.
    check(plan["streams"] <= 2, f"streams for {ranks} N-to-N ranks: {plan['streams']}")
    check(any(p["ranks"] >= ranks - 1 for p in plan["per_stream"]), f"one stream for most ranks: {plan}")
    text = dump(s)
    check("<ranks " in text and "*rank>" in text, "the dump shows affine rank variants")
    with open(os.path.join(s.plan, "summary.txt")) as f:
        check(f"streams for {ranks} rank threads of {ranks} ranks" in f.read(), "summary.txt names the streams")
    s.replay_and_check()
    s.cleanup()


def comm_split():
    ranks = 4
    s = Scenario("comm_split", [4, 1024], ranks=ranks).run_both()
    plan = post_verified(s, ranks)
    check(plan["streams"] < ranks, f"some ranks merge: {plan}")
    s.replay_and_check()
    s.cleanup()


def wildcard():
    ranks = 4
    s = Scenario("wildcard", [6], ranks=ranks).run_both()
    post_verified(s, ranks)
    s.replay_and_check()
    s.cleanup()


def threads():
    ranks, nthreads = 2, 3
    s = Scenario("threads_io", [nthreads, 40, 2048], ranks=ranks).run_both()
    post_verified(s, ranks, threads=nthreads + 1)
    s.replay_and_check()
    s.cleanup()


if __name__ == "__main__":
    main({f.__name__: f for f in (nton, comm_split, wildcard, threads)})
