/* The v2 and 64-bit vector calls, preallocation, in-kernel copies, range and
 * file-system syncs, cache hints, truncate by path, the *at calls, links, a rename of an
 * open file (bytes after it count under the new name) and a directory read.
 * usage: files_more (sizes fixed: the test asserts them) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"

static char buf[8192];

static void vectors_and_copies(void) {
  int fd = open("v2.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  struct iovec iov[2] = {{buf, 1000}, {buf + 1000, 1000}};
  CHECK(pwritev2(fd, iov, 2, 0, 0) == 2000);
  CHECK(pwritev2(fd, iov, 2, -1, 0) == 2000); /* at the position (0), moves it */
  CHECK(lseek(fd, 0, SEEK_CUR) == 2000);
  CHECK(preadv2(fd, iov, 2, 0, 0) == 2000);
  CHECK(preadv64(fd, iov, 1, 1000) == 1000);
  CHECK(pwritev64(fd, iov, 1, 2000) == 1000);
  CHECK(posix_fallocate(fd, 0, 8192) == 0);
  CHECK(fallocate(fd, FALLOC_FL_KEEP_SIZE, 8192, 4096) == 0);
  CHECK(sync_file_range(fd, 0, 4096, SYNC_FILE_RANGE_WRITE) == 0);
  CHECK(syncfs(fd) == 0);
  CHECK(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0); /* the next reads find nothing cached */
  CHECK(readahead(fd, 0, 4096) == 0);
  CHECK(posix_fadvise(fd, 0, 4096, 12345) == EINVAL); /* no such advice: the errno is the result */
  int copy = open("copy.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  off64_t off = 0;
  CHECK(copy >= 0 && copy_file_range(fd, &off, copy, NULL, 3000, 0) == 3000 && off == 3000);
  int sent = open("sent.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  off_t soff = 0;
  CHECK(sent >= 0 && sendfile(sent, fd, &soff, 2048) == 2048);
  int p[2], spliced = open("spliced.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  off64_t poff = 0;
  CHECK(pipe(p) == 0 && spliced >= 0);
  CHECK(splice(fd, &poff, p[1], NULL, 1024, 0) == 1024);
  CHECK(splice(p[0], NULL, spliced, NULL, 1024, 0) == 1024);
  CHECK(close(p[0]) == 0 && close(p[1]) == 0 && close(spliced) == 0 && close(sent) == 0);
  CHECK(close(copy) == 0 && close(fd) == 0);
  CHECK(truncate("copy.dat", 1500) == 0);
}

static void at_calls(void) {
  CHECK(mkdirat(AT_FDCWD, "d", 0755) == 0);
  int dir = open("d", O_RDONLY | O_DIRECTORY);
  CHECK(dir >= 0);
  int fd = openat(dir, "a.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, buf, 100) == 100);
  CHECK(renameat(dir, "a.tmp", dir, "a.dat") == 0);
  CHECK(write(fd, buf, 50) == 50); /* the same file, now named a.dat */
  CHECK(close(fd) == 0);
  CHECK(linkat(dir, "a.dat", dir, "b.dat", 0) == 0);
  CHECK(symlinkat("final.dat", dir, "c.lnk") == 0);
  CHECK(faccessat(dir, "b.dat", R_OK, 0) == 0);
  CHECK(unlinkat(dir, "b.dat", 0) == 0);
  CHECK(mkdirat(dir, "sub", 0755) == 0 && unlinkat(dir, "sub", AT_REMOVEDIR) == 0);
  CHECK(renameat2(dir, "a.dat", dir, "final.dat", RENAME_NOREPLACE) == 0);
  CHECK(close(dir) == 0);
  DIR* d = opendir("d");
  CHECK(d != NULL);
  int entries = 0;
  while (readdir(d)) ++entries;
  CHECK(entries == 4); /* ., .., final.dat, c.lnk */
  CHECK(closedir(d) == 0);
}

int main(void) {
  memset(buf, 'x', sizeof buf);
  vectors_and_copies();
  at_calls();
  printf("files_more done\n");
  return 0;
}
