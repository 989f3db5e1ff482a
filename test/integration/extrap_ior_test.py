"""Extrapolation of an IOR-like program with everything real programs print
(scalaioextrap's C1 verification, on a program we did not shape for it):
test/apps/ior_like traced at 2, 3, 4 and 5 ranks, extrapolated to 6 and 8
and compared with real traced runs there — every data-file call identical
per rank (--io-log), stdout and log calls equal in number and within 10% in
bytes — in each of its patterns; extrapolated to many ranks and replayed
with a thread per rank on a tmpfs, every rank's file at its size."""
import json
import os
import re
import shutil
import subprocess

from extrap_test import Runs, io_log
from harness import APPS, POST, REPLAY, check, check_eq, main, run, tree

APP = os.path.join(APPS, "ior_like")
INPUTS = (2, 3, 4, 5)
TARGETS = (6, 8)
# Small blocks: the many-rank replay writes BLOCK * SEGMENTS per rank.
BLOCK, XFER, SEGMENTS, REPS = 8192, 4096, 2, 2
DATA = re.compile(r"ior_like\.dat")


class IorRuns(Runs):
    def trace_app(self, n, pattern, api, name=None):
        return self.trace(n, args=[pattern, api, BLOCK, XFER, SEGMENTS, REPS], name=name, app=APP)


def split_log(text):
    """--io-log text -> ({rank: data-file lines}, {rank: number of other lines})."""
    data, other, rank = {}, {}, None
    for line in text.splitlines():
        if line.startswith("== rank "):
            rank = line.split()[2]
            data.setdefault(rank, [])
            other.setdefault(rank, 0)
        elif DATA.search(line):
            data[rank].append(line)
        else:
            other[rank] += 1
    return data, other


def text_bytes(summary):
    """Bytes written per text file (stdout, the log), by base name."""
    return {os.path.basename(f["path"]): f["bytes_written"] for f in summary["files"]
            if not DATA.search(f["path"]) and f["bytes_written"]}


def extrapolate(runs, dirs, target, plan):
    p = subprocess.run([POST, "--extrapolate", str(target), "-o", plan] + dirs, capture_output=True, text=True,
                       timeout=300)
    check_eq(p.returncode, 0, f"extrapolation to {target}: {p.stderr}")
    return p.stderr


def compare_with_real(runs, dirs, pattern, api, target):
    plan = runs.path(f"p{target}")
    warnings = extrapolate(runs, dirs, target, plan)
    with open(os.path.join(plan, "summary.json")) as f:
        ext = json.load(f)
    dump = run([POST, "--dump", os.path.join(plan, "plan.mpior")]).stdout
    # Each approximated position is warned about once, naming call and file,
    # but those on stdout and stderr (printed text) share one warning that
    # counts them; all are marked in summary.json and --dump. Only printed
    # text is approximated.
    grouped = re.search(r"warning: (\d+) positions? writing to <stdout> or <stderr> approximated", warnings)
    terminal = int(grouped.group(1)) if grouped else 0
    each = len(re.findall(r"\): approximated \(", warnings))
    approximated = each + terminal
    check_eq(warnings.count("mpior-post: warning:"), each + (1 if grouped else 0), f"warnings: {warnings}")
    check_eq(bool(ext["extrapolated"]["approximate"]), approximated > 0, f"summary.json against warnings {warnings}")
    check_eq("[approximate]" in dump, approximated > 0, "--dump marks approximate quantities")
    check_eq(warnings.count("file <stdout>"), 0, f"stdout positions are counted, not listed: {warnings}")
    check_eq(warnings.count("ior_like.log"), each, f"approximated positions all on stdout or the log: {warnings}")
    real, real_files = runs.trace_app(target, pattern, api, name=f"real{target}")
    with open(os.path.join(real, "plan", "summary.json")) as f:
        act = json.load(f)
    check_eq(ext["ops"], act["ops"], f"calls of the extrapolated summary against the real one at {target}")
    log_ext, fs_ext, _ = io_log(runs, plan, f"ext{target}", threads=target)
    log_act, fs_act, _ = io_log(runs, os.path.join(real, "plan"), f"act{target}")
    data_ext, other_ext = split_log(log_ext)
    data_act, other_act = split_log(log_act)
    check_eq(data_ext, data_act, f"data-file calls per rank at {target}, extrapolated against real")
    check_eq(other_ext, other_act, f"number of other file calls per rank at {target}")
    got, want = text_bytes(ext), text_bytes(act)
    check_eq(sorted(got), sorted(want), f"text files written at {target}")
    for name, size in want.items():
        check(abs(got[name] - size) <= 0.1 * size, f"{name} bytes at {target}: {got[name]} against {size} real")
    sizes = lambda fs: {k: v[0] for k, v in tree(fs).items() if DATA.search(k)}
    check_eq(sizes(fs_ext), sizes(fs_act), f"data files of the replays at {target}")
    for name, size in real_files.items():
        if DATA.search(name):
            rel = os.path.join(runs.work, name).lstrip("/")
            check_eq(sizes(fs_ext).get(rel), size, f"replayed size of {name} against the real run at {target}")
    return approximated


def pattern(name, api):
    def scenario():
        runs = IorRuns()
        try:
            dirs = [runs.trace_app(n, name, api)[0] for n in INPUTS]
            approximated = [compare_with_real(runs, dirs, name, api, target) for target in TARGETS]
            check(min(approximated) == max(approximated), "approximated positions do not depend on the target")
            # --strict keeps the refusal, naming the quantity and its values.
            p = subprocess.run([POST, "--extrapolate", "8", "--strict", "-o", runs.path("strict")] + dirs,
                               capture_output=True, text=True, timeout=300)
            if approximated[0]:
                check(p.returncode == 1 and "cannot extrapolate" in p.stderr and "n=2 rank 0" in p.stderr
                      and "incidental" in p.stderr, f"--strict refusal: {p.stderr}")
            else:
                check_eq(p.returncode, 0, f"--strict where nothing is approximated: {p.stderr}")
        finally:
            runs.cleanup()
    return scenario


def user_exclude():
    """A user's MPIOR_EXCLUDE adds to the default list: MPICH's and hwloc's reads of /proc and /sys (in loops
    over the node's processes, whose trip counts change with n) stay out of the plans, which extrapolate."""
    runs = IorRuns()
    try:
        env = {"MPIOR_EXCLUDE": "<stdout>"}
        args = ["shared", "posix", BLOCK, XFER, SEGMENTS, REPS]
        dirs = [runs.trace(n, args=args, env=env, app=APP)[0] for n in INPUTS]
        for d in dirs:
            dump = run([POST, "--dump", os.path.join(d, "plan", "plan.mpior")]).stdout
            files = dump[dump.index("files ("):dump.index("communicators (")]
            check(not re.search(r"  /(proc|sys)/", files), f"/proc or /sys files in the plan of {d}:\n{files}")
        plan = runs.path("p8")
        extrapolate(runs, dirs, 8, plan)
        check(os.path.exists(os.path.join(plan, "plan.mpior")), "the plan at 8 ranks")
    finally:
        runs.cleanup()


def many_threads():
    """Extrapolated to 1,024 ranks (8,192 in the bench: bench.py --only extrap_ior) and replayed with a thread
    per rank on /dev/shm: every rank's file at its size."""
    target = int(os.environ.get("MPIOR_EXTRAP_IOR_RANKS", "1024"))
    runs = IorRuns()
    fs = f"/dev/shm/mpior-extrap-ior-{os.getpid()}"
    try:
        dirs = [runs.trace_app(n, "fpp", "posix")[0] for n in INPUTS]
        plan = runs.path("pmany")
        extrapolate(runs, dirs, target, plan)
        os.makedirs(fs)
        report = runs.path("many.json")
        run([REPLAY, "--threads", str(target), "--fs", fs, "--stdio", "null", "--io-only", "--json", report, plan],
            timeout=600)
        with open(report) as f:
            check_eq(json.load(f)["errors"]["count"], 0, "failed calls replaying the many-rank plan")
        base = os.path.join(fs, runs.work.lstrip("/"))
        files = {f: os.path.getsize(os.path.join(base, f)) for f in os.listdir(base) if DATA.search(f)}
        want = {f"ior_like.dat.{r:08d}": BLOCK * SEGMENTS for r in range(target)}
        check_eq(len(files), target, "data files of the many-rank replay")
        check_eq(files, want, "every rank's file at its size")
    finally:
        shutil.rmtree(fs, ignore_errors=True)
        runs.cleanup()


if __name__ == "__main__":
    main({
        "fpp_posix": pattern("fpp", "posix"),
        "shared_posix": pattern("shared", "posix"),
        "interleaved_mpiio": pattern("interleaved", "mpiio"),
        "fpp_mpiio": pattern("fpp", "mpiio"),
        "user_exclude": user_exclude,
        "many_threads": many_threads,
    })
