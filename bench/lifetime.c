/* Preloaded into an untraced program by the fidelity benchmark: the
 * process's lifetime, from load to exit, the same span a rank trace covers
 * (so a prediction and a real run are compared over the same time). Appends
 * "lifetime_ns <ns>" to the file MPIOR_LIFETIME_FILE names. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct timespec t_start;

static long long ns(const struct timespec* t) { return (long long)t->tv_sec * 1000000000LL + t->tv_nsec; }

__attribute__((constructor)) static void lifetime_start(void) { clock_gettime(CLOCK_MONOTONIC, &t_start); }

__attribute__((destructor)) static void lifetime_end(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  const char* path = getenv("MPIOR_LIFETIME_FILE");
  /* Only MPI ranks (the launcher and its proxies inherit the preload too). */
  if (!path || (!getenv("PMI_RANK") && !getenv("OMPI_COMM_WORLD_RANK"))) return;
  char line[64];
  int n = snprintf(line, sizeof line, "lifetime_ns %lld\n", ns(&t) - ns(&t_start));
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)n) != n) perror("lifetime");
  close(fd);
}
