/* Preloaded into an untraced program by the fidelity benchmark: the
 * process's lifetime, from load to exit, and from load to its MPI_Finalize
 * call, the span a rank trace covers (a trace ends inside MPI_Finalize,
 * before the tracer writes it and MPI tears down), so a prediction and a real
 * run are compared over the same time. Appends "lifetime_ns <ns>" and
 * "finalize_ns <ns>" (0: no MPI_Finalize) to the file MPIOR_LIFETIME_FILE
 * names. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct timespec t_start, t_finalize;

static long long ns(const struct timespec* t) { return (long long)t->tv_sec * 1000000000LL + t->tv_nsec; }

__attribute__((constructor)) static void lifetime_start(void) { clock_gettime(CLOCK_MONOTONIC, &t_start); }

/* Interposes the application's MPI_Finalize (the library itself links no MPI). */
int MPI_Finalize(void) {
  clock_gettime(CLOCK_MONOTONIC, &t_finalize);
  int (*real)(void) = (int (*)(void))dlsym(RTLD_NEXT, "MPI_Finalize");
  return real ? real() : 0;
}

__attribute__((destructor)) static void lifetime_end(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  const char* path = getenv("MPIOR_LIFETIME_FILE");
  /* Only MPI ranks (the launcher and its proxies inherit the preload too). */
  if (!path || (!getenv("PMI_RANK") && !getenv("OMPI_COMM_WORLD_RANK"))) return;
  char line[96];
  long long fin = t_finalize.tv_sec ? ns(&t_finalize) - ns(&t_start) : 0;
  int n = snprintf(line, sizeof line, "lifetime_ns %lld\nfinalize_ns %lld\n", ns(&t) - ns(&t_start), fin);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)n) != n) perror("lifetime");
  close(fd);
}
