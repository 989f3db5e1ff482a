"""mpior-post --cb-nodes against real runs. test/apps/mpiio_scaling writes a shared file and reads it back with
collective MPI-IO through an interleaved view (so ROMIO aggregates); traced at 2, 3 and 4 ranks it has one aggregator
(MPICH's cb_config_list *:1, one node). Extrapolated to 5 ranks with --cb-nodes 2, the plan's POSIX reads and writes,
rank by rank, offset by offset, are the ones ROMIO made in a real 5-rank run given the same hints (ROMIO_HINTS).
Node placement is checked with ranks given host names of their own (a UTS namespace each: unshare -u). With one
piece a rank per step the ranks' requests follow one another: ROMIO's romio_cb_write/read=automatic then moves each
rank's own request, enable deals them two-phase. With independent calls (MPI_File_write_at/read_at through the same
view) ROMIO's data sieving reads and writes whole buffers; --romio-ds-* and --ind-*-buffer-size make them again."""
import json
import os
import subprocess
import sys

from extrap_test import Runs
from harness import APPS, BUILD, LIB, POST, REPLAY, SKIP, check, check_eq, main, run

APP = os.path.join(APPS, "mpiio_scaling")
TRANSFERS = os.path.join(BUILD, "test", "postproc", "plan_transfers")
CB = 65536
ARGS = (2, 64, CB, 1)  # 2 steps of 64 KiB a rank, cb_buffer_size 64 KiB, read back


def transfers(plan):
    """(rank, 'R' or 'W', offset, bytes) of the plan's nested POSIX transfers on collective.dat, sorted."""
    out = run([TRANSFERS, plan, "collective.dat"]).stdout
    return sorted((int(r), op, int(off), int(n)) for r, op, off, n in (line.split() for line in out.splitlines()))


def against_real(hints, post_args, args=ARGS, traced_hints=(), traced_movers=frozenset({0}), max_bytes=CB,
                 undealt_differs=False, replays=False):
    """The 5-rank plan (traced at 2-4 ranks given traced_hints) dealt with post_args, checked against a real run
    given hints; returns its transfers. undealt_differs: the plan extrapolated without post_args differs from the
    real run (the hints change what ROMIO does). replays: the plan's threaded replay has no failed call."""
    runs = Runs()
    try:
        env = {}
        if traced_hints:
            env["ROMIO_HINTS"] = runs.path("traced-hints")
            with open(env["ROMIO_HINTS"], "w") as f:
                f.write("".join(f"{k} {v}\n" for k, v in traced_hints))
        dirs = [runs.trace(n, args=args, app=APP, env=env)[0] for n in (2, 3, 4)]
        check_eq({t[0] for t in transfers(os.path.join(dirs[-1], "plan"))}, set(traced_movers),
                 "the ranks moving data when traced")
        plan = runs.path("p5")
        run([POST, "--extrapolate", "5", "--cb-buffer-size", str(CB), "-o", plan] + post_args + dirs)
        for bad, needle in ((["--cb-nodes", "2", "--cb-config-list", "*:x"], "cannot parse"),
                            (["--cb-nodes", "2", "--romio-cb-write", "sometimes"], "romio-cb-write"),
                            (["--cb-config-list", "*:*"], "requires --cb-nodes")):
            p = run([POST, "--extrapolate", "5", "-o", runs.path("bad")] + bad + dirs, expect_rc=None)
            check(p.returncode != 0 and p.stderr.count("mpior-post:") == 1 and needle in p.stderr
                  and not os.path.exists(runs.path("bad")), f"{bad} refused: {p.returncode} {p.stderr}")
        hints_file = runs.path("romio-hints")
        with open(hints_file, "w") as f:
            f.write("".join(f"{k} {v}\n" for k, v in hints))
        real, _ = runs.trace(5, args=args, app=APP, env={"ROMIO_HINTS": hints_file}, name="real5")
        got, want = transfers(plan), transfers(os.path.join(real, "plan"))
        check_eq(got, want, f"transfers of the plan dealt with {post_args} against ROMIO's with {hints}")
        check({op for _, op, _, _ in got} == {"R", "W"} and all(n <= max_bytes for *_, n in got),
              f"reads and writes: {got}")
        if undealt_differs:
            run([POST, "--extrapolate", "5", "-o", plan + "u"] + dirs)
            check(transfers(plan + "u") != want, "without the hints the plan moves what the traced runs' hints moved")
        if replays:
            fs, report = runs.path("replay-fs"), runs.path("replay.json")
            os.makedirs(fs)
            run([REPLAY, "--threads", "5", "--fs", fs, "--stdio", "null", "--json", report, plan])
            with open(report) as f:
                errors = json.load(f)["errors"]
            check_eq(errors["count"], 0, f"failed calls in the replay of the dealt plan: {errors}")
        return got
    finally:
        runs.cleanup()


def first_byte(got, rank):
    return min(off for r, op, off, _ in got if r == rank and op == "R")


def reads():
    """cb_nodes=2, cb_config_list=*:*: ranks 0 and 1 read and write, each half of a step's 320 KiB."""
    got = against_real([("cb_nodes", 2), ("cb_config_list", "*:*")], ["--cb-nodes", "2", "--cb-config-list", "*:*"])
    check_eq({t[0] for t in got}, {0, 1}, "the aggregators")
    check_eq(first_byte(got, 1), 163840, "rank 1's domain starts half way")


def stripes():
    """With striping_unit=49152 the boundary at 160 KiB moves to the nearest stripe boundary, 144 KiB."""
    got = against_real([("cb_nodes", 2), ("cb_config_list", "*:*"), ("striping_unit", 49152)],
                       ["--cb-nodes", "2", "--cb-config-list", "*:*", "--striping-unit", "49152"])
    check_eq(first_byte(got, 1), 147456, "rank 1's domain starts on a stripe boundary")


def min_fdomain():
    """romio_min_fdomain_size=196608 with cb_nodes=3: a step's 320 KiB in domains of 192 KiB, not 107 KiB, so rank 1
    starts at 192 KiB and rank 2 moves nothing."""
    got = against_real([("cb_nodes", 3), ("cb_config_list", "*:*"), ("romio_min_fdomain_size", 196608)],
                       ["--cb-nodes", "3", "--cb-config-list", "*:*", "--romio-min-fdomain-size", "196608"])
    check_eq({t[0] for t in got}, {0, 1}, "the aggregators moving data")
    check_eq(first_byte(got, 1), 196608, "rank 1's domain starts at the minimum size")


ONE_PIECE = (2, 1, CB, 1)  # 1 KiB a rank per step: rank r asks for [1024 r, 1024 r + 1023]


def automatic():
    """romio_cb_write/read automatic (ROMIO's default) on requests that do not interleave: traced with enable and one
    aggregator (rank 0 moves everything), the plan dealt to 2 aggregators under automatic (given: the traced enable is
    the default otherwise) has every rank move its own KiB, as ROMIO itself does in a real 5-rank run."""
    traced = [("cb_nodes", 1), ("romio_cb_write", "enable"), ("romio_cb_read", "enable")]
    got = against_real([("cb_nodes", 2), ("cb_config_list", "*:*")],
                       ["--cb-nodes", "2", "--cb-config-list", "*:*", "--romio-cb-write", "automatic",
                        "--romio-cb-read", "automatic"], args=ONE_PIECE, traced_hints=traced)
    check_eq({(r, op, off, n) for r, op, off, n in got if off < 5120},
             {(r, op, 1024 * r, 1024) for r in range(5) for op in "RW"}, "each rank's own first step")


def enable():
    """The same trace made under automatic (each rank moved its own KiB), dealt with --romio-cb-write/read enable:
    two-phase on ranks 0 and 1, as in a real run given romio_cb_write/read enable."""
    modes = [("romio_cb_write", "enable"), ("romio_cb_read", "enable")]
    got = against_real([("cb_nodes", 2), ("cb_config_list", "*:*")] + modes,
                       ["--cb-nodes", "2", "--cb-config-list", "*:*", "--romio-cb-write", "enable",
                        "--romio-cb-read", "enable"], args=ONE_PIECE, traced_hints=[("cb_nodes", 1)],
                       traced_movers={0, 1, 2, 3})
    check_eq({t[0] for t in got}, {0, 1}, "the aggregators")


INDEPENDENT = (2, 64, 0, 1, 1)  # 2 steps of 64 KiB a rank, read back, with MPI_File_write_at/read_at
# Sieving buffers that end inside a 1 KiB piece (the 5 ranks' pieces are 5 KiB apart): 60.5 KiB and 95.5 KiB.
WR_BUF, RD_BUF = 61952, 97792


def sieve():
    """Traced with romio_ds_read/write disable (each 1 KiB piece one pread or pwrite), the 5-rank plan made with
    ROMIO's data sieving (automatic, small buffers) reads each write's buffer before writing it back whole, and reads
    whole buffers, a piece past a buffer's end read on from there, as ROMIO does in a real run given those hints."""
    disable = [("romio_ds_read", "disable"), ("romio_ds_write", "disable")]
    sizes = [("ind_wr_buffer_size", WR_BUF), ("ind_rd_buffer_size", RD_BUF)]
    got = against_real(sizes, ["--ind-wr-buffer-size", str(WR_BUF), "--ind-rd-buffer-size", str(RD_BUF),
                               "--romio-ds-read", "automatic", "--romio-ds-write", "automatic"],
                       args=INDEPENDENT, traced_hints=disable, traced_movers={0, 1, 2, 3}, max_bytes=RD_BUF,
                       undealt_differs=True, replays=True)
    check_eq({t[0] for t in got}, set(range(5)), "every rank moves its own")
    check((1, "R", 1024, WR_BUF) in got and (1, "W", 1024, WR_BUF) in got, f"rank 1's first write buffer: {got}")
    for way in "RW":
        check(any(op == way and (off - 1024 * r) % 5120 for r, op, off, _ in got),
              f"{way}: a buffer going on from the last one's end, inside a piece: {got}")


def naive():
    """Traced with ROMIO's default data sieving, the 5-rank plan made with romio_ds_read/write disable moves each
    1 KiB piece in its own pread or pwrite, as ROMIO does in a real run given disable."""
    disable = [("romio_ds_read", "disable"), ("romio_ds_write", "disable")]
    got = against_real(disable, ["--romio-ds-read", "disable", "--romio-ds-write", "disable"], args=INDEPENDENT,
                       traced_movers={0, 1, 2, 3}, undealt_differs=True)
    check_eq(len(got), 5 * 2 * 64 * 2, "5 ranks x 2 steps x 64 pieces, written and read")
    check(all(n == 1024 for *_, n in got), f"one piece each: {got[:4]}")


IOR = os.path.join(os.environ.get("MPIOR_TEST_IOR", "/work/ext/ior/install"), "bin", "ior")
IOR_ARGS = ("-a", "MPIIO", "-c", "-b", "64k", "-t", "16k", "-s", "2", "-k", "-o", "collective.dat")


def ior():
    """IOR's collective MPI-IO (-a MPIIO -c, no file view): each call's requests, one 16 KiB transfer a rank, follow
    one another. Traced at 2-4 ranks with romio_cb_write/read enable and cb_nodes=1 (rank 0 moves everything), the
    5-rank plan dealt with --cb-nodes 2 under automatic has every rank move its own transfers, as ROMIO does in a real
    5-rank IOR run given cb_nodes=2. With --romio-cb-write/read enable the calls are two-phase: each aggregator's
    window has holes (the other ranks' blocks), so ROMIO reads it before writing it whole, finding what the calls
    before wrote (0 bytes on the first, a short read and a 0 at the end of the file later), as in a real run given
    enable (MPIOR_TEST_IOR: IOR's install prefix)."""
    if not os.access(IOR, os.X_OK):
        print(f"SKIP: no IOR at {IOR} (MPIOR_TEST_IOR=PREFIX)")
        sys.exit(SKIP)
    runs = Runs()
    try:
        hints = {}
        enable = [("romio_cb_write", "enable"), ("romio_cb_read", "enable")]
        for name, pairs in (("traced", [("cb_nodes", 1)] + enable), ("real", [("cb_nodes", 2), ("cb_config_list", "*:*")]),
                            ("real-enable", [("cb_nodes", 2), ("cb_config_list", "*:*")] + enable)):
            hints[name] = runs.path(name + "-hints")
            with open(hints[name], "w") as f:
                f.write("".join(f"{k} {v}\n" for k, v in pairs))
        dirs = [runs.trace(n, args=IOR_ARGS, app=IOR, env={"ROMIO_HINTS": hints["traced"]})[0] for n in (2, 3, 4)]
        check_eq({t[0] for t in transfers(os.path.join(dirs[-1], "plan"))}, {0}, "the aggregator when traced")
        plan = runs.path("p5")
        run([POST, "--extrapolate", "5", "--cb-nodes", "2", "--cb-config-list", "*:*", "--romio-cb-write", "automatic",
             "--romio-cb-read", "automatic", "-o", plan] + dirs)
        real, _ = runs.trace(5, args=IOR_ARGS, app=IOR, env={"ROMIO_HINTS": hints["real"]}, name="real5")
        got = transfers(plan)
        check_eq(got, transfers(os.path.join(real, "plan")), "IOR's transfers in the plan against ROMIO's")
        check_eq(len(got), 80, "5 ranks x 2 segments x 4 transfers, written and read")
        check_eq({t[0] for t in got}, set(range(5)), "every rank moves its own")
        run([POST, "--extrapolate", "5", "--cb-nodes", "2", "--cb-config-list", "*:*", "--romio-cb-write", "enable",
             "--romio-cb-read", "enable", "-o", plan + "e"] + dirs)
        real, _ = runs.trace(5, args=IOR_ARGS, app=IOR, env={"ROMIO_HINTS": hints["real-enable"]}, name="real5e")
        got = transfers(plan + "e")
        check_eq(got, transfers(os.path.join(real, "plan")), "IOR's transfers in the enable plan against ROMIO's")
        check((0, "R", 0, 0) in got and (1, "R", 278528, 0) in got and (1, "W", 155648, 139264) in got,
              f"read-modify-write: the first window's read finds nothing, a later one reads short then 0: {got}")
        check_eq({t[0] for t in got}, {0, 1}, "the aggregators")
    finally:
        runs.cleanup()


def on_nodes(runs, name, nodes, hints):
    """mpiio_scaling traced with nodes[i] ranks on a host named node<i> (ROMIO_HINTS from hints); returns the trace
    directory, posted."""
    traces, hints_file = runs.path(name), runs.path(name + "-hints")
    with open(hints_file, "w") as f:
        f.write("".join(f"{k} {v}\n" for k, v in hints))
    line = f'hostname "$0" && LD_PRELOAD={LIB} MPIOR_TRACE_DIR={traces} exec {APP} ' + " ".join(map(str, ARGS))
    cmd = ["mpirun.mpich"]
    for i, n in enumerate(nodes):
        cmd += ([":"] if i else []) + ["-n", str(n), "unshare", "-u", "sh", "-c", line, f"node{i}"]
    env = dict(os.environ, ROMIO_HINTS=hints_file)
    env.pop("LD_PRELOAD", None)
    runs.clean(runs.work)
    run(cmd, cwd=runs.work, env=env)
    run([POST, traces])
    return traces


def nodes():
    """cb_config_list *:1 (MPICH's default) over two hosts: traced with cb_nodes=1 at 2, 3 and 4 ranks placed in
    blocks on node0 and node1, extrapolated to 4 with --cb-nodes 4, ranks 0 and 2 (the first of each node) read and
    write, as ROMIO's own aggregators do in a real 4-rank run with cb_nodes=4; extrapolated to 8 the halves go on
    (4 ranks a node), and ranks 0 and 4 aggregate, as in a real 8-rank run."""
    if subprocess.run(["unshare", "-u", "true"], capture_output=True).returncode != 0:
        print("SKIP: unshare -u is not allowed here (it needs CAP_SYS_ADMIN)")
        sys.exit(SKIP)
    runs = Runs()
    try:
        dirs = [on_nodes(runs, f"t{n}", (n - n // 2, n // 2), [("cb_nodes", 1)]) for n in (2, 3, 4)]
        check_eq({t[0] for t in transfers(os.path.join(dirs[-1], "plan"))}, {0}, "the aggregator when traced")
        plan = runs.path("p4")
        run([POST, "--extrapolate", "4", "--cb-buffer-size", str(CB), "--cb-nodes", "4", "-o", plan] + dirs)
        real = on_nodes(runs, "real4", (2, 2), [("cb_nodes", 4)])
        got = transfers(plan)
        check_eq(got, transfers(os.path.join(real, "plan")), "transfers of the plan against ROMIO's on two nodes")
        check_eq({t[0] for t in got}, {0, 2}, "one aggregator a node")
        named = ["--cb-config-list", "node1:1,node0:2"]
        run([POST, "--extrapolate", "4", "--cb-buffer-size", str(CB), "--cb-nodes", "3", "-o", plan + "n"] + named
            + dirs)
        real = on_nodes(runs, "named4", (2, 2), [("cb_nodes", 3), ("cb_config_list", "node1:1,node0:2")])
        got = transfers(plan + "n")
        check_eq(got, transfers(os.path.join(real, "plan")), "transfers of the plan against ROMIO's, named hosts")
        check_eq(min(off for r, op, off, _ in got if r == 2 and op == "W"), 0, "node1's rank serves the first domain")
        check_eq({t[0] for t in got}, {0, 1, 2}, "two aggregators on node0, one on node1")
        # At 8 ranks the traced halves go on (ranks 0-3 on node0, 4-7 on node1): *:1 takes ranks 0 and 4, where
        # repeating the 4-rank placement (node0, node0, node1, node1, node0, ...) would take 0 and 2.
        run([POST, "--extrapolate", "8", "--cb-buffer-size", str(CB), "--cb-nodes", "4", "-o", plan + "8"] + dirs)
        real = on_nodes(runs, "real8", (4, 4), [("cb_nodes", 4)])
        got = transfers(plan + "8")
        check_eq(got, transfers(os.path.join(real, "plan")), "transfers of the 8-rank plan against ROMIO's")
        check_eq({t[0] for t in got}, {0, 4}, "the first rank of each node aggregates")
    finally:
        runs.cleanup()


if __name__ == "__main__":
    main({"reads": reads, "stripes": stripes, "nodes": nodes, "min_fdomain": min_fdomain, "automatic": automatic,
          "enable": enable, "ior": ior, "sieve": sieve, "naive": naive})
