/* Relative paths across changes of directory: the tracer keeps the working
 * directory between calls, so each way of changing it must be seen.
 * usage: chdir_paths (sizes fixed: the test asserts them) */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

static char buf[4096];

static void write_file(const char* name, size_t n) {
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, buf, n) == (ssize_t)n);
  CHECK(close(fd) == 0);
}

int main(void) {
  memset(buf, 'c', sizeof buf);
  CHECK(mkdir("a", 0755) == 0);
  CHECK(mkdir("b", 0755) == 0);
  write_file("f.dat", 100); /* ./f.dat */
  CHECK(chdir("a") == 0);
  write_file("f.dat", 200); /* a/f.dat */
  int b = open("../b", O_RDONLY | O_DIRECTORY);
  CHECK(b >= 0);
  CHECK(fchdir(b) == 0);
  CHECK(close(b) == 0);
  write_file("f.dat", 300); /* b/f.dat */
  CHECK(syscall(SYS_chdir, "..") == 0);
  write_file("g.dat", 400); /* ./g.dat */
  struct stat st;
  CHECK(stat("a/f.dat", &st) == 0 && st.st_size == 200);
  return 0;
}
