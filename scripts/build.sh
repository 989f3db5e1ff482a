#!/usr/bin/env bash
# Configures (once) and builds mpior in BUILD_DIR (default: build); extra
# arguments go to `meson setup`. Quiet unless something fails.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$@" >"$log" 2>&1 || { cat "$log"; echo "build: meson setup $build failed" >&2; exit 1; }
fi
ninja -C "$build" >"$log" 2>&1 || { grep -v '^\[' "$log" | tail -60; echo "build: ninja -C $build failed" >&2; exit 1; }
