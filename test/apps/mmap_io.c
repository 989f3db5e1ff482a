/* Memory-mapped files: a shared writable mapping of out.dat written,
 * msync'ed, a quarter written again and msync'ed, half written again,
 * msync'ed with MS_ASYNC, then unmapped; a read-only mapping of
 * in.dat read; a mapping grown with mremap, written, msync'ed and still
 * mapped (untouched since) at exit.
 * usage: mmap_io [pages=16]; out.dat and grow.dat are pages * 4096 bytes. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "maybe_mpi.h"

int main(int argc, char** argv) {
  app_start(&argc, &argv);
  long pages = arg_or(argc, argv, 1, 16);
  size_t len = (size_t)pages * 4096;
  int fd = open(app_file("out.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && ftruncate(fd, (off_t)len) == 0);
  char* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  CHECK(p != MAP_FAILED);
  memset(p, 'm', len);
  CHECK(msync(p, len, MS_SYNC) == 0);
  memset(p, 'q', len / 4); /* the second msync writes back this quarter only */
  CHECK(msync(p, len, MS_SYNC) == 0);
  memset(p, 'M', len / 2);             /* dirty again: the first half writes back at munmap */
  CHECK(msync(p, len, MS_ASYNC) == 0); /* writes nothing back now: counts nothing */
  CHECK(munmap(p, len) == 0 && close(fd) == 0);
  int in = open(app_file("out.dat"), O_RDONLY);
  const char* q = mmap(NULL, len, PROT_READ, MAP_PRIVATE, in, 0);
  CHECK(q != MAP_FAILED && q[len - 1] == 'm');
  CHECK(munmap((void*)q, len) == 0 && close(in) == 0);
  int g = open(app_file("grow.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(g >= 0 && ftruncate(g, (off_t)len) == 0);
  char* r = mmap(NULL, len / 2, PROT_WRITE, MAP_SHARED, g, 0);
  CHECK(r != MAP_FAILED);
  r = mremap(r, len / 2, len, MREMAP_MAYMOVE);
  CHECK(r != MAP_FAILED);
  memset(r, 'g', len);
  CHECK(msync(r, len, MS_SYNC) == 0);
  CHECK(close(g) == 0); /* the mapping stays, clean: nothing more to write back at exit */
  if (app_rank == 0) printf("mmap_io pages=%ld\n", pages);
  app_end();
  return 0;
}
