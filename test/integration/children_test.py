#!/usr/bin/env python3
"""Every process of the job is traced (issue 12): a forked child, a shell
started by system() (which execs cat with its output redirected), a program
started by posix_spawn, forked children that exec cp by execlp and execle
(variadic), a wrapper (`timeout`) and a shell that execs the
program. Each process writes a file of its own, so a lost process is a lost
file: the summary must count every file's bytes, and the replay (the
children folded into their rank as threads) must recreate every file at its
size."""
import collections
import json
import os

from harness import Scenario, check, check_eq, file_entry, main

WRITES = 20
BLOCK = 4096


def check_files(s, ranks):
    summary = s.post()
    for r in range(ranks):
        for stem in ("parent", "forked", "copied", "spawned", "preexec0", "execcopy0", "preexec1", "execcopy1"):
            entry = file_entry(summary, s.abs(f"{stem}-{r}.dat"))
            check_eq(entry["bytes_written"], WRITES * BLOCK, f"bytes written to {stem}-{r}.dat")
    s.replay_and_check()
    check_eq(s.report["errors"]["count"], 0, "failed calls in the replay")


def run(scenario, ranks):
    try:
        scenario.run_both()
        check_files(scenario, ranks)
    finally:
        scenario.cleanup()


def mpi():
    run(Scenario("children", [1, WRITES], ranks=2), 2)


def serial():
    run(Scenario("children", [0, WRITES]), 1)


def timeline():
    """Each child's calls on the parent's time line: the parent waits for each child before it starts the next,
    so every child's calls lie after the parent's last call before the children and before its first after them,
    and the children's spans, in the order they started, do not overlap but where one holds its own child's. A
    child counts its own clock (the TSC) from its start, offset by how long after the parent's it came: an offset
    or a rate gone wrong puts a child outside its place."""
    s = Scenario("children", [0, WRITES])
    try:
        s.run_both()
        path = os.path.join(s.root, "timeline.json")
        s.post("--timeline", path)
        with open(path) as f:
            slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
        threads = collections.defaultdict(list)
        for e in slices:
            threads[e["tid"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
        parent = sorted(threads.pop(min(threads)))
        check(len(threads) >= 6, f"child processes on the time line: {len(threads)}")
        last = max(end for _, end, name in parent if name != "puts")  # its files written, before the children
        after = [ts for ts, _, name in parent if name == "puts"]
        check_eq(len(after), 1, "the parent's puts after its children")
        spans = sorted((min(ts for ts, _, _ in c), max(end for _, end, _ in c), tid) for tid, c in threads.items())
        check(spans[0][0] >= last, f"a child starts at {spans[0][0]} us, before the parent's call ending at {last}")
        check(spans[-1][1] <= after[0], f"a child ends at {spans[-1][1]} us, after the parent's next call {after[0]}")
        # A child's own children (the shell system() started runs cat, by vfork) lie within its span.
        for i, a in enumerate(spans):
            for b in spans[i + 1:]:
                check(a[1] <= b[0] or b[1] <= a[1], f"children overlap on the time line: {a} and {b}")
    finally:
        s.cleanup()


def fork_during_flush():
    """Children forked while the parent's flush thread writes its trace (flushes every millisecond, a thread
    recording without pause): each child inherits that write's hold on the trace files, and must still write its
    own at exit, not wait for a writer that is not in its process. Every child's file is in the summary."""
    children = 40
    s = Scenario("fork_flush", [children], env={"MPIOR_FLUSH_INTERVAL": "1"})
    try:
        s.run_both()
        summary = s.post()
        for i in range(children):
            check_eq(file_entry(summary, s.abs(f"child-{i}.dat"))["bytes_written"], 4096, f"bytes child {i} wrote")
    finally:
        s.cleanup()


class Wrapped(Scenario):
    """The program under a wrapper process, as `LD_PRELOAD=... PREFIX app`."""

    def __init__(self, prefix, *args, **kw):
        super().__init__(*args, **kw)
        self.prefix = prefix

    def command(self):
        return self.prefix + super().command()


def wrapper():
    run(Wrapped(["timeout", "120"], "children", [0, WRITES]), 1)


def shell_exec():
    s = Wrapped(["sh", "-c", 'exec "$0" "$@"'], "children", [0, WRITES])
    run(s, 1)


HANDOFF = """mkdir -p out/d
i=0
while [ $i -lt 12 ]; do
  printf '%0100d' $i > out/d/f$i
  mv out/d/f$i out/d/g$i
  cat out/d/g$i > /dev/null
  i=$((i + 1))
done
rm -r out
exec "$0" "$@"
"""


def handoff():
    """Processes of a rank hand names to each other (folded in as threads, with drifting per-position times): the
    shell writes into the directory mkdir made, mv renames what the shell wrote, cat reads what mv made, rm removes
    it all. The replay keeps each handoff's order: no call fails for a name not yet made (or still there). dash
    starts each command by vfork: the child's exec must leave the shell's trace as it was (its later calls were
    recorded nested, and lost)."""
    s = Wrapped(["sh", "-c", HANDOFF], "children", [0, WRITES])
    try:
        s.run_both()
        summary = s.post()
        ops = collections.Counter()
        for f in summary["files"]:
            if "/out/d/g" in f["path"]:
                ops["renamed"] += 1
                check_eq(f["bytes_read"], 100, f"bytes cat read from {f['path']}")
            if "/out/d/f" in f["path"]:  # the shell's own writes, after it ran mkdir by vfork
                ops["written"] += 1
                check_eq(f["bytes_written"], 100, f"bytes the shell wrote to {f['path']}")
        check_eq(ops["renamed"], 12, "names mv made")
        check_eq(ops["written"], 12, "files the shell wrote")
        check_files(s, 1)
    finally:
        s.cleanup()


if __name__ == "__main__":
    main({"mpi": mpi, "serial": serial, "timeline": timeline, "wrapper": wrapper, "shell_exec": shell_exec,
          "handoff": handoff, "fork_during_flush": fork_during_flush})
