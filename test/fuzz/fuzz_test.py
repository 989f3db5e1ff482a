"""Runs the readers' mutation fuzzer (fuzz_readers) on a real trace: a
2-rank checkpoint_sim traced under mpirun, and its plan. Each reader (rank
trace, job file, aggregate, merged job trace, plan) gets --seconds or --count mutated inputs; any crash,
hang or uncaught exception fails.

  fuzz_test.py [--seconds S | --count N] [--rng X]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from harness import APPS, LIB, POST, REPLAY, run  # noqa: E402

FUZZ = os.environ.get("MPIOR_FUZZ", os.path.join(os.path.dirname(POST), "..", "test", "fuzz", "fuzz_readers"))


def seeds(root):
    """Rank files (MPIOR_MERGE=0), the job's aggregate (MPIOR_MERGE_TREE=0) and its merged trace of the same
    program."""
    dirs = []
    for name, env_extra in (("off", {"MPIOR_MERGE": "0"}), ("aggregate", {"MPIOR_MERGE_TREE": "0"}), ("merged", {"MPIOR_MERGE_TREE": "4"})):
        traces = os.path.join(root, "traces-" + name)
        env = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces, **env_extra)
        run(["mpirun.mpich", "-n", "2", os.path.join(APPS, "checkpoint_sim"), "6", "100", "3", "512"], cwd=root,
            env=env)
        dirs.append(traces)
    run([POST, dirs[0], "-o", os.path.join(root, "plan")])
    return dirs[0], dirs[1], dirs[2], os.path.join(root, "plan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--rng", type=int, default=1)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="mpior-fuzz-")
    traces, aggregate, merged, plan = seeds(root)
    failed = 0
    for seed_dir, name in ((traces, "rank-000000.mpior"), (traces, "job.mpior"), (aggregate, "ranks.mpior"),
                           (merged, "merged.mpior"), (plan, "plan.mpior")):
        work = os.path.join(root, "work-" + name)
        cmd = [FUZZ, "--post", POST, "--replay", REPLAY, "--seed-dir", seed_dir, "--file", name, "--work", work,
               "--rng", str(a.rng), "--count", str(a.count if not a.seconds else 10**9)]
        if a.seconds:
            cmd += ["--seconds", str(a.seconds)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        print(p.stdout.strip())
        if p.returncode != 0:
            failed += 1
            print(p.stderr[-4000:], file=sys.stderr)
            print(f"failing inputs kept in {work}", file=sys.stderr)
    if not failed:
        shutil.rmtree(root, ignore_errors=True)
    print("PASS" if not failed else f"FAIL: {failed} readers")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
