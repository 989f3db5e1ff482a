"""Validation of Chrome trace-event JSON as mpior writes it (report/): the
checks the timeline tests and the HTML tests share."""
from harness import Failure, check


def load_events(doc):
    check(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "no traceEvents array")
    check(isinstance(doc.get("metadata"), dict), "no metadata object")
    return doc["traceEvents"]


def validate(doc, what):
    """Every slice is X with a non-negative duration, every B has its E, flows
    pair up (one s and one f per id) and sit inside a slice of their track,
    and every track used is named. Returns (slices, flows) as lists."""
    events = load_events(doc)
    procs, threads, slices, starts, finishes, begins = set(), set(), [], {}, {}, {}
    for ev in events:
        ph = ev.get("ph")
        check(isinstance(ev.get("pid"), int) and isinstance(ev.get("tid"), int), f"{what}: pid/tid of {ev}")
        if ph == "M":
            if ev["name"] == "process_name":
                procs.add(ev["pid"])
            elif ev["name"] == "thread_name":
                check((ev["pid"], ev["tid"]) not in threads, f"{what}: thread named twice: {ev}")
                threads.add((ev["pid"], ev["tid"]))
        elif ph == "X":
            check(isinstance(ev.get("dur"), (int, float)) and ev["dur"] >= 0, f"{what}: slice without duration {ev}")
            check(isinstance(ev.get("ts"), (int, float)) and ev["ts"] >= 0, f"{what}: slice without ts {ev}")
            check(isinstance(ev.get("name"), str) and ev["name"], f"{what}: slice without name {ev}")
            check(isinstance(ev.get("args"), dict), f"{what}: slice without args {ev}")
            slices.append(ev)
        elif ph in ("B", "E"):
            begins.setdefault((ev["pid"], ev["tid"]), []).append(ph)
        elif ph == "s":
            check(ev["id"] not in starts, f"{what}: flow id {ev['id']} starts twice")
            starts[ev["id"]] = ev
        elif ph == "f":
            check(ev["id"] not in finishes, f"{what}: flow id {ev['id']} finishes twice")
            finishes[ev["id"]] = ev
        else:
            raise Failure(f"{what}: unexpected phase {ph!r} in {ev}")
    for track, phs in begins.items():
        check(phs.count("B") == phs.count("E"), f"{what}: unbalanced B/E on {track}")
    check(set(starts) == set(finishes), f"{what}: flows without their other end: "
          f"{sorted(set(starts) ^ set(finishes))[:10]}")
    by_track = {}
    for s in slices:
        check(s["pid"] in procs, f"{what}: slice on unnamed process {s['pid']}")
        check((s["pid"], s["tid"]) in threads, f"{what}: slice on unnamed thread {(s['pid'], s['tid'])}")
        check(s["tid"] // 1000000 == s["pid"], f"{what}: tid {s['tid']} is not of pid {s['pid']}")
        by_track.setdefault((s["pid"], s["tid"]), []).append((s["ts"], s["ts"] + s["dur"]))
    eps = 1e-3  # microseconds: ns rounding
    for fid, s in starts.items():
        for end in (s, finishes[fid]):
            spans = by_track.get((end["pid"], end["tid"]), [])
            check(any(a - eps <= end["ts"] <= b + eps for a, b in spans),
                  f"{what}: flow {fid} end at {end['ts']} on {(end['pid'], end['tid'])} is in no slice")
    return slices, [(starts[i], finishes[i]) for i in sorted(starts)]
