/* POSIX AIO: single requests waited with aio_suspend, lio_listio with LIO_WAIT
 * and LIO_NOWAIT, a polled read, aio_fsync and aio_cancel, on aio.dat.
 * usage: aio_io [iterations=8] [block=4096]
 * Writes iterations + 4 blocks; reads 2 blocks, then everything written. */
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "maybe_mpi.h"

static void wait_one(struct aiocb* cb) {
  const struct aiocb* list[1] = {cb};
  while (aio_error(cb) == EINPROGRESS) CHECK(aio_suspend(list, 1, NULL) == 0 || errno == EINTR);
}

static struct aiocb request(int fd, char* buf, long block, long index) {
  struct aiocb cb;
  memset(&cb, 0, sizeof cb);
  cb.aio_fildes = fd;
  cb.aio_buf = buf;
  cb.aio_nbytes = (size_t)block;
  cb.aio_offset = index * block;
  cb.aio_sigevent.sigev_notify = SIGEV_NONE;
  return cb;
}

int main(int argc, char** argv) {
  app_start(&argc, &argv);
  long iters = arg_or(argc, argv, 1, 8), block = arg_or(argc, argv, 2, 4096);
  long total = (iters + 4) * block;
  char* buf = malloc((size_t)total);
  memset(buf, 'a', (size_t)total);
  int fd = open(app_file("aio.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  struct aiocb cb;
  for (long i = 0; i < iters; ++i) { /* one aiocb reused: submit, wait, collect */
    cb = request(fd, buf, block, i);
    CHECK(aio_write(&cb) == 0);
    const struct aiocb* list[1] = {&cb};
    CHECK(aio_suspend(list, 1, NULL) == 0);
    CHECK(aio_error(&cb) == 0 && aio_return(&cb) == block);
  }
  struct aiocb many[4];
  struct aiocb* list[4];
  for (int i = 0; i < 4; ++i) {
    many[i] = request(fd, buf, block, iters + i);
    many[i].aio_lio_opcode = LIO_WRITE;
    list[i] = &many[i];
  }
  CHECK(lio_listio(LIO_WAIT, list, 4, NULL) == 0);
  for (int i = 0; i < 4; ++i) CHECK(aio_return(&many[i]) == block);
  for (int i = 0; i < 2; ++i) {
    many[i] = request(fd, buf + i * block, block, i);
    many[i].aio_lio_opcode = LIO_READ;
  }
  CHECK(lio_listio(LIO_NOWAIT, list, 2, NULL) == 0);
  for (int i = 0; i < 2; ++i) {
    wait_one(&many[i]);
    CHECK(aio_return(&many[i]) == block);
  }
  struct aiocb whole = request(fd, buf, total, 0);
  whole.aio_offset = 0;
  CHECK(aio_read(&whole) == 0);
  while (aio_error(&whole) == EINPROGRESS) usleep(100); /* polled */
  CHECK(aio_return(&whole) == total);
  struct aiocb sync = request(fd, NULL, 0, 0);
  CHECK(aio_fsync(O_SYNC, &sync) == 0);
  wait_one(&sync);
  CHECK(aio_return(&sync) == 0);
  CHECK(aio_cancel(fd, NULL) == AIO_ALLDONE);
  CHECK(close(fd) == 0);
  free(buf);
  if (app_rank == 0) printf("aio_io iterations=%ld block=%ld\n", iters, block);
  app_end();
  return 0;
}
