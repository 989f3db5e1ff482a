/* Timing helpers shared by the overhead benchmarks (traced against untraced
 * in one run): a monotonic clock in ns and a comparison for qsort'ing
 * samples to take medians. */
#ifndef MPIOR_BENCH_TIMING_H
#define MPIOR_BENCH_TIMING_H

#include <time.h>

static inline double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static inline int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

#endif
