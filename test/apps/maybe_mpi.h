/* The family programs run alone or, built with -DWITH_MPI, as every rank of
 * an MPI job: the same calls made under what the MPI library installs in the
 * process (UCX's memory hooks). Under MPI each rank has files of its own
 * (out.dat becomes out.<rank>.dat) and rank 0 alone prints. */
#ifndef MPIOR_TEST_APPS_MAYBE_MPI_H
#define MPIOR_TEST_APPS_MAYBE_MPI_H

#include <stdio.h>
#include <string.h>

#ifdef WITH_MPI
#include <mpi.h>
static int app_rank = 0;
static inline void app_start(int* argc, char*** argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &app_rank);
}
static inline void app_end(void) {
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
}
#else
static const int app_rank = 0;
static inline void app_start(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
}
static inline void app_end(void) {}
#endif

/* This rank's name for the file `name` (stem.ext). */
static inline const char* app_file(const char* name) {
  static char buf[4][256];
  static int next = 0;
  char* out = buf[next++ % 4];
#ifdef WITH_MPI
  const char* dot = strrchr(name, '.');
  int stem = dot ? (int)(dot - name) : (int)strlen(name);
  snprintf(out, sizeof buf[0], "%.*s.%d%s", stem, name, app_rank, dot ? dot : "");
#else
  snprintf(out, sizeof buf[0], "%s", name);
#endif
  return out;
}

#endif
