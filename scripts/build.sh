#!/usr/bin/env bash
# Configures (once) and builds mpior in BUILD_DIR (default: build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$@" >/dev/null
fi
ninja -C "$build" >/dev/null
