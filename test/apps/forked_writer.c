/* A rank's forked child writing when the whole job dies by SIGKILL:
 *   forked_writer NWRITES
 * Every rank writes NWRITES 64-byte blocks to rank_<rank>.dat; rank 0 first
 * forks a child that writes NWRITES blocks to child.dat, tells rank 0 so
 * through a pipe and waits to be killed. Once it has heard, and the ranks
 * met at a barrier, rank 0 SIGKILLs the child, then itself; the launcher
 * kills the other ranks (MPICH's hydra: SIGKILL), held at a second barrier.
 * Deterministic: the deaths follow the writes, not a measured time. */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static void write_blocks(const char* name, long n) {
  int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  CHECK(fd >= 0);
  char block[64];
  memset(block, 'w', sizeof block);
  for (long i = 0; i < n; ++i) CHECK(write(fd, block, sizeof block) == (ssize_t)sizeof block);
  CHECK(close(fd) == 0);
}

int main(int argc, char** argv) {
  long n = arg_or(argc, argv, 1, 20000);
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int done[2];
  pid_t child = -1;
  if (rank == 0) {
    CHECK(pipe(done) == 0);
    child = fork();
    CHECK(child >= 0);
    if (child == 0) {
      write_blocks("child.dat", n);
      CHECK(write(done[1], "d", 1) == 1);
      for (;;) pause();
    }
  }
  char name[32];
  snprintf(name, sizeof name, "rank_%d.dat", rank);
  write_blocks(name, n);
  if (rank == 0) {
    char c = 0;
    CHECK(read(done[0], &c, 1) == 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    kill(child, SIGKILL);
    kill(getpid(), SIGKILL);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
