/* Temporary files from templates (mkstemp, mkostemps: glibc opens them
 * internally), a dangling symbolic link stat'ed without following it
 * (fstatat AT_SYMLINK_NOFOLLOW) and fflush(NULL).
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
  CHECK(symlink("gone.dat", "dangling.lnk") == 0);
  struct stat st;
  CHECK(fstatat(AT_FDCWD, "dangling.lnk", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode));
  CHECK(unlink("dangling.lnk") == 0);
  printf("tempfiles done\n");
  CHECK(fflush(NULL) == 0);
  return 0;
}
