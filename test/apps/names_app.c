/* File names and exclusions: writes 100 bytes to a file whose name is not
 * UTF-8 ("name_\xff\xfe.dat"), 200 bytes to /dev/shm/mpior_names_<tag>
 * (node-local scratch: traced), and reads /proc/self/stat twice (excluded:
 * counted only).   names_app TAG */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static void write_bytes(const char* path, size_t n) {
  char buf[256];
  memset(buf, 'n', sizeof buf);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(write(fd, buf, n) == (ssize_t)n);
  CHECK(close(fd) == 0);
}

int main(int argc, char** argv) {
  const char* tag = argc > 1 ? argv[1] : "x";
  write_bytes("name_\xff\xfe.dat", 100);
  char shm[128];
  snprintf(shm, sizeof shm, "/dev/shm/mpior_names_%s", tag);
  write_bytes(shm, 200);
  CHECK(unlink(shm) == 0);
  for (int i = 0; i < 2; ++i) {
    char buf[512];
    int fd = open("/proc/self/stat", O_RDONLY);
    CHECK(fd >= 0 && read(fd, buf, sizeof buf) > 0);
    close(fd);
  }
  return 0;
}
