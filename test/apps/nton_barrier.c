/* N-to-N: every rank writes its own file, with a barrier after each write.
 * usage: nton_barrier [iterations=20] [block=4096] */
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
  long iters = arg_or(argc, argv, 1, 20), block = arg_or(argc, argv, 2, 4096);
  char name[64], *buf = malloc((size_t)block);
  memset(buf, 'a' + rank % 26, (size_t)block);
  snprintf(name, sizeof name, "nton.%d", rank);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  for (long i = 0; i < iters; ++i) {
    CHECK(write(fd, buf, (size_t)block) == block);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CHECK(close(fd) == 0);
  free(buf);
  if (rank == 0) printf("nton ranks=%d iterations=%ld block=%ld\n", size, iters, block);
  MPI_Finalize();
  return 0;
}
