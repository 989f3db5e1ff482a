/* A signal handler's opens, writes, closes and stdio while the program makes
 * traced calls: the main loop appends 64-byte blocks to main.dat, closing
 * and reopening it every 50 writes, while a 100 us interval timer
 * (setitimer, ITIMER_REAL) interrupts it wherever it is, in a call, in the
 * program or in the tracer's work around a call. Each handler run opens
 * handler.dat, appends 3 bytes, closes it, and fwrites 2 bytes to a stream
 * opened beforehand (its buffer the program's, so no handler allocates).
 * The loop runs `writes` writes, and on until the handler ran `runs` times.
 * It prints what the handlers did, counted by the program itself:
 * "handler runs=R opens=O bytes=B stdio=S stats=T" (they vary from run to
 * run). With stat=1 each handler run also stats handler.dat: a call the
 * tracer can only count, not record, when the handler interrupted its work.
 * usage: signal_files [writes=20000] [runs=500] [stat=0] */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "common.h"

static FILE* g_stream;
static char g_stream_buf[1 << 20];
static volatile sig_atomic_t g_runs, g_opens, g_bytes, g_stdio, g_stats;
static int g_stat;

static void on_alarm(int sig) {
  (void)sig;
  int saved = errno;
  int h = open("handler.dat", O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (h >= 0) {
    ++g_opens;
    ssize_t n = write(h, "abc", 3);
    if (n > 0) g_bytes += (sig_atomic_t)n;
    close(h);
  }
  g_stdio += (sig_atomic_t)fwrite("xy", 1, 2, g_stream);
  struct stat st;
  if (g_stat && stat("handler.dat", &st) == 0) ++g_stats;
  ++g_runs;
  errno = saved;
}

int main(int argc, char** argv) {
  long writes = arg_or(argc, argv, 1, 20000);
  long runs = arg_or(argc, argv, 2, 500);
  g_stat = (int)arg_or(argc, argv, 3, 0);
  g_stream = fopen("handler_stdio.dat", "w");
  CHECK(g_stream && setvbuf(g_stream, g_stream_buf, _IOFBF, sizeof g_stream_buf) == 0);
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
  struct itimerval every = {{0, 100}, {0, 100}};
  CHECK(setitimer(ITIMER_REAL, &every, NULL) == 0);
  char block[64];
  memset(block, 'm', sizeof block);
  long opens = 1;
  int fd = open("main.dat", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  CHECK(fd >= 0);
  for (long i = 0; i < writes || g_runs < runs; ++i) {
    CHECK(write(fd, block, sizeof block) == (ssize_t)sizeof block);
    if (i % 50 == 49) {
      CHECK(close(fd) == 0);
      fd = open("main.dat", O_WRONLY | O_APPEND);
      CHECK(fd >= 0);
      ++opens;
    }
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0);
  CHECK(close(fd) == 0 && fclose(g_stream) == 0);
  printf("handler runs=%ld opens=%ld bytes=%ld stdio=%ld main_opens=%ld stats=%ld\n", (long)g_runs, (long)g_opens,
         (long)g_bytes, (long)g_stdio, opens, (long)g_stats);
  return 0;
}
