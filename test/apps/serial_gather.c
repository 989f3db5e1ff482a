/* Serial I/O: every step the ranks gather their data to rank 0, which writes
 * it with fwrite and logs a line with fprintf (the LAMMPS shape).
 * usage: serial_gather [steps=10] [doubles_per_rank=256] */
#include <mpi.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long steps = arg_or(argc, argv, 1, 10), n = arg_or(argc, argv, 2, 256);
  double* mine = malloc(sizeof(double) * (size_t)n);
  double* all = rank == 0 ? malloc(sizeof(double) * (size_t)(n * size)) : NULL;
  FILE *data = NULL, *log = NULL;
  if (rank == 0) {
    data = fopen("serial.dat", "wb");
    log = fopen("serial.log", "w");
    CHECK(data && log);
  }
  for (long s = 0; s < steps; ++s) {
    for (long i = 0; i < n; ++i) mine[i] = (double)(rank * 1000 + s + i);
    MPI_Gather(mine, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      CHECK(fwrite(all, sizeof(double), (size_t)(n * size), data) == (size_t)(n * size));
      fprintf(log, "step %ld first %.1f last %.1f\n", s, all[0], all[n * size - 1]);
    }
  }
  if (rank == 0) {
    CHECK(fclose(data) == 0 && fclose(log) == 0);
    printf("serial ranks=%d steps=%ld n=%ld\n", size, steps, n);
  }
  free(mine);
  free(all);
  MPI_Finalize();
  return 0;
}
