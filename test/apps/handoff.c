/* A hand-off across three ranks: each step rank 0 sends a large block to
 * rank 2 (MPI_Isend), takes a token from rank 1 and only then waits for its
 * send; rank 1 computes, passes the token to rank 0 and waits for rank 2's
 * acknowledgement; rank 2 receives the block, writes it and acknowledges.
 * The block travels while rank 0 waits for rank 1: MPI moves it inside
 * rank 0's receive. Replayed with ranks 0 and 1 in one process, rank 0's
 * receive is a wait within that process, which must keep the send moving.
 * With poll=1 rank 2 receives by MPI_Irecv and MPI_Test until it completes
 * (the tests that find nothing are in the trace).
 * usage: handoff [steps=20] [block=1048576] [compute_ns=200000] [poll=0] */
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
  CHECK(size == 3);
  long steps = arg_or(argc, argv, 1, 20), block = arg_or(argc, argv, 2, 1048576), work = arg_or(argc, argv, 3, 200000),
       poll = arg_or(argc, argv, 4, 0);
  char* buf = malloc((size_t)block);
  memset(buf, 'h', (size_t)block);
  int fd = -1;
  if (rank == 2) {
    fd = open("handoff.2", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
  }
  long token = 0, ack = 0;
  for (long s = 0; s < steps; ++s) {
    if (rank == 0) {
      MPI_Request send;
      MPI_Isend(buf, (int)block, MPI_CHAR, 2, 0, MPI_COMM_WORLD, &send);
      MPI_Recv(&token, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(token == s);
      MPI_Wait(&send, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      busy_ns(work);
      token = s;
      MPI_Send(&token, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD);
      MPI_Recv(&ack, 1, MPI_LONG, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(ack == s);
    } else {
      if (poll) {
        MPI_Request recv;
        MPI_Irecv(buf, (int)block, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &recv);
        for (int done = 0; !done;) MPI_Test(&recv, &done, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, (int)block, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      CHECK(write(fd, buf, (size_t)block) == block);
      ack = s;
      MPI_Send(&ack, 1, MPI_LONG, 1, 2, MPI_COMM_WORLD);
    }
  }
  if (rank == 2) CHECK(close(fd) == 0);
  free(buf);
  if (rank == 0) printf("handoff steps=%ld block=%ld\n", steps, block);
  MPI_Finalize();
  return 0;
}
