#!/usr/bin/env python3
"""mpior-post --timeline and mpior-replay --timeline (report/): every bundled
program's traced and replayed timelines are valid trace-event JSON (slices
with durations, flows paired and inside slices, tracks named, one process per
rank); the golden example (test/apps/timeline_small) is checked field by
field; the event cap holds and says so. One scenario per meson test."""
import json
import os

from harness import APPS, POST, REPLAY, Scenario, check, check_eq, main, run
from timeline_check import validate


def make_input(d):
    with open(os.path.join(d, "input.dat"), "wb") as f:
        f.write(bytes(range(256)) * 40)


# Every program in test/apps, with small arguments.
PROGRAMS = {
    "nonmpi": ([16], None, make_input),
    "aio_io": ([8, 4096], None, None),
    "files_more": ([], None, None),
    "stdio_more": ([20], None, None),
    "stdio_more_chk": ([20], None, None),
    "mmap_io": ([16], None, None),
    "nton_barrier": ([10, 4096], 2, None),
    "nto1": ([10, 8192], 2, None),
    "serial_gather": ([6, 256], 2, None),
    "checkpoint_sim": ([10, 1000, 5, 4096], 2, None),
    "threads_io": ([3, 40, 2048], 2, None),
    "mpiio_aio": ([4, 65536], 2, None),
    "comm_split": ([4, 1024], 4, None),
    "wildcard": ([6], 4, None),
    "pruning": (["fig15"], 2, None),
    "scaling": ([3], 4, None),
    "fortran_mpi": ([20], 2, None),
    "timeline_small": ([], 2, None),
}


def traced(app, args, ranks, prepare=None):
    s = Scenario(app, args, ranks=ranks, prepare=prepare)
    run(s.command(), cwd=s.work, env=s.environment(True))
    return s


def post_timeline(s, *extra):
    path = os.path.join(s.root, "trace.json")
    out = run([POST, s.traces, "--timeline", path] + list(extra))
    check(f"wrote timeline {path}" in out.stdout, "mpior-post names the timeline it wrote")
    with open(path) as f:
        return json.load(f)


def replay_timeline(s, *extra):
    path = os.path.join(s.root, "replay.json")
    out = run([REPLAY, "--fs", s.fs, "--timeline", path, os.path.join(s.traces, "plan")] + list(extra))
    check(f"wrote timeline {path}" in out.stdout, "mpior-replay names the timeline it wrote")
    with open(path) as f:
        return json.load(f)


def check_program(app):
    args, ranks, prepare = PROGRAMS[app]
    if app == "fortran_mpi" and not os.path.exists(os.path.join(APPS, app)):
        print("skip fortran_mpi: no Fortran compiler")
        return
    s = traced(app, args, ranks, prepare)
    doc = post_timeline(s)
    slices, flows = validate(doc, f"{app} traced")
    pids = {x["pid"] for x in slices}
    check_eq(pids, set(range(1, (ranks or 1) + 1)), f"{app}: one process per rank with slices")
    check(not doc["metadata"]["capped"], f"{app}: small run capped")
    check_eq(doc["metadata"]["slices"], len(slices), f"{app}: slices in metadata")
    check_eq(doc["metadata"]["flows"], len(flows), f"{app}: flows in metadata")
    rdoc = replay_timeline(s)
    rslices, rflows = validate(rdoc, f"{app} replayed")
    traced_msgs = sum(1 for a, _ in flows if a["cat"] == "message")
    check_eq(traced_msgs, doc["metadata"]["messages"], f"{app}: message arrows = messages paired")
    check_eq(sum(1 for a, _ in rflows if a["cat"] == "message"), traced_msgs, f"{app}: replay's message arrows")
    check_eq({x["pid"] for x in rslices}, pids, f"{app}: replay's processes")
    # The replay runs the application's calls, and the sends receivers logged
    # for their senders (moved into the senders' streams).
    calls = sum(1 for x in slices if "depth" not in x["args"] or x["args"].get("logged_by_receiver"))
    check_eq(len(rslices), calls, f"{app}: replayed calls = traced application calls")
    s.cleanup()
    print(f"{app}: {len(slices)} slices, {len(flows)} flows; replay {len(rslices)} slices")


def group(names):
    return lambda: [check_program(n) for n in names]


def golden():
    """Rank 0: pwrite 100 B at 0, send 8 B to rank 1 (tag 7); rank 1: receive,
    pwrite 100 B at 100; a barrier; close. Field by field."""
    s = traced("timeline_small", [], 2)
    doc = post_timeline(s)
    slices, flows = validate(doc, "golden")
    path = s.abs("tl.dat")
    mine = [x for x in slices if x["args"].get("file") == path or x["cat"] == "mpi"]
    got = {}
    for x in sorted(mine, key=lambda x: x["ts"]):
        a = x["args"]
        keys = ("file", "offset", "bytes", "comm", "peer", "tag", "instance", "ret")
        got.setdefault(x["pid"], []).append((x["name"], {k: a[k] for k in keys if k in a}))
    for pid in (1, 2):
        check_eq(got[pid][0][0], "MPI_Init", f"rank {pid - 1}: first call")
        check_eq(got[pid][-1][0], "MPI_Finalize", f"rank {pid - 1}: last call")
    f = {"file": path}
    want0 = [("open", {**f, "ret": got[1][1][1]["ret"]}),
             ("pwrite", {**f, "offset": 0, "bytes": 100, "ret": 100}),
             ("MPI_Send", {"comm": 0, "peer": 1, "tag": 7, "bytes": 8, "ret": 0}),
             ("MPI_Barrier", {"comm": 0, "bytes": 0, "instance": 0, "ret": 0}),
             ("close", {**f, "ret": 0})]
    want1 = [("open", {**f, "ret": got[2][1][1]["ret"]}),
             ("MPI_Recv", {"comm": 0, "peer": 0, "tag": 7, "bytes": 8, "ret": 0}),
             ("pwrite", {**f, "offset": 100, "bytes": 100, "ret": 100}),
             ("MPI_Barrier", {"comm": 0, "bytes": 0, "instance": 0, "ret": 0}),
             ("close", {**f, "ret": 0})]
    for x in want0 + want1:  # open and close carry no offset/bytes of interest
        if x[0] in ("open", "close"):
            x[1].update({k: v for k, v in got[1][1][1].items() if k in ("offset", "bytes")})
    check_eq([n for n, _ in got[1][1:-1]], [n for n, _ in want0], "rank 0's calls")
    check_eq([n for n, _ in got[2][1:-1]], [n for n, _ in want1], "rank 1's calls")
    for pid, want in ((1, want0), (2, want1)):
        for (name, a), (_, w) in zip(got[pid][1:-1], want):
            if name in ("open", "close"):
                check_eq(a["file"], path, f"rank {pid - 1} {name}: file")
                continue
            check_eq(a, w, f"rank {pid - 1} {name}: args")
    byname = {(x["pid"], x["name"]): x for x in slices}
    check(all(x["tid"] == x["pid"] * 1000000 for x in slices), "single-threaded ranks: tid = pid * 10^6 + 0")
    kinds = sorted(s_["cat"] for s_, _ in flows)
    check_eq(kinds, ["collective", "message"], "flows: one message, one collective link")
    for s_, f_ in flows:
        a, b = (byname[(1, "MPI_Send")], byname[(2, "MPI_Recv")]) if s_["cat"] == "message" else \
            (byname[(1, "MPI_Barrier")], byname[(2, "MPI_Barrier")])
        check_eq((s_["pid"], s_["tid"], s_["ts"]), (a["pid"], a["tid"], a["ts"]), f"{s_['cat']} flow start")
        check_eq((f_["pid"], f_["tid"], f_["ts"]), (b["pid"], b["tid"], b["ts"]), f"{s_['cat']} flow end")
        check_eq(f_.get("bp"), "e", "flow end binds to its enclosing slice")
    rdoc = replay_timeline(s)
    rslices, rflows = validate(rdoc, "golden replayed")
    rby = {(x["pid"], x["name"]): x for x in rslices}
    msgs = [(a, b) for a, b in rflows if a["cat"] == "message"]
    check_eq(len(msgs), 1, "the replay's message arrows")
    (a, b), = msgs
    check_eq((a["pid"], a["ts"]), (1, rby[(1, "MPI_Send")]["ts"]), "replayed message starts at the send")
    check_eq((b["pid"], b["ts"]), (2, rby[(2, "MPI_Recv")]["ts"]), "replayed message ends at the receive")
    check_eq(rby[(2, "pwrite")]["args"], {**want1[2][1], "fd": rby[(2, "pwrite")]["args"]["fd"]},
             "replayed pwrite of rank 1: same arguments as traced")
    meta = doc["metadata"]
    check_eq((meta["tool"], meta["ranks"], meta["messages"], meta["capped"]), ("mpior-post", 2, 1, False), "metadata")
    s.cleanup()


def cap():
    """A loop of 2 x 400 writes + barriers expands to at most the cap, and the
    metadata says it cut."""
    s = traced("nton_barrier", [400, 64], 2)
    doc = post_timeline(s, "--timeline-max-events", "100")
    slices, _ = validate(doc, "capped")
    check(len(slices) <= 100, f"{len(slices)} slices over the cap of 100")
    check(len(slices) >= 90, f"only {len(slices)} slices under a cap of 100")
    check_eq((doc["metadata"]["capped"], doc["metadata"]["max_events"]), (True, 100), "metadata of a capped timeline")
    rdoc = replay_timeline(s, "--timeline-max-events", "50")
    rslices, _ = validate(rdoc, "capped replay")
    check(len(rslices) <= 50 and rdoc["metadata"]["capped"], "replay timeline capped at 50")
    full = post_timeline(s)
    check(not full["metadata"]["capped"] and len(validate(full, "full")[0]) > 1600, "uncapped timeline holds all")
    bad = run([POST, s.traces, "--timeline", "/nonexistent-dir/t.json"], expect_rc=1)
    check_eq(bad.stderr.strip(), "mpior-post: cannot write --timeline /nonexistent-dir/t.json", "unwritable file")
    s.cleanup()


NAMES = list(PROGRAMS)
SCENARIOS = {
    "golden": golden,
    "cap": cap,
    "programs_a": group(NAMES[:9]),
    "programs_b": group(NAMES[9:]),
}

if __name__ == "__main__":
    main(SCENARIOS)
