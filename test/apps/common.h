/* Helpers shared by the test programs: argument parsing and failing loudly. */
#ifndef MPIOR_TEST_APPS_COMMON_H
#define MPIOR_TEST_APPS_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Integer argument i of argv, or def when absent. */
static inline long arg_or(int argc, char** argv, int i, long def) { return argc > i ? strtol(argv[i], NULL, 10) : def; }

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(3);                                                                 \
    }                                                                          \
  } while (0)

/* CLOCK_MONOTONIC in nanoseconds. */
static inline long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Busy for ns, as a solver's compute: a sleep would hand the core back. */
static inline void busy_ns(long ns) {
  for (long until = now_ns() + ns; now_ns() < until;) {
  }
}

#endif
