/* The bundled example: an iterative solver's I/O and communication shape.
 * Every step: compute (a sleep), halo exchange with both neighbours
 * (Irecv/Isend/Waitall), an Allreduce of the residual. Every `every` steps:
 * a checkpoint into one shared file (each rank pwrites its block) and rank 0
 * appends a line to the log with fprintf.
 * usage: checkpoint_sim [steps=40] [compute_us=2000] [every=10] [cells=65536] */
#include <fcntl.h>
#include <mpi.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static void compute(long us, double* cells, long n) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
  for (long i = 0; i < n; ++i) cells[i] = cells[i] * 0.5 + 1.0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long steps = arg_or(argc, argv, 1, 40), us = arg_or(argc, argv, 2, 2000);
  long every = arg_or(argc, argv, 3, 10), n = arg_or(argc, argv, 4, 65536);
  double* cells = calloc((size_t)n, sizeof(double));
  double halo[2][64], edge[2][64];
  int left = (rank + size - 1) % size, right = (rank + 1) % size;
  FILE* log = rank == 0 ? fopen("solver.log", "w") : NULL;
  if (rank == 0) close(open("checkpoint.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644));
  MPI_Barrier(MPI_COMM_WORLD);
  int ckpt = open("checkpoint.dat", O_WRONLY);
  CHECK(ckpt >= 0);
  double residual = 1.0;
  for (long s = 1; s <= steps; ++s) {
    compute(us, cells, n);
    MPI_Request r[4];
    MPI_Irecv(halo[0], 64, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(halo[1], 64, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(edge[0], 64, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(edge[1], 64, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    double local = 1.0 / (double)(s * size), global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    residual = global;
    if (s % every == 0) {
      off_t bytes = (off_t)(n * sizeof(double));
      CHECK(pwrite(ckpt, cells, (size_t)bytes, (off_t)rank * bytes) == bytes);
      CHECK(fsync(ckpt) == 0);
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) fprintf(log, "step %ld residual %.6f checkpoint written\n", s, residual);
    }
  }
  CHECK(close(ckpt) == 0);
  if (rank == 0) {
    CHECK(fclose(log) == 0);
    printf("checkpoint_sim ranks=%d steps=%ld residual=%.6f\n", size, steps, residual);
  }
  free(cells);
  MPI_Finalize();
  return 0;
}
