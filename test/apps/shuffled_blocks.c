/* IOR's random offsets (-z) as a permutation of each rank's own blocks of one
 * shared file (IOR -F -z does that on a file per process): each rank owns
 * `blocks` transfers of 4 KiB per segment, at
 * ((segment * size + rank) * blocks + k) * 4096 of shuffled.dat, and writes
 * them (lseek + write) in an order shuffled from a seed of its rank and the
 * rank count, then reads them back in another order and checks them. No
 * model fits the order; the sorted offsets fit exactly.
 * With shared=1, IOR -z on one shared file: one seed for every rank (of the
 * rank count) draws which rank moves each transfer of a segment, the same
 * ranks at every segment, so each rank's set and number of blocks are random
 * while their union is the whole file.
 * usage: shuffled_blocks [blocks=8] [segments=2] [shared=0] */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

enum { kXfer = 4096 };

/* Fisher-Yates over v[0..n) with a 64-bit LCG: the same order on every run. */
static void shuffle(long* v, long n, uint64_t seed) {
  for (long i = n; i > 1; --i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    long j = (long)((seed >> 33) % (uint64_t)i), t = v[i - 1];
    v[i - 1] = v[j];
    v[j] = t;
  }
}

/* Writes (read = 0) or reads and checks every offset of v through fd. */
static void pass(int fd, const long* v, long n, int read_back, char* buf) {
  for (long i = 0; i < n; ++i) {
    CHECK(lseek(fd, v[i], SEEK_SET) == v[i]);
    if (!read_back) {
      memset(buf, (int)(v[i] / kXfer % 251), kXfer);
      CHECK(write(fd, buf, kXfer) == kXfer);
    } else {
      CHECK(read(fd, buf, kXfer) == kXfer);
      CHECK(buf[0] == (char)(v[i] / kXfer % 251) && buf[kXfer - 1] == buf[0]);
    }
  }
}

/* shared=1: the transfers of a segment this rank moves, drawn as IOR does,
 * then those of every segment; the number in *n. */
static long* random_owned(long blocks, long segments, int rank, int size, long* n) {
  long per = blocks * size, own = 0;
  long* v = malloc((size_t)(per * segments) * sizeof *v);
  CHECK(v);
  uint64_t seed = (uint64_t)size * 2654435761ULL + 17;
  for (long t = 0; t < per; ++t) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    if ((long)((seed >> 33) % (uint64_t)size) == rank) v[own++] = t * kXfer;
  }
  for (long s = 1; s < segments; ++s)
    for (long k = 0; k < own; ++k) v[s * own + k] = v[k] + s * per * kXfer;
  *n = own * segments;
  return v;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long blocks = arg_or(argc, argv, 1, 8), segments = arg_or(argc, argv, 2, 2), n = blocks * segments;
  CHECK(blocks > 0 && segments > 0);
  long* v = arg_or(argc, argv, 3, 0) ? random_owned(blocks, segments, rank, size, &n) : malloc((size_t)n * sizeof *v);
  char* buf = malloc(kXfer);
  CHECK(v && buf);
  for (long s = 0, i = 0; s < segments && !arg_or(argc, argv, 3, 0); ++s)
    for (long k = 0; k < blocks; ++k) v[i++] = ((s * size + rank) * blocks + k) * kXfer;
  int fd = open("shuffled.dat", O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0);
  shuffle(v, n, (uint64_t)rank * 7919 + (uint64_t)size * 104729);
  pass(fd, v, n, 0, buf);
  CHECK(fsync(fd) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  shuffle(v, n, (uint64_t)rank * 7919 + (uint64_t)size * 104729 + 1);
  pass(fd, v, n, 1, buf);
  CHECK(close(fd) == 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("shuffled_blocks: %d ranks wrote and read %ld blocks each\n", size, n);
  free(v);
  free(buf);
  MPI_Finalize();
  return 0;
}
