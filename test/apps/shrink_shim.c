/* Preloaded into mpior-replay by the final-size test: after every fsync the
 * file loses its last byte, as a replay whose truncation ran late would leave
 * it. The replay must say its files ended at other sizes than the plan's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

int fsync(int fd) {
  static int (*real)(int);
  if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  int r = real(fd);
  struct stat st;
  if (r == 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) r = ftruncate(fd, st.st_size - 1);
  return r;
}
