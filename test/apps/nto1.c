/* N-to-1: all ranks write interleaved blocks of one shared file, then read
 * their first block back. usage: nto1 [iterations=10] [block=8192] */
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
  long iters = arg_or(argc, argv, 1, 10), block = arg_or(argc, argv, 2, 8192);
  char* buf = malloc((size_t)block);
  memset(buf, 'A' + rank % 26, (size_t)block);
  if (rank == 0) close(open("shared.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644));
  MPI_Barrier(MPI_COMM_WORLD);
  int fd = open("shared.dat", O_RDWR);
  CHECK(fd >= 0);
  for (long i = 0; i < iters; ++i) CHECK(pwrite(fd, buf, (size_t)block, (i * size + rank) * block) == block);
  CHECK(fsync(fd) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(pread(fd, buf, (size_t)block, (long)rank * block) == block);
  CHECK(buf[0] == 'A' + rank % 26);
  CHECK(close(fd) == 0);
  free(buf);
  if (rank == 0) printf("nto1 ranks=%d iterations=%ld block=%ld\n", size, iters, block);
  MPI_Finalize();
  return 0;
}
