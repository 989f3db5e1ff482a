/* I/O made by dlopen()ed libraries: the library `plain` (loaded with
 * RTLD_NOW) writes plain.dat, the library `deep` (RTLD_NOW | RTLD_DEEPBIND,
 * a second build of the same source) writes deep.dat, `bytes` bytes each,
 * and the program writes main.dat itself. Prints the bytes of each file.
 * usage: deepbind_io PLAIN_LIB DEEP_LIB [bytes=10000] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include "common.h"

typedef long (*WriteFile)(const char*, long);

static long through(const char* lib, int mode, const char* path, long bytes) {
  void* h = dlopen(lib, mode);
  if (!h) fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
  CHECK(h != NULL);
  WriteFile f = (WriteFile)dlsym(h, "lib_write_file");
  CHECK(f != NULL);
  long n = f(path, bytes);
  CHECK(dlclose(h) == 0);
  return n;
}

int main(int argc, char** argv) {
  CHECK(argc >= 3);
  long bytes = arg_or(argc, argv, 3, 10000);
  long plain = through(argv[1], RTLD_NOW, "plain.dat", bytes);
  long deep = through(argv[2], RTLD_NOW | RTLD_DEEPBIND, "deep.dat", bytes);
  int fd = open("main.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && write(fd, "main", 4) == 4 && close(fd) == 0);
  CHECK(plain == bytes && deep == bytes);
  printf("plain=%ld deep=%ld main=4\n", plain, deep);
  return 0;
}
