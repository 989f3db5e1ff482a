/* Threads doing I/O in an MPI program: each rank starts T threads that each
 * write their own file with fwrite while the main thread meets the others in
 * barriers. usage: threads_io [threads=3] [writes=50] [block=2048] */
#include <mpi.h>
#include <pthread.h>
#include <string.h>

#include "common.h"

struct job {
  int rank, index;
  long writes, block;
};

static void* worker(void* p) {
  struct job* j = p;
  char name[64];
  snprintf(name, sizeof name, "thread.%d.%d", j->rank, j->index);
  FILE* f = fopen(name, "w");
  CHECK(f != NULL);
  char* buf = malloc((size_t)j->block);
  memset(buf, 'a' + j->index, (size_t)j->block);
  for (long i = 0; i < j->writes; ++i) CHECK(fwrite(buf, 1, (size_t)j->block, f) == (size_t)j->block);
  CHECK(fclose(f) == 0);
  free(buf);
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long threads = arg_or(argc, argv, 1, 3), writes = arg_or(argc, argv, 2, 50), block = arg_or(argc, argv, 3, 2048);
  CHECK(threads <= 16);
  pthread_t tid[16];
  struct job jobs[16];
  for (long t = 0; t < threads; ++t) {
    jobs[t] = (struct job){rank, (int)t, writes, block};
    CHECK(pthread_create(&tid[t], NULL, worker, &jobs[t]) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (long t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("threads_io ranks=%d threads=%ld writes=%ld block=%ld\n", size, threads, writes, block);
  MPI_Finalize();
  return 0;
}
