/* Linux native AIO through libaio: blocks written in batches of four iocbs
 * per io_submit and reaped together, a two-part pwritev, an fsync request,
 * two reads reaped one at a time, and a last write still in flight when
 * io_destroy waits for it.
 * usage: libaio_io [blocks=8] [block=4096]; blocks is a multiple of 4.
 * kaio.dat ends at (blocks + 2) * block bytes. */
#include <fcntl.h>
#include <libaio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "maybe_mpi.h"

/* Reaps exactly n completions, each a success of want bytes (fsync: 0). */
static void reap(io_context_t ctx, long n, long want) {
  struct io_event ev[8];
  for (long got = 0; got < n;) {
    int r = io_getevents(ctx, 1, n - got, ev, NULL);
    CHECK(r > 0);
    for (int i = 0; i < r; ++i) CHECK((long)ev[i].res == want);
    got += r;
  }
}

static void submit(io_context_t ctx, long n, struct iocb** list) { CHECK(io_submit(ctx, n, list) == n); }

int main(int argc, char** argv) {
  app_start(&argc, &argv);
  long blocks = arg_or(argc, argv, 1, 8), block = arg_or(argc, argv, 2, 4096);
  CHECK(blocks % 4 == 0 && block % 2 == 0);
  char* buf = malloc((size_t)(4 * block));
  memset(buf, 'k', (size_t)(4 * block));
  int fd = open(app_file("kaio.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  io_context_t ctx = 0;
  CHECK(io_setup(16, &ctx) == 0);
  struct iocb cbs[4], *list[4] = {&cbs[0], &cbs[1], &cbs[2], &cbs[3]};
  for (long b = 0; b < blocks; b += 4) {
    for (int i = 0; i < 4; ++i) io_prep_pwrite(&cbs[i], fd, buf + i * block, (size_t)block, (b + i) * block);
    submit(ctx, 4, list);
    reap(ctx, 4, block);
  }
  struct iovec halves[2] = {{buf, (size_t)(block / 2)}, {buf + block / 2, (size_t)(block / 2)}};
  io_prep_pwritev(&cbs[0], fd, halves, 2, blocks * block);
  submit(ctx, 1, list);
  reap(ctx, 1, block);
  io_prep_fsync(&cbs[0], fd);
  submit(ctx, 1, list);
  reap(ctx, 1, 0);
  io_prep_pread(&cbs[0], fd, buf, (size_t)block, 0);
  io_prep_pread(&cbs[1], fd, buf + block, (size_t)block, block);
  submit(ctx, 2, list);
  reap(ctx, 1, block);
  reap(ctx, 1, block);
  io_prep_pwrite(&cbs[0], fd, buf, (size_t)block, (blocks + 1) * block);
  submit(ctx, 1, list);
  CHECK(io_destroy(ctx) == 0); /* waits for the last write */
  CHECK(close(fd) == 0);
  free(buf);
  if (app_rank == 0) printf("libaio_io blocks=%ld block=%ld\n", blocks, block);
  app_end();
  return 0;
}
