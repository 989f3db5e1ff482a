/* Two benchmark shapes of our own, for mpior-predict's tests and bench.
 * ior: IOR's file per process with fsync (-F -e): each rank writes `count`
 *      blocks of `size` bytes to its own file, one fsync before the close.
 * md:  mdtest's phases, a barrier between them: each rank makes a directory,
 *      creates `count` files of `size` bytes in it, stats them, removes them
 *      and the directory.
 * coll: IOR's collective MPI-IO (-a MPIIO -c): one shared file, each rank
 *      `count` blocks of `size` bytes by MPI_File_write_at_all; rank 1
 *      computes 20 ms before each, so rank 0 waits inside every call.
 * usage: io_shapes ior|md|coll [count=64] [size=1048576] */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static void ior(int rank, long count, long size, char* buf) {
  char name[64];
  snprintf(name, sizeof name, "ior.%d", rank);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  for (long i = 0; i < count; ++i) CHECK(pwrite(fd, buf, (size_t)size, i * size) == size);
  CHECK(fsync(fd) == 0);
  CHECK(close(fd) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(unlink(name) == 0);
}

static void md(int rank, long count, long size, char* buf) {
  char dir[64], name[96];
  snprintf(dir, sizeof dir, "md.%d", rank);
  CHECK(mkdir(dir, 0755) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < count; ++i) {
    snprintf(name, sizeof name, "%s/f.%ld", dir, i);
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, buf, (size_t)size) == size);
    CHECK(close(fd) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  struct stat st;
  for (long i = 0; i < count; ++i) {
    snprintf(name, sizeof name, "%s/f.%ld", dir, i);
    CHECK(stat(name, &st) == 0 && st.st_size == size);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < count; ++i) {
    snprintf(name, sizeof name, "%s/f.%ld", dir, i);
    CHECK(unlink(name) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(rmdir(dir) == 0);
}

static void coll(int rank, long count, long size, char* buf) {
  MPI_File fh;
  CHECK(MPI_File_open(MPI_COMM_WORLD, "coll.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) ==
        MPI_SUCCESS);
  struct timespec late = {0, 20 * 1000 * 1000};
  for (long i = 0; i < count; ++i) {
    if (rank == 1) nanosleep(&late, NULL);
    MPI_Offset at = ((MPI_Offset)rank * count + i) * size;
    CHECK(MPI_File_write_at_all(fh, at, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  }
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 2 || (strcmp(argv[1], "ior") != 0 && strcmp(argv[1], "md") != 0 && strcmp(argv[1], "coll") != 0)) {
    fprintf(stderr, "usage: io_shapes ior|md|coll [count] [size]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long count = arg_or(argc, argv, 2, 64), size = arg_or(argc, argv, 3, 1048576);
  char* buf = malloc((size_t)size);
  CHECK(buf);
  memset(buf, 'a' + rank % 26, (size_t)size);
  if (argv[1][0] == 'i')
    ior(rank, count, size, buf);
  else if (argv[1][0] == 'c')
    coll(rank, count, size, buf);
  else
    md(rank, count, size, buf);
  free(buf);
  MPI_Finalize();
  return 0;
}
