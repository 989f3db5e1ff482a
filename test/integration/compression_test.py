#!/usr/bin/env python3
"""Loop compression integration tests (issue: RSD/PRSD traces whose size does
not grow with iterations): the traces of a loop are the size of its body, the
summary stays exact and the compressed plan still replays every call. One
scenario per meson test: compression_test.py NAME."""
import os
import re

from harness import POST, Scenario, check, check_eq, expect_ops, file_entry, main, run

MPI_FRAME = lambda n: {"MPI_Init": n, "MPI_Finalize": n}  # noqa: E731

RANKS, BLOCK = 2, 16
BIG = 100000  # iterations: past 16-bit counts, a trace of every call would be megabytes


def traced_nton(iters, untraced_too):
    s = Scenario("nton_barrier", [iters, BLOCK], ranks=RANKS, env={"MPIOR_MERGE": "0"})  # rank files
    if untraced_too:
        s.run_both()
    else:
        s.run_traced()
    summary = s.post()
    expect_ops(summary, {**MPI_FRAME(RANKS), "open": RANKS, "write": RANKS * iters, "MPI_Barrier": RANKS * iters,
                         "close": RANKS, "printf": 1})
    for r in range(RANKS):
        f = file_entry(summary, s.abs(f"nton.{r}"))
        check_eq(f["bytes_written"], iters * BLOCK, f"bytes written to nton.{r} ({iters} iterations)")
    sizes = [os.path.getsize(os.path.join(s.traces, f"rank-{r:06d}.mpior")) for r in range(RANKS)]
    return s, sizes


def iterations():
    """N-to-N with a barrier after each write, 10^3 against 10^5 iterations:
    per-rank traces differ by less than 1 KiB (a trace of every call would
    grow by megabytes); counts, bytes and the replay stay exact."""
    small, small_sizes = traced_nton(1000, untraced_too=True)
    small.replay_and_check()
    small.cleanup()
    big, big_sizes = traced_nton(BIG, untraced_too=False)  # the small run showed the tracing transparent
    for r in range(RANKS):
        diff = abs(big_sizes[r] - small_sizes[r])
        check(diff < 1024, f"rank {r}: trace {small_sizes[r]} B at 10^3 iterations, {big_sizes[r]} B at {BIG} "
                           f"(differ by {diff} B, want < 1 KiB)")
    dump = run([POST, "--dump", os.path.join(big.traces, "rank-000000.mpior")]).stdout
    check(re.search(rf"RSD x{BIG} \{{", dump), f"the loop shows as RSD x{BIG} in --dump:\n{dump[-2000:]}")
    plan_bytes = os.path.getsize(os.path.join(big.plan, "plan.mpior"))
    check(plan_bytes < 8192, f"the plan of 2 x {BIG} iterations is {plan_bytes} B (want < 8 KiB)")
    big.replay_and_check()
    check_eq(big.report["ops"]["write"]["count"], RANKS * BIG, "writes replayed")
    big.cleanup()


if __name__ == "__main__":
    main({f.__name__: f for f in (iterations,)})
