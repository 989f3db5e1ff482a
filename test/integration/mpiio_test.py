"""MPI-IO end to end: programs of our own and a parallel HDF5 program, traced
and untraced (same output, same files), every MPI_File_* call counted in
summary.json exactly as the program (or an independent counting shim) counted
it, bytes at both levels, and the plan replayed at the POSIX level and at the
MPI-IO level with zero failed calls and every file at its real size."""
import os
import re
import shutil

from harness import APPS, POST, Failure, Scenario, check, check_eq, file_entry, main, run

COUNTER = os.path.join(APPS, "libmpifile_counter.so")


def counted(text, prefix="count "):
    """{name: n} from the "count NAME N" lines a program (or the shim) printed."""
    out = {}
    for line in text.splitlines():
        m = re.match(prefix + r"(MPI_File_\w+) (\d+)$", line.strip())
        if m:
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out


def mpiio_ops(summary):
    return {k: v for k, v in summary["ops"].items() if k.startswith("MPI_File_") and v}


def files_under(top):
    return sorted(os.path.relpath(os.path.join(d, f), top) for d, _, names in os.walk(top) for f in names)


def replay_both_levels(s):
    for level in ("posix", "mpiio"):
        s.fs = os.path.join(s.root, "fs-" + level)
        s.replay_and_check("--io-level", level)
        check_eq(s.report["errors"]["count"], 0, f"failed calls replaying at --io-level {level}")
        # The same files as the traced run left: ROMIO's .shfp. file is gone too.
        check_eq(files_under(os.path.join(s.fs, s.work.lstrip("/"))), files_under(s.work),
                 f"files the replay at --io-level {level} left")
        if level == "posix":  # checked: the next replay's "outside --fs" starts clean
            shutil.rmtree(s.fs)
            os.remove(os.path.join(s.root, "report.json"))


def dump(s, rank=0):
    return run([POST, "--dump", os.path.join(s.traces, f"rank-{rank:06d}.mpior")]).stdout


def io_offsets(s, rank, name, path):
    """Byte offsets the trace holds for rank's depth-0 calls of name on the
    file at path, in call order."""
    text = dump(s, rank)
    ids = re.findall(rf"^\s+(\d+)  {re.escape(path)}  ", text, re.M)
    check_eq(len(ids), 1, f"{path} in rank {rank}'s file table")
    return [int(m.group(1) or 0) for m in re.finditer(rf"^  {name} fh=\S+ file={ids[0]}(?: off=(-?\d+))? ", text, re.M)]


def shared_offsets(s, ranks, n):
    """shared.dat: write_shared in rank order, write_ordered, write_ordered_begin,
    then from 0 read_ordered and read_shared (in whatever order the ranks come)."""
    racing = set()
    path = s.abs("shared.dat")
    for r in range(ranks):
        check_eq(io_offsets(s, r, "MPI_File_write_shared", path), [n * r], f"rank {r}: MPI_File_write_shared offset")
        check_eq(io_offsets(s, r, "MPI_File_write_ordered", path), [n * (ranks + r)],
                 f"rank {r}: write_ordered offset")
        check_eq(io_offsets(s, r, "MPI_File_write_ordered_begin", path), [n * (2 * ranks + r)],
                 f"rank {r}: write_ordered_begin offset")
        check_eq(io_offsets(s, r, "MPI_File_read_ordered", path), [n * r], f"rank {r}: read_ordered offset")
        racing.update(io_offsets(s, r, "MPI_File_read_shared", path))
    check_eq(racing, {n * (ranks + r) for r in range(ranks)}, "MPI_File_read_shared offsets over the ranks")


def forms():
    ranks = 3
    s = Scenario("mpiio_forms", ranks=ranks)
    try:
        s.run_both()
        summary = s.post("--verify")
        want = counted(s.plain_out.stdout)
        check(len(want) >= 40, f"the program counted only {len(want)} MPI_File functions")
        check_eq(mpiio_ops(summary), want, "MPI_File_* calls in summary.json")
        views = file_entry(summary, s.abs("views.dat"))
        # each rank: write_all 16 ints, write_at 4, write 4, iwrite_at 4, iwrite_all 8,
        # write_at_all_begin 16, write_at_c 4, write_at_all_c 4, subarray 16 -> 76 ints
        check_eq(views["mpiio"]["bytes_written"], ranks * 76 * 4, "MPI-IO bytes written to views.dat")
        check(views["bytes_written"] >= 1024, f"POSIX bytes written to views.dat: {views['bytes_written']}")
        check_eq(file_entry(summary, s.abs("shared.dat"))["mpiio"]["bytes_written"], ranks * 3 * 21,
                 "shared.dat MPI-IO bytes")
        shared_offsets(s, ranks, 21)
        text = dump(s)
        check(re.search(r"MPI_File_write_all .*\n\s+pwrite depth=1", text) is not None,
              "the dump does not show pwrite nested under MPI_File_write_all")
        check("mpior_block depth=1" in text, "set_view records no flattened blocks")
        # MPI_DISPLACEMENT_CURRENT resolved: the shared pointer after one ordered
        # write of 4 ints per rank (flags: collective, displacement current).
        check(re.search(rf"MPI_File_set_view fh=\S+ file=\S+ tile0={ranks * 16} .*access=257 ", text) is not None,
              "set_view at MPI_DISPLACEMENT_CURRENT not recorded at the displacement it resolved to")
        check_eq(file_entry(summary, s.abs("seq.dat"))["mpiio"]["bytes_written"], 2 * ranks * 16, "seq.dat MPI-IO bytes")
        # Its ordered writes' byte offsets (no MPI_File_get_byte_offset on a
        # sequential file): in rank order, the second from the new view on.
        for r in range(ranks):
            check_eq(io_offsets(s, r, "MPI_File_write_ordered", s.abs("seq.dat")), [16 * r, 16 * (ranks + r)],
                     f"rank {r}: seq.dat write_ordered offsets")
        check_eq(file_entry(summary, s.abs("zero.dat"))["mpiio"]["bytes_written"], 16, "zero.dat MPI-IO bytes")
        replay_both_levels(s)
        check(not os.path.exists(os.path.join(s.fs, s.abs("gone.dat").lstrip("/"))), "gone.dat survived the replay")
        wa = s.report["ops"]["MPI_File_write_all"]
        check_eq((wa["count"], wa["bytes"]), (3, 3 * 16 * 4), "MPI_File_write_all replayed at the MPI-IO level")
    finally:
        s.cleanup()


def shared():
    """The shared-pointer part alone, under each MPI-IO implementation Open
    MPI has: OMPIO (its sm and lockedfile components; ompio_capture.cpp) and
    its ROMIO (shfp_capture.hpp): offsets exact, plan replayed at both levels. (Open MPI
    4.1.4 hangs or crashes now and then in the full program's nonblocking
    collective I/O, untraced too.)"""
    ranks = 3
    variants = {"ompio sm": {"OMPI_MCA_io": "ompio", "OMPI_MCA_sharedfp": "sm"},
                "ompio lockedfile": {"OMPI_MCA_io": "ompio", "OMPI_MCA_sharedfp": "lockedfile"},
                "romio321": {"OMPI_MCA_io": "romio321"}}
    for io, env in variants.items():
        s = Scenario("mpiio_forms", args=["shared"], ranks=ranks, env=env)
        try:
            s.run_both()
            summary = s.post("--verify")
            check_eq(mpiio_ops(summary), counted(s.plain_out.stdout), f"{io}: MPI_File_* calls in summary.json")
            check_eq(file_entry(summary, s.abs("shared.dat"))["mpiio"]["bytes_written"], ranks * 3 * 21,
                     f"{io}: shared.dat MPI-IO bytes")
            shared_offsets(s, ranks, 21)
            replay_both_levels(s)
        finally:
            s.cleanup()


def hdf5():
    check(os.path.exists(COUNTER), "the counting shim was not built")
    s = Scenario("hdf5_steps", args=[6], ranks=2, env={"LD_PRELOAD_FIRST": COUNTER})
    try:
        s.run_both()
        summary = s.post("--verify")
        # The shim prints its counts on stderr, one line per rank.
        want = counted(s.traced_out.stderr, prefix=r"mpifile_counter: ")
        check_eq(counted(s.plain_out.stderr, prefix=r"mpifile_counter: "), want, "MPI_File_* calls untraced")
        check(want.get("MPI_File_write_at_all", 0) > 0, f"HDF5 made no collective writes: {want}")
        check(want.get("MPI_File_write_at", 0) > 0, f"HDF5 made no independent writes: {want}")
        check_eq(mpiio_ops(summary), want, "MPI_File_* calls in summary.json")
        f = file_entry(summary, s.abs("steps.h5"))
        check(f["mpiio"]["bytes_written"] > 0 and f["bytes_written"] > 0, f"steps.h5 bytes: {f}")
        replay_both_levels(s)
    finally:
        s.cleanup()


def excluded():
    """MPI-IO on a path below MPIOR_EXCLUDE: dropped with every call on its
    handle (nonblocking, shared, views), counted as excluded like POSIX."""
    ranks = 2

    def make_skip(d):
        os.makedirs(os.path.join(d, "skip"))

    s = Scenario("mpiio_excluded", ["skip"], ranks=ranks, prepare=make_skip)
    try:
        s.extra_env = {"MPIOR_EXCLUDE": s.abs("skip")}
        s.run_both()
        summary = s.post()
        want = {"MPI_File_open": ranks, "MPI_File_write_at": ranks, "MPI_File_close": ranks}
        check_eq(mpiio_ops(summary), want, "MPI_File_* calls in summary.json (kept.dat only)")
        check_eq({k: v for k, v in summary["excluded"].items() if k.startswith("MPI_File_")},
                 {"MPI_File_open": ranks, "MPI_File_delete": 1}, "MPI-IO calls counted as excluded")
        check(not any("skip" in f["path"] for f in summary["files"]), "a file below skip/ is in summary.json")
        check_eq(file_entry(summary, s.abs("kept.dat"))["mpiio"]["bytes_written"], ranks * 64, "kept.dat bytes")
        for r in range(ranks):
            text = dump(s, r)
            check(re.search(r"^\s*MPI_File_\w+ fh=-1 file=-1", text, re.M) is None,
                  f"rank {r}: an MPI-IO call recorded without its file")
            wait = re.search(r"^\s*(mpior_complete|MPI_Wait) .*ret=.*", text, re.M)
            check(wait is None, f"rank {r}: the excluded file's request completion was recorded: {wait and wait[0]}")
        s.replay_and_check()
        check_eq(s.report["errors"]["count"], 0, f"failed calls in the replay (first: {s.report['errors']['first']})")
    finally:
        s.cleanup()


def own_time_charged(s, summary, steps):
    """ROMIO's own time in a collective write (its Allgathers; what the threads' meeting does not reproduce) is
    charged as its last arrivers' share: rank 1, which came last, not rank 0's 20 ms waits for it; each replayed
    call lasts at least that, and it counts as I/O."""
    own = [c for c in s.report["comm_costs"] if c["op"] == "mpiio_write"]
    check_eq([(c["comm_size"], c["calls"]) for c in own], [(2, 2 * steps)], "collective MPI-IO write cost classes")
    cost = own[0]["cost_us"]
    # The traced mean over both ranks holds half of rank 0's waits (10 ms a call) beside the calls' own time,
    # whatever that own time was on a loaded machine; a cost that counted the waits is at least that mean.
    traced = summary["op_totals"]["MPI_File_write_at_all"]
    mean_us = traced["time_s"] / traced["calls"] * 1e6
    check(0 <= cost < mean_us - 5000,
          f"ROMIO's own time charged {cost} us a call, traced mean {mean_us:.0f} us: rank 0's waits counted as cost")
    call = s.report["ops"]["MPI_File_write_at_all"]
    check(call["mean_us"] >= cost, f"replayed MPI_File_write_at_all {call['mean_us']} us, below its cost {cost} us")
    # A charge pays back the pacer's debt first (late wake-ups from rank 1's 20 ms computations, on a busy
    # machine), so a rank's calls may hold less than the cost each; counted as communication instead, rank 1's
    # I/O time would be its 4 KiB writes alone, well under a millisecond.
    for t in s.report["per_rank"]:
        check(t["predicted"]["io_s"] >= 0.5 * steps * cost / 1e6,
              f"rank {t['rank']}: ROMIO's charged own time ({cost} us a call) left out of its I/O time "
              f"{t['predicted']}")


def late_rank():
    """A rank late to every collective write (io_shapes coll: rank 1 computes 20 ms before each): ROMIO makes
    rank 0 wait inside MPI_File_write_at_all, so its traced I/O time (time.io_s: the MPI-IO calls' time) holds
    the waits; the replay's I/O time must hold them too, at both levels, or a replay and the trace it is
    compared with measure different things (IOR's collective writes replayed at a tenth of the real I/O time)."""
    steps = 10
    floor = 0.5 * steps * 0.020  # half the waits: a bound the machine's noise can only raise
    s = Scenario("io_shapes", ["coll", steps, 4096], ranks=2)
    try:
        s.run_both()
        summary = s.post()
        traced0 = next(r["io_s"] for r in summary["per_rank"] if r["rank"] == 0)
        check(traced0 >= floor, f"rank 0's traced I/O time {traced0} s holds no waits: the premise fails")
        for level in ("posix", "mpiio"):
            s.fs = os.path.join(s.root, "fs-" + level)
            s.replay_and_check("--io-level", level)
            check_eq(s.report["errors"]["count"], 0, f"failed calls replaying at --io-level {level}")
            t = next(t["predicted"] for t in s.report["per_rank"] if t["rank"] == 0)
            check(t["io_s"] >= floor, f"--io-level {level}: rank 0's replayed I/O time {t['io_s']} s left out "
                  f"the waits inside its collective writes (wait_s {t['wait_s']} s)")
            own_time_charged(s, summary, steps)
            os.remove(os.path.join(s.root, "report.json"))
    finally:
        s.cleanup()


if __name__ == "__main__":
    main({"forms": forms, "shared": shared, "hdf5": hdf5, "excluded": excluded, "late_rank": late_rank})
