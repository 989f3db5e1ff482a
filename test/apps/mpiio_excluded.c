/* MPI-IO on a path below an excluded prefix (MPIOR_EXCLUDE=<dir>) next to
 * one traced file: every call on skip/hidden.dat must be dropped, as POSIX
 * calls on excluded paths are; kept.dat is traced as usual.
 * usage: mpiio_excluded DIR (DIR exists; the excluded one). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(argc > 1);
  char hidden[4096];
  snprintf(hidden, sizeof hidden, "%s/hidden.dat", argv[1]);
  int buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = rank * 100 + i;
  MPI_File fh;
  MPI_Request rq;
  MPI_Datatype vec;
  MPI_Type_vector(2, 4, 4 * size, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  CHECK(MPI_File_open(MPI_COMM_WORLD, hidden, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) == 0);
  CHECK(MPI_File_set_view(fh, (MPI_Offset)rank * 16, MPI_INT, vec, "native", MPI_INFO_NULL) == 0);
  CHECK(MPI_File_write_all(fh, buf, 8, MPI_INT, MPI_STATUS_IGNORE) == 0);
  CHECK(MPI_File_iwrite_at(fh, 8, buf, 8, MPI_INT, &rq) == 0);
  CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE) == 0);
  CHECK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL) == 0);
  CHECK(MPI_File_write_shared(fh, buf, 4, MPI_BYTE, MPI_STATUS_IGNORE) == 0);
  MPI_Offset fsize;
  CHECK(MPI_File_get_size(fh, &fsize) == 0);
  CHECK(MPI_File_close(&fh) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(MPI_File_delete(hidden, MPI_INFO_NULL) == 0);
  CHECK(MPI_File_open(MPI_COMM_WORLD, "kept.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) == 0);
  CHECK(MPI_File_write_at(fh, (MPI_Offset)rank * 64, buf, 16, MPI_INT, MPI_STATUS_IGNORE) == 0);
  CHECK(MPI_File_close(&fh) == 0);
  MPI_Type_free(&vec);
  if (rank == 0) printf("mpiio_excluded size=%d hidden=%lld\n", size, (long long)fsize);
  MPI_Finalize();
  return 0;
}
