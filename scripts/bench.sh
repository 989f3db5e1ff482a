#!/usr/bin/env bash
# Installs what is missing, builds an optimised tree (build-bench) and prints
# the benchmark tables (bench/bench.py; pass --quick or --only SECTION ...).
# Run it on an otherwise idle machine: the figures are timings.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR=build-bench scripts/build.sh --buildtype=release
exec python3 bench/bench.py build-bench "$@"
