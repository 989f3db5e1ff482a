#!/bin/bash
# MPICH's own test programs (test/mpi of MPICH v4.0.2) under mpior: each is
# run untraced and traced (LD_PRELOAD libmpior.so, mpirun.mpich), its trace
# posted (mpior-post) and replayed (mpior-replay, threads; with --mpi also
# `mpirun.mpich -n N mpior-replay --mpi`), with timeouts; prints one row per
# program: untraced pass, traced pass, output identical, post ok, replay ok.
#
#   scripts/mpich_suite.sh [options] MPICH_TEST_MPI_DIR [dir/name ...]
#
# MPICH_TEST_MPI_DIR is MPICH's test/mpi, e.g. from a clone of
# github.com/pmodels/mpich: `git archive v4.0.2 test/mpi | tar -x -C DIR`
# (or Debian's `apt-get source mpich`). Without names: the programs issue 11
# names, then attr/, coll/, comm/, pt2pt/, topo/, part/, io/ and init/session*
# at <= 8 ranks, first line of each program's testlist (MPICH's own
# arguments), skipping the ones that need dtpools or GPUs.
# Options: -b BUILD (default build), -w WORK (default /tmp/mpior-mpich-suite),
# -t SECONDS per run (default 60; a program's testlist timeLimit= when
# larger, e.g. comm/ctxalloc's 300), -m also replay with --mpi,
# -l LIMIT (at most LIMIT programs), -k keep each program's directories.
# Exit status: 0 when every program that passes untraced passes every column.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
WORK=/tmp/mpior-mpich-suite
TLIMIT=60
MPIMODE=0
LIMIT=100000
KEEP=0
while getopts "b:w:t:ml:k" opt; do
  case $opt in
    b) BUILD=$(cd "$OPTARG" && pwd) ;;
    w) WORK=$OPTARG ;;
    t) TLIMIT=$OPTARG ;;
    m) MPIMODE=1 ;;
    l) LIMIT=$OPTARG ;;
    k) KEEP=1 ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ] || [ ! -f "$1/util/mtest.c" ]; then
  echo "mpich_suite: give MPICH's test/mpi directory (with util/mtest.c); see the top of $0" >&2
  exit 2
fi
SRC=$(cd "$1" && pwd)
shift
LIB=$BUILD/preload/libmpior.so
POST=$BUILD/postproc/mpior-post
REPLAY=$BUILD/replayer/mpior-replay
for f in "$LIB" "$POST" "$REPLAY"; do
  [ -e "$f" ] || { echo "mpich_suite: $f was not built" >&2; exit 2; }
done
command -v mpicc.mpich > /dev/null || { echo "mpich_suite: mpicc.mpich not found" >&2; exit 2; }
mkdir -p "$WORK/bin" "$WORK/runs"

# --- building -------------------------------------------------------------
# A configure-free build: MPICH's mtest utilities with the header configure
# would make for Linux.
cat > "$WORK/bin/mpitestconf.h" << 'EOF'
#define HAVE_STDARG_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_IO 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_INT64_T 1
#define HAVE_PTHREAD_H 1
#define HAVE_PTHREAD_BARRIER_INIT 1
#define HAVE_MPI_SPAWN 1
#define HAVE_FORTRAN_BINDING 0
#define THREAD_PACKAGE_NAME 2
#define MTEST_THREADLEVEL_DEFAULT MPI_THREAD_SINGLE
EOF
# MPICH's release generates mtest_mpix.h (MPIX_ names of MPI-4 symbols);
# MPICH 4.0.2's mpi.h has the MPI_ names already.
printf '#ifndef MTEST_MPIX_H_INCLUDED\n#define MTEST_MPIX_H_INCLUDED\n#endif\n' > "$WORK/bin/mtest_mpix.h"
CC=(mpicc.mpich -O1 -w -I"$WORK/bin" -I"$SRC/include")
build_util() {
  local u
  for u in mtest mtest_common mtest_thread; do
    [ -f "$WORK/bin/$u.o" ] || "${CC[@]}" -c "$SRC/util/$u.c" -o "$WORK/bin/$u.o" 2>> "$WORK/bin/build.log" || return 1
  done
}
build_util || { echo "mpich_suite: MPICH's test utilities do not build (see $WORK/bin/build.log)" >&2; exit 1; }

# One program: dir/name -> bin/dir__name; empty when it cannot be built here.
# Sources and flags from the directory's Makefile.am (NAME_SOURCES,
# NAME_CPPFLAGS) when it names them, else NAME.c.
am_var() {  # Makefile.am, variable: its value, continuation lines joined
  sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" 2> /dev/null | sed -n "s/^$2 *= *//p" | head -1
}
build_one() {
  local id=$1 out=$WORK/bin/${1//\//__} d=$SRC/$(dirname "$1") n srcs flags s
  n=$(basename "$1")
  [ -x "$out" ] && { echo "$out"; return; }
  srcs=$(am_var "$d/Makefile.am" "${n}_SOURCES")
  flags=$(am_var "$d/Makefile.am" "${n}_CPPFLAGS" | sed 's/\$([A-Z_]*)//g')
  [ -n "$srcs" ] || srcs=$n.c
  local paths=()
  for s in $srcs; do
    case $s in *.c) ;; *) continue ;; esac
    [ -f "$d/$s" ] || return
    grep -q "mtest_dtp\|dtpools" "$d/$s" && return
    paths+=("$d/$s")
  done
  # shellcheck disable=SC2086
  "${CC[@]}" $flags -I"$d" "${paths[@]}" "$WORK/bin/mtest.o" "$WORK/bin/mtest_common.o" "$WORK/bin/mtest_thread.o" \
    -lpthread -lm -o "$out" 2>> "$WORK/bin/build.log" && echo "$out"
}

# --- which programs ---------------------------------------------------------
# Lines "dir/name ranks args..." from MPICH's testlists: first line per program.
testlist_lines() {
  local d=$1 f
  for f in "$SRC/$d/testlist.in" "$SRC/$d/testlist"; do
    [ -f "$f" ] || continue
    awk -v d="$d" '
      /^[[:space:]]*#/ || NF < 2 { next }
      $1 ~ /^@/ || $1 ~ /\// { next }
      seen[$1]++ { next }
      /mem=|gpu|xfail=ticket0|resultTest=TestErrFatal/ { next }
      $2 > 8 { next }
      { args = ""; for (i = 3; i <= NF; i++) if ($i ~ /^arg=/) args = args " " substr($i, 5);
        print d "/" $1 " " $2 args }' "$f"
    return
  done
}
# Issue 11's programs first (at their testlist rank counts).
NAMED="pt2pt/bsend3 pt2pt/bsend4 pt2pt/rqfreeb pt2pt/inactivereq pt2pt/dtype_send pt2pt/cancelanysrc
pt2pt/rcancel pt2pt/issendselfcancel coll/icbcast attr/fkeyval attr/fkeyvalcomm comm/cmfree
threads/pt2pt/mt_probe_sendrecv comm/ctxalloc"
ALL=$(for d in pt2pt coll comm attr topo part threads/pt2pt io; do testlist_lines "$d"; done
      for s in session session_self session_psets; do echo "init/$s 2"; done)
select_lines() {
  if [ $# -gt 0 ]; then
    for n in "$@"; do echo "$ALL" | awk -v n="$n" '$1 == n { print; exit }'; done
    return
  fi
  for n in $NAMED; do echo "$ALL" | awk -v n="$n" '$1 == n { print; exit }'; done
  echo "$ALL" | grep -v -F -x -f <(for n in $NAMED; do echo "$ALL" | awk -v n="$n" '$1 == n { print; exit }'; done) |
    grep -v '^threads/'
}
LINES=$(select_lines "$@" | head -n "$LIMIT")

# --- running ----------------------------------------------------------------
# The program's timeLimit= in its testlist (first line), empty when none.
time_limit_of() {
  local f
  for f in "$SRC/$(dirname "$1")/testlist.in" "$SRC/$(dirname "$1")/testlist"; do
    [ -f "$f" ] || continue
    awk -v n="$(basename "$1")" '$1 == n { for (i = 3; i <= NF; i++) if ($i ~ /^timeLimit=/) print substr($i, 11); exit }' "$f"
    return
  done
}
run_timed() {  # seconds, log, command...
  local t=$1 log=$2
  shift 2
  timeout -k 5 "$t" "$@" < /dev/null > "$log.out" 2> "$log.err"
}
verdict() {
  if [ "$1" -eq 0 ]; then echo ok; elif [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; then echo hang; else echo fail; fi
}
# MPICH's tests pass when they exit 0 and print " No Errors" (rank 0).
passed() { [ "$1" -eq 0 ] && grep -q "No Errors" "$2.out"; }

printf '%-34s %2s  %-8s %-8s %-6s %-5s %-6s' test np untraced traced same post replay
[ $MPIMODE -eq 1 ] && printf ' %-6s' mpi
printf '\n'
total=0 bad=0 built=0
while read -r id np args; do
  [ -n "$id" ] || continue
  total=$((total + 1))
  exe=$(build_one "$id")
  name=$id
  [ -n "$args" ] && name="$id ${args// /}"
  if [ -z "$exe" ]; then
    printf '%-34s %2s  %s\n' "${name:0:34}" "$np" "not built here"
    continue
  fi
  built=$((built + 1))
  tl=$TLIMIT
  t=$(time_limit_of "$id")
  [ -n "$t" ] && [ "$t" -gt "$tl" ] && tl=$t
  dir=$WORK/runs/${id//\//__}
  rm -rf "$dir"
  mkdir -p "$dir/plain" "$dir/traced" "$dir/fs"
  # shellcheck disable=SC2086
  (cd "$dir/plain" && run_timed "$tl" "$dir/plain" mpirun.mpich -n "$np" "$exe" $args)
  rc=$?
  u=$(passed $rc "$dir/plain" && echo ok || verdict $rc)
  [ "$u" = ok ] || [ $rc -ne 0 ] || u=fail
  # shellcheck disable=SC2086
  (cd "$dir/traced" && run_timed "$tl" "$dir/traced" env LD_PRELOAD="$LIB" MPIOR_TRACE_DIR="$dir/trace" \
    mpirun.mpich -n "$np" "$exe" $args)
  rc=$?
  t=$(passed $rc "$dir/traced" && echo ok || verdict $rc)
  [ "$t" = ok ] || [ $rc -ne 0 ] || t=fail
  same=-
  if [ "$t" = ok ] && [ "$u" = ok ]; then
    same=yes
    # Output as the program wrote it; hydra's line order across ranks may differ.
    cmp -s <(sort "$dir/plain.out") <(sort "$dir/traced.out") || same=no
    cmp -s <(sort "$dir/plain.err") <(sort "$dir/traced.err") || same=no
  fi
  p=- r=- m=-
  if [ "$t" = ok ]; then
    run_timed "$tl" "$dir/post" "$POST" "$dir/trace"
    rc=$?
    p=$(verdict $rc)
    if [ "$p" = ok ]; then
      run_timed "$tl" "$dir/replay" "$REPLAY" -q --fs "$dir/fs" --stall-timeout 20 --json "$dir/replay.json" \
        "$dir/trace/plan"
      rc=$?
      r=$(verdict $rc)
      [ "$r" = ok ] && grep -q '"count": *[1-9]' <(python3 -c "import json,sys; print(json.dumps(json.load(open('$dir/replay.json'))['errors']))" 2> /dev/null) && r=errors
      if [ $MPIMODE -eq 1 ]; then
        rm -rf "$dir/fs2"
        mkdir -p "$dir/fs2"
        run_timed "$tl" "$dir/mpireplay" mpirun.mpich -n "$np" "$REPLAY" -q --mpi --fs "$dir/fs2" \
          --stall-timeout 20 "$dir/trace/plan"
        m=$(verdict $?)
      fi
    fi
  fi
  row_bad=0
  if [ "$u" = ok ]; then
    [ "$t" = ok ] && [ "$same" = yes ] && [ "$p" = ok ] && [ "$r" = ok ] || row_bad=1
    [ $MPIMODE -eq 1 ] && [ "$m" != ok ] && row_bad=1
  fi
  bad=$((bad + row_bad))
  printf '%-34s %2s  %-8s %-8s %-6s %-5s %-6s' "${name:0:34}" "$np" "$u" "$t" "$same" "$p" "$r"
  [ $MPIMODE -eq 1 ] && printf ' %-6s' "$m"
  printf '\n'
  [ $KEEP -eq 1 ] || [ $row_bad -eq 1 ] || rm -rf "$dir"
done <<< "$LINES"
echo "$total programs, $built built, $bad with a failure traced, posted or replayed (logs of those in $WORK/runs)"
[ $bad -eq 0 ]
