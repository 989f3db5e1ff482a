"""The MPI-IO hints a program passes in an MPI_Info are traced (the job record) and are the defaults of mpior-post's
collective I/O models.

`romio` (MPICH): test/apps/mpiio_scaling given cb_buffer_size 64 KiB, cb_nodes 1 and cb_config_list *:* in its
MPI_Info, traced at 2, 3 and 4 ranks and extrapolated to 5 with no option, has the plan of the same program traced
without hints (ROMIO's defaults) and extrapolated with those hints given by hand, and the transfers of a real 5-rank
run given them: rank 0 aggregates in 64 KiB windows. Without the options the untraced-hints plan differs (whole
steps of 320 KiB).
An option given still overrides the traced hint, and the summary says which were traced and which overridden.

`ompio` (Open MPI): mpiio_scaling traced at 3, 4 and 5 ranks with `--mca fcoll individual` (OMPIO would choose
vulcan) has the component in its job record; extrapolated to 8 with no option the plan has each rank move its own
requests, as a real 8-rank run given the same component, and as the traces made without it extrapolated with
--ompio-fcoll individual."""
import json
import os

import ompio_test
from aggregators_test import APP, transfers
from extrap_test import Runs
from harness import POST, check, check_eq, main, run

CB = 65536
PLAIN = (2, 64, 0, 1)  # 2 steps of 64 KiB a rank, read back, no hint
# The same with cb_buffer_size 64 KiB, cb_nodes 1 and cb_config_list *:* (more aggregators when traced would make
# transfers no model of the traced counts fits).
HINTED = (2, 64, CB, 1, 0, 1)
BY_HAND = ["--cb-buffer-size", str(CB), "--cb-nodes", "1", "--cb-config-list", "*:*"]


def summary(plan):
    with open(os.path.join(plan, "summary.json")) as f:
        return json.load(f)


def romio():
    runs = Runs()
    try:
        hinted = [runs.trace(n, args=HINTED, app=APP, name=f"h{n}")[0] for n in (2, 3, 4)]
        plain = [runs.trace(n, args=PLAIN, app=APP, name=f"p{n}")[0] for n in (2, 3, 4)]
        job = run([POST, "--dump", os.path.join(hinted[0], "job.mpior")]).stdout
        check("cb_buffer_size=65536 (given)" in job and "cb_nodes=1 (given)" in job
              and "romio_cb_write=automatic " in job and "collective.dat" in job, f"the traced hints: {job}")
        check_eq(job.count("hints of "), 1, f"one set for the file, its set_view's info the same: {job}")
        plain_job = run([POST, "--dump", os.path.join(plain[0], "job.mpior")]).stdout
        check("cb_nodes=" in plain_job and "(given)" not in plain_job, f"ROMIO's own values, none given: {plain_job}")
        traced = runs.path("traced5")
        out = run([POST, "--extrapolate", "5", "-o", traced] + hinted).stdout
        check("MPI-IO hints: cb_buffer_size=65536 (traced), cb_nodes=1 (traced), cb_config_list=*:* (traced)" in out,
              f"mpior-post says which hints it took: {out}")
        by_hand = runs.path("byhand5")
        run([POST, "--extrapolate", "5", "-o", by_hand] + BY_HAND + plain)
        default = runs.path("default5")
        run([POST, "--extrapolate", "5", "-o", default] + plain)
        got = transfers(traced)
        check_eq(got, transfers(by_hand), "the traced hints' plan against the hints given by hand")
        check_eq({t[0] for t in got}, {0}, "the aggregator")
        check(all(n <= CB for *_, n in got) and max(n for *_, n in got) == CB, f"64 KiB windows: {got}")
        check(transfers(default) != got, "ROMIO's defaults make another plan")
        check_eq(max(n for *_, n in transfers(default)), 5 * CB, "a step's 320 KiB at once under ROMIO's defaults")
        real, _ = runs.trace(5, args=HINTED, app=APP, name="real5")
        check_eq(got, transfers(os.path.join(real, "plan")), "the plan against a real 5-rank run given the hints")
        hints = summary(traced)["extrapolated"]["mpiio_hints"]
        check_eq({h["hint"]: (h["value"], h["source"]) for h in hints},
                 {"cb_buffer_size": ("65536", "traced"), "cb_nodes": ("1", "traced"),
                  "cb_config_list": ("*:*", "traced")}, "summary.json's hints")
        over = runs.path("over5")
        run([POST, "--extrapolate", "5", "--cb-nodes", "3", "-o", over] + hinted)
        check_eq({t[0] for t in transfers(over)}, {0, 1, 2}, "--cb-nodes 3 overrides the traced 1")
        with open(os.path.join(over, "summary.txt")) as f:
            text = f.read()
        check("MPI-IO hint cb_nodes=3 (--cb-nodes given, traced 1)" in text
              and "MPI-IO hint cb_buffer_size=65536 (traced)" in text, f"summary.txt's hints: {text}")
    finally:
        runs.cleanup()


def ompio():
    ompio_test.need_openmpi()
    runs = Runs()
    try:
        forced = [("fcoll", "individual")]
        hinted = [ompio_test.trace(runs, n, mca=forced, name=f"h{n}") for n in (3, 4, 5)]
        plain = [ompio_test.trace(runs, n, name=f"p{n}", args=(2, 32, 0, 1)) for n in (3, 4, 5)]
        job = run([POST, "--dump", os.path.join(hinted[0], "job.mpior")]).stdout
        check("ompio fcoll: individual" in job and f"cb_buffer_size={ompio_test.CB} (given)" in job,
              f"the job record names the component and the hint: {job}")
        check("ompio fcoll" not in run([POST, "--dump", os.path.join(plain[0], "job.mpior")]).stdout,
              "no component recorded when OMPIO chose")
        traced = runs.path("traced8")
        out = run([POST, "--extrapolate", "8", "-o", traced] + hinted).stdout
        check("fcoll=individual (traced)" in out, f"mpior-post says it took the component: {out}")
        by_hand = runs.path("byhand8")
        run([POST, "--extrapolate", "8", "--ompio-fcoll", "individual", "-o", by_hand] + plain)
        default = runs.path("default8")
        run([POST, "--extrapolate", "8", "-o", default] + plain)
        got = ompio_test.transfers(traced)
        check_eq(got, ompio_test.transfers(by_hand), "the traced component's plan against --ompio-fcoll individual")
        check_eq({t[0] for t in got}, set(range(8)), "every rank moves its own")
        check(ompio_test.transfers(default) != got, "OMPIO's own choice (vulcan) makes another plan")
        real = ompio_test.trace(runs, 8, mca=forced, name="real8")
        check_eq(got, ompio_test.transfers(os.path.join(real, "plan")), "the plan against a real 8-rank run")
    finally:
        runs.cleanup()


if __name__ == "__main__":
    main({"romio": romio, "ompio": ompio})
