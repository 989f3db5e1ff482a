/* IOR's independent MPI-IO write phase: MPI_File_open with MPI_MODE_CREATE,
 * MPI_File_set_size(fh, 0), each rank's block in one MPI_File_write_at, close.
 * Every round rewrites each of `files` files, so from the second round on the
 * truncation empties a full file while the other ranks write: a rank that
 * wrote before it would leave the file short. Each file ends at ranks x block.
 * usage: mpiio_truncate [files=6] [rounds=3] [block_kib=1024] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long files = arg_or(argc, argv, 1, 6), rounds = arg_or(argc, argv, 2, 3);
  long block = arg_or(argc, argv, 3, 1024) * 1024;
  char* buf = malloc((size_t)block);
  CHECK(buf != NULL);
  memset(buf, 'a' + rank % 26, (size_t)block);
  for (long r = 0; r < rounds; ++r) {
    for (long f = 0; f < files; ++f) {
      char name[64];
      snprintf(name, sizeof name, "ior.%ld.dat", f);
      MPI_File fh;
      CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
      CHECK(MPI_File_set_size(fh, 0) == MPI_SUCCESS);
      MPI_Status st;
      CHECK(MPI_File_write_at(fh, (MPI_Offset)rank * block, buf, (int)block, MPI_BYTE, &st) == MPI_SUCCESS);
      CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    }
  }
  if (rank == 0) printf("wrote %ld files of %ld bytes\n", files, (long)size * block);
  free(buf);
  MPI_Finalize();
  return 0;
}
