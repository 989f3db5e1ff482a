/* Dies in the way asked, after every rank made NWRITES writes:
 *   crash_app MODE NWRITES [VICTIM [WAIT_MS]]
 * MODE: segv bus fpe ill abort term int kill mpi_abort exit return, or none
 * (every rank finishes).
 * Every rank writes NWRITES 64-byte blocks to crash_<rank>.dat and they meet
 * at a barrier; the victim (rank 0 unless VICTIM) computes for WAIT_MS
 * (1500: longer than the tracer's default flush interval) and dies that way; the others
 * wait at a barrier it never reaches until the launcher kills them (MPICH's
 * hydra: SIGKILL).
 *   crash_app MODE NWRITES VICTIM WAIT_MS inside
 * Instead, after the barrier the others enter an MPI_Bcast from the victim
 * and stay inside it: a timer's signal handler there marks a flag in a
 * shared file mapping and never returns. The victim waits for every flag,
 * then completes that Bcast (its small message needs no receiver to go) and
 * dies: the others die inside a collective the victim completed. Every
 * rank writes one more block before the Bcast.
 *   crash_app MODE NWRITES VICTIM WAIT_MS threadsT
 * Instead of the main thread, T threads of every rank write NWRITES blocks
 * each, all at once, to crash_<rank>_<thread>.dat. */
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#include "common.h"

static volatile int zero = 0, seven = 7;
static volatile char* stuck; /* per rank: 1 once it is held inside the Bcast */
static int my_rank;

static void hold(int sig) {
  (void)sig;
  stuck[my_rank] = 1;
  for (;;) pause();
}

/* A flag per rank in a file every rank maps (the ranks share a node). */
static void map_flags(int size) {
  int fd = open("crash_inside.flags", O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0 && ftruncate(fd, 4096) == 0 && size <= 4096);
  stuck = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  CHECK(stuck != MAP_FAILED);
  close(fd);
}

/* The others: held inside an MPI_Bcast from the victim. */
static void enter_and_hold(int victim) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = hold;
  CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
  struct itimerval t = {{0, 0}, {0, 20000}};
  CHECK(setitimer(ITIMER_REAL, &t, NULL) == 0);
  int v = 0;
  MPI_Bcast(&v, 1, MPI_INT, victim, MPI_COMM_WORLD);
  CHECK(!"the Bcast returned");
}

/* The victim: every other rank held, then the Bcast they are inside. */
static void complete_bcast(int size) {
  for (int r = 0; r < size; ++r)
    for (long ms = 0; r != my_rank && !stuck[r]; ++ms) {
      CHECK(ms < 120000);
      usleep(1000);
    }
  int v = 7;
  MPI_Bcast(&v, 1, MPI_INT, my_rank, MPI_COMM_WORLD);
}

struct writer {
  pthread_t id;
  int rank, index;
  long n;
};

static void* write_blocks(void* arg) {
  struct writer* w = arg;
  char name[64], block[64];
  memset(block, 'x', sizeof block);
  snprintf(name, sizeof name, "crash_%d_%d.dat", w->rank, w->index);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  for (long i = 0; i < w->n; ++i) CHECK(write(fd, block, sizeof block) == sizeof block);
  close(fd);
  return NULL;
}

/* T threads write n blocks each at once. */
static void threads_write(int rank, int t, long n) {
  struct writer* w = calloc((size_t)t, sizeof *w);
  CHECK(w != NULL);
  for (int i = 0; i < t; ++i) {
    w[i] = (struct writer){0, rank, i, n};
    CHECK(pthread_create(&w[i].id, NULL, write_blocks, &w[i]) == 0);
  }
  for (int i = 0; i < t; ++i) CHECK(pthread_join(w[i].id, NULL) == 0);
  free(w);
}

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
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  my_rank = rank;
  int inside = argc > 5 && !strcmp(argv[5], "inside");
  int threads = argc > 5 && !strncmp(argv[5], "threads", 7) ? atoi(argv[5] + 7) : 0;
  if (inside) map_flags(size);
  const char* mode = argc > 1 ? argv[1] : "exit";
  long n = arg_or(argc, argv, 2, 20000), victim = arg_or(argc, argv, 3, 0), wait_ms = arg_or(argc, argv, 4, 1500);
  char name[64], block[64];
  memset(block, 'x', sizeof block);
  snprintf(name, sizeof name, "crash_%d.dat", rank);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  if (threads > 0)
    threads_write(rank, threads, n);
  else
    for (long i = 0; i < n; ++i) CHECK(write(fd, block, sizeof block) == sizeof block);
  MPI_Barrier(MPI_COMM_WORLD);
  /* I/O on both sides, so that online pruning keeps the Bcast between. */
  if (inside) CHECK(write(fd, block, sizeof block) == sizeof block);
  if (inside && rank != victim) enter_and_hold((int)victim);
  if (rank == victim && strcmp(mode, "none")) {
    usleep((useconds_t)(wait_ms * 1000));
    if (inside) complete_bcast(size);
    if (!strcmp(mode, "return")) return 0;
    die(mode);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  close(fd);
  MPI_Finalize();
  return 0;
}
