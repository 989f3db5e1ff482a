/* POSIX AIO requests the program never asks about (no aio_error, aio_return
 * or aio_suspend): two writes and a read on orphan1.dat, whose fd is closed;
 * one write on orphan2.dat, left open until exit. The program waits for the
 * data by polling the file size (fstat), never through AIO.
 * usage: aio_orphan [block=4096] (under mpirun: every rank its own files). */
#include <aio.h>
#include <fcntl.h>
#include <mpi.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static struct aiocb cbs[4]; /* alive until exit, as POSIX wants */

static void submit(int i, int fd, char* buf, long len, long at, int write) {
  memset(&cbs[i], 0, sizeof cbs[i]);
  cbs[i].aio_fildes = fd;
  cbs[i].aio_buf = buf;
  cbs[i].aio_nbytes = (size_t)len;
  cbs[i].aio_offset = at;
  cbs[i].aio_sigevent.sigev_notify = SIGEV_NONE;
  CHECK((write ? aio_write(&cbs[i]) : aio_read(&cbs[i])) == 0);
}

static void wait_size(int fd, long size) {
  struct stat st;
  for (int i = 0; i < 100000; ++i) {
    CHECK(fstat(fd, &st) == 0);
    if (st.st_size >= size) return;
    usleep(100);
  }
  CHECK(!"the AIO write never landed");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long block = arg_or(argc, argv, 1, 4096);
  char* buf = malloc((size_t)(4 * block));
  memset(buf, 'o', (size_t)(4 * block));
  char name[64];
  snprintf(name, sizeof name, "orphan1.%d.dat", rank);
  int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  submit(0, fd, buf, block, 0, 1);
  submit(1, fd, buf, 2 * block, block, 1);
  wait_size(fd, 3 * block);
  submit(2, fd, buf + 3 * block, block, 0, 0);
  usleep(20000); /* the read most likely done; counted at close either way */
  CHECK(close(fd) == 0);
  snprintf(name, sizeof name, "orphan2.%d.dat", rank);
  int fd2 = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd2 >= 0);
  submit(3, fd2, buf, 3 * block, 0, 1);
  wait_size(fd2, 3 * block);
  if (rank == 0) printf("aio_orphan block=%ld\n", block);
  MPI_Finalize();
  return 0; /* orphan2's fd and request still open */
}
