/* A program that starts processes which do I/O of their own: a forked child,
 * a shell through system(), and a program through posix_spawn. Every file is
 * written by exactly one process, so a trace that misses a process misses
 * its file.
 *
 * usage: children [mpi=1] [writes=50]
 *   parent-R.dat   writes x 4 KiB by rank R itself
 *   forked-R.dat   the same by a forked child (which exits with exit())
 *   copied-R.dat   `cat parent-R.dat > copied-R.dat` through system()
 *   spawned-R.dat  `cp parent-R.dat spawned-R.dat` through posix_spawn */
#include <fcntl.h>
#include <mpi.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

extern char** environ;

static void write_file(const char* name, long writes) {
  char block[4096];
  memset(block, 'c', sizeof block);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  for (long i = 0; i < writes; ++i) CHECK(write(fd, block, sizeof block) == (ssize_t)sizeof block);
  CHECK(close(fd) == 0);
}

static void wait_ok(pid_t pid) {
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char** argv) {
  int mpi = (int)arg_or(argc, argv, 1, 1), rank = 0;
  long writes = arg_or(argc, argv, 2, 50);
  if (mpi) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
  char name[64], other[64], cmd[160];
  snprintf(name, sizeof name, "parent-%d.dat", rank);
  write_file(name, writes);

  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    snprintf(other, sizeof other, "forked-%d.dat", rank);
    write_file(other, writes);
    exit(0);
  }
  wait_ok(pid);

  snprintf(cmd, sizeof cmd, "cat parent-%d.dat > copied-%d.dat", rank, rank);
  CHECK(system(cmd) == 0);

  snprintf(other, sizeof other, "spawned-%d.dat", rank);
  char* spawn_argv[] = {"cp", name, other, NULL};
  CHECK(posix_spawn(&pid, "/bin/cp", NULL, NULL, spawn_argv, environ) == 0);
  wait_ok(pid);

  // A forked child writes, then replaces itself by execlp / execle (variadic:
  // glibc reaches execve inside libc, unseen): its writes must be saved first,
  // and the exec'd cp traces itself.
  for (int variant = 0; variant < 2; ++variant) {
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      snprintf(other, sizeof other, "preexec%d-%d.dat", variant, rank);
      write_file(other, writes);
      snprintf(cmd, sizeof cmd, "execcopy%d-%d.dat", variant, rank);
      if (variant == 0)
        execlp("cp", "cp", other, cmd, (char*)NULL);
      else
        execle("/bin/cp", "cp", other, cmd, (char*)NULL, environ);
      _exit(127);
    }
    wait_ok(pid);
  }

  if (mpi) MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("parent, forked, copied and spawned files written\n");
  if (mpi) MPI_Finalize();
  return 0;
}
