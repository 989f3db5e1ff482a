/* Added nanoseconds per call of the tracer, traced against untraced in the
 * same run: run under LD_PRELOAD=libmpior.so, it times each function called
 * normally (through the tracer's wrapper) and called through libc's own
 * symbol (dlsym on libc, past the wrapper), interleaving repetitions so both
 * see the same machine state. Prints one table row per function.
 * usage: tracer_overhead [calls=1000000] [repetitions=5] [dir=.] [alone [CALL]]
 *
 * alone: times only the calls the program makes (ns per call, median of the
 * repetitions), one line per function, for runs traced and untraced in
 * separate processes: a thread the tracer starts changes libc's own cost
 * (stdio and malloc take their locks once a process has two threads), which
 * the interleaved comparison cannot see. CALL (write, pwrite, fwrite,
 * fprintf, stat) makes only that one's calls, once: callgrind's instruction
 * count at two call counts gives the instructions per call. stat (alone
 * only) names the data file by its absolute path, the path calls' cost. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_timing.h"

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return v[n / 2];
}

typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
typedef size_t (*fwrite_fn)(const void*, size_t, size_t, FILE*);
typedef int (*fprintf_fn)(FILE*, const char*, ...);

static write_fn lw;
static pwrite_fn lpw;
static fwrite_fn lfw;
static fprintf_fn lfp;

/* One timed loop of n calls; which = function, direct = through libc. */
static double loop(int which, int direct, long n, int fd, FILE* f, const char* path) {
  struct stat st;
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    switch (which) {
      case 0:
        direct ? lw(fd, "x", 1) : write(fd, "x", 1);
        break;
      case 1:
        direct ? lpw(fd, "x", 1, i) : pwrite(fd, "x", 1, i);
        break;
      case 2:
        direct ? lfw("x", 1, 1, f) : fwrite("x", 1, 1, f);
        break;
      case 3:
        direct ? lfp(f, "%c", 'x') : fprintf(f, "%c", 'x');
        break;
      default:
        stat(path, &st);
        break;
    }
  }
  return (now_ns() - t0) / (double)n;
}

static const char* const names[5] = {"write 1 B", "pwrite 1 B", "fwrite 1 B", "fprintf 1 B", "stat path"};

/* The calls as the program makes them, one function at a time (alone). */
static int alone(long n, int reps, const char* path, const char* only) {
  for (int which = 0; which < 5; ++which) {
    size_t len = strcspn(names[which], " ");
    if (only && (strlen(only) != len || strncmp(only, names[which], len) != 0)) continue;
    double t[32];
    for (int r = 0; r < reps; ++r) {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      FILE* f = fdopen(dup(fd), "w");
      t[r] = loop(which, 0, n, fd, f, path);
      fclose(f);
      close(fd);
    }
    printf("%-12s %12.1f\n", names[which], median(t, reps));
  }
  unlink(path);
  return 0;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  const char* dir = argc > 3 ? argv[3] : ".";
  if (reps > 32) reps = 32;
  if (reps < 1) reps = 1;
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  lw = (write_fn)dlsym(libc, "write");
  lpw = (pwrite_fn)dlsym(libc, "pwrite");
  lfw = (fwrite_fn)dlsym(libc, "fwrite");
  lfp = (fprintf_fn)dlsym(libc, "fprintf");
  if (!lw || !lpw || !lfw || !lfp) return 2;
  char path[8192];
  char abs_dir[4096];
  snprintf(path, sizeof path, "%s/tracer_overhead.dat", realpath(dir, abs_dir) ? abs_dir : dir);
  if (argc > 4 && strcmp(argv[4], "alone") == 0) return alone(n, argc > 5 ? 1 : reps, path, argc > 5 ? argv[5] : NULL);
  printf("%-12s %12s %12s %12s\n", "call", "untraced ns", "traced ns", "added ns");
  for (int which = 0; which < 4; ++which) {
    double plain[32], traced[32];
    for (int r = 0; r < reps; ++r) {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      FILE* f = fdopen(dup(fd), "w");
      plain[r] = loop(which, 1, n, fd, f, path);
      traced[r] = loop(which, 0, n, fd, f, path);
      fclose(f);
      close(fd);
    }
    double p = median(plain, reps), t = median(traced, reps);
    printf("%-12s %12.1f %12.1f %12.1f\n", names[which], p, t, t - p);
  }
  unlink(path);
  return 0;
}
