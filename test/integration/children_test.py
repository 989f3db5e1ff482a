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
import re
import shlex
import shutil
import subprocess
import tempfile

from harness import LIB, POST, TIMEOUT, Scenario, app_path, check, check_eq, file_entry, main, mpirun
from harness import run as run_cmd

WRITES = 20
BLOCK = 4096


def check_files(s, ranks):
    summary = s.post()
    for r in range(ranks):
        for stem in ("parent", "forked", "copied", "spawned", "preexec0", "execcopy0", "preexec1", "execcopy1"):
            entry = file_entry(summary, s.abs(f"{stem}-{r}.dat"))
            check_eq(entry["bytes_written"], WRITES * BLOCK, f"bytes written to {stem}-{r}.dat")
    s.replay_and_check()
    check_eq(s.report["errors"]["count"], 0, f"failed calls in the replay (first: {s.report['errors']['first']})")


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


# The processes children starts, in the order they end: the parent waits for each before it starts the next, and
# system()'s shell for its cat; the forked children that exec write their trace first.
ENDING_ORDER = ["children", "cat", "sh", "cp spawned", "children", "cp execcopy0", "children", "cp execcopy1"]


def trace_ends(traces):
    """(end on the rank's time line in s, what it ran) of every child trace: the clock reading taken as the process
    wrote its trace, on its own clock, which counts from the rank's trace start."""
    ends = []
    for name in os.listdir(traces):
        if ".child-" not in name:
            continue
        dump = run_cmd([POST, "--dump", os.path.join(traces, name)]).stdout
        command = re.search(r"^  command: (.*)$", dump, re.M).group(1).split()
        what = command[0] if command[0] != "cp" else "cp " + command[2].split("-")[0]
        ends.append((float(re.search(r"; traced ([0-9.]+) s$", dump, re.M).group(1)), os.path.basename(what)))
    return sorted(ends)


def timeline():
    """Each child's clock on the parent's time line. A child counts its own clock (the TSC) from its start, offset by
    how long after the rank's trace start it came: an offset or a rate gone wrong puts its end out of the order the
    processes ran in. Each process's last clock reading (its trace end) is compared, not its calls' places: a call's
    place leaves out the time its process spent in the tracer before it, which a preemption there (tens of ms on a
    loaded machine) makes longer in one process than in another. The children are also on the time line, as threads
    of their rank."""
    s = Scenario("children", [0, WRITES])
    try:
        s.run_both()
        path = os.path.join(s.root, "timeline.json")
        s.post("--timeline", path)
        with open(path) as f:
            slices = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
        tids = {e["tid"] for e in slices}
        check(len(tids) >= 7, f"the rank and its child processes on the time line: {len(tids)} threads")
        ends = trace_ends(s.traces)
        check_eq([what for _, what in ends], ENDING_ORDER, f"the children in the order their clocks ended: {ends}")
        rank_end = float(re.search(r"; traced ([0-9.]+) s$", run_cmd([POST, "--dump", os.path.join(
            s.traces, "rank-000000.mpior")]).stdout, re.M).group(1))
        check(ends[-1][0] < rank_end, f"the last child ended at {ends[-1][0]} s, after its rank ({rank_end} s)")
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


def launched(root, prefix):
    """Runs PREFIX (a traced program starting the launcher) with the preload set; the directories of the trace."""
    traces = os.path.join(root, "traces")
    env = dict(os.environ, LD_PRELOAD=LIB, MPIOR_TRACE_DIR=traces)
    p = subprocess.run(prefix, cwd=root, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    check_eq(p.returncode, 0, f"{prefix[0]} starting mpirun (stderr {p.stderr[-600:]})")
    return traces, [os.path.join(traces, d) for d in sorted(os.listdir(traces)) if d.startswith("job-")]


def posted(directory, ranks):
    """mpior-post of directory: its summary; it must hold `ranks` ranks and warn of nothing."""
    p = run_cmd([POST, directory])
    check(f": {ranks} ranks" in p.stdout, f"mpior-post {directory}: {ranks} ranks ({p.stdout.strip()})")
    check("warning" not in p.stderr, f"mpior-post {directory} warns of nothing: {p.stderr[-600:]!r}")
    with open(os.path.join(directory, "plan", "summary.json")) as f:
        return json.load(f)


def launcher():
    """A traced program starts the launcher: a batch script (`sh -c "mpirun ...; cat a > b"`) or `timeout 100
    mpirun ...`. The job's trace is the directory's, with no process of the program's in it; the script's own
    trace (its redirect, the cat it starts) moves aside to job-<its id>/ and posts on its own."""
    root = tempfile.mkdtemp(prefix="mpior-launcher-")
    try:
        job = mpirun(2) + [app_path("nton_barrier"), "3", "512"]
        with open(os.path.join(root, "input.dat"), "wb") as f:
            f.write(b"x" * 12345)
        traces, aside = launched(root, ["sh", "-c", shlex.join(job) + " && cat input.dat > copy.dat"])
        posted(traces, 2)
        check_eq(len(aside), 1, f"the script's trace moved to one job-<id> ({os.listdir(traces)})")
        script = posted(aside[0], 1)
        check_eq(file_entry(script, os.path.join(root, "copy.dat"))["bytes_written"], 12345,
                 "bytes the script's cat wrote, in the script's trace")
        shutil.rmtree(traces)
        traces, _ = launched(root, ["timeout", "100"] + job)
        posted(traces, 2)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main({"mpi": mpi, "serial": serial, "timeline": timeline, "wrapper": wrapper, "shell_exec": shell_exec,
          "handoff": handoff, "fork_during_flush": fork_during_flush, "launcher": launcher})
