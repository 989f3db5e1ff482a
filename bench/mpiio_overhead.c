/* Added nanoseconds per MPI_File_write_at of 1 byte (independent, explicit
 * offset), traced against untraced in the same run: under
 * LD_PRELOAD=libmpior.so the call through MPI_File_write_at goes through the
 * tracer's wrapper, the call through PMPI_File_write_at does not; repetitions
 * interleave so both see the same machine state. One rank is enough.
 * usage: mpiio_overhead [calls=100000] [repetitions=5] [file=/dev/shm/mpior-bench.dat] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_timing.h"

static double loop(MPI_File fh, int direct, long n) {
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    if (direct)
      PMPI_File_write_at(fh, (MPI_Offset)i, "x", 1, MPI_BYTE, MPI_STATUS_IGNORE);
    else
      MPI_File_write_at(fh, (MPI_Offset)i, "x", 1, MPI_BYTE, MPI_STATUS_IGNORE);
  }
  return (now_ns() - t0) / (double)n;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 100000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  const char* path = argc > 3 ? argv[3] : "/dev/shm/mpior-bench.dat";
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                    &fh) != MPI_SUCCESS) {
    fprintf(stderr, "mpiio_overhead: cannot open %s\n", path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double traced[64], plain[64], added[64];
  if (reps > 64) reps = 64;
  loop(fh, 1, n / 10 + 1); /* warm up both paths */
  loop(fh, 0, n / 10 + 1);
  for (int r = 0; r < reps; ++r) {
    plain[r] = loop(fh, 1, n);
    traced[r] = loop(fh, 0, n);
    added[r] = traced[r] - plain[r];
  }
  qsort(plain, (size_t)reps, sizeof(double), cmp);
  qsort(traced, (size_t)reps, sizeof(double), cmp);
  qsort(added, (size_t)reps, sizeof(double), cmp);
  printf("MPI_File_write_at 1 B  untraced %.1f ns  traced %.1f ns  added %.1f ns (min %.1f, max %.1f)\n",
         plain[reps / 2], traced[reps / 2], added[reps / 2], added[0], added[reps - 1]);
  MPI_File_close(&fh);
  MPI_Finalize();
  return 0;
}
