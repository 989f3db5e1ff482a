"""Extrapolation end to end (scalaioextrap §III): test/apps/scaling traced
for real at 4, 5, 6 and 7 ranks, extrapolated to 8, and checked against a
real traced run at 8 — the plans identical except timing (mpior-post
--compare, the paper's C1), the replays issuing the same file calls per rank
(--io-log) and making the same files (C3) — and the refusals."""
import json
import os
import shutil
import subprocess
import tempfile

from harness import APPS, LIB, POST, REPLAY, Failure, app_path, check, check_eq, main, mpirun, run, tree

APP = app_path("scaling")
INPUTS = (4, 5, 6, 7)


class Runs:
    """Traced runs of one program in one working directory (so the paths
    the plans hold are the same), each into its own trace directory."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="mpior-extrap-")
        self.work = os.path.join(self.root, "work")
        self.plain = os.path.join(self.root, "plain")
        os.makedirs(self.work)
        os.makedirs(self.plain)

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def clean(self, d):
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))

    def trace(self, n, args=(), env=None, name=None, compare_untraced=False, app=None):
        """Runs the app at n ranks traced into ROOT/<name>, posts it; returns
        the trace directory and the files the run left {name: size}."""
        name = name or f"t{n}"
        traces = self.path(name)
        cmd = mpirun(n) + [app or APP] + [str(a) for a in args]
        base = dict(os.environ)
        base.pop("LD_PRELOAD", None)
        base.update(env or {})
        traced_env = dict(base, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces)
        self.clean(self.work)
        traced = run(cmd, cwd=self.work, env=traced_env)
        files = {k: v[0] for k, v in tree(self.work).items()}
        if compare_untraced:
            self.clean(self.plain)
            plain = run(cmd, cwd=self.plain, env=base)
            check_eq(traced.stdout, plain.stdout, f"stdout of the traced run at {n} ranks")
            check_eq(tree(self.work), tree(self.plain), f"files of the traced run at {n} ranks")
        run([POST, traces])
        return traces, files

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def io_log(runs, plan, name, threads=None):
    fs = runs.path("fs-" + name)
    log = runs.path(name + ".log")
    report = runs.path(name + ".json")
    cmd = [REPLAY, "--fs", fs, "--io-log", log, "--json", report, plan]
    if threads:
        cmd[1:1] = ["--threads", str(threads)]
    run(cmd)
    with open(log) as f, open(report) as r:
        rep = json.load(r)
        check_eq(rep["errors"]["count"], 0, f"failed calls replaying {plan}")
        return f.read(), fs, rep


def refused(cmd, *needles, out_dir=None, rc=1):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    check_eq(p.returncode, rc, f"exit status of {' '.join(cmd)} (stderr: {p.stderr.strip()})")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(len(lines) >= 1 and lines[0].startswith("mpior-post: "), f"one mpior-post message, got {p.stderr!r}")
    for n in needles:
        check(n in p.stderr, f"{n!r} in the refusal: {p.stderr!r}")
    if out_dir:
        check(not os.path.exists(out_dir), f"{out_dir} left behind by a refused extrapolation")
        check(not any(e.startswith(os.path.basename(out_dir) + ".tmp") for e in os.listdir(os.path.dirname(out_dir))),
              "a temporary plan directory left behind")
    return p.stderr


def extrapolate_to_8(env=None):
    runs = Runs()
    try:
        dirs = [runs.trace(n, env=env, compare_untraced=(n == 4))[0] for n in INPUTS]
        real, real_files = runs.trace(8, env=env, compare_untraced=True)
        plan = runs.path("p8")
        out = run([POST, "--extrapolate", "8", "-o", plan] + dirs).stdout
        check("8 ranks extrapolated from 4 runs" in out, f"extrapolation report: {out}")
        cmp = run([POST, "--compare", plan, os.path.join(real, "plan")], expect_rc=None)
        check_eq(cmp.returncode, 0, f"--compare extrapolated against real at 8: {cmp.stdout}{cmp.stderr}")
        check("identical except timing" in cmp.stdout, cmp.stdout)
        # The inputs may also be plan directories.
        plan2 = runs.path("p8-from-plans")
        run([POST, "--extrapolate", "8", "-o", plan2] + [os.path.join(d, "plan") for d in dirs])
        check_eq(run([POST, "--compare", plan, plan2], expect_rc=None).returncode, 0, "plans from traces and plans")
        # Summaries: the same calls and bytes per file as the real run at 8.
        with open(os.path.join(plan, "summary.json")) as f:
            ext = json.load(f)
        with open(os.path.join(real, "plan", "summary.json")) as f:
            act = json.load(f)
        check_eq(ext["ops"], act["ops"], "ops of the extrapolated summary against the real one")
        per_file = lambda s: sorted((f["path"], f["bytes_written"], f["bytes_read"]) for f in s["files"])
        check_eq(per_file(ext), per_file(act), "bytes per file, extrapolated against real")
        check_eq(ext["extrapolated"]["target"], 8, "summary.json extrapolated.target")
        check_eq([i["ranks"] for i in ext["extrapolated"]["inputs"]], list(INPUTS), "summary.json inputs")
        dump = run([POST, "--dump", os.path.join(plan, "plan.mpior")]).stdout
        for model in ("strong scaling", "rank-modulo (model 5)", "inverse", "r mod 2 = 0", "nton_{r}.dat"):
            check(model in dump, f"--dump names the model {model!r}")
        # Replays: the same file calls per rank, the same files at the same sizes.
        log_ext, fs_ext, _ = io_log(runs, plan, "ext", threads=8)
        log_act, fs_act, _ = io_log(runs, os.path.join(real, "plan"), "act")
        check_eq(log_ext, log_act, "--io-log of the extrapolated plan against the real one")
        sizes = lambda fs: {k: v[0] for k, v in tree(fs).items()}
        check_eq(sizes(fs_ext), sizes(fs_act), "replayed files")
        for name, size in real_files.items():
            rel = os.path.join(runs.work, name).lstrip("/")
            check_eq(sizes(fs_ext).get(rel), size, f"replayed size of {name} against the real run")
    finally:
        runs.cleanup()


def library_io():
    """Under Open MPI, MPI_Init reads the library's configuration and scans its components, and at 3 ranks and
    more rank 0 discovers the node itself (hwloc): the calls nested in it differ between 2 and 3 ranks, so no
    input's structure matched another's. test/apps/scaling traced at 2, 4, 5, 6 and 7 ranks extrapolates to 8,
    that I/O left out with a warning (and rank 0's loop of n reads, two scalars at 2 ranks, taken as a loop), and
    the replay makes the same calls on the program's files, per rank and in order, as a real run at 8."""
    runs = Runs()
    try:
        dirs = [runs.trace(n)[0] for n in (2, 4, 5, 6, 7)]
        real, real_files = runs.trace(8)
        plan = runs.path("p8")
        err = run([POST, "--extrapolate", "8", "-o", plan] + dirs).stderr
        check("the MPI library's own I/O inside MPI_Init and MPI_Finalize differs" in err, f"warning: {err}")
        mine = lambda log: [l for l in log.splitlines() if runs.work in l or l.startswith("== rank")]
        log_ext, fs_ext, _ = io_log(runs, plan, "ext", threads=8)
        log_act, _, _ = io_log(runs, os.path.join(real, "plan"), "act")
        check(len(mine(log_act)) > 8 * 4, f"the real run's calls on the program's files: {len(mine(log_act))}")
        check_eq(mine(log_ext), mine(log_act), "calls on the program's files per rank, extrapolated against real")
        for name, size in real_files.items():
            rel = os.path.join(runs.work, name).lstrip("/")
            check_eq({k: v[0] for k, v in tree(fs_ext).items()}.get(rel), size, f"replayed size of {name}")
    finally:
        runs.cleanup()


def refusals():
    runs = Runs()
    try:
        dirs = [runs.trace(n)[0] for n in INPUTS]
        out = runs.path("refused")
        refused([POST, "--extrapolate", "8", "-o", out] + dirs[:2], "three or more", out_dir=out, rc=2)
        other, _ = runs.trace(6, args=(4,), name="t6-other-args")
        refused([POST, "--extrapolate", "8", "-o", out, dirs[0], dirs[1], other], "not the same program",
                "scaling 4", out_dir=out)
        refused([POST, "--extrapolate", "9", "-o", out] + dirs, "not an integer", "pwrite", out_dir=out)
        # An input of fewest ranks that behaves otherwise: the refusal says the others extrapolate without it.
        odd, _ = runs.trace(2, args=(4,), name="t2-other-args")
        refused([POST, "--extrapolate", "8", "-o", out, odd] + dirs, "not the same program",
                "Without " + odd + " (2 ranks) the other inputs extrapolate", out_dir=out)
        # At 2 to 5 ranks one rank (2) writes nton_0002.dat among the ranks of its kind: at 8, three ranks run
        # it, and whether they share that name or follow the rank is not known.
        small = [runs.trace(n)[0] for n in (2, 3)] + dirs[:2]
        refused([POST, "--extrapolate", "8", "-o", out] + small, "nton_0002.dat", "rank 2 at n=4, rank 2 at n=5",
                "whether they share the name", out_dir=out)
        irregular = [runs.trace(n, args=(3, 1), name=f"irr{n}")[0] for n in INPUTS]
        err = refused([POST, "--extrapolate", "8", "-o", out] + irregular, "no model fits", "write", "off", "n=7 rank 5",
                      out_dir=out)
        check("Without" not in err, f"no input to leave out when none would do: {err}")
        diff = run([POST, "--compare", dirs[0] + "/plan", dirs[1] + "/plan"], expect_rc=1).stdout
        check("differ" in diff and "ranks" in diff, f"--compare of 4 and 5 ranks: {diff}")
        refused([POST, "--compare", dirs[0] + "/plan", runs.path("nowhere")], "nowhere", rc=2)
        # The replayer points at extrapolation when asked for another scale.
        p = subprocess.run([REPLAY, "--threads", "16", "--fs", runs.path("fs"), dirs[0] + "/plan"],
                           capture_output=True, text=True)
        check(p.returncode != 0 and "--extrapolate" in p.stderr, f"replay at another scale: {p.stderr}")
    finally:
        runs.cleanup()


def max_blocksize():
    """Collective MPI-IO: ROMIO's aggregator writes a step in one pwrite whose
    size grows with n; extrapolated with a collective buffer smaller than it,
    the pwrite splits exactly as ROMIO splits it when given that buffer."""
    global APP
    APP = os.path.join(APPS, "mpiio_scaling")
    runs = Runs()
    try:
        dirs = [runs.trace(n, compare_untraced=(n == 4))[0] for n in INPUTS]
        real, _ = runs.trace(8)
        hinted, _ = runs.trace(8, args=(2, 64, 196608), name="hinted8")
        plain, split = runs.path("p8"), runs.path("p8-cb")
        run([POST, "--extrapolate", "8", "-o", plain] + dirs)
        run([POST, "--extrapolate", "8", "--cb-buffer-size", "196608", "-o", split] + dirs)
        for plan, against in ((plain, real), (split, hinted)):
            cmp = run([POST, "--compare", plan, os.path.join(against, "plan")], expect_rc=None)
            check_eq(cmp.returncode, 0, f"--compare {plan} against {against}: {cmp.stdout}{cmp.stderr}")
        dump = run([POST, "--dump", os.path.join(split, "plan.mpior")]).stdout
        check("max-blocksize rule" in dump and "up to 3 per call" in dump, "the split is noted in --dump")
        check("max-blocksize" not in run([POST, "--dump", os.path.join(plain, "plan.mpior")]).stdout,
              "no split below the default buffer")
        log_ext, _, _ = io_log(runs, split, "ext")
        log_act, _, _ = io_log(runs, os.path.join(hinted, "plan"), "act")
        check_eq(log_ext, log_act, "--io-log of the split plan against ROMIO's own split")
    finally:
        runs.cleanup()


def hdf5_against_real(runs, dirs, target, entries):
    """hdf5_steps extrapolated from dirs to target and compared with a real run there: the calls on
    steps.h5 per rank (--compare, which stops at the first difference, would stop at stdout or at what
    ROMIO's read-modify-write pread found, both incidental and timing-dependent)."""
    app = os.path.join(APPS, "hdf5_steps")
    plan = runs.path(f"p{target}")
    err = run([POST, "--extrapolate", str(target), "-o", plan] + dirs).stderr
    # Only incidentals are approximated: stdout, and what ROMIO's read-modify-write found.
    for w in err.split("mpior-post: warning:")[1:]:
        check("<stdout>" in w or "a read found in a file the job writes" in w, f"approximated: {w}")
    dump = run([POST, "--dump", os.path.join(plan, "plan.mpior")]).stdout
    for needle in ("dealt table", f"{entries} entries by address dealt in blocks", f"share({entries},r,n)"):
        check(needle in dump, f"--dump names {needle!r}")
    real, real_files = runs.trace(target, args=(4,), app=app)
    with open(os.path.join(plan, "summary.json")) as f, open(os.path.join(real, "plan", "summary.json")) as g:
        check_eq(json.load(f)["ops"], json.load(g)["ops"], "calls of the extrapolated summary against the real")
    data = lambda log: {rank: [l for l in lines.splitlines() if "steps.h5" in l]
                        for rank, lines in (part.split("\n", 1) for part in log.split("== rank ")[1:])}
    log_ext, fs_ext, _ = io_log(runs, plan, f"ext{target}", threads=target)
    log_act, fs_act, _ = io_log(runs, os.path.join(real, "plan"), f"act{target}")
    check_eq(len(data(log_ext)), target, "ranks in the replay log")
    check_eq(data(log_ext), data(log_act), f"calls on steps.h5 per rank, extrapolated against real at {target}")
    sizes = lambda fs: {k: v[0] for k, v in tree(fs).items() if k.endswith("steps.h5")}
    check_eq(sizes(fs_ext), sizes(fs_act), "replayed steps.h5")
    check_eq(list(sizes(fs_ext).values()), [real_files["steps.h5"]], "replayed size against the real run")


def hdf5_close():
    """test/apps/hdf5_steps: at file close HDF5 deals its 8 metadata cache entries over the ranks in blocks
    (ranks 0 to 2 write two at 5 ranks, 3 and 4 one), each rank writing its block ring by ring. Traced at 3 to
    6 ranks, the table is rebuilt from every rank and dealt again at 8: every call on steps.h5 identical per
    rank to a real run there; at 16 ranks, where half the ranks would get no entry, refused."""
    runs = Runs()
    try:
        dirs = [runs.trace(n, args=(4,), app=os.path.join(APPS, "hdf5_steps"))[0] for n in (3, 4, 5, 6)]
        hdf5_against_real(runs, dirs, 8, 8)
        out = runs.path("refused")
        refused([POST, "--extrapolate", "16", "-o", out] + dirs, "gets none of the 8 entries",
                "trace at two rank counts or more above 8", out_dir=out)
    finally:
        runs.cleanup()


def hdf5_loop_of_one():
    """At 8 ranks hdf5_steps' rank 0 writes one metadata entry, a plain call where at 3 to 5 ranks it loops
    over two or three: the loop the trace folded away is put back running once, and 6 ranks from 3, 4, 5
    and 8 match a real run."""
    runs = Runs()
    try:
        dirs = [runs.trace(n, args=(4,), app=os.path.join(APPS, "hdf5_steps"))[0] for n in (3, 4, 5, 8)]
        hdf5_against_real(runs, dirs, 6, 8)
    finally:
        runs.cleanup()


def hdf5_ior_pattern():
    """test/apps/hdf5_blocks, IOR's -a HDF5 pattern on one shared file: each rank's 4 independent data writes
    and its share of HDF5's 6 metadata entries come from one call site, one loop of 4 + share(6,r,n)
    writes. Traced at 3 to 6 ranks, extrapolated to 8 (ranks 6 and 7 write no entry): identical to a real run
    except timing."""
    runs = Runs()
    app = os.path.join(APPS, "hdf5_blocks")
    try:
        dirs = [runs.trace(n, args=(4,), app=app)[0] for n in (3, 4, 5, 6)]
        plan = runs.path("p8")
        err = run([POST, "--extrapolate", "8", "-o", plan] + dirs).stderr
        check("warning" not in err, f"nothing approximated: {err}")
        dump = run([POST, "--dump", os.path.join(plan, "plan.mpior")]).stdout
        check("4 + share(6,r,n) (entries of a dealt table)" in dump, "--dump names the loop of data and entries")
        real, real_files = runs.trace(8, args=(4,), app=app)
        cmp = run([POST, "--compare", plan, os.path.join(real, "plan")], expect_rc=None)
        check_eq(cmp.returncode, 0, f"--compare extrapolated against real at 8: {cmp.stdout}{cmp.stderr}")
        _, fs, _ = io_log(runs, plan, "ext", threads=8)
        sizes = {k: v[0] for k, v in tree(fs).items() if k.endswith("blocks.h5")}
        check_eq(list(sizes.values()), [real_files["blocks.h5"]], "replayed blocks.h5 against the real run")
    finally:
        runs.cleanup()


def hdf5_from_two_ranks():
    """test/apps/hdf5_coll, IOR's -a HDF5 -c pattern, traced at 2, 3, 7 and 8 ranks: its 6 metadata entries
    dealt so that rank 0 loops over 3 and 2 of them at 2 and 3 ranks and writes one as a plain call at 7 and 8
    (one structure, the loop put back), ranks 1 and 2 loop at 3 ranks where ranks 1 to 5 write one at 7 and 8.
    Extrapolated to 6 ranks, the events are those of a real run there, call for call on coll.h5. A 2-rank input
    pruned otherwise (the gap rule keeps sites at 2 ranks on 2 CPUs; here MPIOR_PRUNE=0) has the sites the
    others pruned pruned too, and gives the same events. A stream only the largest input shows is refused
    saying what input would resolve it."""
    runs = Runs()
    app = os.path.join(APPS, "hdf5_coll")
    steady = {"MPIOR_PRUNE_GAP_US": "0"}
    try:
        dirs = {n: runs.trace(n, args=(2, 2), env=steady, app=app)[0] for n in (2, 3, 4, 7, 8)}
        plan = runs.path("p6")
        err = run([POST, "--extrapolate", "6", "-o", plan] + [dirs[n] for n in (2, 3, 7, 8)]).stderr
        check("warning" not in err, f"nothing approximated: {err}")
        real, real_files = runs.trace(6, args=(2, 2), env=steady, app=app)
        cmp = run([POST, "--compare", plan, os.path.join(real, "plan")], expect_rc=None)
        check_eq(cmp.returncode, 0, f"--compare extrapolated against real at 6: {cmp.stdout}{cmp.stderr}")
        data = lambda log: {rank: [l for l in lines.splitlines() if "coll.h5" in l]
                            for rank, lines in (part.split("\n", 1) for part in log.split("== rank ")[1:])}
        log_ext, fs_ext, _ = io_log(runs, plan, "ext6", threads=6)
        log_act, _, _ = io_log(runs, os.path.join(real, "plan"), "act6")
        check_eq(len(data(log_ext)), 6, "ranks in the replay log")
        check_eq(data(log_ext), data(log_act), "calls on coll.h5 per rank, extrapolated against real at 6")
        sizes = [v[0] for k, v in tree(fs_ext).items() if k.endswith("coll.h5")]
        check_eq(sizes, [real_files["coll.h5"]], "replayed coll.h5 against the real run")
        # A 2-rank input pruned otherwise (here not at all): the call sites the other inputs pruned are pruned
        # there too, and the plan is the same.
        unpruned, _ = runs.trace(2, args=(2, 2), env={"MPIOR_PRUNE": "0"}, app=app, name="t2-unpruned")
        aligned = runs.path("p6-aligned")
        err = run([POST, "--extrapolate", "6", "-o", aligned, unpruned] + [dirs[n] for n in (3, 7, 8)]).stderr
        check("kept at 2 ranks, every call pruned at the other inputs" in err, f"pruned sites named: {err}")
        cmp = run([POST, "--compare", aligned, os.path.join(real, "plan")], expect_rc=None)
        check_eq(cmp.returncode, 0, f"--compare aligned against real at 6: {cmp.stdout}{cmp.stderr}")
        out = runs.path("refused")
        refused([POST, "--extrapolate", "8", "-o", out] + [dirs[n] for n in (2, 3, 4, 7)],
                "ranks 6 and up run it, which no smaller input has", "trace one more rank count above 6",
                out_dir=out)
    finally:
        runs.cleanup()


def hdf5_dataset_per_segment():
    """test/apps/hdf5_coll with a dataset per segment, as IOR -a HDF5 -c -s 4 makes them: HDF5 flushes its 9
    metadata entries in cache order, not by address (rank 0 writes 800, 96, 136, 680, 0 at 2 ranks). Traced at 2
    to 5 ranks and extrapolated to 8, the plan equals a real run's but for timing, and the replays make the same
    calls on coll.h5 per rank."""
    runs = Runs()
    app = os.path.join(APPS, "hdf5_coll")
    steady = {"MPIOR_PRUNE_GAP_US": "0"}
    try:
        dirs = [runs.trace(n, args=(4, 2, 1), env=steady, app=app)[0] for n in (2, 3, 4, 5)]
        plan = runs.path("p8")
        err = run([POST, "--extrapolate", "8", "-o", plan] + dirs).stderr
        check("warning" not in err, f"nothing approximated: {err}")
        dump = run([POST, "--dump", os.path.join(plan, "plan.mpior")]).stdout
        check("9 entries by address dealt in blocks" in dump, "--dump names the dealt table of 9 entries")
        real, real_files = runs.trace(8, args=(4, 2, 1), env=steady, app=app)
        cmp = run([POST, "--compare", plan, os.path.join(real, "plan")], expect_rc=None)
        check_eq(cmp.returncode, 0, f"--compare extrapolated against real at 8: {cmp.stdout}{cmp.stderr}")
        data = lambda log: [l for l in log.splitlines() if "coll.h5" in l or l.startswith("== rank")]
        log_ext, fs_ext, _ = io_log(runs, plan, "ext8", threads=8)
        log_act, _, _ = io_log(runs, os.path.join(real, "plan"), "act8")
        check_eq(data(log_ext), data(log_act), "calls on coll.h5 per rank, extrapolated against real at 8")
        sizes = [v[0] for k, v in tree(fs_ext).items() if k.endswith("coll.h5")]
        check_eq(sizes, [real_files["coll.h5"]], "replayed coll.h5 against the real run")
    finally:
        runs.cleanup()


def replay_shuffled(runs, dirs, plan, real, real_files):
    """shuffled_blocks' plan and its real run at 8 replayed: per rank, the (offset, bytes, call) on shuffled.dat of
    each, sorted, and the two logs. Checks the file's size against the real run and that --strict refuses."""
    calls = lambda log: {rank: sorted(tuple(l.split()[2:]) + (l.split()[0],) for l in lines.splitlines()
                                      if "shuffled.dat" in l and l.split()[0] in ("write", "read"))
                         for rank, lines in (part.split("\n", 1) for part in log.split("== rank ")[1:])}
    log_ext, fs_ext, _ = io_log(runs, plan, "ext", threads=8)
    log_act, _, _ = io_log(runs, os.path.join(real, "plan"), "act")
    ext, act = calls(log_ext), calls(log_act)
    check_eq(len(ext), 8, "ranks in the replay log")
    sizes = {k: v[0] for k, v in tree(fs_ext).items() if k.endswith("shuffled.dat")}
    check_eq(list(sizes.values()), [real_files["shuffled.dat"]], "replayed shuffled.dat against the real run")
    out = runs.path("refused")
    refused([POST, "--extrapolate", "8", "--strict", "-o", out] + dirs, "do not have one loop shape", out_dir=out)
    return ext, act, log_ext, log_act


def shuffled_blocks():
    """test/apps/shuffled_blocks, IOR's random offsets (-z): each rank writes and reads back its blocks of one
    shared file in an order shuffled from a seed of its rank and the rank count, which no model fits. Traced at
    3, 4 and 5 ranks and extrapolated to 8, the offsets are the sorted values' model in a pseudo-random order,
    with a warning: each rank writes and reads the same (offset, bytes) as a real run at 8, in another order,
    and the replay fails no call; --strict refuses."""
    runs = Runs()
    app = os.path.join(APPS, "shuffled_blocks")
    try:
        dirs = [runs.trace(n, app=app)[0] for n in (3, 4, 5)]
        plan = runs.path("p8")
        err = run([POST, "--extrapolate", "8", "-o", plan] + dirs).stderr
        check("order approximated: a permutation of" in err, f"the order is said to be approximated: {err}")
        real, real_files = runs.trace(8, app=app)
        ext, act, log_ext, log_act = replay_shuffled(runs, dirs, plan, real, real_files)
        check_eq(ext, act, "(offset, bytes) written and read per rank, extrapolated against real at 8")
        check(all(len(c) == 32 for c in ext.values()), "16 writes and 16 reads per rank")
        check(log_ext != log_act, "the extrapolated order is not the traced one")
    finally:
        runs.cleanup()


def random_shared():
    """test/apps/shuffled_blocks shared=1, IOR -z on one shared file: one seed (of the rank count) draws which
    rank moves each transfer, so each rank's set and number of blocks are random and only their union (the whole
    file) follows a model. Traced at 3, 4 and 5 ranks and extrapolated to 8, the union is dealt again at random,
    each rank taking the mean, with warnings and `approximate` in --dump and summary.json: the (offset, bytes)
    written and read over all ranks and the file's size are those of a real run at 8, the number of calls over
    all ranks too, and the replay fails no call; --strict refuses."""
    runs = Runs()
    app = os.path.join(APPS, "shuffled_blocks")
    args = (8, 2, 1)
    try:
        dirs = [runs.trace(n, args=args, app=app)[0] for n in (3, 4, 5)]
        plan = runs.path("p8")
        err = run([POST, "--extrapolate", "8", "-o", plan] + dirs).stderr
        check("dealt at random" in err and "trip counts of a loop over values dealt at random" in err,
              f"the deal is said to be approximated: {err}")
        dump = run([POST, "--dump", os.path.join(plan, "plan.mpior")]).stdout
        check("[approximate]" in dump, "--dump marks the dealt quantities")
        with open(os.path.join(plan, "summary.json")) as f:
            check(json.load(f)["extrapolated"]["approximate"], "summary.json lists the dealt quantities")
        real, real_files = runs.trace(8, args=args, app=app)
        ext, act, _, _ = replay_shuffled(runs, dirs, plan, real, real_files)
        union = lambda per_rank: sorted(c for cs in per_rank.values() for c in cs)
        check_eq(union(ext), union(act), "(offset, bytes) written and read over all ranks, extrapolated against real")
        check_eq(sorted(len(c) for c in ext.values()), [32] * 8, "each rank the mean: 16 writes and 16 reads")
        check(sorted(len(c) for c in act.values()) != [32] * 8, "the real run deals unevenly (else no test)")
    finally:
        runs.cleanup()


if __name__ == "__main__":
    main({
        "to8": extrapolate_to_8,
        "to8_unpruned": lambda: extrapolate_to_8({"MPIOR_PRUNE": "0"}),
        "refusals": refusals,
        "library_io": library_io,
        "max_blocksize": max_blocksize,
        "hdf5_close": hdf5_close,
        "hdf5_loop_of_one": hdf5_loop_of_one,
        "hdf5_ior_pattern": hdf5_ior_pattern,
        "hdf5_from_two_ranks": hdf5_from_two_ranks,
        "hdf5_dataset_per_segment": hdf5_dataset_per_segment,
        "shuffled_blocks": shuffled_blocks,
        "random_shared": random_shared,
    })
