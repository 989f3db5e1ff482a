/* Preloaded into an untraced program by the fidelity benchmark: the
 * process's lifetime, from load to exit, and from load to its MPI_Finalize
 * call, the span a rank trace covers (a trace ends inside MPI_Finalize,
 * before the tracer writes it and MPI tears down), so a prediction and a real
 * run are compared over the same time; and from load to MPI_Init's return
 * (start-up: the launch and MPI_Init, which vary from launch to launch).
 * Appends "lifetime_ns <ns>", "finalize_ns <ns>" and "init_ns <ns>" (0: no
 * such call) to the file MPIOR_LIFETIME_FILE names. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct timespec t_start, t_init, t_finalize;

static long long ns(const struct timespec* t) { return (long long)t->tv_sec * 1000000000LL + t->tv_nsec; }

__attribute__((constructor)) static void lifetime_start(void) { clock_gettime(CLOCK_MONOTONIC, &t_start); }

/* The application's MPI_Init and MPI_Init_thread. */
int MPI_Init(int* argc, char*** argv) {
  int (*real)(int*, char***) = (int (*)(int*, char***))dlsym(RTLD_NEXT, "MPI_Init");
  int rc = real ? real(argc, argv) : 0;
  clock_gettime(CLOCK_MONOTONIC, &t_init);
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int (*real)(int*, char***, int, int*) = (int (*)(int*, char***, int, int*))dlsym(RTLD_NEXT, "MPI_Init_thread");
  int rc = real ? real(argc, argv, required, provided) : 0;
  clock_gettime(CLOCK_MONOTONIC, &t_init);
  return rc;
}

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
  char line[128];
  long long fin = t_finalize.tv_sec ? ns(&t_finalize) - ns(&t_start) : 0;
  long long init = t_init.tv_sec ? ns(&t_init) - ns(&t_start) : 0;
  int n = snprintf(line, sizeof line, "lifetime_ns %lld\nfinalize_ns %lld\ninit_ns %lld\n", ns(&t) - ns(&t_start), fin,
                   init);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  if (write(fd, line, (size_t)n) != n) perror("lifetime");
  close(fd);
}
