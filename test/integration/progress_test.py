#!/usr/bin/env python3
"""Progress bars (report/progress.hpp): with stderr on a pseudo-terminal,
mpior-replay and mpior-post redraw a bar in place ("\\r...\\033[K") that
appears within a second on runs longer than two; with stderr on a pipe, or
with --quiet, there is none. One scenario per meson test."""
import os
import pty
import select
import subprocess
import time

from harness import POST, REPLAY, Scenario, check, check_eq, main, run

BAR = b"\r"


def on_pty(cmd):
    """Runs cmd with stderr on a pseudo-terminal, stdout on a pipe. Returns
    (stderr bytes, seconds to the first bar drawn or None, total seconds)."""
    master, slave = pty.openpty()
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    got, first = b"", None
    while True:
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            got += chunk
            if first is None and BAR in got:
                first = time.monotonic() - start
        elif p.poll() is not None:
            break
    out = p.stdout.read()
    p.wait()
    os.close(master)
    check_eq(p.returncode, 0, f"{' '.join(cmd)} on a terminal (stderr: {got[-500:]!r})")
    return got, first, time.monotonic() - start, out


def check_bar(got, first, total, word):
    check(total > 2, f"the run took {total:.2f} s, not long enough to show a bar")
    check(first is not None, f"no progress bar on a terminal: {got[-300:]!r}")
    check(first <= 1.0, f"the bar appeared after {first:.2f} s")
    check(got.count(BAR) >= 3, f"the bar was drawn {got.count(BAR)} times in {total:.1f} s")
    check(word in got, f"{word!r} not in the bar: {got[-300:]!r}")
    check(got.endswith(b"\r\033[K"), f"the bar did not clear its line: {got[-80:]!r}")


def replay():
    """checkpoint_sim with 10 ms of compute per step: a replay of about 3 s."""
    s = Scenario("checkpoint_sim", [300, 10000, 100, 4096], ranks=2)
    run(s.command(), cwd=s.work, env=s.environment(True))
    run([POST, s.traces])
    plan = os.path.join(s.traces, "plan")
    got, first, total, out = on_pty([REPLAY, "--fs", s.fs, plan])
    check_bar(got, first, total, b"ev/s")
    check(b"replay" in out, "the report still goes to stdout")
    quiet, qfirst, _, _ = on_pty([REPLAY, "--quiet", "--fs", s.fs, plan])
    check(qfirst is None and BAR not in quiet, f"a bar with --quiet: {quiet[-200:]!r}")
    piped = run([REPLAY, "--fs", s.fs, plan])
    check("\r" not in piped.stderr and "ev/s" not in piped.stderr, f"a bar on a pipe: {piped.stderr[-200:]!r}")
    s.cleanup()


def post():
    """A trace of 400,000 writes and barriers (3,200,000 where that posts
    in under 2 s) expanded into a timeline of 10^6 slices: a post-processing
    run of a few seconds. One rank: its
    Barriers wait for no other process, so tracing it takes a few seconds
    on a busy machine too."""
    for iterations in (400000, 3200000):  # more where a quick machine posts the first in under 2 s
        s = Scenario("nton_barrier", [iterations, 16], ranks=1)
        run(s.command(), cwd=s.work, env=s.environment(True))
        tl = os.path.join(s.root, "t.json")
        got, first, total, out = on_pty([POST, s.traces, "--timeline", tl])
        if total > 2:
            break
        s.cleanup()
    check_bar(got, first, total, b"mpior-post: ")
    check(b"wrote timeline" in out, "the summary line still goes to stdout")
    quiet, qfirst, _, _ = on_pty([POST, "-q", s.traces, "--timeline", tl])
    check(qfirst is None and BAR not in quiet, f"a bar with --quiet: {quiet[-200:]!r}")
    piped = run([POST, s.traces, "--timeline", tl])
    check("\r" not in piped.stderr and "mpior-post: writing" not in piped.stderr, "a bar on a pipe")
    s.cleanup()


SCENARIOS = {"replay": replay, "post": post}

if __name__ == "__main__":
    main(SCENARIOS)
