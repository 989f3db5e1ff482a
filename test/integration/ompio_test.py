"""mpior-post --cb-nodes on a job traced under Open MPI with its OMPIO component, against real runs.
test/apps/mpiio_scaling (built against Open MPI) writes a shared file and reads it back with collective MPI-IO
through an interleaved view, its cb_buffer_size hint at 168 KiB. Traced at 3, 4 and 5 ranks (OMPIO's own choice: one
aggregator below 16 ranks) and extrapolated to 7 ranks with --cb-nodes 3, the plan's POSIX reads and writes, rank by
rank, offset by offset, are the ones OMPIO made in a real 7-rank run given io_ompio_num_aggregators 3: vulcan's
writes in domains of ceil(range / 3) bytes counted from offset 0 (a call that does not start on a multiple of
them starts with a sliver on the last aggregator), its reads by each group of consecutive ranks' first rank, the
group's pieces one preadv each (too far apart for fbtl posix's data sieving). ROMIO's rules place them otherwise."""
import os
import shutil

from extrap_test import Runs
from harness import APPS, BUILD, POST, SKIP, check, check_eq, main, run

LIB = os.path.join(BUILD, "preload", "libmpior-openmpi.so")
APP = os.path.join(APPS, "openmpi", "mpiio_scaling")
TRANSFERS = os.path.join(BUILD, "test", "postproc", "plan_transfers")
# OMPIO writes half the buffer a cycle: 84 KiB, two cycles a call at 3, 4 and 5 ranks alike (more would make its
# writes asynchronous).
CB = 172032
ARGS = (2, 32, CB, 1)  # 2 steps of 32 KiB a rank, cb_buffer_size 168 KiB, read back
# Left out of the traces: Open MPI's component loading in MPI_Init (its libraries and configuration files, in an
# order that changes with the rank count) and its session directory, made by whichever rank comes first.
EXCLUDE = "/usr,/etc,/root,/tmp"


def transfers(plan):
    """(rank, 'R' or 'W', offset, bytes) of the plan's nested POSIX transfers on collective.dat, sorted."""
    out = run([TRANSFERS, plan, "collective.dat"]).stdout
    return sorted((int(r), op, int(off), int(n)) for r, op, off, n in (line.split() for line in out.splitlines()))


def trace(runs, n, mca=(), name=None):
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
    run(cmd + [APP] + [str(a) for a in ARGS], cwd=runs.work, env=env)
    run([POST, traces])
    return traces


def vulcan():
    if not shutil.which("mpirun.openmpi") or not os.path.exists(LIB) or not os.path.exists(APP):
        print("SKIP: Open MPI, libmpior-openmpi.so or the Open MPI build of mpiio_scaling is missing")
        raise SystemExit(SKIP)
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


if __name__ == "__main__":
    main({"vulcan": vulcan})
