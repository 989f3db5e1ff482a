"""Replayed files end where the plan says, or the replay fails saying so.

race: IOR's independent MPI-IO write phase (open with create, set_size 0,
each rank's write_at, close; mpiio_truncate) replayed again and again, with
threads and with --mpi, at the POSIX level and through MPI-IO: ROMIO's
set_size truncates on rank 0 alone, and a rank that wrote before that
truncation left the file short (the replay must hold the ranks until the
collective ends). Every replay: every file at ranks x block, the report's
final-size check run on every file, nothing at another size.

shrunk: checkpoint_sim replayed with a shim that drops a file's last byte at
every fsync: the replay exits non-zero and names the file, its size and the
plan's, in its output and its JSON report."""
import json
import os
import shutil

from harness import APPS, REPLAY, Scenario, check, check_eq, main, run

RANKS, FILES, ROUNDS, BLOCK_KIB = 4, 6, 3, 1024
REPEATS = 6  # replays of each kind: before the fix, one in two or three left a file short


def ior_plan():
    s = Scenario("mpiio_truncate", args=[FILES, ROUNDS, BLOCK_KIB], ranks=RANKS).run_both()
    s.post()
    check_eq(s.written, {f"ior.{f}.dat": RANKS * BLOCK_KIB * 1024 for f in range(FILES)}, "files the program wrote")
    return s


def check_sizes(s, fs, report, what):
    for name, size in s.written.items():
        got = os.path.getsize(os.path.join(fs, s.abs(name).lstrip("/")))
        check_eq(got, size, f"{what}: replayed size of {name}")
    sizes = report["final_sizes"]
    check_eq(sizes["mismatches"], [], f"{what}: files at other sizes than the plan's")
    check(sizes["checked"] >= FILES, f"{what}: {sizes['checked']} files checked, want at least {FILES}")


def replay_threads(s, i, *extra):
    fs, report = os.path.join(s.root, f"fs-t{i}"), os.path.join(s.root, f"t{i}.json")
    run([REPLAY, "--fs", fs, "--json", report, s.plan] + list(extra))
    with open(report) as f:
        r = json.load(f)
    check_eq(r["errors"]["count"], 0, f"failed calls replaying {' '.join(extra)}")
    check_sizes(s, fs, r, f"threads replay {i} {' '.join(extra)}")
    shutil.rmtree(fs)


def replay_mpi(s, i, procs, level):
    fs, report = os.path.join(s.root, f"fs-m{i}"), os.path.join(s.root, f"m{i}.json")
    run(["mpirun.mpich", "-n", str(procs), REPLAY, "--mpi", "--io-level", level, "--fs", fs, "--json", report,
         s.plan])
    with open(report) as f:
        r = json.load(f)
    check_sizes(s, fs, r, f"MPI-mode replay {i}, {procs} processes, --io-level {level}")
    shutil.rmtree(fs)


def race():
    s = ior_plan()
    try:
        for i in range(REPEATS):
            replay_threads(s, i)
        for i in range(2):
            replay_threads(s, REPEATS + i, "--io-level", "mpiio")
        # One process a rank at the POSIX level; blocks of ranks through MPI_File_*
        # (each rank opens alone: every rank truncates, then they must meet).
        for i in range(2):
            replay_mpi(s, i, RANKS, "posix")
        replay_mpi(s, 2, 2, "mpiio")
    finally:
        s.cleanup()


def shrunk():
    s = Scenario("checkpoint_sim", args=[20, 500, 5, 4096], ranks=2).run_both()
    try:
        s.post()
        fs, report = os.path.join(s.root, "fs"), os.path.join(s.root, "report.json")
        env = dict(os.environ, LD_PRELOAD=os.path.join(APPS, "libshrink_shim.so"))
        out = run([REPLAY, "--fs", fs, "--json", report, s.plan], env=env, expect_rc=1)
        path = s.abs("checkpoint.dat")
        check("ended at other sizes than the plan says" in out.stderr, f"the replay's message:\n{out.stderr}")
        check(path in out.stdout and "at other sizes than the plan says" in out.stdout, f"the report:\n{out.stdout}")
        with open(report) as f:
            wrong = json.load(f)["final_sizes"]["mismatches"]
        want = 2 * 4096 * 8  # two ranks' blocks of 4096 doubles
        check_eq([(m["path"], m["expected_min"], m["expected_max"]) for m in wrong], [(path, want, want)],
                 "files at other sizes, with the plan's size")
        check(wrong[0]["size"] < want, f"checkpoint.dat replayed at {wrong[0]['size']} bytes, want less than {want}")
        # Without the shim the same plan replays clean.
        shutil.rmtree(fs)
        out = run([REPLAY, "--fs", fs, "--json", report, s.plan])
        check("all as the plan says" in out.stdout, f"the clean replay's report:\n{out.stdout}")
    finally:
        s.cleanup()


if __name__ == "__main__":
    main({"race": race, "shrunk": shrunk})
