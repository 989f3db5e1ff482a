#!/usr/bin/env python3
"""`meson install --destdir` into a temporary root gives the programs, the
launcher, libmpior.so, a pkg-config file and man pages; then the launcher of
that root alone (no build tree on any path) traces a bundled program under
mpirun, and the root's mpior-post and mpior-replay use the trace; the build
tree's launcher traces before any install."""
import glob
import os
import shlex
import shutil
import subprocess
import tempfile

from harness import APPS, BUILD, check, check_eq, main, run


def find(root, pattern):
    hits = glob.glob(os.path.join(root, "**", pattern), recursive=True)
    check(len(hits) == 1, f"{pattern} installed once below {root}: {hits}")
    return hits[0]


def install():
    root = tempfile.mkdtemp(prefix="mpior-install-")
    dest = os.path.join(root, "dest")
    run(["meson", "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", dest])
    tools = {n: find(dest, f"bin/{n}") for n in ("mpior-post", "mpior-replay", "mpior-trace")}
    for n, p in tools.items():
        check(os.access(p, os.X_OK), f"{p} is executable")
    lib = find(dest, "libmpior.so")
    check("/lib" in lib, f"libmpior.so under a lib directory: {lib}")
    pc = find(dest, "pkgconfig/mpior.pc")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pc))
    libs = run(["pkg-config", "--libs", "mpior"], env=env).stdout
    check("-lmpior" in libs, f"pkg-config --libs mpior: {libs!r}")
    for n in tools:
        man = find(dest, f"man1/{n}.1")
        with open(man) as f:
            text = f.read()
        check(text.startswith(".\\\" DO NOT MODIFY") or ".TH" in text, f"{man} is a man page")
        check(n.upper() in text, f"{man} names {n}")
    with open(find(dest, "man1/mpior-post.1")) as f:
        check("timeline" in f.read(), "mpior-post.1 documents --timeline (made from --help)")

    # The installed root alone: a copy of a bundled program in a fresh
    # directory, no build tree on PATH or LD_LIBRARY_PATH.
    work = os.path.join(root, "work")
    os.makedirs(work)
    app = shutil.copy(os.path.join(APPS, "nton_barrier"), work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MPIOR_") and k not in ("LD_PRELOAD",)}
    env["PATH"] = os.path.dirname(tools["mpior-trace"]) + ":/usr/bin:/bin"
    p = subprocess.run(["mpior-trace", "-o", "t", "--", "mpirun.mpich", "-n", "2", app, "3", "512"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=300)
    check_eq(p.returncode, 0, f"mpior-trace exit status (stderr {p.stderr[-800:]})")
    where = os.path.join(work, "t")
    check(f"mpior-trace: trace written to {where}" in p.stderr, f"the launcher says where: {p.stderr[-300:]!r}")
    check(os.path.exists(os.path.join(where, "job.mpior")), "job.mpior written")
    out = subprocess.run(["mpior-post", "t"], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    check_eq(out.returncode, 0, f"installed mpior-post ({out.stderr})")
    check("2 ranks" in out.stdout, f"mpior-post output: {out.stdout}")
    rep = subprocess.run(["mpior-replay", "--fs", "fs", "t/plan"], cwd=work, env=env, capture_output=True,
                         text=True, timeout=300)
    check_eq(rep.returncode, 0, f"installed mpior-replay ({rep.stderr})")
    # An Open MPI program: the launcher preloads libmpior-openmpi.so by itself.
    ompi_app = os.path.join(APPS, "openmpi", "nton_barrier")
    if os.path.exists(ompi_app) and shutil.which("mpirun.openmpi"):
        find(dest, "libmpior-openmpi.so")
        app = shutil.copy(ompi_app, os.path.join(work, "nton_ompi"))
        launcher = ["mpirun.openmpi", "-n", "2", "--oversubscribe", "--mca", "btl", "self,vader"]
        launcher += ["--allow-run-as-root"] if os.geteuid() == 0 else []
        p = subprocess.run(["mpior-trace", "-o", "t2", "--"] + launcher + [app, "3", "512"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=300)
        check_eq(p.returncode, 0, f"mpior-trace of an Open MPI program (stderr {p.stderr[-800:]})")
        check("untraced" not in p.stderr, f"the launcher picked the Open MPI tracer: {p.stderr[-300:]!r}")
        check(os.path.exists(os.path.join(work, "t2", "job.mpior")), "job.mpior of the Open MPI run written")
        # The launcher named inside a shell's command string picks the tracer too.
        p = subprocess.run(["mpior-trace", "-o", "t4", "--", "sh", "-c", shlex.join(launcher + [app, "3", "512"])],
                           cwd=work, env=env, capture_output=True, text=True, timeout=300)
        check_eq(p.returncode, 0, f"mpior-trace of sh -c 'mpirun.openmpi ...' (stderr {p.stderr[-800:]})")
        check("untraced" not in p.stderr, f"the launcher inside sh -c picked the Open MPI tracer: {p.stderr[-300:]!r}")
    else:
        print("skip the Open MPI launch: Open MPI is not installed")
    # The build tree's launcher, before any install, finds the tracer there.
    os.makedirs(os.path.join(work, "outdir"))
    with open(os.path.join(work, "input.dat"), "wb") as f:
        f.write(b"x" * 8192)
    built = subprocess.run([os.path.join(BUILD, "tools", "mpior-trace"), "-o", "t3", "--",
                            os.path.join(APPS, "nonmpi")], cwd=work, env=env, capture_output=True, text=True,
                           timeout=300)
    check_eq(built.returncode, 0, f"the build tree's mpior-trace (stderr {built.stderr[-800:]})")
    check(os.path.exists(os.path.join(work, "t3", "rank-000000.mpior")), "the build tree's tracer wrote a trace")
    bad = subprocess.run(["mpior-trace", "-o"], cwd=work, env=env, capture_output=True, text=True)
    check_eq(bad.returncode, 2, "mpior-trace -o without a directory")
    check("needs a directory" in bad.stderr, f"usage message: {bad.stderr!r}")
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main({"destdir": install})
