/* Dies in the way asked, after every rank made NWRITES writes:
 *   crash_app MODE NWRITES [VICTIM [WAIT_MS]]
 * MODE: segv bus fpe ill abort term int kill mpi_abort exit return, or none
 * (every rank finishes).
 * Every rank writes NWRITES 64-byte blocks to crash_<rank>.dat and they meet
 * at a barrier; the victim (rank 0 unless VICTIM) computes for WAIT_MS
 * (1500: longer than the tracer's default flush interval) and dies that way; the others
 * wait at a barrier it never reaches until the launcher kills them (MPICH's
 * hydra: SIGKILL). */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

static volatile int zero = 0, seven = 7;

static void die(const char* mode) {
  if (!strcmp(mode, "segv")) *(volatile int*)(long)zero = 1;
  if (!strcmp(mode, "bus")) { /* a mapping beyond the end of an empty file */
    int fd = open("crash_bus.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
    volatile char* p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED);
    p[0] = 1;
  }
  if (!strcmp(mode, "fpe")) printf("%d\n", seven / zero); /* 1 / x compiles without a division */
  if (!strcmp(mode, "ill")) __builtin_trap();
  if (!strcmp(mode, "abort")) abort();
  if (!strcmp(mode, "term")) kill(getpid(), SIGTERM);
  if (!strcmp(mode, "int")) kill(getpid(), SIGINT);
  if (!strcmp(mode, "kill")) kill(getpid(), SIGKILL);
  if (!strcmp(mode, "mpi_abort")) MPI_Abort(MPI_COMM_WORLD, 7);
  if (!strcmp(mode, "exit")) exit(5);
  sleep(5); /* a signal on its way */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "exit";
  long n = arg_or(argc, argv, 2, 20000), victim = arg_or(argc, argv, 3, 0), wait_ms = arg_or(argc, argv, 4, 1500);
  char name[64], block[64];
  memset(block, 'x', sizeof block);
  snprintf(name, sizeof name, "crash_%d.dat", rank);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  for (long i = 0; i < n; ++i) CHECK(write(fd, block, sizeof block) == sizeof block);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == victim && strcmp(mode, "none")) {
    usleep((useconds_t)(wait_ms * 1000));
    if (!strcmp(mode, "return")) return 0;
    die(mode);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  close(fd);
  MPI_Finalize();
  return 0;
}
