/* Communicators: split into even and odd ranks, each group gathers to its
 * leader, which writes the group's file; then dup, a periodic 1-D Cartesian
 * communicator and its sub-communicator, and collectives on each.
 * usage: comm_split [steps=4] [block=1024] */
#include <mpi.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long steps = arg_or(argc, argv, 1, 4), block = arg_or(argc, argv, 2, 1024);
  MPI_Comm group, dup, cart, sub;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &group);
  int grank, gsize;
  MPI_Comm_rank(group, &grank);
  MPI_Comm_size(group, &gsize);
  char* mine = malloc((size_t)block);
  char* all = malloc((size_t)(block * gsize));
  memset(mine, 'a' + rank % 26, (size_t)block);
  FILE* f = NULL;
  if (grank == 0) {
    char name[64];
    snprintf(name, sizeof name, "group%d.dat", rank % 2);
    CHECK((f = fopen(name, "w")) != NULL);
  }
  for (long s = 0; s < steps; ++s) {
    MPI_Gather(mine, (int)block, MPI_CHAR, all, (int)block, MPI_CHAR, 0, group);
    if (grank == 0) CHECK(fwrite(all, 1, (size_t)(block * gsize), f) == (size_t)(block * gsize));
    long token = s;
    MPI_Bcast(&token, 1, MPI_LONG, 0, group);
    CHECK(token == s);
  }
  if (f) CHECK(fclose(f) == 0);
  MPI_Comm_dup(group, &dup);
  int dims[1] = {size}, periods[1] = {1}, remain[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  MPI_Cart_sub(cart, remain, &sub);
  long one = 1, total = 0;
  MPI_Allreduce(&one, &total, 1, MPI_LONG, MPI_SUM, dup);
  CHECK(total == gsize);
  MPI_Allreduce(&one, &total, 1, MPI_LONG, MPI_SUM, sub);
  CHECK(total == size);
  MPI_Barrier(cart);
  MPI_Comm_free(&sub);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&group);
  free(mine);
  free(all);
  if (rank == 0) printf("comm_split ranks=%d steps=%ld block=%ld\n", size, steps, block);
  MPI_Finalize();
  return 0;
}
