/* An SPMD program for the finalize aggregation (bench.py merge_job): every
 * rank writes its own file (N-to-N), a block of a shared file (N-to-1) and a
 * block of its group's file (groups of 4 ranks), `steps` times, with a
 * barrier per step.
 * usage: mpirun -n N merge_job DIR [steps=20] [block=4096]
 * prints on rank 0: elapsed_s <from after MPI_Init to after MPI_Finalize>
 *                   finalize_s <MPI_Finalize alone, rank 0 (it waits for the others' traces)> */
#include <fcntl.h>
#include <mpi.h>
#include <string.h>
#include <unistd.h>

#include "shape_common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  double start = mono_s();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc > 1);
  long steps = arg_or(argc, argv, 2, 20), block = arg_or(argc, argv, 3, 4096);
  char own[4096], shared[4096], group[4096];
  snprintf(own, sizeof own, "%s/own_%d", argv[1], rank);
  snprintf(shared, sizeof shared, "%s/shared", argv[1]);
  snprintf(group, sizeof group, "%s/group_%d", argv[1], rank / 4);
  int fds[3] = {open(own, O_CREAT | O_WRONLY | O_TRUNC, 0644), open(shared, O_CREAT | O_WRONLY, 0644),
                open(group, O_CREAT | O_WRONLY, 0644)};
  CHECK(fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0);
  char* buf = calloc((size_t)block, 1);
  CHECK(buf);
  for (long s = 0; s < steps; ++s) {
    CHECK(pwrite(fds[0], buf, (size_t)block, s * block) == block);
    CHECK(pwrite(fds[1], buf, (size_t)block, (s * size + rank) * block) == block);
    CHECK(pwrite(fds[2], buf, (size_t)block, (s * 4 + rank % 4) * block) == block);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  for (int i = 0; i < 3; ++i) close(fds[i]);
  free(buf);
  double before = mono_s();
  MPI_Finalize();
  double end = mono_s();
  if (rank == 0) printf("elapsed_s %.6f\nfinalize_s %.6f\n", end - start, end - before);
  return 0;
}
