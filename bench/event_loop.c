/* The replay's own cost per event: N 1-byte pwrites at one offset of a file
 * in DIR, timed in the program (elapsed_s); bench.py traces it, replays the
 * plan with --io-only (the same N pwrites, no gaps) and divides the
 * difference by N.  usage: event_loop [n=1000000] [dir=.] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  const char* dir = argc > 2 ? argv[2] : ".";
  char path[4096];
  snprintf(path, sizeof path, "%s/event_loop.dat", dir);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return perror(path), 1;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; ++i)
    if (pwrite(fd, "x", 1, 0) != 1) return perror("pwrite"), 1;
  clock_gettime(CLOCK_MONOTONIC, &b);
  close(fd);
  printf("elapsed_s %.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
  return 0;
}
