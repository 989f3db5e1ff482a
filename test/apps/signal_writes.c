/* Writes from a signal handler while threads write: `threads` threads each
 * append `writes` single bytes to sig.dat through one O_APPEND descriptor
 * (every tenth through syscall(SYS_write)), each with a timer of its own
 * (timer_create, SIGEV_THREAD_ID) whose SIGALRM handler appends one byte more; the signal lands wherever the
 * thread is, in its write or in the tracer around it. The handler is set
 * with signal() when the third argument is 1, else with sigaction. At the end
 * sig.dat holds threads * writes bytes plus one per handler run, whatever the
 * timing; the program prints neither count (they vary from run to run).
 * Built with -DWITH_MPI (maybe_mpi.h) every rank does the same on sig.<rank>.dat.
 * usage: signal_writes [threads=8] [writes=4000] [use_signal=0] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "maybe_mpi.h"

static int g_fd = -1;
static long g_writes = 4000;

static void on_alarm(int sig) {
  (void)sig;
  int saved = errno;
  (void)!write(g_fd, "s", 1);
  errno = saved;
}

static void* writer(void* arg) {
  (void)arg;
  struct sigevent ev = {0};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGALRM;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t timer;
  CHECK(timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0);
  struct itimerspec every = {{0, 20000}, {0, 20000}}; /* 20 us */
  CHECK(timer_settime(timer, 0, &every, NULL) == 0);
  /* every tenth through syscall(): the tracer sees that too */
  for (long i = 0; i < g_writes; ++i) CHECK((i % 10 ? write(g_fd, "w", 1) : syscall(SYS_write, g_fd, "y", 1)) == 1);
  struct itimerspec off = {{0, 0}, {0, 0}};
  CHECK(timer_settime(timer, 0, &off, NULL) == 0 && timer_delete(timer) == 0);
  return NULL;
}

int main(int argc, char** argv) {
  app_start(&argc, &argv);
  long threads = arg_or(argc, argv, 1, 8);
  g_writes = arg_or(argc, argv, 2, 4000);
  long use_signal = arg_or(argc, argv, 3, 0);
  g_fd = open(app_file("sig.dat"), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  CHECK(g_fd >= 0);
  if (use_signal) {
    CHECK(signal(SIGALRM, on_alarm) != SIG_ERR);
  } else {
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    struct sigaction back = {0};
    CHECK(sigaction(SIGALRM, NULL, &back) == 0 && back.sa_handler == on_alarm); /* the program sees its own */
  }
  pthread_t t[64];
  if (threads > 64) threads = 64;
  for (long i = 0; i < threads; ++i) CHECK(pthread_create(&t[i], NULL, writer, NULL) == 0);
  for (long i = 0; i < threads; ++i) CHECK(pthread_join(t[i], NULL) == 0);
  CHECK(close(g_fd) == 0);
  if (app_rank == 0) printf("signal_writes threads=%ld writes=%ld\n", threads, g_writes);
  app_end();
  return 0;
}
