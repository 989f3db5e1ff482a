/* Added nanoseconds per call of the tracer, traced against untraced in the
 * same run: run under LD_PRELOAD=libmpior.so, it times each function called
 * normally (through the tracer's wrapper) and called through libc's own
 * symbol (dlsym on libc, past the wrapper), interleaving repetitions so both
 * see the same machine state. Prints one table row per function.
 * usage: tracer_overhead [calls=1000000] [repetitions=5] [dir=.] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
static double loop(int which, int direct, long n, int fd, FILE* f) {
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
      default:
        direct ? lfp(f, "%c", 'x') : fprintf(f, "%c", 'x');
        break;
    }
  }
  return (now_ns() - t0) / (double)n;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  const char* dir = argc > 3 ? argv[3] : ".";
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  lw = (write_fn)dlsym(libc, "write");
  lpw = (pwrite_fn)dlsym(libc, "pwrite");
  lfw = (fwrite_fn)dlsym(libc, "fwrite");
  lfp = (fprintf_fn)dlsym(libc, "fprintf");
  if (!lw || !lpw || !lfw || !lfp) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/tracer_overhead.dat", dir);
  const char* names[4] = {"write 1 B", "pwrite 1 B", "fwrite 1 B", "fprintf 1 B"};
  printf("%-12s %12s %12s %12s\n", "call", "untraced ns", "traced ns", "added ns");
  for (int which = 0; which < 4; ++which) {
    double plain[32], traced[32];
    if (reps > 32) reps = 32;
    for (int r = 0; r < reps; ++r) {
      int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      FILE* f = fdopen(dup(fd), "w");
      plain[r] = loop(which, 1, n, fd, f);
      traced[r] = loop(which, 0, n, fd, f);
      fclose(f);
      close(fd);
    }
    double p = median(plain, reps), t = median(traced, reps);
    printf("%-12s %12.1f %12.1f %12.1f\n", names[which], p, t, t - p);
  }
  unlink(path);
  return 0;
}
