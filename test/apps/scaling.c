/* What extrapolation must follow from small runs to a larger one
 * (scalaioextrap §III-B): every quantity below depends on the rank r or the
 * rank count n in one of the ways real codes do.
 *   - N-to-N: each rank writes nton_<rrrr>.dat (zero-padded rank);
 *   - N-to-1 weak scaling: shared_weak.dat, BLK bytes per rank per step,
 *     interleaved (offset (step*n + r)*BLK);
 *   - N-to-1 strong scaling: shared_strong.dat, TOTAL/n bytes per rank at
 *     r*TOTAL/n; the last rank appends a 16-byte trailer at TOTAL;
 *   - groups: Comm_split(r / GROUP); members Gather to the group's leader,
 *     who writes group_<r/GROUP>.dat;
 *   - a ring halo (Sendrecv with (r±1) mod n) and an Allreduce per step;
 *   - rank 0 logs each step with stdio and at the end reads back one block
 *     per rank of shared_weak.dat (a loop of n iterations).
 * usage: scaling [steps=3] [irregular=0] [total=53760]
 *   irregular=1: each rank also writes r*r bytes to nton (no model fits);
 *   total: the strong-scaled file's size (53760 divides by 1 to 8 ranks). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define BLK 4096
#define GROUP 2

static int open_or_die(const char* path, int flags) {
  int fd = open(path, flags, 0644);
  CHECK(fd >= 0);
  return fd;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long steps = arg_or(argc, argv, 1, 3), irregular = arg_or(argc, argv, 2, 0);
  long total = arg_or(argc, argv, 3, 840 * 64), part = total / size;
  size_t bufsize = (size_t)(part > BLK ? part : BLK) + BLK;
  char* buf = malloc(bufsize);
  CHECK(buf != NULL);
  memset(buf, 'a' + rank % 26, bufsize);
  MPI_Comm group;
  MPI_Comm_split(MPI_COMM_WORLD, rank / GROUP, rank, &group);
  int grank;
  MPI_Comm_rank(group, &grank);

  char name[64];
  snprintf(name, sizeof name, "nton_%04d.dat", rank);
  int nton = open_or_die(name, O_WRONLY | O_CREAT | O_TRUNC);
  if (rank == 0) {
    close(open_or_die("shared_weak.dat", O_WRONLY | O_CREAT | O_TRUNC));
    close(open_or_die("shared_strong.dat", O_WRONLY | O_CREAT | O_TRUNC));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int weak = open_or_die("shared_weak.dat", O_WRONLY);
  FILE* log = rank == 0 ? fopen("scaling.log", "w") : NULL;
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  long checksum = 0;
  for (long s = 0; s < steps; ++s) {
    CHECK(write(nton, buf, BLK) == BLK);
    if (irregular) CHECK(write(nton, buf, (size_t)(rank * rank + 1)) == rank * rank + 1);
    CHECK(pwrite(weak, buf, BLK, (off_t)(s * size + rank) * BLK) == BLK);
    long mine = rank + s, got = -1, sum = 0;
    MPI_Sendrecv(&mine, 1, MPI_LONG, right, 7, &got, 1, MPI_LONG, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == left + s);
    MPI_Allreduce(&got, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    checksum += sum;
    if (log) fprintf(log, "step %04ld sum %012ld\n", s, sum);
  }
  CHECK(close(weak) == 0);

  int strong = open_or_die("shared_strong.dat", O_WRONLY);
  CHECK(pwrite(strong, buf, (size_t)part, (off_t)rank * part) == part);
  if (rank == size - 1) CHECK(pwrite(strong, "trailer-trailer!", 16, total) == 16);
  CHECK(close(strong) == 0);

  int gsize;
  MPI_Comm_size(group, &gsize);
  static char gathered[GROUP * BLK];
  MPI_Gather(buf, BLK, MPI_CHAR, gathered, BLK, MPI_CHAR, 0, group);
  if (grank == 0) {
    snprintf(name, sizeof name, "group_%d.dat", rank / GROUP);
    int g = open_or_die(name, O_WRONLY | O_CREAT | O_TRUNC);
    CHECK(write(g, gathered, (size_t)gsize * BLK) == gsize * BLK);
    CHECK(close(g) == 0);
  }
  CHECK(close(nton) == 0);
  MPI_Barrier(MPI_COMM_WORLD);

  if (rank == 0) {
    int back = open_or_die("shared_weak.dat", O_RDONLY);
    for (int r = 0; r < size; ++r) CHECK(pread(back, buf, BLK, (off_t)r * BLK) == BLK);
    CHECK(close(back) == 0);
    fprintf(log, "done checksum %016ld\n", checksum);
    CHECK(fclose(log) == 0);
    printf("scaling ranks=%d steps=%ld checksum=%016ld\n", size, steps, checksum);
  }
  MPI_Comm_free(&group);
  free(buf);
  MPI_Finalize();
  return 0;
}
