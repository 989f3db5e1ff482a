/* The timeline's golden example (2 ranks): rank 0 writes 100 bytes at offset
 * 0 of tl.dat and sends 8 bytes to rank 1 (tag 7); rank 1 receives them and
 * writes 100 bytes at offset 100; both meet at a barrier and close.
 * usage: timeline_small */
#include <fcntl.h>
#include <mpi.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char buf[100];
  memset(buf, 'a' + rank, sizeof buf);
  int fd = open("tl.dat", O_WRONLY | O_CREAT, 0644);
  CHECK(fd >= 0);
  double msg = 1.5;
  if (rank == 0) {
    CHECK(pwrite(fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf);
    MPI_Send(&msg, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&msg, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(pwrite(fd, buf, sizeof buf, 100) == (ssize_t)sizeof buf);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(close(fd) == 0);
  MPI_Finalize();
  return 0;
}
