"""mpior-post --cb-nodes on a job traced under Open MPI with its OMPIO component, against real runs.
test/apps/mpiio_scaling (built against Open MPI) writes a shared file and reads it back with collective MPI-IO
through an interleaved view, its cb_buffer_size hint at 168 KiB. Traced at 3, 4 and 5 ranks (OMPIO's own choice: one
aggregator below 16 ranks) and extrapolated to 7 ranks with --cb-nodes 3, the plan's POSIX reads and writes, rank by
rank, offset by offset, are the ones OMPIO made in a real 7-rank run given io_ompio_num_aggregators 3: vulcan's
writes in domains of ceil(range / 3) bytes counted from offset 0 (a call that does not start on a multiple of
them starts with a sliver on the last aggregator), its reads by each group of consecutive ranks' first rank, the
group's pieces one preadv each (too far apart for fbtl posix's data sieving). ROMIO's rules place them otherwise.
Extrapolated down to 2 ranks, OMPIO's individual component; with a small buffer, vulcan's asynchronous writes;
with --ompio-fcoll dynamic_gen2, dynamic or two_phase, those components' transfers.

`automatic`: OMPIO's collective calls change shape with the rank count (each rank its own pwrite at 2 ranks, the
individual component; one aggregator's pwritev calls from 3), so no model of the traced counts fits them. Traced
at 2, 3, 4 and 5 ranks and extrapolated to 8 with no hint, the plan's transfers, call by call, are the ones OMPIO
made in a real 8-rank run: dealt again at the target as OMPIO deals them by itself."""
import os
import shutil

from extrap_test import Runs, io_log
from harness import APPS, BUILD, POST, SKIP, check, check_eq, main, run

LIB = os.path.join(BUILD, "preload", "libmpior-openmpi.so")
APP = os.path.join(APPS, "openmpi", "mpiio_scaling")
TRANSFERS = os.path.join(BUILD, "test", "postproc", "plan_transfers")
# OMPIO writes half the buffer a cycle: 84 KiB, two cycles a call at 3, 4 and 5 ranks alike (more would make its
# writes asynchronous).
CB = 172032
ARGS = (2, 32, CB, 1)  # 2 steps of 32 KiB a rank, cb_buffer_size 168 KiB, read back
SMALL = (2, 16, CB, 1)  # 16 KiB a rank: two cycles a call at 8 ranks
# Left out of the traces: Open MPI's component loading in MPI_Init (its libraries and configuration files, in an
# order that changes with the rank count) and its session directory, made by whichever rank comes first.
EXCLUDE = "/usr,/etc,/root,/tmp"


def transfers(plan):
    """(rank, 'R' or 'W', offset, bytes) of the plan's nested POSIX transfers on collective.dat, sorted."""
    out = run([TRANSFERS, plan, "collective.dat"]).stdout
    return sorted((int(r), op, int(off), int(n)) for r, op, off, n in (line.split() for line in out.splitlines()))


def calls(plan):
    """(rank, offset, bytes, call) of the plan's nested POSIX transfers on collective.dat, in each rank's order."""
    out = run([TRANSFERS, plan, "collective.dat", "--calls"]).stdout
    return [(int(r), int(off), int(n), call) for r, _, off, n, call in (line.split() for line in out.splitlines())]


def aio(plan):
    """(rank, 'S' or 'D', offset, bytes) of the plan's AIO submits and completions under calls on collective.dat, in
    each rank's order."""
    out = run([TRANSFERS, plan, "collective.dat", "--aio"]).stdout
    return [(int(r), op, int(off), int(n)) for r, op, off, n in (line.split() for line in out.splitlines())]


def trace(runs, n, mca=(), name=None, args=ARGS):
    """mpiio_scaling at n ranks under Open MPI, traced into ROOT/<name> and posted; mca: (name, value) pairs."""
    traces = runs.path(name or f"t{n}")
    cmd = ["mpirun.openmpi", "-n", str(n), "--oversubscribe", "--mca", "btl", "self,vader", "--mca",
           "mpi_yield_when_idle", "1", "--mca", "btl_vader_single_copy_mechanism", "none", "-x",
           f"LD_PRELOAD={LIB}", "-x", f"MPIOR_TRACE_DIR={traces}", "-x", f"MPIOR_EXCLUDE={EXCLUDE},!{runs.root}"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    for k, v in mca:
        cmd += ["--mca", k, str(v)]
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    runs.clean(runs.work)
    run(cmd + [APP] + [str(a) for a in args], cwd=runs.work, env=env)
    run([POST, traces])
    return traces


def against_real(runs, post_args, mca, args=ARGS):
    """mpiio_scaling traced at 3-5 ranks and extrapolated to 7 with post_args, and a real 7-rank run given mca (and
    the program's args): the plan and the real run's plan."""
    dirs = [trace(runs, n) for n in (3, 4, 5)]
    plan = runs.path("p7")
    run([POST, "--extrapolate", "7"] + post_args + ["-o", plan] + dirs)
    real = trace(runs, 7, mca=mca, name="real7", args=args)
    return plan, os.path.join(real, "plan")


def need_openmpi():
    if not shutil.which("mpirun.openmpi") or not os.path.exists(LIB) or not os.path.exists(APP):
        print("SKIP: Open MPI, libmpior-openmpi.so or the Open MPI build of mpiio_scaling is missing")
        raise SystemExit(SKIP)


def vulcan():
    need_openmpi()
    runs = Runs()
    try:
        dirs = [trace(runs, n) for n in (3, 4, 5)]
        dump = run([POST, "--dump", os.path.join(dirs[0], "job.mpior")]).stdout
        check("Open MPI" in dump and "MPI-IO: ompio" in dump, f"the job record names Open MPI and OMPIO: {dump}")
        check_eq({t[0] for t in transfers(os.path.join(dirs[-1], "plan"))}, {0}, "the aggregator when traced")
        plan = runs.path("p7")
        run([POST, "--extrapolate", "7", "--cb-buffer-size", str(CB), "--cb-nodes", "3", "-o", plan] + dirs)
        real = trace(runs, 7, mca=[("io_ompio_num_aggregators", 3)], name="real7")
        got, want = transfers(plan), transfers(os.path.join(real, "plan"))
        check_eq(got, want, "transfers of the plan dealt with --cb-nodes 3 against OMPIO's with 3 aggregators")
        check_eq({t[0] for t in got}, {0, 3, 5}, "each group's first rank")
        check((5, "W", 229376, 1) in got, f"the second call starts with a byte on the last aggregator: {got}")
        notes = run([POST, "--dump", plan]).stdout
        check("OMPIO" in notes, "the plan's notes name OMPIO")
    finally:
        runs.cleanup()


def automatic():
    need_openmpi()
    runs = Runs()
    try:
        dirs = [trace(runs, n, args=SMALL) for n in (2, 3, 4, 5)]
        check_eq({t[0] for t in transfers(os.path.join(dirs[0], "plan"))}, {0, 1}, "each rank its own at 2 ranks")
        check_eq({t[0] for t in transfers(os.path.join(dirs[1], "plan"))}, {0}, "one aggregator at 3 ranks")
        plan = runs.path("p8")
        out = run([POST, "--extrapolate", "8", "--cb-buffer-size", str(CB), "-o", plan] + dirs)
        check("OMPIO" in out.stderr and "dealt again" in out.stderr, f"the warning says why: {out.stderr}")
        real = os.path.join(trace(runs, 8, name="real8", args=SMALL), "plan")
        got, want = calls(plan), calls(real)
        check_eq(got, want, "the extrapolated plan's transfers against a real 8-rank run's, call by call")
        check_eq({c[3] for c in got}, {"pwrite", "pread"}, "one contiguous entry a cycle")
        check_eq(sorted(t for t in transfers(plan)), transfers(real), "the same transfers, whatever the order")
    finally:
        runs.cleanup()


def individual():
    """At 2 ranks OMPIO picks fcoll individual: each rank writes its own 32 pieces, one pwritev each (fbtl posix
    sieves no write outside a collective component), and reads them back in one sieved pread a call (1 KiB pieces
    2 KiB apart: close and small enough). Extrapolated down to 2 ranks with --cb-nodes 1, the plan has the same."""
    need_openmpi()
    runs = Runs()
    try:
        dirs = [trace(runs, n) for n in (3, 4, 5)]
        plan = runs.path("p2")
        run([POST, "--extrapolate", "2", "--cb-buffer-size", str(CB), "--cb-nodes", "1", "-o", plan] + dirs)
        real = trace(runs, 2, name="real2")
        got, want = transfers(plan), transfers(os.path.join(real, "plan"))
        check_eq(got, want, "transfers of the plan dealt at 2 ranks against OMPIO's individual component's")
        check_eq({t[0] for t in got}, {0, 1}, "each rank moves its own request")
        check_eq({t[3] for t in got if t[1] == "W"}, {1024}, "writes one piece each, never sieved")
        check_eq(sorted(t for t in got if t[1] == "R" and t[0] == 1),
                 [(1, "R", 1024, 64512), (1, "R", 66560, 64512)], "reads one sieved span a call")
    finally:
        runs.cleanup()


def asynchronous():
    """With cb_buffer_size 32 KiB vulcan writes 16 KiB a cycle: 5 cycles a call at 7 ranks over 3 aggregators, past
    two, so its writes are asynchronous (fbtl posix's aio_write, one request a cycle's entry). Traced with the large
    buffer at 3-5 ranks, extrapolated to 7 with --cb-nodes 3 --cb-buffer-size 32768, the plan's AIO requests are the
    real run's, offset by offset (its cycles cut pieces: rank 5's second call starts with a 1-byte request), each
    submitted and learned done where the real run's were; the replay issues them."""
    need_openmpi()
    runs = Runs()
    small = 32768
    try:
        plan, real = against_real(runs, ["--cb-buffer-size", str(small), "--cb-nodes", "3"],
                                  [("io_ompio_num_aggregators", 3)], args=(2, 32, small, 1))
        got, want = transfers(plan), transfers(real)
        check_eq(len([t for t in want if t[1] == "W"]), 31, "the real run's asynchronous writes: 5 cycles a call on "
                 "each of 3 aggregators, one of them cut in two")
        check_eq(got, want, "transfers of the plan with --cb-buffer-size 32768 against OMPIO's asynchronous writes")
        check((5, "W", 229376, 1) in got and (5, "W", 382295, 16383) in got, f"a cycle cuts a piece: {got}")
        got_aio, want_aio = aio(plan), aio(real)
        check_eq(len([a for a in want_aio if a[1] == "S"]), 31, "the real run's submits")
        check_eq(got_aio, want_aio, "the plan's AIO submits and completions, in order, against the real run's")
        log, _, _ = io_log(runs, plan, "replay7")
        submits = [l for l in log.splitlines() if l.startswith("aio_write ") and "collective.dat" in l]
        check_eq(len(submits), 31, f"the replay submits the requests: {log}")
    finally:
        runs.cleanup()


def dynamic_gen2():
    """Given --mca fcoll dynamic_gen2 (Lustre's default, forced here on a local file system) and
    io_ompio_num_aggregators 3, a 7-rank run writes through ranks 0, 2 and 4 (i * 7 / 3), stripe k of 64 KiB by the
    (k mod 3)-th, a cycle's bytes one pwrite a stripe, and reads as vulcan does. Traced under vulcan at 3-5 ranks,
    extrapolated to 7 with --cb-nodes 3 --ompio-fcoll dynamic_gen2, the plan has the same."""
    need_openmpi()
    runs = Runs()
    try:
        dirs = [trace(runs, n) for n in (3, 4, 5)]
        plan = runs.path("p7")
        run([POST, "--extrapolate", "7", "--cb-buffer-size", str(CB), "--cb-nodes", "3", "--ompio-fcoll",
             "dynamic_gen2", "-o", plan] + dirs)
        real = trace(runs, 7, mca=[("fcoll", "dynamic_gen2"), ("io_ompio_num_aggregators", 3)], name="real7")
        got, want = transfers(plan), transfers(os.path.join(real, "plan"))
        check_eq(got, want, "transfers of the plan dealt as dynamic_gen2 against a run given --mca fcoll dynamic_gen2")
        check_eq({t[0] for t in got if t[1] == "W"}, {0, 2, 4}, "dynamic_gen2's write aggregators")
        check((0, "W", 196608, 20480) in got and (0, "W", 217088, 12288) in got,
              f"a cycle ends inside stripe 3, so it is written in two calls: {got}")
        notes = run([POST, "--dump", plan]).stdout
        check("fcoll dynamic_gen2" in notes, "the plan's notes name the component")
    finally:
        runs.cleanup()


def dynamic():
    """Given --mca fcoll dynamic and io_ompio_num_aggregators 3, a 7-rank run writes through each group's first rank
    (0, 3 and 5, as vulcan reads), the group's bytes in offset order, the whole buffer a cycle, one synchronous
    pwritev an entry, and reads as vulcan does. Traced under vulcan at 3-5 ranks, extrapolated to 7 with --cb-nodes 3
    --ompio-fcoll dynamic, the plan makes the same calls, rank by rank, in order."""
    need_openmpi()
    runs = Runs()
    try:
        plan, real = against_real(runs, ["--cb-buffer-size", str(CB), "--cb-nodes", "3", "--ompio-fcoll", "dynamic"],
                                  [("fcoll", "dynamic"), ("io_ompio_num_aggregators", 3)])
        got, want = calls(plan), calls(real)
        check_eq(got, want, "the plan's calls dealt as dynamic against a run given --mca fcoll dynamic")
        check_eq({c[0] for c in got}, {0, 3, 5}, "each group's first rank")
        check_eq({c[3] for c in got if c[0] == 0}, {"pwritev", "preadv"}, "one vectored call an entry")
        check((0, 7168, 3072, "pwritev") in got, f"group 0's second run of three pieces: {got}")
        check("fcoll dynamic" in run([POST, "--dump", plan]).stdout, "the plan's notes name the component")
    finally:
        runs.cleanup()


def two_phase():
    """Given --mca fcoll two_phase, io_ompio_num_aggregators 3 and cb_buffer_size 32 KiB, a 7-rank run moves each
    call's 224 KiB through ranks 0, 2 and 4 (i * 7 / 3), in domains of ceil(224 KiB / 3) bytes from the call's first
    byte, each in 32 KiB windows from the domain's start, one pwrite (pread) a window. Traced under vulcan at 3-5
    ranks, extrapolated to 7 with --cb-nodes 3 --cb-buffer-size 32768 --ompio-fcoll two_phase, the plan makes the
    same calls, rank by rank, in order."""
    need_openmpi()
    runs = Runs()
    small = 32768
    try:
        plan, real = against_real(
            runs, ["--cb-buffer-size", str(small), "--cb-nodes", "3", "--ompio-fcoll", "two_phase"],
            [("fcoll", "two_phase"), ("io_ompio_num_aggregators", 3)], args=(2, 32, small, 1))
        got, want = calls(plan), calls(real)
        check_eq(got, want, "the plan's calls dealt as two_phase against a run given --mca fcoll two_phase")
        check_eq({c[0] for c in got}, {0, 2, 4}, "two_phase's aggregators")
        domain = (7 * 32768 + 2) // 3
        check((2, domain, small, "pwrite") in got and (2, domain + 2 * small, domain - 2 * small, "pwrite") in got,
              f"rank 2's domain from byte {domain}, in 32 KiB windows: {got}")
        check_eq(len([c for c in got if c[3] == "pread"]), len([c for c in got if c[3] == "pwrite"]),
                 "the reads are the writes' windows")
    finally:
        runs.cleanup()


if __name__ == "__main__":
    main({"vulcan": vulcan, "automatic": automatic, "individual": individual, "asynchronous": asynchronous,
          "dynamic_gen2": dynamic_gen2, "dynamic": dynamic, "two_phase": two_phase})
