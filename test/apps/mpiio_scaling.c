/* Collective MPI-IO at several rank counts, for the max-blocksize rule of
 * extrapolation (scalaioextrap §III-C): ranks write interleaved 1 KiB pieces
 * of one shared file (a vector file view) with MPI_File_write_at_all, so
 * ROMIO's two-phase I/O has an aggregator write the whole step in pwrites of
 * at most its collective buffer, a size that grows with n.
 * With read=1 the ranks then read the file back through the same view with
 * MPI_File_read_at_all (ROMIO's two-phase read: aggregators pread it) and
 * check every byte.
 * With independent=1 the ranks use MPI_File_write_at and MPI_File_read_at
 * instead (ROMIO's data sieving of a non-contiguous view), on a file first
 * sized to its end, so a sieving read finds the same bytes whatever order
 * the ranks run in.
 * With cb_nodes > 0 the info also holds cb_nodes and cb_config_list *:* (so
 * ROMIO takes that many aggregators on one host).
 * usage: mpiio_scaling [steps=2] [pieces=64] [cb_buffer_size hint, 0: none] [read=0] [independent=0]
 *        [cb_nodes hint, 0: none] */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define PIECE 1024

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long steps = arg_or(argc, argv, 1, 2), pieces = arg_or(argc, argv, 2, 64), cb = arg_or(argc, argv, 3, 0);
  long read_back = arg_or(argc, argv, 4, 0), independent = arg_or(argc, argv, 5, 0);
  long cb_nodes = arg_or(argc, argv, 6, 0);
  size_t bytes = (size_t)(pieces * PIECE);
  char* buf = malloc(bytes);
  CHECK(buf != NULL);
  memset(buf, 'A' + rank % 26, bytes);
  MPI_Info info = MPI_INFO_NULL;
  if (cb > 0 || cb_nodes > 0) MPI_Info_create(&info);
  char value[32];
  if (cb > 0) {
    snprintf(value, sizeof value, "%ld", cb);
    MPI_Info_set(info, "cb_buffer_size", value);
  }
  if (cb_nodes > 0) {
    snprintf(value, sizeof value, "%ld", cb_nodes);
    MPI_Info_set(info, "cb_nodes", value);
    MPI_Info_set(info, "cb_config_list", "*:*");
  }
  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_WORLD, "collective.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh) == MPI_SUCCESS);
  MPI_Datatype vec, tile;
  MPI_Type_vector((int)pieces, PIECE, size * PIECE, MPI_CHAR, &vec);
  MPI_Type_create_resized(vec, 0, (MPI_Aint)pieces * size * PIECE, &tile);
  MPI_Type_commit(&tile);
  CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * PIECE, MPI_CHAR, tile, "native", info) == MPI_SUCCESS);
  if (independent) CHECK(MPI_File_set_size(fh, (MPI_Offset)(steps * (long)bytes * size)) == MPI_SUCCESS);
  for (long s = 0; s < steps; ++s) {
    MPI_Offset at = (MPI_Offset)(s * (long)bytes);
    int rc = independent ? MPI_File_write_at(fh, at, buf, (int)bytes, MPI_CHAR, MPI_STATUS_IGNORE)
                         : MPI_File_write_at_all(fh, at, buf, (int)bytes, MPI_CHAR, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS);
  }
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
  if (read_back) {
    char* got = malloc(bytes);
    CHECK(got != NULL);
    CHECK(MPI_File_open(MPI_COMM_WORLD, "collective.dat", MPI_MODE_RDONLY, info, &fh) == MPI_SUCCESS);
    CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * PIECE, MPI_CHAR, tile, "native", info) == MPI_SUCCESS);
    for (long s = 0; s < steps; ++s) {
      memset(got, 0, bytes);
      MPI_Offset at = (MPI_Offset)(s * (long)bytes);
      int rc = independent ? MPI_File_read_at(fh, at, got, (int)bytes, MPI_CHAR, MPI_STATUS_IGNORE)
                           : MPI_File_read_at_all(fh, at, got, (int)bytes, MPI_CHAR, MPI_STATUS_IGNORE);
      CHECK(rc == MPI_SUCCESS);
      CHECK(memcmp(got, buf, bytes) == 0);
    }
    CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
    free(got);
  }
  MPI_Type_free(&tile);
  MPI_Type_free(&vec);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  if (rank == 0) printf("mpiio_scaling ranks=%d steps=%ld pieces=%ld\n", size, steps, pieces);
  free(buf);
  MPI_Finalize();
  return 0;
}
