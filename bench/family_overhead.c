/* Added nanoseconds per call of the tracer for the issue-18 families, traced
 * against untraced in the same run (as tracer_overhead.c: run under
 * LD_PRELOAD=libmpior.so; untraced calls go through libc's own symbols):
 * one aio_write + aio_suspend + aio_return round of 1 byte, one getline of a
 * 16-byte line, one fwrite_unlocked of 1 byte, one msync(MS_ASYNC) of a
 * 1 MiB shared mapping with one page written, one libaio io_submit +
 * io_getevents round of 1 byte. usage: family_overhead [calls=100000] [repetitions=5] [dir=.] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <aio.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <libaio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_timing.h"

static struct {
  int (*aio_write)(struct aiocb*);
  int (*aio_suspend)(const struct aiocb* const[], int, const struct timespec*);
  ssize_t (*aio_return)(struct aiocb*);
  ssize_t (*getline)(char**, size_t*, FILE*);
  size_t (*fwrite_unl)(const void*, size_t, size_t, FILE*);
  int (*msync)(void*, size_t, int);
  int (*io_submit)(io_context_t, long, struct iocb**);
  int (*io_getevents)(io_context_t, long, long, struct io_event*, struct timespec*);
} lc;

enum { kAio, kGetline, kFwrite, kMsync, kKaio, kKinds };
static const char* names[kKinds] = {"aio round", "getline", "fwrite_unl", "msync 1MiB", "libaio round"};
static char path[4096];
#define MIB (1 << 20)

static double loop(int which, int direct, long n) {
  int fd = open(path, O_RDWR | O_CREAT, 0644);
  FILE* f = NULL;
  char* map = NULL;
  char* line = NULL;
  size_t cap = 0;
  if (which == kGetline) {
    f = fopen(path, "r");
  } else if (which == kFwrite) {
    f = fopen(path, "w");
  } else if (which == kMsync) {
    if (ftruncate(fd, MIB) != 0) exit(3);
    map = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) exit(3);
  }
  struct aiocb cb;
  const struct aiocb* list[1] = {&cb};
  io_context_t ctx = 0;
  struct iocb kcb, *klist[1] = {&kcb};
  struct io_event kev;
  if (which == kKaio && io_setup(4, &ctx) != 0) exit(3);
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    switch (which) {
      case kAio:
        memset(&cb, 0, sizeof cb);
        cb.aio_fildes = fd, cb.aio_buf = "x", cb.aio_nbytes = 1, cb.aio_offset = i;
        if (direct) {
          lc.aio_write(&cb);
          lc.aio_suspend(list, 1, NULL);
          lc.aio_return(&cb);
        } else {
          aio_write(&cb);
          aio_suspend(list, 1, NULL);
          aio_return(&cb);
        }
        break;
      case kGetline:
        if ((direct ? lc.getline(&line, &cap, f) : getline(&line, &cap, f)) < 0) exit(4);
        break;
      case kFwrite:
        direct ? lc.fwrite_unl("x", 1, 1, f) : (fwrite_unlocked)("x", 1, 1, f); /* the function, not the header macro */
        break;
      case kMsync:
        map[(i * 4096) % MIB] = 'x';
        direct ? lc.msync(map, MIB, MS_ASYNC) : msync(map, MIB, MS_ASYNC);
        break;
      default:
        io_prep_pwrite(&kcb, fd, "x", 1, i);
        if (direct) {
          lc.io_submit(ctx, 1, klist);
          lc.io_getevents(ctx, 1, 1, &kev, NULL);
        } else {
          io_submit(ctx, 1, klist);
          io_getevents(ctx, 1, 1, &kev, NULL);
        }
        break;
    }
  }
  double t = (now_ns() - t0) / (double)n;
  if (map) munmap(map, MIB);
  if (ctx) io_destroy(ctx);
  if (f) fclose(f);
  free(line);
  close(fd);
  return t;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  const char* dir = argc > 3 ? argv[3] : ".";
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  *(void**)&lc.aio_write = dlsym(libc, "aio_write");
  *(void**)&lc.aio_suspend = dlsym(libc, "aio_suspend");
  *(void**)&lc.aio_return = dlsym(libc, "aio_return");
  *(void**)&lc.getline = dlsym(libc, "getline");
  *(void**)&lc.fwrite_unl = dlsym(libc, "fwrite_unlocked");
  *(void**)&lc.msync = dlsym(libc, "msync");
  void* aio = dlopen("libaio.so.1", RTLD_NOW | RTLD_NOLOAD);
  *(void**)&lc.io_submit = aio ? dlsym(aio, "io_submit") : NULL;
  *(void**)&lc.io_getevents = aio ? dlsym(aio, "io_getevents") : NULL;
  if (!lc.aio_write || !lc.aio_suspend || !lc.aio_return || !lc.getline || !lc.fwrite_unl || !lc.msync ||
      !lc.io_submit || !lc.io_getevents)
    return 2;
  snprintf(path, sizeof path, "%s/family_overhead.dat", dir);
  if (reps > 32) reps = 32;
  printf("%-12s %12s %12s %12s\n", "call", "untraced ns", "traced ns", "added ns");
  for (int which = 0; which < kKinds; ++which) {
    double plain[32], traced[32];
    for (int r = 0; r < reps; ++r) {
      if (which == kGetline) { /* 2n lines of 16 bytes to read */
        FILE* w = fopen(path, "w");
        for (long i = 0; i < 2 * n; ++i) fputs("fifteen chars..\n", w);
        fclose(w);
      }
      plain[r] = loop(which, 1, n);
      traced[r] = loop(which, 0, n);
    }
    qsort(plain, (size_t)reps, sizeof *plain, cmp);
    qsort(traced, (size_t)reps, sizeof *traced, cmp);
    double p = plain[reps / 2], t = traced[reps / 2];
    printf("%-12s %12.1f %12.1f %12.1f\n", names[which], p, t, t - p);
  }
  unlink(path);
  return 0;
}
