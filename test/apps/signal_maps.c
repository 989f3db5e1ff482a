/* Mappings from a signal handler while the program maps: the program maps
 * one page of main.dat shared and writable, dirties it and unmaps it,
 * `rounds` times, with a timer (every 200 us, SIGALRM) whose handler maps one
 * page of handler.dat and dirties it; the program unmaps those at the end
 * (a munmap inside a handler that interrupted one can deadlock in UCX's own
 * unmap handler, traced or not). The signal lands wherever the program
 * is: in its mmap or munmap (under UCX's memory hooks, inside ucm's call
 * with the tracer's record of it open), in the tracer around them, or in the
 * program's own code. The timer signals the main thread alone (timer_create,
 * SIGEV_THREAD_ID): a process-wide SIGALRM may run the handler on the MPI
 * library's threads (UCX's async thread blocks no signal) at the same time
 * as on the main thread, and two handlers filling one table lose mappings.
 * Prints the rounds and the handler's runs; under MPI
 * (-DWITH_MPI, maybe_mpi.h) every rank does the same on main.<rank>.dat and
 * handler.<rank>.dat and prints its own line (the counts vary from run to run).
 * usage: signal_maps [rounds=20000] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "maybe_mpi.h"

enum { kPage = 4096 };
static int g_handler_fd = -1;
enum { kMaxRuns = 20000 };
static volatile sig_atomic_t g_runs = 0;
static char* g_handler_maps[kMaxRuns];

static char* map_page(int fd, char c) {
  char* p = mmap(NULL, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  CHECK(p != MAP_FAILED);
  p[0] = c; /* one dirty page: munmap's bound is the page */
  return p;
}

static void on_alarm(int sig) {
  (void)sig;
  if (g_runs == kMaxRuns) return;
  int saved = errno;
  g_handler_maps[g_runs] = map_page(g_handler_fd, 'h');
  ++g_runs;
  errno = saved;
}

int main(int argc, char** argv) {
  app_start(&argc, &argv);
  long rounds = arg_or(argc, argv, 1, 20000);
  int fd = open(app_file("main.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  g_handler_fd = open(app_file("handler.dat"), O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && g_handler_fd >= 0 && ftruncate(fd, kPage) == 0 && ftruncate(g_handler_fd, kPage) == 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGALRM;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t timer;
  CHECK(timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0);
  struct itimerspec every = {{0, 200000}, {0, 200000}};
  CHECK(timer_settime(timer, 0, &every, NULL) == 0);
  for (long i = 0; i < rounds; ++i) CHECK(munmap(map_page(fd, 'm'), kPage) == 0);
  CHECK(timer_delete(timer) == 0);
  /* munmap(NULL) succeeds: an empty slot would pass unseen */
  for (long i = 0; i < g_runs; ++i) CHECK(g_handler_maps[i] != NULL && munmap(g_handler_maps[i], kPage) == 0);
  CHECK(close(fd) == 0 && close(g_handler_fd) == 0);
  printf("rank=%d rounds=%ld runs=%ld\n", app_rank, rounds, (long)g_runs);
  app_end();
  return 0;
}
