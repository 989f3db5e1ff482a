/* A program without MPI killed by SIGKILL, which no handler sees (issue 12):
 * "self" writes N 64-byte records to standalone.dat, says whether it is
 * still single-threaded (the tracer started no thread in it), waits WAIT_MS
 * (default 1500) and kills itself; "child" forks a child that does the same
 * to child.dat while the parent waits for it, then writes one record to
 * parent.dat and exits normally. What reaches the trace is what the
 * periodic flush wrote, or the crash journal kept.
 * usage: killed_standalone self|child [N] [WAIT_MS] */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void write_records(const char* name, long n) {
  int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) {
    perror(name);
    exit(2);
  }
  char rec[64];
  memset(rec, 'x', sizeof rec);
  for (long i = 0; i < n; ++i)
    if (write(fd, rec, sizeof rec) != (ssize_t)sizeof rec) exit(3);
  close(fd);
}

static void wait_then_die(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
  kill(getpid(), SIGKILL);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "self";
  long n = argc > 2 ? atol(argv[2]) : 20000;
  long wait_ms = argc > 3 ? atol(argv[3]) : 1500;
  if (!strcmp(mode, "self")) {
    write_records("standalone.dat", n);
    printf("single-threaded %d\n", __libc_single_threaded);
    fflush(stdout);
    wait_then_die(wait_ms);
  }
  pid_t pid = fork();
  if (pid == 0) {
    write_records("child.dat", n);
    wait_then_die(wait_ms);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  write_records("parent.dat", 1);
  printf("child %s by signal %d\n", WIFSIGNALED(status) ? "killed" : "exited",
         WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return 0;
}
