#!/usr/bin/env python3
"""Every byte a program moves is in the trace (issue 18): one program per
family of calls (test/apps), traced, post-processed and replayed; exact bytes
per file and direction in summary.json, calls in ops, replayed file sizes.
One scenario per meson test: families_test.py NAME."""
from harness import Scenario, check, check_eq, file_entry, main

MPI_FRAME = lambda n: {"MPI_Init": n, "MPI_Finalize": n}  # noqa: E731


def expect_bytes(summary, path, written, read):
    f = file_entry(summary, path)
    check_eq(f["bytes_written"], written, f"bytes written to {path}")
    check_eq(f["bytes_read"], read, f"bytes read from {path}")
    return f


def aio():
    iters, block = 8, 4096
    s = Scenario("aio_io", [iters, block]).run_both()
    summary = s.post()
    # aio_error: one per loop iteration, then at least one per wait on the
    # two LIO_NOWAIT reads, the polled read and aio_fsync (polls vary).
    got = dict(summary["ops"])
    polls = got.pop("aio_error")
    check(polls >= iters + 4, f"aio_error calls ({polls})")
    want = {"open": 1, "close": 1, "printf": 1, "aio_write": iters, "aio_read": 1, "aio_fsync": 1,
            "lio_listio": 2, "aio_return": iters + 4 + 2 + 1 + 1, "aio_cancel": 1}
    suspends = got.pop("aio_suspend")
    check(iters <= suspends <= iters + 3, f"aio_suspend calls ({suspends})")
    check_eq({k: v for k, v in got.items() if v}, want, "calls in summary.json")
    total = (iters + 4) * block
    expect_bytes(summary, s.abs("aio.dat"), total, 2 * block + total)
    check_eq(summary["op_totals"]["aio_write"]["bytes"], iters * block + 4 * block, "aio_write bytes (with lio_listio)")
    s.replay_and_check()
    check_eq(s.report["ops"]["aio_write"]["bytes"], iters * block, "replayed aio_write bytes")
    s.cleanup()


def mpiio_aio():
    ranks, iters, block = 2, 8, 65536
    s = Scenario("mpiio_aio", [iters, block], ranks=ranks).run_both()
    summary = s.post()
    ops = summary["ops"]
    check_eq(ops.get("aio_write"), ranks * iters, "aio_write calls under MPI_File_iwrite_at")
    check_eq(ops.get("aio_read"), ranks * iters, "aio_read calls under MPI_File_iread_at")
    check_eq(ops.get("MPI_Wait"), 2 * ranks * iters, "MPI_Wait calls")
    total = ranks * iters * block
    expect_bytes(summary, s.abs("mpiio.dat"), total, total)
    s.replay_and_check()
    s.cleanup()


if __name__ == "__main__":
    main({"aio": aio, "mpiio_aio": mpiio_aio})
