/* A program shaped like the thesis' Pseudo benchmark: every step a compute
 * phase, then every rank writes its block of a shared file and all meet in a
 * barrier (I/O then barrier).
 * usage: mpirun -n N pseudo_shape [steps=200] [sweeps=20] [block=65536]
 * prints on rank 0: elapsed_s <seconds from after MPI_Init to after MPI_Finalize> */
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include "shape_common.h"

enum { kCells = 20000 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long steps = arg_or(argc, argv, 1, 200), sweeps = arg_or(argc, argv, 2, 20);
  long block = arg_or(argc, argv, 3, 65536);
  double* cells = calloc(kCells, sizeof(double));
  char* data = malloc((size_t)block);
  CHECK(cells && data);
  for (long i = 0; i < block; ++i) data[i] = (char)('a' + (rank + i) % 26);
  int fd = open("pseudo_shape.dat", O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = mono_s(), sum = 0;
  for (long s = 0; s < steps; ++s) {
    sum += compute(cells, kCells, sweeps);
    off_t at = ((off_t)s * size + rank) * (off_t)block;
    CHECK(pwrite(fd, data, (size_t)block, at) == block);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK(close(fd) == 0);
  free(cells);
  free(data);
  MPI_Finalize();
  if (rank == 0) printf("elapsed_s %.6f sum %.3g\n", mono_s() - t0, sum);
  return 0;
}
