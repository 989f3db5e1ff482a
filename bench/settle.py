"""The machine's state before a measured run (Bench.settle): no dirty pages of an earlier run left to be written
back during it, and on a VM that hands freed memory back to its host, memory touched again just before it.

Why the touching (measured on this project's 2-vCPU Firecracker guests, free page reporting on, min_free_ms 0):
a run writing hundreds of MB to a tmpfs or the page cache takes pages the guest has free. Linux allocates the free
pages it has not yet reported to the host first; a reported page faults back in from the host on first touch.
Writing 590 MB to /dev/shm took 0.17-0.19 s right after 590 MB were freed, 0.85-1.3 s five seconds later (one
reporting pass every second or two hands back ~100 MB). So a run's time depended on how long ago the run before it
freed its files: the fidelity bench's real runs came right after the last round's cleanup, its replays after a
traced run and mpior-post, and serial_gather's replays took 0.31-1.8 s against real runs' 0.27-0.30 s (+155%
predicted). Touching WARM_MIB just before each measured run and freeing it leaves that much unreported: both sides
then start alike (six replays 0.309-0.322 s, six real runs 0.27-0.30 s, each after 4 s idle and a warm)."""
import mmap
import os
import statistics
import subprocess
import time

WARM_MIB = 1024  # more than any bench run writes (serial_gather 9000 4096: 590 MB)
SLOW_WARM_S = 5.0  # the first five warms' median above this: stop warming (the host is too slow to hand pages
# back; a fidelity table would take hours)
_warm_seconds = []


def reporting_param(name):
    """A parameter of this VM's free page reporting (the guest kernel's page_reporting module), None where it
    does not say."""
    try:
        with open(os.path.join("/sys/module/page_reporting/parameters", name)) as f:
            return f.read().strip()
    except OSError:
        return None


def reports_free_pages():
    return reporting_param("page_reporting_order") is not None


def warming():
    """Whether settle() touches memory: where freed pages go back to the host, unless touching has shown itself
    too slow to afford."""
    too_slow = len(_warm_seconds) >= 5 and statistics.median(_warm_seconds[:5]) > SLOW_WARM_S
    return reports_free_pages() and not too_slow


def warm_memory(mib):
    """Touches mib MiB (populated anonymous memory: the kernel allocates and zeroes every page) and frees them,
    so the next run's first mib MiB of fresh pages are ones the host backs."""
    start = time.monotonic()
    m = mmap.mmap(-1, mib << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
    m.close()
    _warm_seconds.append(time.monotonic() - start)


def sync_fs(directory):
    """The file system holding directory synced (syncfs): no earlier run's dirty pages written back later."""
    subprocess.run(["sync", "-f", directory], check=False)


def settle(directory, mib=WARM_MIB):
    """Before a measured run: the file system holding directory synced (syncfs), then memory warmed (warming)."""
    sync_fs(directory)
    if warming():
        warm_memory(mib)


def page_reporting():
    """For the bench's first line: how this VM hands freed memory to its host, where it says."""
    values = {k: reporting_param(k) for k in ("min_free_ms", "page_reporting_order")}
    if None in values.values():
        return ""
    return ("; free page reporting: " + ", ".join(f"{k} {v}" for k, v in values.items()) +
            f" ({WARM_MIB} MiB touched and freed before each measured run)")


def warm_summary():
    """For the bench's last line: what warming cost, and whether it stopped."""
    if not _warm_seconds:
        return ""
    stopped = "" if warming() else f"; stopped: the first five took more than {SLOW_WARM_S:.0f} s each (median)"
    return (f"memory warmed {len(_warm_seconds)} times, {WARM_MIB} MiB: median "
            f"{statistics.median(_warm_seconds):.2f} s, max {max(_warm_seconds):.2f} s{stopped}")
