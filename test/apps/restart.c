/* A restart file: each rank reads its part of restart.dat (there before the
 * run), computes, and rank 0 overwrites it with the new state.
 * usage: restart [bytes_per_rank=65536] [compute_ms=60] */
#include <fcntl.h>
#include <mpi.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long n = arg_or(argc, argv, 1, 65536), compute_ms = arg_or(argc, argv, 2, 60);
  char* buf = malloc((size_t)(n * size));
  int fd = open("restart.dat", O_RDONLY);
  CHECK(fd >= 0 && pread(fd, buf, (size_t)n, (off_t)(rank * n)) == n && close(fd) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  busy_ns(compute_ms * 1000000L);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    memset(buf, 's', (size_t)(n * size));
    fd = open("restart.dat", O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && write(fd, buf, (size_t)(n * size)) == n * size && close(fd) == 0);
    printf("restart ranks=%d bytes=%ld\n", size, n * size);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
