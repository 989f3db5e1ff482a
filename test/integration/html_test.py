#!/usr/bin/env python3
"""mpior-post --html and mpior-replay --html (report/) opened in headless
Chromium (Debian `chromium`, scripts/setup.sh): the page loads with no console
error, every section is in the DOM, a path holding <script> shows as text
(no script element at all: the page has none of its own), nothing is fetched
from elsewhere, and a screenshot is written next to the test log
(build/meson-logs/). Skips (exit 77) only when Chromium cannot run."""
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness import BUILD, POST, REPLAY, Scenario, check, check_eq, main, run

SECTIONS = ("job", "heatmap", "ops", "sizes", "files", "mpi", "loops")
EVIL_DIR = '<script>alert("x")<'  # with the file name below: .../<script>alert("x")</script>.dat
EVIL_FILE = "script>.dat"
CHROME_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
               "--enable-logging=stderr", "--v=0"]


def chromium():
    exe = shutil.which("chromium")
    if not exe:
        print("SKIP: chromium is not installed (scripts/setup.sh installs it)")
        sys.exit(77)
    p = subprocess.run([exe] + CHROME_ARGS + ["--dump-dom", "about:blank"], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0 or "<html" not in p.stdout:
        print(f"SKIP: chromium cannot run here (exit {p.returncode}): {p.stderr[-500:]}")
        sys.exit(77)
    return exe


def open_page(exe, page, shot_name):
    """DOM after load, console messages, and a screenshot in meson-logs."""
    url = "file://" + page
    logs = os.path.join(BUILD, "meson-logs")
    os.makedirs(logs, exist_ok=True)
    shot = os.path.join(logs, shot_name)
    if os.path.exists(shot):
        os.remove(shot)
    # One launch for both: starting Chromium is most of the time a page takes.
    dom = subprocess.run([exe] + CHROME_ARGS + ["--dump-dom", f"--screenshot={shot}", "--window-size=1200,3200", url],
                         capture_output=True, text=True, timeout=120)
    check_eq(dom.returncode, 0, f"chromium --dump-dom --screenshot {page}")
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    check_eq(console, [], "console messages of the page")
    with open(shot, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{shot} is a PNG")
    print(f"screenshot: {shot}")
    return dom.stdout


def check_page(page, dom, sections, evil_path=None):
    with open(page, encoding="utf-8") as f:
        source = f.read()
    check(not re.search(r"<[a-zA-Z][^>]*\s(src|href|action|data)\s*=", source), "an element refers elsewhere")
    style = source[source.index("<style>"):source.index("</style>")]
    check("url(" not in style and "@import" not in style, "the style refers elsewhere")
    for sec in sections:
        check(re.search(rf'<section id="{sec}">\s*<h2>', dom), f"section {sec} not in the DOM")
        check(f'<section id="{sec}">' in source, f"section {sec} not in the page")
    check("<script" not in dom.lower(), "a script element is in the DOM")
    check(dom.count("<svg") >= 4, "inline SVG plots in the DOM")
    if evil_path:
        shown = html.escape(evil_path, quote=False)
        check(shown in dom, f"the path {evil_path!r} is not shown as text")


def evil_trace(root):
    """A traced dd writing a file whose path holds <script>...</script>."""
    d = os.path.join(root, "work", EVIL_DIR)
    os.makedirs(d)
    path = os.path.join(d, EVIL_FILE)
    traces = os.path.join(root, "traces")
    env = dict(os.environ, LD_PRELOAD=os.path.join(BUILD, "preload", "libmpior.so"), MPIOR_TRACE_DIR=traces)
    run(["dd", "if=/dev/zero", f"of={path}", "bs=4096", "count=3", "status=none"], env=env)
    check_eq(os.path.getsize(path), 12288, "dd's file")
    return traces, path


def post_page():
    exe = chromium()
    root = tempfile.mkdtemp(prefix="mpior-html-")
    traces, path = evil_trace(root)
    page = os.path.join(root, "report.html")
    out = run([POST, traces, "--html", page])
    check(f"wrote report {page}" in out.stdout, "mpior-post names the report")
    dom = open_page(exe, page, "html-report-post.png")
    check_page(page, dom, SECTIONS, evil_path=path)
    check(re.search(r"<td>12\.0 KiB</td>", dom), "the file table gives dd's 12 KiB written")
    shutil.rmtree(root, ignore_errors=True)


def mpi_pages():
    """An MPI run (shared file, gathers, pruning) and its replay."""
    exe = chromium()
    s = Scenario("checkpoint_sim", [10, 1000, 5, 4096], ranks=2)
    run(s.command(), cwd=s.work, env=s.environment(True))
    page = os.path.join(s.root, "post.html")
    run([POST, s.traces, "--html", page])
    dom = open_page(exe, page, "html-report-mpi.png")
    check_page(page, dom, SECTIONS)
    check("rank 1" in dom and "MPI_Init" in dom, "ranks and MPI calls in the report")
    rpage = os.path.join(s.root, "replay.html")
    out = run([REPLAY, "--fs", s.fs, "--html", rpage, os.path.join(s.traces, "plan")])
    check(f"wrote report {rpage}" in out.stdout, "mpior-replay names the report")
    rdom = open_page(exe, rpage, "html-report-replay.png")
    check_page(rpage, rdom, SECTIONS + ("replay",))
    check("Traced against replayed time" in rdom, "replay section heading")
    bad = run([POST, s.traces, "--html", "/nonexistent-dir/r.html"], expect_rc=1)
    check_eq(bad.stderr.strip(), "mpior-post: cannot write --html /nonexistent-dir/r.html", "unwritable report")
    s.cleanup()


SCENARIOS = {"post": post_page, "mpi": mpi_pages}

if __name__ == "__main__":
    main(SCENARIOS)
