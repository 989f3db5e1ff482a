/* Computation the machine takes from a rank: another process spinning on the
 * rank's own CPU (both pinned there; forked before MPI_Init, so no rank of the
 * job) gets half of it, so each round's computation, a fixed amount of the
 * rank's CPU time, takes about twice as long on the wall clock. The tracer leaves the time the rank waited for the CPU
 * out of the computation it records (MPIOR_STOLEN_CHECK_US). Each round ends with a 1-byte write, so every computation
 * is one gap in the trace. usage: contended [rounds=8] [cpu_ms=25] */
#include <fcntl.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  long rounds = arg_or(argc, argv, 1, 8), cpu_ms = arg_or(argc, argv, 2, 25);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  CHECK(sched_setaffinity(0, sizeof one, &one) == 0); /* the spinner inherits it */
  atomic_int* stop = mmap(NULL, sizeof *stop, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(stop != MAP_FAILED);
  pid_t spinner = fork();
  CHECK(spinner >= 0);
  if (spinner == 0) {
    while (!atomic_load_explicit(stop, memory_order_relaxed)) {
    }
    _exit(0);
  }
  MPI_Init(&argc, &argv);
  int fd = open("rounds.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  volatile double sink = 0;
  for (long r = 0; r < rounds; ++r) {
    double until = cpu_s() + (double)cpu_ms / 1e3;
    while (cpu_s() < until) sink = sink * 0.5 + 1.0;
    CHECK(write(fd, "r", 1) == 1);
  }
  CHECK(close(fd) == 0);
  atomic_store(stop, 1);
  int status = 0;
  CHECK(waitpid(spinner, &status, 0) == spinner && WIFEXITED(status));
  MPI_Finalize();
  return 0;
}
