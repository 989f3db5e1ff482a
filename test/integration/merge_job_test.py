"""A job's trace is one file (issue 19): at MPI_Finalize the ranks merge their
traces over a tree into one job trace (merged.mpior), or, when they do not
merge (irregular codes, MPIOR_MERGE_TREE=0, MPIOR_AGGREGATE=node|K), send them
to aggregators that write indexed files (ranks.mpior for the whole job,
ranks-NNNNNN.mpior per aggregator); only then do they remove their periodic
flush files. mpior-post reads any form, or rank files, into the same plan
(`mpior-post --compare`: identical except timing).
"""
import os
import shutil
import subprocess
import tempfile

from harness import APPS, LIB, POST, check, check_eq, main, run

# Deterministic bundled programs at 2-8 ranks: (program, args, ranks).
PROGRAMS = [
    ("nton_barrier", [4, 4096], 4),
    ("nton_barrier", [3, 512], 8),
    ("nto1", [4, 2048], 3),
    ("serial_gather", [3, 1000], 2),
    ("comm_split", [3, 1024], 4),
    ("checkpoint_sim", [6, 100, 3, 512], 2),
    ("mpiio_scaling", [2, 16, 0], 2),
]


class Job:
    def __init__(self, prefix="mpior-merge-"):
        self.root = tempfile.mkdtemp(prefix=prefix)

    def trace(self, name, app, args, ranks, expect_rc=0, **env):
        traces = os.path.join(self.root, name)
        work = os.path.join(self.root, "work")  # the same path each run, fresh: equal plans
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        e = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces)  # merging on: the default
        e.update({k: str(v) for k, v in env.items()})
        cmd = ["mpirun.mpich", "-n", str(ranks), os.path.join(APPS, app)] + [str(a) for a in args]
        p = subprocess.run(cmd, cwd=work, env=e, capture_output=True, text=True, timeout=300)
        if expect_rc is not None:
            check_eq(p.returncode, expect_rc, f"{app} exit status ({p.stderr[-2000:]})")
        self.stderr = p.stderr
        return traces

    def post(self, traces, expect_rc=0):
        return run([POST, traces, "-o", traces + "-plan"], expect_rc=expect_rc)

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def same_plan(job, a, b, what):
    out = run([POST, "--compare", os.path.join(a + "-plan", "plan.mpior"), os.path.join(b + "-plan", "plan.mpior")],
              expect_rc=None)
    check_eq(out.returncode, 0, f"{what}: plans with merging on and off differ: {out.stdout}{out.stderr}")


def job_layout(traces):
    dump = run([POST, "--dump", os.path.join(traces, "job.mpior")]).stdout
    return {l.split(":")[0].strip(): l.split("ranks")[-1].strip() for l in dump.splitlines()
            if l.startswith("  ") and ".mpior: ranks" in l}


def merged_streams(traces):
    """Ranks and streams of the merged job trace, as --dump tells them."""
    head = run([POST, "--dump", os.path.join(traces, "merged.mpior")]).stdout
    line = [l for l in head.splitlines() if l.startswith("merged job trace:")][0]
    ranks, streams = line.split(", ")[1], line.split(", ")[2]
    return int(ranks.split(" of ")[0]), int(streams.split()[0])


def programs():
    """Every program: the merged job trace beside the job record (from 4 ranks on fewer streams than ranks:
    the ranks did merge), the same plan as rank files and as aggregate files."""
    for i, (app, args, ranks) in enumerate(PROGRAMS):
        job = Job()
        what = f"{app} at {ranks} ranks"
        off = job.trace("off", app, args, ranks, MPIOR_MERGE=0)
        on = job.trace("on", app, args, ranks)
        check_eq(sorted(os.listdir(on)), ["job.mpior", "merged.mpior"], f"{what}: files the merged job left")
        check_eq(sorted(os.listdir(off)), ["job.mpior"] + [f"rank-{r:06d}.mpior" for r in range(ranks)],
                 f"{what}: files with MPIOR_MERGE=0")
        want = "[" + ", ".join(str(r) for r in range(ranks)) + "]"
        check_eq(job_layout(on), {"merged.mpior": want}, f"{what}: the job record's layout")
        held, streams = merged_streams(on)
        check_eq(held, ranks, f"{what}: ranks in merged.mpior")
        # rank 0 often differs (it prints, gathers): from 4 ranks on, some ranks must have merged
        check(streams < ranks if ranks >= 4 else streams <= ranks,
              f"{what}: {streams} merged streams for {ranks} ranks: the ranks did not merge")
        job.post(off)
        out = job.post(on)
        check("merged.mpior" not in out.stderr, f"{what}: post of the merged job warns: {out.stderr}")
        same_plan(job, off, on, what)
        if i % 3 == 0:  # the aggregate files, the fallback, read into the same plan too
            agg = job.trace("agg", app, args, ranks, MPIOR_MERGE_TREE=0)
            check_eq(sorted(os.listdir(agg)), ["job.mpior", "ranks.mpior"], f"{what}: MPIOR_MERGE_TREE=0")
            job.post(agg)
            same_plan(job, off, agg, what + " (aggregate files)")
        job.cleanup()


def irregular():
    """Ranks whose streams do not merge (random offsets): the aggregate file, not a merged one; the same plan."""
    job = Job()
    off = job.trace("off", "random_io", [20000], 4, MPIOR_MERGE=0)
    on = job.trace("on", "random_io", [20000], 4)
    check_eq(sorted(os.listdir(on)), ["job.mpior", "ranks.mpior"], "irregular ranks: the aggregate file")
    job.post(off)
    job.post(on)
    same_plan(job, off, on, "random_io")
    job.cleanup()


def aggregators():
    """8 ranks, MPIOR_AGGREGATE=4: two aggregate files, the same plan."""
    job = Job()
    off = job.trace("off", "nton_barrier", [3, 1024], 8, MPIOR_MERGE=0)
    on = job.trace("on", "nton_barrier", [3, 1024], 8, MPIOR_AGGREGATE=4)
    check_eq(sorted(os.listdir(on)), ["job.mpior", "ranks-000000.mpior", "ranks-000004.mpior"], "files with K=4")
    check_eq(job_layout(on), {"ranks-000000.mpior": "[0, 1, 2, 3]", "ranks-000004.mpior": "[4, 5, 6, 7]"},
             "layout with K=4")
    dump = run([POST, "--dump", os.path.join(on, "ranks-000004.mpior")]).stdout
    check("4 of 8 ranks" in dump and "rank 7:" in dump and "rank 3:" not in dump, f"aggregate dump: {dump}")
    node = job.trace("node", "nton_barrier", [3, 1024], 8, MPIOR_AGGREGATE="node")
    check_eq(sorted(os.listdir(node)), ["job.mpior", "ranks.mpior"], "one node: one file")
    for t in (off, on, node):
        job.post(t)
    same_plan(job, off, on, "K=4")
    same_plan(job, off, node, "node")
    job.cleanup()


def killed():
    """A rank killed inside the finalize aggregation: the flush files stay, mpior-post recovers the run."""
    job = Job()
    traces = job.trace("t", "checkpoint_sim", [40, 20000, 10, 512], 4, expect_rc=None, MPIOR_FLUSH_INTERVAL=50,
                       MPIOR_TEST_KILL_IN_MERGE=2)
    files = sorted(os.listdir(traces))
    check("ranks.mpior" not in files and "merged.mpior" not in files, f"no job file after the kill: {files}")
    check_eq([f for f in files if f.startswith("rank-") and f.endswith(".mpior")],
             [f"rank-{r:06d}.mpior" for r in range(4)], "every rank's flush file kept")
    check(any(f.endswith(".journal") for f in files), f"crash journals kept: {files}")
    out = job.post(traces)
    check("incomplete" in out.stderr, f"post warns the ranks did not finish: {out.stderr}")
    check(not [f for f in os.listdir(traces) if f.endswith(".journal")], "journals gone after mpior-post")
    job.cleanup()


def spilled():
    """A rank that spilled (rank-NNNNNN.spill*) keeps its own file; the others merge; the layout says so."""
    job = Job()
    traces = os.path.join(job.root, "t")
    os.makedirs(traces)
    open(os.path.join(traces, "rank-000001.spill.mpior"), "wb").close()
    job.trace("t", "nton_barrier", [3, 512], 3)
    files = sorted(os.listdir(traces))
    check_eq(files, ["job.mpior", "rank-000001.mpior", "rank-000001.spill.mpior", "ranks.mpior"], "files")
    check_eq(job_layout(traces), {"ranks.mpior": "[0, 2]", "rank-000001.mpior": "[1]"}, "layout")
    check_eq(job.post(traces).returncode, 0, "post")
    job.cleanup()


def bad():
    """A corrupt aggregate names the file and the rank; an aggregate of another run is refused; --dump of a
    rank file the aggregation replaced shows its entry."""
    job = Job()
    a = job.trace("a", "nton_barrier", [3, 512], 3, MPIOR_MERGE_TREE=0)
    b = job.trace("b", "nton_barrier", [3, 512], 3, MPIOR_MERGE_TREE=0)
    dump = run([POST, "--dump", os.path.join(a, "rank-000001.mpior")]).stdout
    check("ranks.mpior (rank 1)" in dump and "rank 1 of 3" in dump, f"--dump of a merged rank: {dump[:300]}")
    agg = os.path.join(a, "ranks.mpior")
    good = open(agg, "rb").read()
    entries = run([POST, "--dump", agg]).stdout
    rank2 = [l for l in entries.splitlines() if l.strip().startswith("rank 2:")][0]
    start = int(rank2.split("bytes ")[1].split("..")[0])
    shutil.copy(os.path.join(b, "ranks.mpior"), agg)
    out = job.post(a, expect_rc=1)
    check(agg in out.stderr and "another run" in out.stderr, f"foreign aggregate refused: {out.stderr}")
    data = bytearray(good)
    data[start + 40] ^= 0x10
    open(agg, "wb").write(bytes(data))
    out = job.post(a, expect_rc=1)
    check(agg in out.stderr and "rank 2's entry" in out.stderr and "corrupt" in out.stderr,
          f"corrupt entry named: {out.stderr}")
    os.remove(agg)
    out = job.post(a, expect_rc=1)
    check(agg in out.stderr and "missing" in out.stderr, f"a listed file missing: {out.stderr}")
    job.cleanup()


def crc32c(data):
    """CRC-32C (Castagnoli, reflected), what mpior's containers end with."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def bad_merged():
    """A corrupt merged job trace gets one message naming it; one of another run is refused; a missing one is
    named; --dump of a rank file the merge replaced shows that rank, expanded."""
    job = Job()
    a = job.trace("a", "nton_barrier", [3, 512], 3)
    b = job.trace("b", "nton_barrier", [3, 512], 3)
    merged = os.path.join(a, "merged.mpior")
    dump = run([POST, "--dump", os.path.join(a, "rank-000001.mpior")]).stdout
    check("merged.mpior (rank 1)" in dump and "rank 1 of 3" in dump, f"--dump of a merged rank: {dump[:300]}")
    dump = run([POST, "--dump", merged]).stdout
    check("3 of 3 ranks" in dump and "rank 2: pid" in dump, f"--dump of merged.mpior: {dump[:400]}")
    good = open(merged, "rb").read()
    shutil.copy(os.path.join(b, "merged.mpior"), merged)
    out = job.post(a, expect_rc=1)
    check(merged in out.stderr and "another run" in out.stderr, f"foreign merged trace refused: {out.stderr}")
    data = bytearray(good)
    data[len(data) // 2] ^= 0x10
    open(merged, "wb").write(bytes(data))
    for cmd in ([POST, a, "-o", a + "-plan"], [POST, "--dump", merged]):
        out = run(cmd, expect_rc=1)
        lines = [l for l in out.stderr.splitlines() if l.strip()]
        check(len(lines) == 1 and merged in lines[0] and "corrupt" in lines[0], f"corrupt merged trace: {out.stderr}")
    # what the mpior of merged format 4 wrote: refused as older, not as corrupt
    old = bytearray(good)
    old[8:12] = (4).to_bytes(4, "little")
    old[-12:-8] = crc32c(old[:-12]).to_bytes(4, "little")
    open(merged, "wb").write(bytes(old))
    for cmd in ([POST, a, "-o", a + "-plan"], [POST, "--dump", merged]):
        out = run(cmd, expect_rc=1)
        lines = [l for l in out.stderr.splitlines() if l.strip()]
        check(len(lines) == 1 and merged in lines[0] and "format version 4 (written by an older mpior)" in lines[0]
              and "corrupt" not in lines[0], f"old merged trace: {out.stderr}")
    os.remove(merged)
    out = job.post(a, expect_rc=1)
    check(merged in out.stderr and "missing" in out.stderr, f"a listed file missing: {out.stderr}")
    job.cleanup()


if __name__ == "__main__":
    main({"programs": programs, "irregular": irregular, "aggregators": aggregators, "killed": killed,
          "spilled": spilled, "bad": bad, "bad_merged": bad_merged})
