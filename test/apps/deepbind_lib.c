/* A library that does its own I/O: deepbind_io dlopens two builds of it, one
 * plainly and one with RTLD_DEEPBIND. It links libc (as every library built
 * the usual way does), so under RTLD_DEEPBIND its write binds to libc's
 * ahead of the preloaded tracer's. */
#include <fcntl.h>
#include <unistd.h>

/* Writes `bytes` bytes to path in blocks of 512; returns what was written, or -1. */
long lib_write_file(const char* path, long bytes) {
  static const char block[512];
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return -1;
  long done = 0;
  while (done < bytes) {
    long n = bytes - done < (long)sizeof block ? bytes - done : (long)sizeof block;
    if (write(fd, block, (size_t)n) != n) break;
    done += n;
  }
  return close(fd) == 0 ? done : -1;
}
