#!/usr/bin/env python3
"""Every process of the job is traced (issue 12): a forked child, a shell
started by system() (which execs cat with its output redirected), a program
started by posix_spawn, forked children that exec cp by execlp and execle
(variadic), a wrapper (`timeout`) and a shell that execs the
program. Each process writes a file of its own, so a lost process is a lost
file: the summary must count every file's bytes, and the replay (the
children folded into their rank as threads) must recreate every file at its
size."""
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


if __name__ == "__main__":
    main({"mpi": mpi, "serial": serial, "wrapper": wrapper, "shell_exec": shell_exec})
