/* Forks while the tracer's flush thread writes: a thread records writes
 * without pause (so every periodic flush has new events and takes a while),
 * and the main thread forks children that write a file each and exit. A
 * child that inherited the parent's write in progress must still write its
 * own trace at exit.
 *
 * usage: fork_flush [children=40]
 *   child-N.dat   4 KiB written by child N
 *   busy.dat      one byte, rewritten by the writer thread without pause */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static atomic_int stop;

static void* writer(void* arg) {
  (void)arg;
  int fd = open("busy.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  char c = 'b';
  while (!atomic_load(&stop)) CHECK(pwrite(fd, &c, 1, 0) == 1);
  CHECK(close(fd) == 0);
  return NULL;
}

int main(int argc, char** argv) {
  long children = arg_or(argc, argv, 1, 40);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, writer, NULL) == 0);
  for (long i = 0; i < children; ++i) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      char name[64], block[4096];
      snprintf(name, sizeof name, "child-%ld.dat", i);
      memset(block, 'c', sizeof block);
      int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      CHECK(fd >= 0 && write(fd, block, sizeof block) == (ssize_t)sizeof block && close(fd) == 0);
      exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  atomic_store(&stop, 1);
  CHECK(pthread_join(t, NULL) == 0);
  printf("%ld children\n", children);
  return 0;
}
