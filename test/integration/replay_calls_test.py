"""The system calls a replay makes for a metadata workload, counted with Debian's strace -f (issue 60).

opens: io_shapes md (mdtest's phases: each rank creates, stats and removes its files in a directory of its
own) traced, then replayed under strace. Each open of a file of the program's is an openat2 in its parent
directory naming one path component, as the program's open relative to its working directory walks a few;
not the whole mapped path below --fs (the traced working directory's every component: the kernel walks each
on every open, which made an mdtest replay's opens slower than the program's). Every traced open is replayed
exactly once by the rank threads.

setup: the replay's preparation before the threads start (the main thread) makes each directory the plan
needs at most once, and checks each plan file's containment with a bounded number of lookups, not a walk
up the whole path per file (an mdtest plan's setup made 162,000 openat2 and 72,000 mkdirat calls).

sched_group: with the kernel's autogroup scheduling on, MPICH's launcher starts each rank in a session of its
own, so each rank gets a session's share of a busy machine; the threaded replay runs in a session of its own
(leaving the test's), its group weighted as 2 sessions (nice -3) for the 2 rank threads, or, where raising
the weight is refused (not root), it says so in the report's warnings. Skipped without autogroup."""
import json
import os
import re
import shutil

from harness import REPLAY, Scenario, check, check_eq, main, run

FILES = 40  # a rank
RANKS = 2
CALL = re.compile(r'^(\d+)\s+(?:<\.\.\. )?(openat2|mkdirat)\((\d+|AT_FDCWD), "([^"]*)", (.*)$')


def traced_md():
    s = Scenario("io_shapes", args=["md", FILES, 4096], ranks=RANKS).run_both()
    s.post()
    check_eq(s.summary["ops"].get("open"), RANKS * FILES, "opens the program made")
    return s


def strace_replay(s):
    """The replay under strace -f: [(tid, call, path, rest)], and the main thread's tid."""
    if not shutil.which("strace"):
        raise SystemExit(77)
    log = os.path.join(s.root, "replay.strace")
    run(["strace", "-f", "-qq", "-s", "4096", "-e", "trace=openat2,mkdirat", "-o", log, REPLAY, "--quiet", "--fs",
         s.fs, s.plan])
    calls = []
    with open(log) as f:
        for line in f:
            m = CALL.match(line)
            if m:
                calls.append((int(m.group(1)), m.group(2), m.group(4), m.group(5)))
    check(calls, f"no openat2/mkdirat calls in {log}")
    return calls, calls[0][0]  # setup opens the stdio files and directories before any thread starts


def opens():
    s = traced_md()
    try:
        calls, main_tid = strace_replay(s)
        creates = [c for c in calls if c[0] != main_tid and c[1] == "openat2" and "O_CREAT" in c[3]
                   and re.search(r"(^|/)f\.\d+$", c[2])]
        check_eq(len(creates), RANKS * FILES, "the rank threads' opens that create the program's files")
        deep = [c[2] for c in creates if "/" in c[2]]
        check(not deep, f"{len(deep)} of {len(creates)} replayed opens walk a path of several components "
                        f"(first: {deep[:1]}), not the file's name in its parent directory")
    finally:
        s.cleanup()


def setup():
    s = traced_md()
    try:
        calls, main_tid = strace_replay(s)
        made = [c[2] for c in calls if c[0] == main_tid and c[1] == "mkdirat"]
        work_depth = len([p for p in s.work.split("/") if p])
        # A mkdirat per component of the traced working directory (made once, below --fs), not one per
        # component per file.
        check(len(made) <= work_depth + 1,
              f"setup made {len(made)} mkdirat calls for a working directory of {work_depth} components")
        opened = [c for c in calls if c[0] == main_tid and c[1] == "openat2"]
        check(len(opened) <= 4 * (RANKS * FILES + RANKS) + 4 * work_depth,
              f"setup made {len(opened)} openat2 calls for {RANKS * FILES + RANKS} plan files")
    finally:
        s.cleanup()


def autogroup_on():
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def sched_group():
    if not autogroup_on():
        print("skip: no autogroup scheduling on this kernel")
        raise SystemExit(77)
    s = traced_md()
    try:
        report = os.path.join(s.root, "report.json")
        run([REPLAY, "--quiet", "--fs", s.fs, "--json", report, s.plan])
        with open(report) as f:
            r = json.load(f)
        with open("/proc/self/autogroup") as f:
            ours = f.read().split()[0]
        if os.geteuid() == 0:
            check("weighted as 2 sessions" in r["placement"] and "nice -3" in r["placement"],
                  f"placement {r['placement']!r}: want one scheduling group weighted as 2 sessions (nice -3)")
            check(ours + " " not in r["placement"], f"the replay ran in the test's own scheduling group {ours}")
        else:
            check(any("CAP_SYS_NICE" in w for w in r["warnings"]),
                  f"warnings {r['warnings']}: want the refused weight said")
    finally:
        s.cleanup()


if __name__ == "__main__":
    main({"opens": opens, "setup": setup, "sched_group": sched_group})
