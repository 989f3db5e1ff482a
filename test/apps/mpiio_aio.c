/* MPI-IO nonblocking calls: every rank writes interleaved blocks of one shared
 * file with MPI_File_iwrite_at + MPI_Wait, then reads its blocks back with
 * MPI_File_iread_at + MPI_Wait. ROMIO issues them through POSIX AIO.
 * usage: mpiio_aio [iterations=8] [block=65536] */
#include <mpi.h>
#include <string.h>

#include "common.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long iters = arg_or(argc, argv, 1, 8), block = arg_or(argc, argv, 2, 65536);
  char* buf = malloc((size_t)block);
  memset(buf, 'A' + rank % 26, (size_t)block);
  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_WORLD, "mpiio.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
  MPI_Request req;
  MPI_Status st;
  int n;
  for (long i = 0; i < iters; ++i) {
    MPI_Offset off = (i * size + rank) * block;
    CHECK(MPI_File_iwrite_at(fh, off, buf, (int)block, MPI_BYTE, &req) == MPI_SUCCESS);
    CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(n == block);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < iters; ++i) {
    memset(buf, 0, (size_t)block);
    CHECK(MPI_File_iread_at(fh, (i * size + rank) * block, buf, (int)block, MPI_BYTE, &req) == MPI_SUCCESS);
    CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS);
    CHECK(buf[0] == 'A' + rank % 26 && buf[block - 1] == 'A' + rank % 26);
  }
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
  free(buf);
  if (rank == 0) printf("mpiio_aio ranks=%d iterations=%ld block=%ld\n", size, iters, block);
  MPI_Finalize();
  return 0;
}
