"""mpior-study end to end (issue 65): test/apps/ior_like traced at 2, 3
and 4 ranks, studied at 4 (traced), 6 and 8 on two targets (a directory on disk
under the test's temp dir and a tmpfs in /dev/shm) with a cb_buffer_size
what-if series; the 8-rank count is above --max-threads, so its mpirun line
is run with real MPI processes and folded in with --result, the points
finished before resumed untouched. study.json: every point present,
intervals ordered, traced counts marked, the trust check done; index.html
loads in headless Chromium with no script (screenshot in meson-logs).
'bad': one clear message and exit 1 for each bad input."""
import json
import os
import shlex
import shutil
import subprocess
import tempfile

from aggregators_test import transfers
from extrap_test import Runs
from harness import APPS, BUILD, check, check_eq, main, run
from html_test import chromium, open_page
from replay_mpi_test import pwrite_ranks_of

STUDY = os.path.join(BUILD, "tools", "mpior-study")
REPLAY = os.path.join(BUILD, "replayer", "mpior-replay")
APP = os.path.join(APPS, "ior_like")
FAST = ["--predict-repeat", "2", "--job-seconds", "0.05", "--max-classes", "1", "-q"]


def traces(runs):
    """The traces at 2, 3 and 4 ranks, and an empty target directory on disk."""
    dirs = []
    for n in (2, 3, 4):
        d, _ = runs.trace(n, args=["fpp", "posix", 8192, 4096, 2, 2], app=APP)
        dirs.append(d)
    disk = runs.path("disk")
    os.makedirs(disk)
    return dirs, disk


def ordered(iv, value, what):
    check(iv[0] <= value <= iv[1] and iv[0] > 0, f"{what}: interval {iv} around {value}")


def check_points(study, targets):
    ids = {p["id"]: p for p in study["points"]}
    want = [f"base-n{n}-{t}" for n in (4, 6, 8) for t in targets]
    want += [f"set1-n{n}-{t}" for n in (6, 8) for t in targets]
    check_eq(sorted(ids), sorted(want), "points of study.json")
    check_eq(study["ranks"], [4, 6, 8], "rank counts")
    for p in study["points"]:
        check_eq(p["traced"], p["ranks"] == 4, f"{p['id']} marked traced")
    trust = study["trust_check"]
    check_eq([c["ranks"] for c in trust["counts"]], [2, 3, 4], "trust check counts")
    check(isinstance(trust["passed"], bool), "trust check result")
    for c in trust["counts"]:
        check_eq(c["ok"], abs(c["error_pct"]) <= trust["threshold_pct"] and c["status"] == "ok", f"trust {c}")
    return ids


def check_finished(p, trusted):
    check_eq(p["status"], "ok", f"{p['id']} status ({p['errors']})")
    ordered(p["replay"]["interval"], p["replay"]["io_s"], f"{p['id']} replay")
    ordered(p["replay"]["run_interval"], p["replay"]["run_s"], f"{p['id']} replay run time")
    ordered(p["predict"]["interval"], p["predict"]["io_s"], f"{p['id']} ratio prediction")
    check_eq(p["drawn"], p["traced"] or trusted, f"{p['id']} drawn only when the trust check passed")
    split = p["replay"]["split"]
    check(split["data_s"] + split["metadata_s"] > 0, f"{p['id']} I/O split {split}")
    check_eq(p["replay"]["failed_calls"], 0, f"{p['id']} failed calls")


def study_scenario():
    runs = Runs()
    shm = tempfile.mkdtemp(prefix="mpior-study-", dir="/dev/shm")
    try:
        dirs, disk = traces(runs)
        out = runs.path("study")
        cmd = [STUDY, "--ranks", "4,6,8", "--target", f"disk={disk}", "--target", f"shm={shm}",
               "--set", "cb_buffer_size=4K", "--max-threads", "6", "-o", out] + FAST + dirs
        dry = run(cmd + ["--dry-run"]).stdout
        check("plans/n6-set1" in dry and "estimated" in dry and "mpirun -n 8" in dry, f"dry run: {dry}")
        check(not os.path.exists(os.path.join(out, "points")), "the dry run ran points")
        first = run(cmd).stdout
        with open(os.path.join(out, "study.json")) as f:
            study = json.load(f)
        ids = check_points(study, ("disk", "shm"))
        trusted = study["trust_check"]["passed"]
        for pid, p in ids.items():
            if p["ranks"] == 8:
                check_eq(p["status"], "needs_mpi", f"{pid} above --max-threads")
                check(p["mpirun"] in first, f"the mpirun line of {pid} printed: {first}")
            else:
                check_finished(p, trusted)
        # Run the printed line with real MPI processes; fold its report in.
        # Run the base series' printed lines with real MPI processes and fold
        # their reports in; the what-if's 8-rank points stay marked needs_mpi.
        results = []
        for t in ("disk", "shm"):
            line = shlex.split(ids[f"base-n8-{t}"]["mpirun"])
            line[0] = "mpirun.mpich"
            line[line.index("mpior-replay")] = REPLAY
            run(line, cwd=runs.path())
            check_eq(ids[f"base-n8-{t}"]["result_option"], f"--result 8:{t}=base-n8-{t}.replay.json", "--result hint")
            results += ["--result", f"8:{t}=" + runs.path(f"base-n8-{t}.replay.json")]
        kept = {f: os.stat(os.path.join(out, "points", f)).st_mtime_ns for f in os.listdir(os.path.join(out, "points"))}
        run(cmd + results)
        for f, mtime in kept.items():
            check_eq(os.stat(os.path.join(out, "points", f)).st_mtime_ns, mtime, f"{f} resumed, not rerun")
        with open(os.path.join(out, "study.json")) as f:
            study = json.load(f)
        for pid, p in check_points(study, ("disk", "shm")).items():
            if pid.startswith("set1-n8"):
                check_eq(p["status"], "needs_mpi", f"{pid}: no --result given, kept and marked")
                check_eq(p["drawn"], False, f"{pid} not drawn")
            else:
                check_finished(p, study["trust_check"]["passed"])
        check_eq(study["largest"]["ranks"], 8, "largest count")
        check_eq(len(study["largest"]["dominant"]), 2, "dominant file and op per target at 8")
        page = os.path.join(out, "index.html")
        exe = chromium()
        dom = open_page(exe, page, "study.png")
        for sec in ("trust", "findings", "io", "run", "split", "points"):
            check(f'<section id="{sec}">' in dom, f"section {sec} in the DOM")
        check("<script" not in dom.lower() and dom.count("<svg") >= 3, "inline SVG, no script")
        check("(traced)" in dom, "traced counts marked on the page")
        for s in study["disagreements"]:
            check("disagree beyond their intervals" in s, f"disagreement sentence {s}")
    finally:
        runs.cleanup()
        shutil.rmtree(shm, ignore_errors=True)


def refused(cmd, needle):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    check_eq(p.returncode, 1, f"exit status of {cmd}: {p.stderr}")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and lines[0].startswith("mpior-study: ") and needle in lines[0],
          f"one message naming {needle!r}: {p.stderr!r}")


def bad_scenario():
    runs = Runs()
    try:
        dirs, disk = traces(runs)
        out = runs.path("out")
        base = ["--target", f"disk={disk}", "-o", out]
        refused([STUDY, "--ranks", "4,x"] + base + dirs, "--ranks")
        refused([STUDY, "--ranks", "0"] + base + dirs, "--ranks")
        refused([STUDY, "--ranks", "8", "--target", "disk=" + runs.path("nowhere"), "-o", out] + dirs, "no such directory")
        blocker = runs.path("file")
        open(blocker, "w").close()
        refused([STUDY, "--ranks", "8", "--target", f"disk={disk}", "-o", os.path.join(blocker, "s")] + dirs, "-o")
        refused([STUDY, "--ranks", "8", "--target", f"disk={disk}", "-o", blocker] + dirs, "not a directory")
        refused([STUDY, "--ranks", "8", "--set", "romio_cb_write=enable"] + base + dirs,
                "romio_cb_* need cb_nodes")
        refused([STUDY, "--ranks", "8", "--set", "cb_nodes=0"] + base + dirs, "cb_nodes needs a whole number")
        refused([STUDY, "--ranks", "8"] + base + [runs.path("disk")] + dirs[1:], "plan")
        refused([STUDY, "--ranks", "8"] + base + dirs[:2], "three or more")
    finally:
        runs.cleanup()


def cb_nodes_scenario():
    """A cb_nodes what-if end to end: test/apps/mpiio_scaling (collective writes, one aggregator when traced) at 2, 3
    and 4 ranks, studied at 5 and 6 with --set cb_nodes=2 and --max-threads 5. At 5 the what-if's plan has ranks 0
    and 1 writing each call's data (mpior-post --cb-nodes) and its threaded replay finishes; at 6 its mpirun line
    passes the hints, puts cb_nodes=2 in force when run with real MPI processes, and is folded in with --result. A
    second series, cb_nodes=2,romio_cb_write=disable, has every rank write its own pieces, and is drawn on the page
    under its label."""
    runs = Runs()
    try:
        dirs = [runs.trace(n, app=os.path.join(APPS, "mpiio_scaling"))[0] for n in (2, 3, 4)]
        disk = runs.path("disk")
        os.makedirs(disk)
        out = runs.path("study")
        disable = "cb_nodes=2,romio_cb_write=disable"
        cmd = [STUDY, "--ranks", "5,6", "--target", f"disk={disk}", "--set", "cb_nodes=2", "--set", disable,
               "--max-threads", "5", "-o", out] + FAST + dirs
        dry = run(cmd + ["--dry-run"]).stdout
        check("plans/n5-set1" in dry and "--hint cb_nodes=2 --hint cb_config_list=*:* " in dry, f"dry run: {dry}")
        check("--romio-cb-write disable -> plans/n5-set2" in dry and "--hint romio_cb_write=disable" in dry,
              f"dry run of the second series: {dry}")
        sieve = run(cmd + ["--set", "romio_ds_write=disable,ind_rd_buffer_size=64K", "--dry-run"]).stdout
        check("--romio-ds-write disable --ind-rd-buffer-size 65536 -> plans/n5-set3" in sieve
              and "--hint romio_ds_write=disable --hint ind_rd_buffer_size=65536" in sieve,
              f"dry run of a data sieving series: {sieve}")
        run(cmd)

        def points():
            with open(os.path.join(out, "study.json")) as f:
                study = json.load(f)
            check_eq(study["settings"][1]["cb_nodes"], 2, "the setting in study.json")
            check_eq(study["settings"][2]["romio_cb_write"], "disable", "the second setting in study.json")
            return {p["id"]: p for p in study["points"]}
        ids = points()
        for pid in ("base-n5-disk", "set1-n5-disk"):
            check_finished(ids[pid], ids[pid]["drawn"])
        check_eq(pwrite_ranks_of(ids["base-n5-disk"]["plan"]), {"0"}, "writers of the base plan")
        check_eq(pwrite_ranks_of(ids["set1-n5-disk"]["plan"]), {"0", "1"}, "writers of the cb_nodes=2 plan")
        check_eq({t[0] for t in transfers(ids["set2-n5-disk"]["plan"])}, set(range(5)),
                 "writers of the romio_cb_write=disable plan")
        check_finished(ids["set2-n5-disk"], ids["set2-n5-disk"]["drawn"])
        with open(os.path.join(out, "index.html")) as f:
            check(disable in f.read(), "the second series' label on the page")
        what = ids["set1-n6-disk"]
        check_eq(what["status"], "needs_mpi", "the what-if above --max-threads")
        line = shlex.split(what["mpirun"])
        line[0] = "mpirun.mpich"
        line[line.index("mpior-replay")] = REPLAY
        run(line, cwd=runs.path())
        report = runs.path("set1-n6-disk.replay.json")
        with open(report) as f:
            fs = json.load(f)["fs"]
        check("cb_nodes=2 (in force: 2), cb_config_list=*:* (in force: *:*)" in fs, f"hints in force: {fs}")
        run(cmd + ["--result", f"6:disk:set1={report}"])
        what = points()["set1-n6-disk"]
        check_eq(what["status"], "ok", f"the folded MPI replay ({what['errors']})")
        check(what["replay"]["io_s"] > 0 and what["predict"]["io_s"] > 0, f"replay and prediction: {what}")
    finally:
        runs.cleanup()


def running(root):
    """Processes whose command line names a path under root."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if root in cmd and int(pid) != os.getpid():
            found.append(f"{pid}: {cmd}")
    return found


def budget_scenario():
    """--budget stops a running point: checkpoint_sim sleeps 3 x 0.7 s, so
    the first trust replay (which reproduces those compute gaps) surely runs
    past a 0.3 s budget, which it surely starts within. That replay is
    stopped and marked over_budget, the points after it are not started;
    all are kept in study.json and on the page, none is stored (a later run
    does them), and no child of the study is left running."""
    runs = Runs()
    try:
        dirs = [runs.trace(n, args=[3, 700000, 3, 4096], app=os.path.join(APPS, "checkpoint_sim"))[0] for n in (2, 3, 4)]
        disk = runs.path("disk")
        os.makedirs(disk)
        out = runs.path("study")
        r = run([STUDY, "--ranks", "4,6", "--target", f"disk={disk}", "--budget", "0.3", "-o", out] + FAST + dirs)
        check("budget of 0.3 s ran out: 5 points over budget, 1 stopped while running" in r.stdout, r.stdout)
        check_eq(running(runs.root), [], "no child of the study left running")
        with open(os.path.join(out, "study.json")) as f:
            study = json.load(f)
        check_eq(sorted(p["id"] for p in study["points"]), [f"base-n{n}-disk" for n in (4, 6)], "points")
        first = study["trust"][0]
        check_eq(first["status"], "over_budget", "the running trust replay is stopped")
        check("stopped: the budget of 0.3 s ran out" in first["errors"][0], f"its error: {first['errors']}")
        check_eq({t["status"] for t in study["trust"][1:]}, {"over_budget"}, "trust replays past the budget")
        check_eq({p["status"] for p in study["points"]}, {"over_budget"}, "points past the budget")
        check(not any(p["drawn"] for p in study["points"]), "over-budget points are not drawn")
        check_eq(os.listdir(os.path.join(out, "points")), [], "no over-budget point stored")
        check_eq(os.listdir(os.path.join(out, "reference")), [], "the stopped replay's scratch directory removed")
        with open(os.path.join(out, "index.html")) as f:
            check_eq(f.read().count("<td>over_budget</td>"), 2, "over-budget points listed on the page")
    finally:
        runs.cleanup()


if __name__ == "__main__":
    main({"study": study_scenario, "bad": bad_scenario, "budget": budget_scenario, "cb_nodes": cb_nodes_scenario})
