#!/usr/bin/env bash
# The whole pipeline on the bundled example (test/apps/checkpoint_sim.c, an
# iterative solver with halo exchanges, allreduces and periodic checkpoints):
# trace it at 4 ranks, post-process the trace, replay the plan into a scratch
# directory, and print the summary and the replay report.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
scripts/setup.sh
scripts/build.sh
build="$root/${BUILD_DIR:-build}"
work=$(mktemp -d /tmp/mpior-demo.XXXXXX)
cd "$work"

echo "== 1. trace: LD_PRELOAD=libmpior.so mpirun.mpich -n 4 checkpoint_sim (in $work)"
LD_PRELOAD="$build/preload/libmpior.so" MPIOR_TRACE_DIR="$work/traces" \
  mpirun.mpich -n 4 "$build/test/apps/checkpoint_sim" 40 2000 10 65536
ls -l "$work/traces"

echo
echo "== 2. post-process: mpior-post traces/"
"$build/postproc/mpior-post" "$work/traces"
echo
cat "$work/traces/plan/summary.txt"

echo
echo "== 3. replay: mpior-replay --fs $work/target traces/plan"
"$build/replayer/mpior-replay" --fs "$work/target" --json "$work/replay.json" "$work/traces/plan"
echo
echo "Trace, plan and replayed files are in $work"
