#!/usr/bin/env bash
# Sanitizer runs, part of the test suite (test/meson.build, suite
# "sanitize"; CI runs them through scripts/test.sh):
#   asan  ASan+UBSan build (build-asan): the unit tests of every tool part,
#         then mpior-post and mpior-replay on a real traced run;
#   tsan  TSan build (build-tsan): the tracer's recorders under concurrent
#         snapshots, the replayer's unit tests (real threads, semaphores,
#         barriers), then a threaded replay of a traced multi-threaded run.
# Usage: scripts/sanitize.sh [asan|tsan]...   (default: both)
# Each builds only the targets it runs, unoptimised, so it fits CI's budget.
# The tracer itself is traced with the normal build's library: a sanitized
# library cannot be preloaded into uninstrumented programs (mpirun, sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
main_build=${MPIOR_BUILD_ROOT:-$root/build}
lib="$main_build/preload/libmpior.so"
# MPICH's UCX hooks madvise/mmap through its own rwlock, which TSan's
# interceptors cannot follow (a crash in ucm_event_enter at thread start).
export UCX_MEM_EVENTS=no
export MPIOR_SOURCE_ROOT="$root"

# Unoptimised, with line tables only (-g1 after meson's -g): a report still
# names every frame's function, file and line, and the compile is a sixth
# shorter, the objects a third smaller.
configure() {  # dir, sanitizers
  [ -f "$1/build.ninja" ] && return 0
  meson setup "$1" --buildtype=debug -Dcpp_args=-g1 -Dc_args=-g1 -Db_sanitize="$2" -Db_lundef=false \
    -Dopenmpi=disabled -Dman=disabled \
    >"$1.setup.log" 2>&1 || { cat "$1.setup.log"; echo "sanitize: meson setup $1 failed" >&2; exit 1; }
}

build() {  # dir, targets...
  local dir=$1
  shift
  ninja -C "$dir" -j"$(nproc)" "$@" >"$dir.build.log" 2>&1 ||
    { grep -v '^\[' "$dir.build.log" | tail -40; echo "sanitize: building in $dir failed" >&2; exit 1; }
}

traced_run() {  # app, ranks, args... -> trace directory in $work/t
  [ -f "$lib" ] || scripts/build.sh
  (cd "$work" && LD_PRELOAD="$lib" MPIOR_TRACE_DIR="$work/t" mpirun.mpich -n "$2" "$main_build/test/apps/$1" "${@:3}" >/dev/null)
}

run_asan() {
  local dir=build-asan
  local tests=(trace/trace_tests postproc/postproc_tests postproc/postproc_cli_tests merge/merge_tests extrap/extrap_tests
    replayer/replayer_tests report/report_tests predict/predict_tests)
  configure "$dir" address,undefined
  build "$dir" postproc/mpior-post replayer/mpior-replay "${tests[@]/#/test/}"
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=0
  for t in "${tests[@]}"; do
    MPIOR_BUILD_ROOT="$root/$dir" MPIOR_POST="$root/$dir/postproc/mpior-post" "$dir/test/$t" >"$work/unit.log" 2>&1 ||
      { tail -60 "$work/unit.log"; echo "sanitize: asan: $t failed" >&2; exit 1; }
  done
  traced_run children 2 1 20
  "$dir/postproc/mpior-post" -q "$work/t"
  "$dir/replayer/mpior-replay" -q --fs "$work/fs" "$work/t/plan" >/dev/null
  echo "sanitize: asan+ubsan: ${#tests[@]} unit suites, mpior-post and mpior-replay on a traced run: clean"
}

run_tsan() {
  local dir=build-tsan
  configure "$dir" thread
  build "$dir" postproc/mpior-post replayer/mpior-replay test/preload/preload_tests test/replayer/replayer_tests
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$root/scripts/tsan.supp"
  # MPICH's UCX hooks madvise(); glibc madvises a finished thread's stack after
  # ThreadSanitizer has let the thread go, and the hook's lock then crashed
  # TSan's interceptor (mpior-replay: SIGSEGV in ucm_madvise at thread exit).
  export UCX_MEM_EVENTS=no
  "$dir/test/preload/preload_tests" >"$work/unit.log" 2>&1 ||
    { tail -60 "$work/unit.log"; echo "sanitize: tsan: preload_tests failed" >&2; exit 1; }
  # TSan cannot hold 8192 threads.
  MPIOR_BUILD_ROOT="$root/$dir" "$dir/test/replayer/replayer_tests" '~8192 replay threads*' >"$work/unit.log" 2>&1 ||
    { tail -60 "$work/unit.log"; echo "sanitize: tsan: replayer_tests failed" >&2; exit 1; }
  traced_run threads_io 2 4 200 4096
  "$dir/postproc/mpior-post" -q "$work/t"
  "$dir/replayer/mpior-replay" -q --fs "$work/fs" "$work/t/plan" >/dev/null
  echo "sanitize: tsan: preload and replayer unit suites, a threaded replay of a traced threaded run: clean"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(asan tsan)
[ -n "${MPIOR_SKIP_SETUP:-}" ] || scripts/setup.sh
for part in "${parts[@]}"; do
  case "$part" in
    asan) run_asan ;;
    tsan) run_tsan ;;
    *) echo "sanitize: unknown part '$part' (asan or tsan)" >&2; exit 2 ;;
  esac
  rm -rf "$work/t" "$work/fs"
done
