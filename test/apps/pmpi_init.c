/* A program that starts and ends MPI through the profiling interface
 * (PMPI_Init_thread, PMPI_Finalize), as ROMIO's test psimple does: still a
 * rank of the job. Each rank writes pmpi.<rank> and meets the others in an
 * MPI_Barrier; a PMPI_Bcast (not the application's own call for a tool) is
 * not traced.
 * usage: pmpi_init */
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char** argv) {
  int provided = 0, rank = 0, value = 0;
  CHECK(PMPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char name[32];
  snprintf(name, sizeof name, "pmpi.%d", rank);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, name, 6) == 6);
  CHECK(close(fd) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) value = 42;
  PMPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(value == 42);
  if (rank == 0) printf("pmpi_init done\n");
  CHECK(PMPI_Finalize() == MPI_SUCCESS);
  return 0;
}
