#!/usr/bin/env python3
"""Online pruning integration tests (thesis §1.3, §2.1, §4): the programs of
test/apps/pruning.c reproduce the thesis' figures; the bundled programs are
traced with and without pruning and their replays compared. One scenario per
meson test: pruning_test.py NAME."""
import json
import os
import re

from harness import POST, Scenario, check, check_eq, main, run

APP = "pruning"


def by_kind(summary, kind):
    k = summary["mpi"]["by_kind"].get(kind, {"logged": 0, "pruned": 0})
    return k["logged"], k["pruned"]


# The thesis' figures are its rule alone: no computation long enough for
# MPIOR_PRUNE_GAP_US's to matter, and none counted if the machine stalls.
THESIS = {"MPIOR_PRUNE_GAP_US": "0"}


def figure(mode, ranks):
    s = Scenario(APP, [mode], ranks=ranks, env=THESIS).run_both()
    summary = s.post()
    check(summary["mpi"]["pruning"], "the trace was pruned")
    s.replay_and_check("--stall-timeout", "30")
    return s, summary


def fig15():
    """Figure 1.5: the barrier after the first one, with no I/O between, is pruned."""
    s, summary = figure("fig15", 2)
    check_eq(by_kind(summary, "MPI_Barrier"), (2, 2), "barriers (logged, pruned) over both ranks")
    s.cleanup()


def fig14():
    """Figure 1.4: the four barriers all change when I/O is issued; a fifth, after no I/O, does not."""
    s, summary = figure("fig14", 3)
    check_eq(by_kind(summary, "MPI_Barrier"), (2 + 2 + 3 + 3, 3), "barriers (logged, pruned)")
    s.cleanup()


def fig41():
    """Figure 4.1: two messages of one channel received in reverse order; the
    auxiliary messages are matched exactly, so the receive of the message that
    followed I/O is the one kept."""
    s, summary = figure("fig41", 2)
    check_eq(by_kind(summary, "MPI_Send"), (1, 1), "sends (logged, pruned)")
    check_eq(by_kind(summary, "MPI_Wait"), (1, 1), "waits (logged, pruned)")
    dump = run([POST, "--dump", os.path.join(s.traces, "rank-000001.mpior")]).stdout
    done = [l for l in dump.splitlines() if "mpior_complete" in l]
    check_eq(len(done), 1, f"completion records kept on the receiver ({done})")
    # Requests are numbered from 1 in posting order: r1 is 1, r2 is 2.
    check(re.search(r"\breq=1\b", done[0]), f"the kept completion is the first receive's: {done[0]}")
    s.cleanup()


def burst():
    """More sends before the first receive than a shared-memory ring holds
    (MPIOR_AUX_SHM): the rest take MPI, on two communicators sharing the one
    shadow; every auxiliary message is found (a missing one would keep its
    receive), with the rings and without."""
    for shm in ("1", "0"):
        s = Scenario(APP, ["burst"], ranks=2, env=dict(THESIS, MPIOR_AUX_SHM=shm)).run_both()
        summary = s.post()
        check_eq(by_kind(summary, "MPI_Isend"), (1, 199), f"sends (logged, pruned), MPIOR_AUX_SHM={shm}")
        check_eq(by_kind(summary, "MPI_Recv"), (1, 199), f"receives (logged, pruned), MPIOR_AUX_SHM={shm}")
        s.replay_and_check("--stall-timeout", "30")
        s.cleanup()


def rooted():
    """Bcast, Scatter, Reduce, Gather on sub-communicators: only the root's
    decision travels down, only members' decisions travel up; a root that kept
    a Gather lists the members it waited for, and the replay waits for those."""
    s, summary = figure("rooted", 6)
    check_eq(by_kind(summary, "MPI_Gather"), (24, 12), "gathers (logged, pruned)")
    for kind in ("MPI_Bcast", "MPI_Scatter"):
        logged, pruned = by_kind(summary, kind)
        check(logged > 0 and pruned > 0, f"{kind}: some kept, some pruned ({logged}, {pruned})")
    dump = run([POST, "--dump", os.path.join(s.traces, "rank-000000.mpior")]).stdout
    check("mpior_member" in dump, "the root's Gathers list the members they waited for")
    s.cleanup()


def nbcoll():
    """Nonblocking and persistent collectives are pruned by their dependency
    class, decided where they complete: in eight rounds, only the instances
    after I/O are kept (posts and completions alike), and the pruned plan
    replays the same I/O as the unpruned one."""
    s = Scenario(APP, ["nbcoll"], ranks=3).run_both()
    timeline = os.path.join(s.root, "timeline.json")
    summary = s.post("--timeline", timeline)
    check(summary["mpi"]["pruning"], "the trace was pruned")
    s.replay_and_check("--stall-timeout", "30")
    with open(timeline) as f:  # every record, unfolded, nested ones too (a held post sits under its Wait)
        slices = [(e["name"], e["pid"]) for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    mpi4 = "MPI_Start" in summary["mpi"]["by_kind"]

    def kept(kind, rank=None):
        return sum(1 for name, pid in slices if name == kind and (rank is None or pid == rank + 1))

    def pruned(kind):
        return by_kind(summary, kind)[1]

    # Iallreduce after rank 1's I/O in rounds 0 and 4 (and, without the
    # persistent Allreduce between them, after its I/O of round 5); Ibcast
    # after the root's I/O of round 2 only (a member's does not count).
    check_eq((kept("MPI_Iallreduce"), pruned("MPI_Iallreduce")), (6, 18) if mpi4 else (9, 15),
             "Iallreduce (kept, pruned)")
    check_eq((kept("MPI_Ibcast"), pruned("MPI_Ibcast")), (3, 21), "Ibcast (kept, pruned)")
    if mpi4:  # the persistent Allreduce's starts in rounds 5 and 6
        check_eq((kept("MPI_Start"), pruned("MPI_Start")), (6, 18), "MPI_Start (kept, pruned)")
    for r in range(3):
        posts = sum(kept(k, r) for k in ("MPI_Iallreduce", "MPI_Ibcast", "MPI_Start"))
        check_eq(kept("MPI_Wait", r), posts, f"rank {r}: a Wait kept per kept post")
    s.cleanup()
    same_io(APP, ["nbcoll"], 3)


def inline():
    """Allreduce and Bcast carry their decision inside the call (an extra
    element, an extra byte): the program sees the values it sees untraced,
    the instances after I/O are kept and the others pruned."""
    s, summary = figure("inline", 3)
    check_eq(s.traced_out.stdout, s.plain_out.stdout, "program output")
    # the first Allreduce of rounds 0, 2 and 4 (after a member's I/O)
    check_eq(by_kind(summary, "MPI_Allreduce"), (9, 63), "Allreduce (logged, pruned)")
    # the strided Bcast of round 3 (after its root's I/O)
    check_eq(by_kind(summary, "MPI_Bcast"), (3, 33), "Bcast (logged, pruned)")
    s.cleanup()
    same_io(APP, ["inline"], 3)


def self_comm():
    """Collectives on MPI_COMM_SELF or another communicator of one synchronise
    with no other rank, so they order no I/O: all pruned, I/O before them or
    not, decided without an exchange, also those that carry their decision
    inline on larger communicators (the program sees the values it sees
    untraced)."""
    s, summary = figure("self", 2)
    check_eq(s.traced_out.stdout, s.plain_out.stdout, "program output")
    for kind in ("MPI_Barrier", "MPI_Gather", "MPI_Scatter", "MPI_Allreduce", "MPI_Bcast"):
        check_eq(by_kind(summary, kind), (0, 4), f"{kind} on a communicator of one (logged, pruned) over both ranks")
    s.cleanup()
    for kind in ("MPI_Barrier", "MPI_Gather", "MPI_Scatter", "MPI_Allreduce", "MPI_Bcast"):
        check(summary["op_totals"][kind]["time_s"] > 0, f"{kind} on a communicator of one keeps its time")
    s.cleanup()


def prune_off():
    """MPIOR_PRUNE=0 logs every MPI call, as the foundation did."""
    s = Scenario(APP, ["fig15"], ranks=2, env={"MPIOR_PRUNE": "0"}).run_both()
    summary = s.post()
    check(not summary["mpi"]["pruning"], "pruning off")
    check_eq(summary["mpi"]["pruned"], 0, "pruned calls")
    check_eq(by_kind(summary, "MPI_Barrier"), (4, 0), "barriers (logged, pruned)")
    s.cleanup()


def exchange_untimed():
    """With pruning, a collective is the program's own call with the decision
    exchange posted before it and waited after it, out of its time: a pruned
    run's barriers take time as an unpruned run's do, in the same number, and
    the replay of each runs."""
    def barrier_s(env):
        s = Scenario("nton_barrier", [2000, 4096], ranks=2, env=env).run_both()
        summary = s.post()
        s.replay_and_check()
        s.cleanup()
        check_eq(summary["op_totals"]["MPI_Barrier"]["calls"], 2 * 2000, "barriers traced")
        return summary["op_totals"]["MPI_Barrier"]["time_s"], summary["mpi"]["pruning"]

    pruned, pruning = barrier_s({})
    check(pruning and pruned > 0, f"pruned run's barriers take time: {pruned} s")
    unpruned, pruning = barrier_s({"MPIOR_PRUNE": "0"})
    check(not pruning and unpruned > 0, f"barriers without pruning keep their time: {unpruned} s")


def gaps():
    """MPIOR_PRUNE_GAP_US: a synchronisation whose call site twice in a row
    followed 1 ms of computation or more is kept from then on, though no I/O
    preceded it, so the replay makes ranks wait for each other where the run
    did; right after another synchronisation, or with the rule off, pruned."""
    s = Scenario(APP, ["gaps"], ranks=2).run_both()
    summary = s.post()
    allreduce, barrier, send, recv = (by_kind(summary, k) for k in ("MPI_Allreduce", "MPI_Barrier", "MPI_Send",
                                                                     "MPI_Recv"))
    # 16 after computation per rank (15 on an idle machine; a gap in which
    # the rank was preempted counts for nothing), 16 in a row without: those
    # only pruned. With the rule off: 2.
    check(2 * 6 <= allreduce[0] <= 2 * 16, f"Allreduces after 3 ms of computation kept: {allreduce}")
    check_eq(sum(allreduce), 2 * 32, "Allreduces")
    check_eq(barrier, (0, 2 * 16), "Barriers right after an Allreduce (logged, pruned)")
    check(6 <= send[0] <= 16, f"sends after 3 ms of computation kept: {send}")
    check_eq(recv[0], send[0], f"receives kept with their sends: {recv} {send}")
    s.replay_and_check("--stall-timeout", "30")
    s.cleanup()
    s = Scenario(APP, ["gaps"], ranks=2, env=THESIS).run_both()
    summary = s.post()
    check_eq(by_kind(summary, "MPI_Allreduce"), (2, 2 * 31), "Allreduces with MPIOR_PRUNE_GAP_US=0: the first kept")
    # The Allreduces synchronised the two ranks, and no I/O came since.
    check_eq(by_kind(summary, "MPI_Send"), (0, 16), "sends with MPIOR_PRUNE_GAP_US=0")
    s.cleanup()


def member_wait():
    """A pruned member of a Gather leaves its wait for the root out of its
    computation (preload/member_wait.hpp): rank 1, with no I/O, waited 30 ms
    for rank 0 in 12 of its 24 Gathers (360 ms); what the replay passes as its
    computation is its calls' cost, not that wait. That cost grows with the
    load (a rendezvous of 256 KiB each: 35-150 ms in all at a load of 7-15 on
    2 cores), hence waits ten times as long as the calls. (The Gathers'
    summed time is no check: the root's share grows with load.) Rank 0 keeps
    its computation: a wait for a CPU the tracer had left out of its own
    time, a pruned collective's exchange, must not be left out of the
    computation after it again (stolen_time.cpp)."""
    s = Scenario(APP, ["member_wait"], ranks=2).run_both()
    summary = s.post()
    # Kept: the root's, and the member's first (no rank had met another since MPI_Init).
    check_eq(by_kind(summary, "MPI_Gather"), (25, 23), "Gathers (logged, pruned)")
    s.replay_and_check("--stall-timeout", "30")
    ranks = {r["rank"]: r["predicted"] for r in s.report["per_rank"]}
    # nanosleep makes rank 0's 360 ms a floor whatever the load, and so the
    # wait rank 1 would replay as computation if it were counted: counted, its
    # computation is 360 ms plus its 23 pruned calls' own cost; left out, that
    # cost alone.
    check(ranks[0]["compute_s"] >= 0.36, f"rank 0 replays its 12 x 30 ms of computation: {ranks[0]}")
    check(ranks[1]["compute_s"] < 0.36, f"rank 1 replays no waiting as computation: {ranks[1]}")
    s.cleanup()


def streak():
    """MPIOR_PRUNE_STREAK: where every member kept a communicator's collectives again and again (I/O before each), the
    members keep the next ones without exchanging a decision, then ask again; the same calls are kept as with an
    exchange for every one, but for those still on the streak when the I/O stopped, on every rank alike (the replay
    of the plan meets them), and the decisions asked for are a few."""
    def traced(streak):
        env = dict(THESIS, MPIOR_PRUNE_STREAK=streak, MPIOR_LOG="info")
        s = Scenario(APP, ["streak"], ranks=2, env=env).run_both()
        summary = s.post()
        counts = re.findall(r"rank (\d): pruning exchanged (\d+) collective decisions, kept (\d+) on a streak",
                            s.traced_out.stderr)
        check_eq(len(counts), 2, f"each rank's pruning counts:\n{s.traced_out.stderr}")
        s.replay_and_check("--stall-timeout", "30")
        s.cleanup()
        return summary, {int(r): (int(x), int(k)) for r, x, k in counts}

    summary, counts = traced("0")
    check_eq(by_kind(summary, "MPI_Barrier"), (2 * 64, 2 * 2000), "Barriers (logged, pruned), every decision asked")
    check_eq(by_kind(summary, "MPI_Scatter"), (2 * 64, 2 * 500), "Scatters (logged, pruned), every decision asked")
    check_eq(counts, {0: (2064 + 564, 0), 1: (2064 + 564, 0)}, "(exchanged, kept on a streak) per rank")
    summary, counts = traced("16")
    for kind, kept, dropped in (("MPI_Barrier", 64, 2000), ("MPI_Scatter", 64, 500)):
        logged, pruned = by_kind(summary, kind)
        check(logged % 2 == 0 and 2 * kept <= logged <= 2 * (kept + 1024) and logged + pruned == 2 * (kept + dropped),
              f"{kind}s (logged, pruned) on a streak of 16: {(logged, pruned)}")
    check_eq(counts[0], counts[1], "(exchanged, kept on a streak): the same on both ranks")
    exchanged, skipped = counts[0]
    check(exchanged + skipped == 2064 + 564 and skipped > 64 and exchanged < 2064 + 564 - 64,
          f"decisions exchanged and kept on a streak: {counts[0]}")


def io_log(s, name):
    path = os.path.join(s.root, name)
    s.replay_and_check("--io-log", path)
    with open(path) as f:
        return f.read()


def same_io(app, args, ranks):
    """Replaying the pruned and the unpruned plan issues the same I/O in the
    same per-rank order."""
    logs = []
    for prune in ("0", "1"):
        s = Scenario(app, args, ranks=ranks, env={"MPIOR_PRUNE": prune}).run_both()
        s.post()
        log = io_log(s, "io.log")
        # Paths differ between the two runs' directories only by their root.
        logs.append(log.replace(s.work, "<work>"))
        s.cleanup()
    check(len(logs[0]) > 0, "the replay issued I/O")
    check_eq(logs[1], logs[0], f"I/O replayed from the pruned plan of {app} (against the unpruned plan's)")


def equivalence():
    for app, args, ranks in (("nton_barrier", [30, 1024], 4), ("nto1", [10, 4096], 4),
                             ("serial_gather", [10, 64], 4), ("checkpoint_sim", [20, 1000, 5, 4096], 4),
                             ("wildcard", [6], 4)):
        same_io(app, args, ranks)


if __name__ == "__main__":
    main({f.__name__: f for f in (fig15, fig14, fig41, burst, rooted, nbcoll, inline, self_comm, prune_off, equivalence,
                                        exchange_untimed, gaps, member_wait, streak)})
