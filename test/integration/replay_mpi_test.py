"""mpior-replay --mpi under real mpirun.mpich: one process per rank and
blocks of ranks per process (K < ranks), real messages and collectives on the
plan's communicators, MPI-IO through MPI_File_* (proved by tracing the replay
itself), the same per-rank file calls as the threaded replay (--io-log), and
what threads and MPI mode share (cost classes, calibrated costs applied,
calls and bytes, final sizes), where pruning left a root's Gathers without
their members too, and the replay's own lateness passed through MPI mode's
collectives and messages."""
import json
import os
import shutil

from harness import LIB, POST, REPLAY, Scenario, check, check_eq, file_entry, main, run


def replay_mpi(s, procs, name, *extra, env=None):
    """mpirun -n procs mpior-replay --mpi; returns (report, io log lines)."""
    fs = os.path.join(s.root, f"fs-{name}")
    report, log = os.path.join(s.root, f"{name}.json"), os.path.join(s.root, f"{name}.log")
    full = dict(os.environ)
    full.update(env or {})
    out = run(["mpirun.mpich", "-n", str(procs), REPLAY, "--mpi", "--fs", fs, "--json", report, "--io-log", log,
               s.plan] + list(extra), env=full)
    check("predicted" in out.stdout and out.stdout.count("replay of") == 1, f"one report, from rank 0:\n{out.stdout}")
    with open(report) as f:
        r = json.load(f)
    with open(log) as f:
        lines = f.read().splitlines()
    check_eq(r["errors"]["count"], 0, f"failed calls in the {name} replay: {r['errors']['first']}")
    check_eq(sorted({t["rank"] for t in r["per_rank"]}), list(range(r["ranks"])), f"ranks in the {name} report")
    for name_, size in s.written.items():
        replayed = os.path.join(fs, s.abs(name_).lstrip("/"))
        check(os.path.isfile(replayed), f"{name} replay did not recreate {name_}")
        check_eq(os.path.getsize(replayed), size, f"{name} replayed size of {name_}")
    return r, lines


def replay_threads(s, *extra):
    s.fs = os.path.join(s.root, "fs-threads")
    log = os.path.join(s.root, "io.log")
    s.replay_and_check("--io-log", log, *extra)
    with open(log) as f:
        return s.report, f.read().splitlines()


def check_shared(threads, mpi, procs, what):
    """What MPI mode shares with the threads' replay of one plan whatever the load (times follow it, and two modes'
    predictions are compared by bench/, not here): the calibration (cost classes), each rank's events, the calls and
    bytes by operation, the replayed files' final sizes, and the calibrated costs applied (counted whole, however
    much of a cost was slept): one process holding every rank applies the threads' to the same calls, one process
    per rank none (MPI's costs are its own), blocks of ranks only those of calls within their process."""
    check_eq(mpi["comm_costs"], threads["comm_costs"], f"{what}: cost classes")

    def ops(r):
        return {k: (v["count"], v["bytes"]) for k, v in r["ops"].items()}

    check_eq(ops(mpi), ops(threads), f"{what}: (calls, bytes) by operation against threads")
    check_eq(mpi["final_sizes"], threads["final_sizes"], f"{what}: final sizes checked against threads'")

    def per_rank(r):
        return {t["rank"]: (t["events"], t["predicted"]["costed_calls"], t["predicted"]["costs_s"])
                for t in r["per_rank"]}

    got, want = per_rank(mpi), per_rank(threads)
    check_eq({r: v[0] for r, v in got.items()}, {r: v[0] for r, v in want.items()}, f"{what}: events per rank")
    check(all(v[1] > 0 for v in want.values()), f"{what}: threads' (events, costed calls, costs s) per rank {want}")
    if procs == 1:
        check_eq(got, want, f"{what}: (events, costed calls, costs s) per rank against threads")
    elif procs == mpi["ranks"]:
        check_eq({v[1:] for v in got.values()}, {(0, 0)}, f"{what}: calibrated costs applied {got}")
    else:
        check(all(got[r][1] <= want[r][1] and got[r][2] <= want[r][2] for r in want),
              f"{what}: (events, costed calls, costs s) per rank {got}, threads {want}")


def check_startup(threads, mpi, what):
    """MPI mode's report splits off start-up (to MPI_Init's return) as the threads' does: each rank's traced time
    after it is the threads' (MPI mode leaves out the launch offsets, which mpirun made), the replayed start-up
    took place, and the time after it is shorter than the whole."""
    def after(r):
        return {t["rank"]: t["traced_s"] - t["traced_startup_s"] for t in r["per_rank"]}
    tr, mp = after(threads), after(mpi)
    for rank, t in tr.items():
        check(abs(mp[rank] - t) < 1e-6,
              f"{what}: rank {rank}'s traced time after start-up {mp[rank]} s, threads' {t} s")
    for t in mpi["per_rank"]:
        check(t["traced_startup_s"] > 0 and t["startup_s"] > 0,
              f"{what}: rank {t['rank']}'s start-up, traced {t['traced_startup_s']} s, replayed {t['startup_s']} s")
    check(0 < mpi["after_startup_s"] < mpi["replay_s"],
          f"{what}: after start-up {mpi['after_startup_s']} s of {mpi['replay_s']} s")


def halo():
    """The bundled solver (halo exchange, Allreduce, checkpoints), unpruned, at
    4 ranks: 4 processes and 2 processes of 2 ranks."""
    s = Scenario("checkpoint_sim", [12, 8000, 4, 4096], ranks=4, env={"MPIOR_PRUNE": "0"}).run_both()
    try:
        s.post()
        threads, tlog = replay_threads(s)
        check(len(tlog) > 10, f"io log too short: {tlog}")
        for procs in (4, 2):
            mpi, mlog = replay_mpi(s, procs, f"mpi{procs}")
            check_eq(mlog, tlog, f"file calls per rank, MPI mode with {procs} processes against threads")
            check_startup(threads, mpi, f"{procs} processes")
            check_shared(threads, mpi, procs, f"{procs} processes")
    finally:
        s.cleanup()


def comms():
    """Communicators from MPI_Comm_split at 6 ranks: 6 and 4 processes (blocks of 2 and 1)."""
    s = Scenario("comm_split", [4, 2048], ranks=6, env={"MPIOR_PRUNE": "0"}).run_both()
    try:
        s.post()
        threads, tlog = replay_threads(s)
        for procs in (6, 4):
            mpi, mlog = replay_mpi(s, procs, f"mpi{procs}")
            check_eq(mlog, tlog, f"file calls per rank, MPI mode with {procs} processes against threads")
    finally:
        s.cleanup()


def pruned():
    """A Gather pruned on every member but its root (serial_gather: rank 1 has
    no I/O to pass on) moves no real message in MPI mode, yet the root's call
    costs what it did: its calibrated cost, as the threads charge it."""
    steps = 4000
    s = Scenario("serial_gather", [steps, 1024], ranks=2).run_both()
    try:
        s.post()
        threads, _ = replay_threads(s)
        mpi, _ = replay_mpi(s, 2, "mpi2")
        cost = max(c["cost_us"] for c in threads["comm_costs"] if c["op"] == "gather") * 1e-6
        gathers = steps * cost
        comm = [{t["rank"]: t["predicted"]["comm_s"] for t in r["per_rank"]}[0] for r in (threads, mpi)]
        check(gathers > 0 and comm[0] >= gathers, f"the threads charge the root's Gathers: {comm}, {gathers:.6f} s")
        # The root's Gathers (rank 1's arrive first) cost about a microsecond each: a few ms in all, below
        # the run-to-run spread of either mode's communication time, so the modes are compared by the
        # calibration each charges the root's pruned calls with, not by their times.
        own = [[c for c in r["comm_costs"] if c["op"] == "gather"] for r in (threads, mpi)]
        check(own[0] and own[1] == own[0], f"the Gathers' calibrated cost, MPI mode {own[1]} against threads {own[0]}")
        check(comm[1] >= gathers, f"root's communication in MPI mode {comm[1]:.6f} s, below its Gathers' cost "
              f"{gathers:.6f} s")
    finally:
        s.cleanup()


def mpiio():
    """MPI-IO plan (every form) replayed through MPI_File_*: the replay itself,
    traced, makes the MPI-IO calls and moves the program's MPI-IO bytes."""
    s = Scenario("mpiio_forms", ranks=3).run_both()
    try:
        summary = s.post()
        threads, tlog = replay_threads(s, "--io-level", "mpiio")
        mpi, mlog = replay_mpi(s, 3, "native")
        check_eq(mlog, tlog, "MPI-IO calls per rank, MPI mode against threads at --io-level mpiio")
        check_eq(mpi["ops"]["MPI_File_write_all"]["count"], 3, "MPI_File_write_all replayed")
        views = s.abs("views.dat")
        want = file_entry(summary, views)["mpiio"]["bytes_written"]
        # The replay under the tracer: its MPI-IO calls are real MPI_File_* calls
        # (made by a second thread, beside the main thread's collectives on the
        # same communicators: mpior-post orders them by the tracer's numbers).
        traces = os.path.join(s.root, "replay-traces")
        replay_mpi(s, 3, "traced", env={"LD_PRELOAD": LIB, "MPIOR_TRACE_DIR": traces})
        run([POST, traces])
        with open(os.path.join(traces, "plan", "summary.json")) as f:
            replayed = json.load(f)
        fs_views = os.path.join(s.root, "fs-traced", views.lstrip("/"))
        check_eq(file_entry(replayed, fs_views)["mpiio"]["bytes_written"], want,
                 "MPI-IO bytes the MPI-mode replay wrote to views.dat through MPI_File_*")
        check(replayed["ops"].get("MPI_File_write_at_all_c", 0) >= 3, f"collective writes: {replayed['ops']}")
        # Blocks of ranks: each rank opens alone, collective forms independent.
        mpi1, mlog1 = replay_mpi(s, 1, "one")
        check_eq(mlog1, tlog, "MPI-IO calls per rank, one process holding 3 ranks")
    finally:
        s.cleanup()


def lateness():
    """MPI mode passes the replay's own lateness through its collectives, as the threads do, and leaves what no gap
    paid back out of the prediction: a write and a Barrier a step, no gap between them, leaves every rank with the
    same lateness after the last collective (Finalize's agreement), more than none, at one process per rank and with
    one process holding both (its ranks agree among themselves first). Each of the program's Barriers is replayed
    as an MPI_Barrier (then the agreement): the agreement alone in its place cost less than MPICH's Barrier.
    Barriers with no gap between them agree at once, in a blocking MPI_Allreduce (nonblocking costs more in MPICH),
    the same Barriers in every replay of the plan."""
    s = Scenario("nton_barrier", [20000, 512], ranks=2, env={"MPIOR_PRUNE": "0"}).run_both()
    try:
        s.post()
        blocking = []
        for name in ("traced", "again"):
            traces = os.path.join(s.root, f"replay-{name}")
            replay_mpi(s, 2, name, env={"LD_PRELOAD": LIB, "MPIOR_TRACE_DIR": traces, "MPIOR_PRUNE": "0"})
            run([POST, traces])
            with open(os.path.join(traces, "plan", "summary.json")) as f:
                replayed = json.load(f)["ops"]
            check(replayed.get("MPI_Barrier", 0) >= 2 * 20000,
                  f"the program's 40,000 Barriers as MPI_Barrier: {replayed}")
            # An agreement after each; blocking (MPI_Allreduce) unless the plan had a gap of 100 us or more since
            # the last Barrier (a preemption the tracer did not see): a few, not most. The watchdog's
            # MPI_Iallreduce runs on wall time, so the blocking ones are what two replays must share.
            agreed = replayed.get("MPI_Allreduce", 0) + replayed.get("MPI_Iallreduce", 0)
            check(agreed >= 2 * 20000, f"an agreement after each: {replayed}")
            blocking.append(replayed.get("MPI_Allreduce", 0))
            check(blocking[-1] > 2 * 20000 - 400, f"none deferred (DeferredAgreement) but a few: {replayed}")
        # The forms follow the plan, not the replay's timeline (which holds its measured I/O: each preemption in a
        # replayed write deferred the next Barrier, 500-1,700 of 40,000 at load 10).
        check_eq(blocking[1], blocking[0], "blocking agreements in two replays of one plan")
        for procs in (2, 1):
            mpi, _ = replay_mpi(s, procs, f"mpi{procs}")
            unpaid = {t["rank"]: t["predicted"]["unpaid_s"] for t in mpi["per_rank"]}
            check(unpaid[0] > 0, f"{procs} processes: no lateness left of 20,000 gapless steps: {unpaid}")
            check_eq(unpaid[1], unpaid[0], f"{procs} processes: lateness each rank left the last collective with")
            check(mpi["replay_s"] < mpi["wall_s"], f"{procs} processes: predicted {mpi['replay_s']} s, "
                  f"wall {mpi['wall_s']} s: the lateness is left out")
    finally:
        s.cleanup()


def deferred():
    """Where Barriers are far apart (checkpoint_sim's checkpoints, 6 ms), a process holding one rank starts the
    Barrier's agreement and completes it in the next gap instead of spinning in it (DeferredAgreement): an
    MPI_Iallreduce after each checkpoint's Barrier. A process holding two ranks completes its at once, nonblocking
    too, so the forms match: 4 ranks on 4 and on 3 processes (blocks of 2, 1, 1), the replay ends and its file
    calls are the threads'."""
    s = Scenario("checkpoint_sim", [12, 2000, 3, 4096], ranks=4, env={"MPIOR_PRUNE": "0"}).run_both()
    try:
        s.post()
        threads, tlog = replay_threads(s)
        for procs in (4, 3):
            traces = os.path.join(s.root, f"replay-traces{procs}")
            _, mlog = replay_mpi(s, procs, f"mpi{procs}", env={"LD_PRELOAD": LIB, "MPIOR_TRACE_DIR": traces,
                                                                "MPIOR_PRUNE": "0"})
            check_eq(mlog, tlog, f"file calls per rank, MPI mode with {procs} processes against threads")
            run([POST, traces])
            with open(os.path.join(traces, "plan", "summary.json")) as f:
                replayed = json.load(f)["ops"]
            # 4 checkpoints: one each per process of one rank, one per process of two (its last member's).
            check(replayed.get("MPI_Iallreduce", 0) >= 4 * procs, f"{procs} processes: {replayed}")
    finally:
        s.cleanup()


def messages():
    """A receive passes its sender's lateness on in MPI mode, as in the threads: rank 0 writes 16 KiB and passes a token
    on with no gap between its calls, rank 1 waits for each token and computes 500 ns. The replay's own dispatch makes
    rank 0 late; rank 1, which waited for it, leaves each receive as late and keeps it past its short gaps, so the
    last collective (Finalize's agreement) leaves both with it and it is left out of the prediction. Without it
    rank 1's gaps paid back its own dispatch only and it arrived on time, late in reality: nothing was left out.
    Against the threads' replay of the same plan (the same rule, Channels::wait): at least a quarter of theirs, in
    one of five replays, wherever rank 1 waited for its sender most of the replay. The report says so
    (`sender_wait_s`, from the messages' stamps): rank 1's receives' own time (`wait_s`) also holds MPI's cost of
    each receive and the time its process was held off a core, which on a busy machine puts rank 1 behind rank 0
    for good; its messages are then there when it comes, and it is late by its own account only. Between processes
    MPI's costs are its own: no calibrated cost applied. One process holding both ranks passes their messages as the
    threads do: each rank leaves with the same lateness, and it applies the threads' calibrated costs to the same
    calls. Their predictions are not compared: how much of a cost is slept, and how long a hand-off takes, follow
    the machine's load."""
    steps = 10000
    s = Scenario("pipeline", [steps, 16384, 500], ranks=2).run_both()
    try:
        s.post()
        threads, tlog = replay_threads(s)
        t_unpaid = threads["per_rank"][1]["predicted"]["unpaid_s"]
        check(t_unpaid > 0, f"threads: no lateness left of 20,000 gapless steps at rank 0: {t_unpaid}")
        check_eq([threads["ops"][op]["count"] for op in ("MPI_Send", "MPI_Recv")], [steps, steps], "messages replayed")
        costed = {t["rank"]: t["predicted"]["costed_calls"] for t in threads["per_rank"]}
        check_eq(costed, {0: steps, 1: steps}, "threads: calls with a calibrated cost (each send, each receive)")
        one, olog = replay_mpi(s, 1, "mpi1")  # both ranks' messages within one process: as the threads pass them
        check_eq(olog, tlog, "file calls per rank, one process against threads")
        check_eq(len({t["predicted"]["unpaid_s"] for t in one["per_rank"]}), 1, "one process: lateness left")
        check_shared(threads, one, 1, "one process")
        # Rank 1 passes rank 0's lateness on only where it waited for rank 0's tokens. Where rank 1 is the slower
        # one (its process held off a core, MPI's receives), it finds each token there and rank 0's sends absorb
        # its lateness against rank 1's pace. Such a replay says nothing of the rule; one where rank 1 waited for
        # its sender for most of the replay must pass the lateness on.
        runs, waited = [], []
        for attempt in range(5):
            mpi, _ = replay_mpi(s, 2, f"mpi2-{attempt}")
            unpaid = {t["rank"]: t["predicted"]["unpaid_s"] for t in mpi["per_rank"]}
            wait1 = next(t["predicted"]["sender_wait_s"] for t in mpi["per_rank"] if t["rank"] == 1)
            check_eq(next(t["predicted"]["sender_wait_s"] for t in mpi["per_rank"] if t["rank"] == 0), 0,
                     "2 processes: rank 0's wait for a sender (it receives nothing)")
            check_eq(unpaid[0], unpaid[1], "2 processes: lateness each rank left Finalize with")
            check_eq([(t["predicted"]["costed_calls"], t["predicted"]["charged_s"]) for t in mpi["per_rank"]],
                     [(0, 0), (0, 0)], "2 processes: (calls, seconds) charged calibrated costs for MPI's own messages")
            runs.append((unpaid[1], wait1, mpi["replay_s"]))
            if unpaid[1] >= t_unpaid / 4:
                break
            if wait1 >= mpi["replay_s"] / 2:
                waited.append(runs[-1])
        else:
            check(not waited, f"2 processes: rank 1 waited for rank 0 most of the replay and left Finalize without "
                  f"its lateness: (lateness left, rank 1's wait for its sender, predicted s) {waited} of {runs}; "
                  f"threads' replay: "
                  f"{t_unpaid} s left, {threads['replay_s']} s predicted")
            print(f"note: rank 1 never waited for rank 0 most of an MPI-mode replay in 5 (rank 1 the slower side "
                  f"here): (lateness left, rank 1's wait for its sender, predicted s) {runs}")
    finally:
        s.cleanup()


def handoff():
    """Three ranks, two processes: ranks 0 and 1 share one. Each step rank 0 sends 256 KiB to rank 2, in the other
    process, and receives a token from rank 1 before waiting for its send; rank 1 computes 100 us first. Rank 0's
    receive waits within its process, and the wait keeps testing the send in flight (Channels::wait's drive: MPI
    moves a message only inside MPI calls, and rank 1's thread is in a gap). The replay ends, rank 2's file is
    written, the file calls are the threads', and so is what the plan decides (check_shared)."""
    s = Scenario("handoff", [30, 262144, 100000], ranks=3).run_both()
    try:
        s.post()
        threads, tlog = replay_threads(s)
        mpi, mlog = replay_mpi(s, 2, "mpi2")
        check_eq(mlog, tlog, "file calls per rank, MPI mode with 2 processes against threads")
        check_shared(threads, mpi, 2, "2 processes")
    finally:
        s.cleanup()


def polled():
    """MPI_Test that finds nothing: MPI mode calls no MPI for it (its receive completes at the Test that found the
    message), and charges its calibrated cost as the threads do. The hand-off above, unpruned, rank 2 receiving by
    MPI_Irecv and MPI_Test until it completes (thousands of tests a step): rank 2's replayed sends and receives
    cross processes, MPI's own, so the calls it is charged are its empty tests (none before: each cost nothing)."""
    s = Scenario("handoff", [10, 262144, 100000, 1], ranks=3, env={"MPIOR_PRUNE": "0"}).run_both()
    try:
        s.post()
        tests = s.summary["ops"].get("MPI_Test", 0)
        check(tests > 1000, f"MPI_Test calls in the plan: {tests}")
        threads, tlog = replay_threads(s)
        mpi, mlog = replay_mpi(s, 2, "mpi2")
        check_eq(mlog, tlog, "file calls per rank, MPI mode with 2 processes against threads")
        # A cost is slept or, when the rank runs late (a late sender left it behind), paid back against its
        # lateness; which, and how long a sleep overshoots, is the load's. The calls charged are the plan's:
        # every Test but those that found one of the hand-off's messages.
        costed = {t["rank"]: t["predicted"]["costed_calls"] for t in mpi["per_rank"]}
        steps = int(s.args[0])
        check(costed[2] >= tests - steps, f"rank 2's empty tests charged in MPI mode: {costed[2]} of {tests} tests")
        check_shared(threads, mpi, 2, "2 processes")
    finally:
        s.cleanup()


def placement():
    """Where the ranks ran: traced under mpirun -bind-to core, the plan says each rank was bound to one CPU, and
    the replay runs each rank's thread on a CPU of its own (threads: blocks of the replayer's CPUs; MPI mode
    under -bind-to core: the CPU mpirun gave the process); --bind none leaves them free, and an unbound trace is
    replayed unbound unless --bind core. Unbound on two cores, checkpoint_sim's ranks ran 12-15% slower and
    spread 15-20% (fidelity_bench.py): a replay placed otherwise than its program predicts another run."""
    cpus = len(os.sched_getaffinity(0))
    bound = Scenario("checkpoint_sim", [6, 1000, 3, 4096], ranks=2)
    bound.command = lambda: ["mpirun.mpich", "-bind-to", "core", "-n", "2", bound.app] + bound.args
    free = Scenario("checkpoint_sim", [6, 1000, 3, 4096], ranks=2)
    try:
        for s in (bound.run_both(), free.run_both()):
            s.post()
        dump = run([POST, "--dump", bound.plan]).stdout
        want = "bound to 1 of" if cpus >= 2 else "unbound (1 CPUs)"
        check_eq(dump.count(want), 2, f"ranks traced under -bind-to core:\n{dump[:600]}")
        check_eq(run([POST, "--dump", free.plan]).stdout.count(f"unbound ({cpus} CPUs)"), 2, "ranks traced unbound")

        def placed(r):
            return sorted((t["rank"], t["cpus"], t["first_cpu"]) for t in r["per_rank"])

        def one_each(r, what):
            got = placed(r)
            check(all(c == 1 for _, c, _ in got) and len({f for _, _, f in got}) == 2,
                  f"{what}: each rank on a CPU of its own: (rank, cpus, first) {got}; {r['placement']}")

        def every_cpu(r, what):
            check(all(c == cpus for _, c, _ in placed(r)), f"{what}: every CPU: {placed(r)}; {r['placement']}")

        def replay(s, name, *extra):
            report = os.path.join(s.root, f"{name}.json")
            run([REPLAY, "-q", "--fs", os.path.join(s.root, f"fs-{name}"), "--json", report, s.plan] + list(extra))
            with open(report) as f:
                s.report = json.load(f)
            check_eq(s.report["errors"]["count"], 0, f"failed calls in the {name} replay")
            return s.report

        if cpus < 2:
            return
        one_each(replay(bound, "auto"), "threads, bound trace")
        check("as traced" in bound.report["placement"], bound.report["placement"])
        every_cpu(replay(bound, "none", "--bind", "none"), "threads, --bind none")
        every_cpu(replay(free, "auto"), "threads, unbound trace")
        # Then, with autogroup scheduling, the replay's own group (replayer/sched_group.hpp).
        placement = free.report["placement"].split("; ")
        check_eq(placement[0], "unbound, as the traced ranks ran", "placement of an unbound trace")
        group = placement[1:] or ["(no autogroup)"]
        check(len(placement) <= 2 and group[0].startswith(("(no autogroup)", "one scheduling group weighted as 2 "
                                                           "sessions", "warning: ")), f"scheduling group: {placement}")
        one_each(replay(free, "core", "--bind", "core"), "threads, unbound trace, --bind core")
        run(["mpirun.mpich", "-bind-to", "core", "-n", "2", REPLAY, "--mpi", "-q", "--fs",
             os.path.join(bound.root, "fs-mpi"), "--json", os.path.join(bound.root, "mpi.json"), bound.plan])
        with open(os.path.join(bound.root, "mpi.json")) as f:
            mpi = json.load(f)
        one_each(mpi, "MPI mode under -bind-to core")
        mpi, _ = replay_mpi(bound, 2, "mpi_free")
        every_cpu(mpi, "MPI mode, unbound mpirun")
        check("mpirun left this process every CPU" in mpi["placement"], mpi["placement"])
        p = run([REPLAY, "--bind", "socket", "--fs", os.path.join(bound.root, "fs-bad"), bound.plan], expect_rc=None)
        check(p.returncode != 0 and "--bind" in p.stderr and "Traceback" not in p.stderr, f"--bind socket: {p.stderr}")
    finally:
        bound.cleanup()
        free.cleanup()


def pwrite_ranks_of(plan):
    """The rank lists of a plan's streams that make POSIX pwrites (ROMIO's aggregators), from its dump."""
    out, ranks, stream = run([POST, "--dump", plan]).stdout, set(), None
    for line in out.splitlines():
        if line.startswith("stream "):
            stream = line.split(" ranks ", 1)[1].split(" (")[0]
        elif line.lstrip().split(" ")[0] in ("pwrite", "pwrite64") and stream is not None:
            ranks.add(stream)
    return ranks


def pwrite_ranks(traces):
    """The same for a traced replay's trace directory."""
    run([POST, traces])
    return pwrite_ranks_of(os.path.join(traces, "plan"))


def hints():
    """--hint reaches ROMIO: collective writes of 4 ranks traced in the replay itself are written by one rank with
    cb_nodes=1 and by two with cb_nodes=2 (cb_config_list=*:* lets ROMIO take several aggregators on one node), the
    values in force are reported; a hint MPI adjusts is a warning, and --hint without --mpi is refused."""
    s = Scenario("mpiio_scaling", [2, 64, 0], ranks=4).run_both()
    try:
        s.post()
        for n, writers in ((1, {"0"}), (2, {"0", "1"})):
            traces = os.path.join(s.root, f"traces-{n}")
            r, _ = replay_mpi(s, 4, f"cb{n}", "--hint", f"cb_nodes={n}", "--hint", "cb_config_list=*:*",
                              env={"LD_PRELOAD": LIB, "MPIOR_TRACE_DIR": traces})
            check(f"hints cb_nodes={n} (in force: {n}), cb_config_list=*:* (in force: *:*)" in r["fs"], r["fs"])
            check_eq(r["warnings"], [], f"cb_nodes={n} warnings")
            check_eq(pwrite_ranks(traces), writers, f"ranks writing with cb_nodes={n}")
        # MPICH's default cb_config_list (*:1) allows one aggregator per node.
        r, _ = replay_mpi(s, 4, "cb4", "--hint", "cb_nodes=4")
        check("MPI-IO hint cb_nodes=4: MPI uses 1" in r["warnings"], f"adjusted hint warned: {r['warnings']}")
        for bad, needle in ((["--hint", "cb_nodes=1"], "--hint needs --mpi"),
                            (["--mpi", "--hint", "cb_nodes"], "expected KEY=VALUE")):
            launch = ["mpirun.mpich", "-n", "1"] if "--mpi" in bad else []
            p = run(launch + [REPLAY, "--fs", os.path.join(s.root, "fs-bad"), s.plan] + bad, expect_rc=None)
            check(p.returncode != 0 and p.stderr.count("mpior-replay:") == 1 and needle in p.stderr,
                  f"{bad}: {p.returncode} {p.stderr}")
    finally:
        s.cleanup()


def refusals():
    """More processes than ranks: one message, non-zero exit."""
    s = Scenario("nton_barrier", [2, 256], ranks=2).run_both()
    try:
        s.post()
        p = run(["mpirun.mpich", "-n", "3", REPLAY, "--mpi", "--fs", os.path.join(s.root, "fs"), s.plan],
                expect_rc=None)
        check(p.returncode != 0, "3 processes for 2 ranks accepted")
        check_eq(p.stderr.count("mpior-replay:"), 1, f"one message:\n{p.stderr}")
        check("at most one process per rank" in p.stderr, p.stderr)
    finally:
        s.cleanup()


if __name__ == "__main__":
    main({f.__name__: f for f in (halo, comms, pruned, mpiio, lateness, deferred, messages, handoff, polled,
                                  placement, hints, refusals)})
