/* Mappings whose ranges change under them: a shared writable mapping of
 * fixed.dat (16 pages, all written) has pages 4-7 replaced by a MAP_FIXED
 * mapping of other.dat (written), then loses its last 4 pages, a 2-page hole
 * (pages 9-10) and the rest in one munmap of the whole first range, which
 * also ends other.dat's mapping. A mapping of shrink.dat (8 pages, written)
 * shrinks to 2 pages in place (mremap), grows to 6 (moving if it must), is
 * moved with MREMAP_FIXED, shrunk to 4, over a read-only mapping of
 * fixed.dat, and unmapped. Under MPI (-DWITH_MPI, maybe_mpi.h) each rank does
 * the same on files of its own, except that it shrinks the last mapping in
 * place and unmaps both (UCX's mremap hook loses MREMAP_FIXED's address).
 * usage: mmap_fixed */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "maybe_mpi.h"

enum { kPage = 4096 };

static int open_sized(const char* name, long pages) {
  int fd = open(app_file(name), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && ftruncate(fd, pages * kPage) == 0);
  return fd;
}

static char* map_written(char* at, long pages, int fd, int flags, char c) {
  char* p = mmap(at, (size_t)pages * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | flags, fd, 0);
  CHECK(p != MAP_FAILED && (!at || p == at));
  memset(p, c, (size_t)pages * kPage);
  return p;
}

int main(int argc, char** argv) {
  app_start(&argc, &argv);
  int fixed = open_sized("fixed.dat", 16), other = open_sized("other.dat", 4), shrink = open_sized("shrink.dat", 8);
  char* p = map_written(NULL, 16, fixed, 0, 'f');
  map_written(p + 4 * kPage, 4, other, MAP_FIXED, 'o');
  CHECK(munmap(p + 12 * kPage, 4 * kPage) == 0);
  CHECK(munmap(p + 9 * kPage, 2 * kPage) == 0);
  CHECK(munmap(p, 16 * kPage) == 0);

  char* r = map_written(NULL, 8, shrink, 0, 's');
  CHECK(mremap(r, 8 * kPage, 2 * kPage, 0) == r);
  r = mremap(r, 2 * kPage, 6 * kPage, MREMAP_MAYMOVE);
  CHECK(r != MAP_FAILED);
  memset(r, 'S', 6 * kPage);
  char* t = mmap(NULL, 4 * kPage, PROT_READ, MAP_SHARED, fixed, 0);
  CHECK(t != MAP_FAILED && t[0] == 'f');
#ifndef WITH_MPI
  CHECK(mremap(r, 6 * kPage, 4 * kPage, MREMAP_MAYMOVE | MREMAP_FIXED, t) == t);
  CHECK(munmap(t, 4 * kPage) == 0);
#else /* ucm's mremap hook drops the new address (MREMAP_FIXED fails under UCX): shrunk in place */
  CHECK(mremap(r, 6 * kPage, 4 * kPage, 0) == r);
  CHECK(munmap(t, 4 * kPage) == 0 && munmap(r, 4 * kPage) == 0);
#endif
  CHECK(close(fixed) == 0 && close(other) == 0 && close(shrink) == 0);
  if (app_rank == 0) printf("mmap_fixed done\n");
  app_end();
  return 0;
}
