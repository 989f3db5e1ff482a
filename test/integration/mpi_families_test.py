#!/usr/bin/env python3
"""The whole MPI under the tracer (issue 11): test/apps/mpi_families.c runs
one family of MPI calls per mode. Each runs untraced and traced (same output,
same files), its trace posts, and the replay recreates the files with no
error and no failed call; with pruning on (the default) and, for some, off.
One scenario per meson test: mpi_families_test.py MODE."""
import json
import os
import re

from harness import POST, REPLAY, Scenario, check, check_eq, main, mpirun, run
from timeline_check import validate

APP = "mpi_families"


def family(mode, ranks=4, env=None, check_dump=None, mpi_replay=False, mpi_procs=None):
    def scenario():
        s = Scenario(APP, [mode], ranks=ranks, env=env).run_both()
        check(s.plain_out.stdout.startswith(mode + " "), f"program output: {s.plain_out.stdout!r}")
        # nothing of the tracer's (transport warnings, log lines) on stderr
        check_eq(s.traced_out.stderr, s.plain_out.stderr, "stderr of the traced run")
        timeline = os.path.join(s.root, "timeline.json")
        summary = s.post("--timeline", timeline)
        with open(timeline) as f:
            validate(json.load(f), timeline)  # every new record kind shows in a valid timeline
        s.replay_and_check("--stall-timeout", "20")
        check_eq(s.report["errors"]["count"], 0, f"replay errors: {s.report['errors']}")
        # real messages and collectives: one process per rank, or blocks of ranks
        for procs in (mpi_procs or [ranks]) if mpi_replay else []:
            fs, report = os.path.join(s.root, f"fs_mpi{procs}"), os.path.join(s.root, f"mpi{procs}.json")
            run(mpirun(procs) + [REPLAY, "-q", "--mpi", "--fs", fs, "--stall-timeout", "20", "--json", report, s.plan],
                timeout=120)
            with open(report) as f:
                errors = json.load(f)["errors"]
            check_eq(errors["count"], 0, f"--mpi replay errors with {procs} processes: {errors}")
        if check_dump:
            dumps = [run([POST, "--dump", os.path.join(s.traces, f"rank-{r:06d}.mpior")]).stdout for r in range(ranks)]
            check_dump(summary, dumps)
        s.cleanup()
    return scenario


def count(dumps, word):
    return sum(d.count(word) for d in dumps)


def persistent_dump(summary, dumps):
    # created once, started many times: 2 inits + 1 collective init per rank
    check_eq(count(dumps, "MPI_Send_init"), 4, "MPI_Send_init records")
    check(count(dumps, "MPI_Start") >= 4 * 3, "MPI_Start records (3 single starts of the collective per rank)")
    check(count(dumps, "MPI_Startall") >= 4, "MPI_Startall records")


def cancel_dump(summary, dumps):
    check(all("MPI_Cancel" in d for d in dumps), "every rank recorded its MPI_Cancel")


def intercomm_dump(summary, dumps):
    check(all("MPI_Intercomm_create" in d and "MPI_Intercomm_merge" in d for d in dumps), "intercommunicator calls")
    # at 3 ranks, evens (2) and odds (1): an alltoall's arrays have the remote
    # group's size, 8 bytes per remote rank
    for r, d in enumerate(dumps):
        remote = 1 if r % 2 == 0 else (len(dumps) + 1) // 2
        check(re.search(rf"MPI_Alltoallv comm=\d+ bytes={8 * remote} ", d), f"rank {r}'s Alltoallv bytes")


def sessions_dump(summary, dumps):
    check(all("MPI_Session_init" in d and "MPI_Comm_create_from_group" in d for d in dumps), "Sessions calls")


def topology_dump(summary, dumps):
    # the chain's neighbours and the ring's, recorded under the calls that
    # made them (the ring's four fold into a loop of two)
    for r, d in enumerate(dumps):
        lines = [ln for ln in d.splitlines() if "mpior_neighbor depth=1" in ln]
        check(len(lines) >= 2, f"rank {r}'s mpior_neighbor records: {lines}")
        check(any("comm=2" in ln for ln in lines) and any("comm=3" in ln for ln in lines),
              f"rank {r}: neighbours of both topologies: {lines}")
    check(all("MPI_Neighbor_allgather" in d for d in dumps), "neighbourhood collectives recorded")


def partitioned_dump(summary, dumps):
    for r in (0, 2):
        check("MPI_Psend_init" in dumps[r] and "MPI_Pready_range" in dumps[r] and "MPI_Pready_list" in dumps[r],
              f"rank {r}'s partitioned send")
    for r in (1, 3):
        check("MPI_Precv_init" in dumps[r] and "MPI_Parrived" in dumps[r], f"rank {r}'s partitioned receive")
    check(all("MPI_Iallreduce_c" in d and "MPI_Allgather_init_c" in d for d in dumps), "large-count collectives")
    check(all("MPI_Isendrecv " in d and "MPI_Isendrecv_replace" in d for d in dumps), "nonblocking send-receives")


def types_dump(summary, dumps):
    # every message's bytes, from predefined types, derived ones, and one made
    # after another was freed: on the sender from the type's size, on the
    # receiver from the status
    for r in (0, 2):
        sent = [int(b) for b in re.findall(r"MPI_Send .*?bytes=(\d+)", dumps[r])]
        check_eq(sent, [12, 16, 12, 40], f"rank {r}'s MPI_Send bytes")
    for r in (1, 3):
        got = [int(b) for b in re.findall(r"(?:MPI_Recv|mpior_complete) .*?bytes=(\d+)", dumps[r])]
        check_eq(got, [12, 16, 12, 40], f"rank {r}'s received bytes")


def bypass():
    """A message sent with PMPI_Send carries no auxiliary message: the
    receiver waits a bounded time for one, then logs the receive (no hang,
    same output); mpior-post then names the send the trace lacks."""
    s = Scenario(APP, ["bypass"], ranks=4).run_both()
    check_eq(s.traced_out.stderr, s.plain_out.stderr, "stderr of the traced run")
    p = run([POST, s.traces], expect_rc=1)
    check("receive without a matching send" in p.stderr and "tag 12" in p.stderr, f"mpior-post said: {p.stderr}")
    s.cleanup()


SCENARIOS = {
    "bypass": bypass,
    "persistent": family("persistent", check_dump=persistent_dump),
    "persistent_unpruned": family("persistent", env={"MPIOR_PRUNE": "0"}, check_dump=persistent_dump),
    "ibsend": family("ibsend"),
    "mprobe": family("mprobe"),
    "mprobe_unpruned": family("mprobe", env={"MPIOR_PRUNE": "0"}),
    "cancel": family("cancel", check_dump=cancel_dump),
    "requests": family("requests"),
    "icoll": family("icoll"),
    "neighbor": family("neighbor"),
    "idup": family("idup"),
    "intercomm": family("intercomm", ranks=3, check_dump=intercomm_dump),  # groups of 2 and 1
    "attr": family("attr"),
    "sessions": family("sessions", check_dump=sessions_dump),
    "grequest": family("grequest"),
    "threads": family("threads"),
    "topology": family("topology", check_dump=topology_dump),
    "topology_mpi": family("topology", mpi_replay=True),
    # --mpi replay of nonblocking and persistent collectives (met where they
    # complete), Comm_idup, rooted intercommunicator collectives (blocking
    # and nonblocking: the root and the other group only)
    "icoll_mpi": family("icoll", mpi_replay=True),
    "persistent_mpi": family("persistent", mpi_replay=True),
    "idup_mpi": family("idup", mpi_replay=True, mpi_procs=[4, 2]),
    # 1,875 communicators made and freed one after another (each used, a
    # receive completed after its free): the MPI replay makes and frees them
    # at their records, also with blocks of ranks
    "comm_cycle": family("comm_cycle", ranks=2, env={"MPIOR_PRUNE": "0"}, mpi_replay=True, mpi_procs=[2, 1]),
    "intercomm_mpi": family("intercomm", mpi_replay=True),
    "cancel_mpi": family("cancel", mpi_replay=True),
    "partitioned": family("partitioned", check_dump=partitioned_dump),
    "types": family("types", env={"MPIOR_PRUNE": "0"}, check_dump=types_dump),
}

if __name__ == "__main__":
    main(SCENARIOS)
