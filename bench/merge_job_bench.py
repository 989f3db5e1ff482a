"""Sections `merge_job` and `merge_tree` of bench.py (issue 19): the job's
trace at MPI_Finalize under real mpirun (files, MPI_Finalize time, sizes, run
time, merging off / aggregated / merged), and the in-job merge's reduction
simulated in one process at 1,024 to 65,536 ranks (bench/merge_tree_bench)."""
import os
import re
import statistics


def merge_job(b, table, elapsed):
    """The job's trace at MPI_Finalize (issue 19): files the trace directory gets and MPI_Finalize time of an SPMD
    program (N-to-N, N-to-1 and group files) at 8-64 ranks (oversubscribed: the growth matters), untraced and traced
    with merging off (rank files), aggregate files only (MPIOR_MERGE_TREE=0) and the in-job merge (merged.mpior),
    the merged file's size against one rank's trace, and the run time traced / untraced."""
    reps = 1 if b.quick else 2
    modes = (("untraced", None), ("merge off", {"MPIOR_MERGE": "0"}), ("aggregate", {"MPIOR_MERGE_TREE": "0"}),
             ("merge on", {"MPIOR_MERGE_TREE": "4"}))
    rows = []
    for ranks in (8, 16, 32, 64):
        times = {name: [] for name, _ in modes}
        files, sizes = {}, {}
        for _ in range(reps):
            for name, env_extra in modes:  # interleaved
                d = b.fresh("merge_job")
                out_dir = os.path.join(d, "out")
                os.makedirs(out_dir)
                traces = os.path.join(d, "traces")
                env = b.traced(MPIOR_TRACE_DIR=traces, **env_extra) if env_extra is not None else {}
                out = b.run(["mpirun.mpich", "-n", ranks, b.exe("bench/merge_job"), out_dir, 5], env=env, cwd=d)
                fin = float(re.search(r"finalize_s (\S+)", out).group(1))
                times[name].append((elapsed(out), fin))
                if env_extra is not None:
                    files[name] = len(os.listdir(traces))
                    for f in ("rank-000001.mpior", "merged.mpior"):
                        if os.path.exists(os.path.join(traces, f)):
                            sizes[f] = os.path.getsize(os.path.join(traces, f))
                    if name == "merge on":  # the plan mpior-post makes of it: the same merged statistics
                        b.run([b.post, traces, "-o", os.path.join(d, "plan")])
                        sizes["plan"] = os.path.getsize(os.path.join(d, "plan", "plan.mpior"))
        med = {n: (statistics.median(t[0] for t in v), statistics.median(t[1] for t in v)) for n, v in times.items()}
        base = med["untraced"][0]
        one, merged = sizes.get("rank-000001.mpior", 0), sizes.get("merged.mpior", 0)
        rows.append([ranks, files["merge off"], files["aggregate"], files["merge on"]] +
                    [f"{med[n][1] * 1000:.1f}" for n, _ in modes] +
                    [one, merged, f"{merged / one:.2f}" if one and merged else "-", sizes.get("plan", 0)] +
                    [f"{base:.3f}", f"{med['merge off'][0] / base:.3f}", f"{med['merge on'][0] / base:.3f}"])
    table(f"the job's trace at MPI_Finalize: files in the trace directory (merging on: job.mpior, merged.mpior and "
          f"rank 0's own rank file, since it prints after MPI_Finalize), MPI_Finalize ms on rank 0, one rank's trace "
          f"(rank 1, merging off), the merged job trace and mpior-post's plan of it in bytes, run time "
          f"(medians of {reps}, interleaved, load {os.getloadavg()[0]:.2f})",
          ["ranks", "files off", "files aggregate", "files merged", "finalize ms untraced", "off", "aggregate",
           "merged", "one rank B", "merged B", "merged / one rank", "plan B", "untraced s", "off / untraced",
           "merged / untraced"], rows)


def merge_tree(b, table):
    """The in-job merge's reduction simulated in one process at 1,024 to 65,536 ranks (issue 19)."""
    rows = []
    for files in ("group", "nogroup"):
        for ranks in (1024, 8192) if b.quick else (1024, 8192, 65536):
            out = b.run([b.exe("bench/merge_tree_bench"), ranks, 2, files])
            f = dict(zip(out.split()[0::2], out.split()[1::2]))
            rows.append([f["files"], ranks, f["levels"], f["steps"], f["critical_ms"], f["critical_median_ms"],
                         f"{float(f['critical_median_ms']) / int(f['levels']):.3f}", f["total_ms"], f["peak_rss_mib"],
                         f["rank_stream_bytes"], f["merged_stream_bytes"], f["ratio"], f["merged_job_bytes"],
                         f["job_ratio"], f["streams"]])
    table("the merge over a binary tree, simulated in one process (bench/merge_tree_bench: SPMD, N-to-N + N-to-1 "
          f"(+ a file per 16 ranks), 50 iterations; load {os.getloadavg()[0]:.2f})",
          ["files", "ranks", "levels", "steps", "critical path ms (slowest step per level)",
           "critical path ms (median step per level)", "median ms per level", "all steps ms", "peak RSS MiB",
           "one rank B", "merged B", "merged / one rank", "merged.mpior form B", "its / one rank", "streams"], rows)
