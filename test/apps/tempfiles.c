/* Temporary files from templates (mkstemp, mkostemps: glibc opens them
 * internally; mkdtemp makes a directory; tmpfile an unnamed one), a dangling symbolic link stat'ed
 * without following it (fstatat AT_SYMLINK_NOFOLLOW), fflush(NULL), and
 * outputs an earlier run left, removed and made again (`rm -f again.dat`
 * then an exclusive create; `rm -rf results; mkdir results`): the test's
 * prepare step makes again.dat and results/old.txt.
 * usage: tempfiles (sizes fixed: the test asserts them) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

int main(void) {
  char buf[64];
  memset(buf, 't', sizeof buf);
  char plain[] = "plainXXXXXX";
  int fd = mkstemp(plain);
  CHECK(fd >= 0 && write(fd, buf, 64) == 64 && close(fd) == 0);
  char suffixed[] = "sfxXXXXXX.dat";
  fd = mkostemps(suffixed, 4, O_CLOEXEC);
  CHECK(fd >= 0 && write(fd, buf, 32) == 32 && close(fd) == 0);
  CHECK(unlink(plain) == 0 && unlink(suffixed) == 0); /* the names differ from run to run */
  FILE* scratch = tmpfile();
  CHECK(scratch && fwrite(buf, 1, 40, scratch) == 40 && fseek(scratch, 0, SEEK_SET) == 0);
  CHECK(fread(buf, 1, 40, scratch) == 40 && fclose(scratch) == 0);
  char dir[] = "dirXXXXXX";
  CHECK(mkdtemp(dir) == dir);
  char inside[64];
  snprintf(inside, sizeof inside, "%s/f", dir);
  fd = open(inside, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, buf, 16) == 16 && close(fd) == 0);
  CHECK(unlink(inside) == 0 && rmdir(dir) == 0);
  CHECK(unlink("again.dat") == 0);
  fd = open("again.dat", O_WRONLY | O_CREAT | O_EXCL, 0644);
  CHECK(fd >= 0 && write(fd, buf, 48) == 48 && close(fd) == 0);
  CHECK(unlink("results/old.txt") == 0 && rmdir("results") == 0 && mkdir("results", 0755) == 0);
  fd = open("results/new.txt", O_WRONLY | O_CREAT | O_EXCL, 0644);
  CHECK(fd >= 0 && write(fd, buf, 8) == 8 && close(fd) == 0);
  CHECK(symlink("gone.dat", "dangling.lnk") == 0);
  struct stat st;
  CHECK(fstatat(AT_FDCWD, "dangling.lnk", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode));
  CHECK(unlink("dangling.lnk") == 0);
  printf("tempfiles done\n");
  CHECK(fflush(NULL) == 0);
  return 0;
}
