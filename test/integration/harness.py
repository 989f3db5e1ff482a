"""Integration-test harness: runs one of test/apps under mpirun (or alone),
untraced and traced with libmpior.so, post-processes and replays the trace,
and checks what the foundation promises:

  * the traced program behaves as untraced: same exit code, same output, same files;
  * the summary's counts and bytes are what the program did;
  * the replay recreates every file the program wrote, at its size, below --fs,
    and writes nothing outside it.

Paths come from the environment meson sets (MPIOR_BUILD_ROOT). MPIOR_TEST_MPI
picks the MPI: mpich (default: libmpior.so, mpirun.mpich, test/apps/) or
openmpi (libmpior-openmpi.so, mpirun.openmpi, the programs rebuilt against
Open MPI in test/apps/openmpi/; a scenario skips, exit 77, saying so, where
Open MPI is not installed).
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

BUILD = os.environ.get("MPIOR_BUILD_ROOT", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
MPI = os.environ.get("MPIOR_TEST_MPI", "mpich")
OPENMPI = MPI == "openmpi"
LIB = os.path.join(BUILD, "preload", "libmpior-openmpi.so" if OPENMPI else "libmpior.so")
POST = os.path.join(BUILD, "postproc", "mpior-post")
REPLAY = os.path.join(BUILD, "replayer", "mpior-replay")
APPS = os.path.join(BUILD, "test", "apps")
# The MPI programs built for the chosen MPI; non-MPI programs are in APPS.
MPI_APPS = os.path.join(APPS, "openmpi") if OPENMPI else APPS
TIMEOUT = 300
SKIP = 77  # meson's exit status for a skipped test


def mpirun(ranks, ucx=False):
    """The launcher of the chosen MPI, named explicitly (Debian's mpirun
    alternative may point to either). ucx: Open MPI over its UCX PML, as on
    an InfiniBand cluster (MPICH's ch4 device is UCX already), UCX's memory
    hooks on."""
    if not OPENMPI:
        return ["mpirun.mpich", "-n", str(ranks)]
    # Quiet and quick on a small shared machine: shared memory between the
    # ranks, more ranks than cores allowed, no busy-waiting when oversubscribed.
    cmd = ["mpirun.openmpi", "-n", str(ranks), "--oversubscribe", "--mca", "btl", "self,vader",
           "--mca", "mpi_yield_when_idle", "1", "--mca", "btl_vader_single_copy_mechanism", "none"]
    if ucx:
        cmd += ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any", "--mca", "pml_ucx_devices", "any"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def app_path(app):
    """A test program built for the chosen MPI, or the one non-MPI build."""
    mine = os.path.join(MPI_APPS, app)
    return mine if os.path.exists(mine) else os.path.join(APPS, app)


def openmpi_missing():
    """Why the Open MPI scenarios cannot run here, or None."""
    if not OPENMPI:
        return None
    if not shutil.which("mpirun.openmpi"):
        return "mpirun.openmpi not found (install openmpi-bin, libopenmpi-dev: scripts/setup.sh)"
    if not os.path.exists(LIB):
        return f"{LIB} was not built (Open MPI was not found when meson configured the build)"
    return None


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def check_eq(got, want, what):
    if got != want:
        raise Failure(f"{what}: got {got!r}, want {want!r}")


def tree(root, skip=()):
    """{relative path: (size, sha1)} of every regular file below root."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in skip]
        for f in filenames:
            p = os.path.join(dirpath, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as fh:
                digest = hashlib.sha1(fh.read()).hexdigest()
            out[os.path.relpath(p, root)] = (os.path.getsize(p), digest)
    return out


def run(cmd, cwd=None, env=None, expect_rc=0, timeout=TIMEOUT):
    if os.path.isabs(cmd[0]) and not os.path.exists(cmd[0]):
        raise Failure(f"{cmd[0]} was not built")
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if expect_rc is not None and p.returncode != expect_rc:
        raise Failure(f"{' '.join(cmd)} exited {p.returncode} (want {expect_rc})\n"
                      f"stdout:\n{p.stdout[-3000:]}\nstderr:\n{p.stderr[-3000:]}")
    return p


class Scenario:
    """One program, run untraced and traced in fresh directories."""

    def __init__(self, app, args=(), ranks=None, env=None, prepare=None, ucx=False):
        self.app = app_path(app)
        check(os.path.exists(self.app), f"test program {self.app} was not built")
        self.args = [str(a) for a in args]
        self.ranks = ranks
        self.ucx = ucx  # Open MPI: over UCX (mpirun)
        self.extra_env = env or {}
        self.prepare = prepare  # callable(dir): inputs the program reads
        self.root = tempfile.mkdtemp(prefix="mpior-it-")
        self.plain = os.path.join(self.root, "plain")
        self.work = os.path.join(self.root, "traced")
        self.traces = os.path.join(self.root, "traces")
        self.fs = os.path.join(self.root, "fs")
        for d in (self.plain, self.work):
            os.makedirs(d)
            if self.prepare:
                self.prepare(d)
        self.inputs = tree(self.work)

    def command(self):
        base = [self.app] + self.args
        return mpirun(self.ranks, self.ucx) + base if self.ranks else base

    def environment(self, traced):
        env = dict(os.environ)
        env.update(self.extra_env)
        first = env.pop("LD_PRELOAD_FIRST", "")  # a test's own shim, preloaded in both runs
        env["LD_PRELOAD"] = first
        if traced:
            env["LD_PRELOAD"] = " ".join(x for x in (first, LIB) if x)
            env["MPIOR_TRACE_DIR"] = self.traces
        return env

    def run_both(self):
        """Runs untraced and traced; the traced run must look the same."""
        self.plain_out = run(self.command(), cwd=self.plain, env=self.environment(False))
        self.traced_out = run(self.command(), cwd=self.work, env=self.environment(True))
        check_eq(self.traced_out.stdout, self.plain_out.stdout, "stdout of the traced run")
        plain, traced = tree(self.plain), tree(self.work)
        check_eq(sorted(traced), sorted(plain), "files the traced run left")
        for name, (size, digest) in plain.items():
            check_eq(traced[name][0], size, f"size of {name}")
            check_eq(traced[name][1], digest, f"content of {name}")
        check(os.path.exists(os.path.join(self.traces, "job.mpior")), "no job.mpior written")
        self.written = {n: s for n, (s, _) in plain.items() if n not in self.inputs}
        return self

    def run_traced(self):
        """Runs traced only: for a test whose claim is not that tracing leaves the run unchanged (run_both's)."""
        self.traced_out = run(self.command(), cwd=self.work, env=self.environment(True))
        check(os.path.exists(os.path.join(self.traces, "job.mpior")), "no job.mpior written")
        self.written = {n: s for n, (s, _) in tree(self.work).items() if n not in self.inputs}
        return self

    def post(self, *extra):
        self.plan = os.path.join(self.traces, "plan")
        run([POST, self.traces] + list(extra))
        with open(os.path.join(self.plan, "summary.json")) as f:
            self.summary = json.load(f)
        return self.summary

    def abs(self, name):
        return os.path.join(self.work, name)

    def replay_and_check(self, *extra):
        """Replays into fs; every written file is back at its size, nothing
        appears or changes outside fs."""
        before = tree(self.root, skip=(self.fs,))
        report = os.path.join(self.root, "report.json")
        out = run([REPLAY, "--fs", self.fs, "--json", report, self.plan] + list(extra))
        after = tree(self.root, skip=(self.fs,))
        for asked in ("report.json", "io.log"):  # what the test asked the replayer to write
            after.pop(asked, None)
        check_eq(sorted(after), sorted(before), "files outside --fs after the replay")
        for name in before:
            check_eq(after[name], before[name], f"{name} (outside --fs) after the replay")
        for name, size in self.written.items():
            replayed = os.path.join(self.fs, self.abs(name).lstrip("/"))
            check(os.path.isfile(replayed), f"replay did not recreate {name} at {replayed}")
            check_eq(os.path.getsize(replayed), size, f"replayed size of {name}")
        with open(report) as f:
            self.report = json.load(f)
        return out

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def ops(summary):
    return summary["ops"]


def expect_ops(summary, want):
    """The summary's application-level call counts equal want exactly."""
    got = {k: v for k, v in ops(summary).items() if v}
    check_eq(got, want, "application-level calls in summary.json")


def file_entry(summary, path):
    for f in summary["files"]:
        if f["path"] == path:
            return f
    raise Failure(f"{path} not in summary.json files: {[f['path'] for f in summary['files']]}")


def main(scenarios):
    """Runs the named scenario function (argv[1]) from a dict of them."""
    name = sys.argv[1]
    missing = openmpi_missing()
    if missing:
        print(f"skip {name} under Open MPI: {missing}")
        sys.exit(SKIP)
    try:
        scenarios[name]()
    except Failure as e:
        print(f"FAIL {name}: {e}")
        sys.exit(1)
    print(f"ok {name}")
