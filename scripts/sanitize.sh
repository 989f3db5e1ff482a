#!/usr/bin/env bash
# Builds mpior with ASan+UBSan (build-asan) and runs the unit tests and the
# tools on a traced run under them. Not part of scripts/test.sh: the second
# build doubles CI's time on 2 cores. Usage: scripts/sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ ! -d build-asan ]; then
  meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dopenmpi=disabled >/dev/null
fi
ninja -C build-asan -j"$(nproc)"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=0
meson test -C build-asan --no-rebuild --suite unit --print-errorlogs
# The readers and the replayer on a real trace (the tracer itself is the
# normal build's: an ASan library cannot be preloaded into uninstrumented
# programs).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$(pwd)
lib="$root/build/preload/libmpior.so"
[ -f "$lib" ] || scripts/build.sh
(cd "$work" && LD_PRELOAD="$lib" MPIOR_TRACE_DIR="$work/t" mpirun.mpich -n 2 "$root/build/test/apps/children" 1 20 >/dev/null)
build-asan/postproc/mpior-post "$work/t"
build-asan/replayer/mpior-replay --fs "$work/fs" "$work/t/plan" >/dev/null
echo "sanitize: unit tests and the tools on a traced run: clean"
