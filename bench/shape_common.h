/* What the application-shaped benchmarks share: arguments, a compute kernel
 * whose cost does not depend on the tracer, and the elapsed time rank 0
 * reports from after MPI_Init to after MPI_Finalize (trace writing included). */
#ifndef MPIOR_BENCH_SHAPE_COMMON_H
#define MPIOR_BENCH_SHAPE_COMMON_H

#include <time.h>

#include "common.h" /* test/apps: arg_or, CHECK */

static inline double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* `sweeps` relaxation sweeps over the cells: real floating-point work, so an
 * oversubscribed run shares the cores as the real application would. */
static inline double compute(double* cells, long n, long sweeps) {
  double sum = 0;
  for (long s = 0; s < sweeps; ++s)
    for (long i = 1; i + 1 < n; ++i) {
      cells[i] = 0.25 * (cells[i - 1] + 2.0 * cells[i] + cells[i + 1]) + 1e-9;
      sum += cells[i];
    }
  return sum;
}

#endif
