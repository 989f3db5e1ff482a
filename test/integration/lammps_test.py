#!/usr/bin/env python3
"""A real application: Debian's LAMMPS (lmp, built with Open MPI) running two
inputs from lammps-examples, shortened, at 2 and 4 ranks, untraced and traced
with libmpior-openmpi.so. Checks that LAMMPS' output and every file it writes
are the same (its wall-clock timings aside), that the trace posts, and that
the plan replays with no failed call, writing the same files at the same
sizes; prints the replay's predicted time next to the real one.

  lammps_test.py melt    Lennard-Jones melt: atom dump, restart files, log
  lammps_test.py crack   2-d crack: one custom dump file per snapshot (sorted), data file, log
  lammps_test.py melt_extrapolated
                         the melt in slabs (processors * 1 1) traced at 4, 5 and 6 ranks and
                         extrapolated to 8: the plan's files, calls and sizes against a real
                         8-rank run, and its replay
"""
import difflib
import json
import os
import re
import shutil
import sys
import tempfile
import time

os.environ["MPIOR_TEST_MPI"] = "openmpi"  # lmp is Debian's Open MPI build
from harness import (LIB, POST, REPLAY, SKIP, Failure, check, check_eq, file_entry, mpirun,  # noqa: E402
                     openmpi_missing, run, tree)

EXAMPLES = [d for d in ("/usr/share/doc/lammps-examples/examples", "/usr/share/lammps/examples") if os.path.isdir(d)]
RANKS = (2, 4)


def edit(text, replacements):
    """The example with lines replaced: {first word(s) of a line: new text}
    (a commented-out command counts: '#dump' is a dump line; '# run' is a
    comment). Each key must match exactly one line."""
    out, used = [], {}
    for line in text.splitlines():
        body = line[1:] if line.startswith("#") else line
        words = [] if body[:1].isspace() else body.split()
        for key, new in replacements.items():
            if words[:len(key.split())] == key.split():
                line = new
                used[key] = used.get(key, 0) + 1
                break
        out.append(line)
    check_eq(used, {k: 1 for k in replacements}, "lines of the example edited")
    return "\n".join(out) + "\n"


# What each input is turned into: fewer steps and atoms, and its output on.
INPUTS = {
    "melt": ("melt/in.melt", {
        "region box": "region\t\tbox block 0 8 0 8 0 8",
        "dump id": "dump\t\tid all atom 25 dump.melt",
        "thermo": "thermo\t\t25",
        "run": "restart\t\t50 melt.restart\nrun\t\t100\nwrite_restart\tmelt.final.restart",
    }, "log.melt"),
    "crack": ("crack/in.crack", {
        "region box": "region\t\tbox block 0 50 0 40 -0.25 0.25",
        "dump 1": "dump\t\t1 all custom 100 dump.crack.* id type x y vx vy\ndump_modify\t1 sort id",
        "thermo": "thermo\t\t100",
        "run": "run\t\t300\nwrite_data\tcrack.data",
    }, "log.crack"),
}

# Lines LAMMPS fills with wall-clock times: their numbers are not compared.
TIMED = re.compile(r"Loop time|Performance:|CPU use|Total wall time|CPU = |^(Pair|Bond|Kspace|Neigh|Comm|Output|Modify|"
                   r"Other)\s+\|")


def untimed(text):
    return "\n".join(" ".join(re.sub(r"\d[\d.e+-]*", "#", l).split()) if TIMED.search(l) else l
                     for l in text.splitlines())


def check_same(got, want, what):
    if got != want:
        diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "untraced", "traced", lineterm="", n=1)
        raise Failure(f"{what} differs:\n" + "\n".join(list(diff)[:40]))


def lammps_missing():
    missing = openmpi_missing()
    if missing:
        return missing
    if not shutil.which("lmp"):
        return "lmp not found (install lammps: scripts/setup.sh)"
    if not EXAMPLES:
        return "lammps-examples is not installed (scripts/setup.sh)"
    return None


def one_run(name, ranks, root):
    example, replacements, log = INPUTS[name]
    with open(os.path.join(EXAMPLES[0], example)) as f:
        script = edit(f.read(), replacements)
    dirs = {k: os.path.join(root, k) for k in ("plain", "traced")}
    traces, fs = os.path.join(root, "traces"), os.path.join(root, "fs")
    for d in dirs.values():
        os.makedirs(d)
        with open(os.path.join(d, "in." + name), "w") as f:
            f.write(script)
    cmd = mpirun(ranks) + ["lmp", "-in", "in." + name, "-log", log]
    env = dict(os.environ, LD_PRELOAD="", OMP_NUM_THREADS="1")
    start = time.monotonic()
    plain = run(cmd, cwd=dirs["plain"], env=env)
    plain_s = time.monotonic() - start
    start = time.monotonic()
    traced = run(cmd, cwd=dirs["traced"], env=dict(env, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces))
    traced_s = time.monotonic() - start
    check_same(untimed(traced.stdout), untimed(plain.stdout), f"{name} at {ranks} ranks: LAMMPS output")
    files_plain, files_traced = tree(dirs["plain"]), tree(dirs["traced"])
    check_eq(sorted(files_traced), sorted(files_plain), f"{name} at {ranks} ranks: files written")
    written = {}
    for f, (size, digest) in files_plain.items():
        if f == log:  # its size depends on the times printed in it
            with open(os.path.join(dirs["plain"], f)) as a, open(os.path.join(dirs["traced"], f)) as b:
                check_same(untimed(b.read()), untimed(a.read()), f"{name} at {ranks} ranks: {f} (times aside)")
        else:
            check_eq(files_traced[f][0], size, f"{name} at {ranks} ranks: size of {f}")
            check_eq(files_traced[f][1], digest, f"{name} at {ranks} ranks: content of {f}")
        if not f.startswith("in."):
            written[f] = files_traced[f][0]
    check(len(written) >= 3, f"{name} wrote its files ({sorted(written)})")

    run([POST, traces])
    with open(os.path.join(traces, "plan", "summary.json")) as f:
        summary = json.load(f)
    check_eq(summary["ranks"], ranks, "ranks in the summary")
    for f, size in written.items():
        check_eq(file_entry(summary, os.path.join(dirs["traced"], f))["bytes_written"], size, f"traced bytes of {f}")

    report = os.path.join(root, "report.json")
    out = run([REPLAY, "--fs", fs, "--json", report, os.path.join(traces, "plan")])
    check("failed calls: 0" in out.stdout, f"the replay reports no failed call:\n{out.stdout[-2000:]}")
    with open(report) as f:
        rep = json.load(f)
    check_eq(rep["errors"]["count"], 0, "failed calls in the replay report")
    for f, size in written.items():
        replayed = os.path.join(fs, dirs["traced"].lstrip("/"), f)
        check(os.path.isfile(replayed), f"the replay wrote {f}")
        check_eq(os.path.getsize(replayed), size, f"replayed size of {f}")
    print(f"{name} ranks={ranks}: untraced {plain_s:.2f} s, traced {traced_s:.2f} s (mpirun wall clock); "
          f"trace time {rep['traced_s']:.2f} s, replay predicted {rep['replay_s']:.2f} s "
          f"({rep['error_pct']:+.1f}%), {len(written)} files, {summary['mpi']['events']} MPI events kept")


# The melt cut in slabs along x, each wide enough for one exchange a side at
# 8 ranks: the ranks form a ring (rank 0's two neighbours keep their
# exchanges, the others' are pruned), the halo and dump sizes follow the atoms.
SLABS = {
    "lattice": "processors\t* 1 1\nlattice\t\tfcc 0.8442",
    "region box": "region\t\tbox block 0 40 0 8 0 8",
    "dump id": "dump\t\tid all atom 25 dump.melt",
    "thermo": "thermo\t\t25",
    "run": "restart\t\t50 melt.restart\nrun\t\t100",
}
EXTRAPOLATED_FROM, TARGET = (4, 5, 6), 8


def traced_slabs(ranks, root):
    """The slab melt traced at `ranks` in a directory of its own: (trace dir, run dir)."""
    with open(os.path.join(EXAMPLES[0], "melt/in.melt")) as f:
        script = edit(f.read(), SLABS)
    run_dir, traces = os.path.join(root, f"run{ranks}"), os.path.join(root, f"t{ranks}")
    os.makedirs(run_dir)
    with open(os.path.join(run_dir, "in.melt"), "w") as f:
        f.write(script)
    # The gap rule of online pruning (MPIOR_PRUNE_GAP_US) keeps a site after
    # computations that ranks sharing two CPUs do not always show.
    env = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces, OMP_NUM_THREADS="1", MPIOR_PRUNE_GAP_US="0")
    run(mpirun(ranks) + ["lmp", "-in", "in.melt", "-log", "log.melt", "-screen", "none"], cwd=run_dir, env=env)
    return traces, run_dir


def written_files(summary, run_dir):
    """{file name: (calls, bytes written)} of the files the job wrote in run_dir."""
    out = {}
    for f in summary["files"]:
        if os.path.dirname(f["path"]) == run_dir and f["bytes_written"] > 0:
            out[os.path.basename(f["path"])] = (f["ops"], f["bytes_written"])
    return out


def extrapolated(root):
    inputs = [traced_slabs(n, root)[0] for n in EXTRAPOLATED_FROM]
    real, real_dir = traced_slabs(TARGET, root)
    run([POST, "-q", real])
    plan = os.path.join(root, "p8")
    out = run([POST, "--extrapolate", str(TARGET), "-o", plan] + inputs)
    check("sending or receiving messages whose sizes follow the data approximated" in out.stderr,
          f"the halo's sizes are approximated:\n{out.stderr[-2000:]}")
    with open(os.path.join(plan, "summary.json")) as f:
        got = json.load(f)
    with open(os.path.join(real, "plan", "summary.json")) as f:
        want = json.load(f)
    check_eq(got["ranks"], TARGET, "ranks of the extrapolated plan")
    # The inputs ran in run4, run5 and run6: the plan's files are in run8.
    got_files = written_files(got, real_dir)
    want_files = written_files(want, real_dir)
    check_eq(sorted(got_files), sorted(want_files), "files the extrapolated plan writes")
    for name, (calls, size) in want_files.items():
        check_eq(got_files[name][0], calls, f"calls on {name} at {TARGET} ranks")
        check(abs(got_files[name][1] - size) <= 0.1 * size,
              f"bytes of {name}: {got_files[name][1]} extrapolated, {size} in a real run (within 10%)")
    fs, report = os.path.join(root, "fs"), os.path.join(root, "report.json")
    out = run([REPLAY, "--threads", str(TARGET), "--fs", fs, "--json", report, plan])
    with open(report) as f:
        rep = json.load(f)
    check_eq(rep["errors"]["count"], 0, "failed calls in the extrapolated plan's replay")
    print(f"melt in slabs, {EXTRAPOLATED_FROM} -> {TARGET} ranks: files " +
          ", ".join(f"{n} {got_files[n][1]} B (real {want_files[n][1]})" for n in sorted(want_files)) +
          f"; replay predicted {rep['replay_s']:.2f} s against the plan's {rep['traced_s']:.2f} s")


def main():
    name = sys.argv[1]
    if name == "melt_extrapolated":
        missing = lammps_missing()
        if missing:
            print(f"skip lammps {name}: {missing}")
            sys.exit(SKIP)
        root = tempfile.mkdtemp(prefix="mpior-lammps-")
        try:
            extrapolated(root)
        except Failure as e:
            print(f"FAIL lammps {name}: {e} (files kept in {root})")
            sys.exit(1)
        shutil.rmtree(root, ignore_errors=True)
        print(f"ok lammps {name}")
        return
    if name not in INPUTS:
        raise SystemExit(f"unknown scenario {name}")
    missing = lammps_missing()
    if missing:
        print(f"skip lammps {name}: {missing}")
        sys.exit(SKIP)
    for ranks in RANKS:
        root = tempfile.mkdtemp(prefix="mpior-lammps-")
        try:
            one_run(name, ranks, root)
        except Failure as e:
            print(f"FAIL lammps {name} ranks={ranks}: {e} (files kept in {root})")
            sys.exit(1)
        shutil.rmtree(root, ignore_errors=True)
    print(f"ok lammps {name}")


if __name__ == "__main__":
    main()
