/* A pipeline: rank 0 writes a block to its file and passes a token on, each
 * later rank receives it, computes a little and passes it on. Rank 0 sets
 * the pace with no gap between its calls; the others wait for its messages.
 * usage: pipeline [steps=20] [block=512] [compute_ns=500] */
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
  long steps = arg_or(argc, argv, 1, 20), block = arg_or(argc, argv, 2, 512), work = arg_or(argc, argv, 3, 500);
  char* buf = malloc((size_t)block);
  memset(buf, 'p', (size_t)block);
  int fd = -1;
  if (rank == 0) {
    fd = open("pipeline.0", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
  }
  long token = 0;
  for (long s = 0; s < steps; ++s) {
    if (rank == 0) {
      CHECK(write(fd, buf, (size_t)block) == block);
      token = s;
    } else {
      MPI_Recv(&token, 1, MPI_LONG, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(token == s);
      busy_ns(work);
    }
    if (rank + 1 < size) MPI_Send(&token, 1, MPI_LONG, rank + 1, 0, MPI_COMM_WORLD);
  }
  if (rank == 0) CHECK(close(fd) == 0);
  free(buf);
  if (rank == 0) printf("pipeline ranks=%d steps=%ld block=%ld\n", size, steps, block);
  MPI_Finalize();
  return 0;
}
