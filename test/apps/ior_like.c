/* An IOR-like benchmark (the program ScalaIOExtrap's C1 verification ran):
 * each rank writes a block per segment, reads it back, and rank 0 reports
 * what IOR reports on stdout and in a log: the host, the sizes, times and
 * bandwidths, and a data-dependent checksum, in lines whose lengths change
 * from run to run and with the rank count.
 *   fpp:         file per process, ior_like.dat.<rrrrrrrr> (rank-numbered);
 *   shared:      one shared file in blocks, segment s of rank r at
 *                (s*n + r)*block;
 *   interleaved: one shared file, transfer t of segment s of rank r at
 *                ((s*xfers + t)*n + r)*transfer, collective MPI-IO
 *                (MPI_File_write_at_all) with api mpiio.
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) counts the ranks per node, as
 * IOR does (MPICH discovers the topology there, reading /proc and /sys).
 * usage: ior_like PATTERN API [block=65536] [transfer=16384] [segments=2] [reps=2]
 *   PATTERN fpp|shared|interleaved, API posix|mpiio; files are kept. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

enum pattern { FPP, SHARED, INTERLEAVED };

struct params {
  enum pattern pattern;
  int mpiio;
  long block, xfer, segments, reps;
  int rank, size;
};

/* Offset of transfer t of segment s: the pattern's layout. */
static long offset_of(const struct params* p, long s, long t) {
  long xfers = p->block / p->xfer;
  switch (p->pattern) {
    case FPP:
      return s * p->block + t * p->xfer;
    case SHARED:
      return (s * p->size + p->rank) * p->block + t * p->xfer;
    case INTERLEAVED:
      break;
  }
  return ((s * xfers + t) * p->size + p->rank) * p->xfer;
}

static void file_name(const struct params* p, char* out, size_t len) {
  if (p->pattern == FPP)
    snprintf(out, len, "ior_like.dat.%08d", p->rank);
  else
    snprintf(out, len, "ior_like.dat");
}

/* One phase (write or read) through POSIX; returns the checksum of what it read. */
static double posix_phase(const struct params* p, int writing, char* buf) {
  char name[64];
  file_name(p, name, sizeof name);
  int fd = open(name, writing ? O_WRONLY | O_CREAT : O_RDONLY, 0644);
  CHECK(fd >= 0);
  double sum = 0;
  for (long s = 0; s < p->segments; ++s)
    for (long t = 0; t < p->block / p->xfer; ++t) {
      long off = offset_of(p, s, t);
      if (writing) {
        memset(buf, 'a' + (int)((off / p->xfer) % 26), (size_t)p->xfer);
        CHECK(pwrite(fd, buf, (size_t)p->xfer, off) == p->xfer);
      } else {
        CHECK(pread(fd, buf, (size_t)p->xfer, off) == p->xfer);
        sum += buf[0] - 'a' + 0.25;
      }
    }
  if (writing) CHECK(fsync(fd) == 0);
  CHECK(close(fd) == 0);
  return sum;
}

static double mpiio_phase(const struct params* p, int writing, char* buf) {
  char name[64];
  file_name(p, name, sizeof name);
  MPI_Comm comm = p->pattern == FPP ? MPI_COMM_SELF : MPI_COMM_WORLD;
  MPI_File fh;
  int amode = writing ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
  CHECK(MPI_File_open(comm, name, amode, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
  double sum = 0;
  for (long s = 0; s < p->segments; ++s)
    for (long t = 0; t < p->block / p->xfer; ++t) {
      long off = offset_of(p, s, t);
      int coll = p->pattern == INTERLEAVED;
      if (writing) {
        memset(buf, 'a' + (int)((off / p->xfer) % 26), (size_t)p->xfer);
        int rc = coll ? MPI_File_write_at_all(fh, off, buf, (int)p->xfer, MPI_CHAR, MPI_STATUS_IGNORE)
                      : MPI_File_write_at(fh, off, buf, (int)p->xfer, MPI_CHAR, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS);
      } else {
        int rc = coll ? MPI_File_read_at_all(fh, off, buf, (int)p->xfer, MPI_CHAR, MPI_STATUS_IGNORE)
                      : MPI_File_read_at(fh, off, buf, (int)p->xfer, MPI_CHAR, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS);
        sum += buf[0] - 'a' + 0.25;
      }
    }
  if (writing) CHECK(MPI_File_sync(fh) == MPI_SUCCESS);
  CHECK(MPI_File_close(&fh) == MPI_SUCCESS);
  return sum;
}

/* Times one phase across the job; rank 0 reports it as IOR does. */
static double phase(const struct params* p, int writing, char* buf, FILE* log) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double sum = p->mpiio ? mpiio_phase(p, writing, buf) : posix_phase(p, writing, buf);
  MPI_Barrier(MPI_COMM_WORLD);
  double secs = MPI_Wtime() - t0, total = 0;
  MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (p->rank == 0) {
    double mib = (double)p->block * (double)p->segments * p->size / (1 << 20);
    printf("%-5s %10.2f MiB/s %10.6f s\n", writing ? "write" : "read", mib / (secs > 0 ? secs : 1e-9), secs);
    fprintf(log, "%s: %.6f s, %.6f MiB\n", writing ? "write" : "read", secs, mib);
  }
  return total;
}

static int parse(int argc, char** argv, struct params* p) {
  if (argc < 3) return 0;
  if (!strcmp(argv[1], "fpp"))
    p->pattern = FPP;
  else if (!strcmp(argv[1], "shared"))
    p->pattern = SHARED;
  else if (!strcmp(argv[1], "interleaved"))
    p->pattern = INTERLEAVED;
  else
    return 0;
  if (strcmp(argv[2], "posix") && strcmp(argv[2], "mpiio")) return 0;
  p->mpiio = !strcmp(argv[2], "mpiio");
  p->block = arg_or(argc, argv, 3, 65536);
  p->xfer = arg_or(argc, argv, 4, 16384);
  p->segments = arg_or(argc, argv, 5, 2);
  p->reps = arg_or(argc, argv, 6, 2);
  return p->xfer > 0 && p->block >= p->xfer && p->block % p->xfer == 0 && p->segments > 0 && p->reps > 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  struct params p;
  MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p.size);
  if (!parse(argc, argv, &p)) {
    if (p.rank == 0)
      fprintf(stderr, "usage: ior_like fpp|shared|interleaved posix|mpiio [block] [transfer] [segments] [reps]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm node;
  int per_node = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &per_node);
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  FILE* log = NULL;
  if (p.rank == 0) {
    log = fopen("ior_like.log", "w");
    CHECK(log != NULL);
    printf("IOR-like: %s %s on %s, %d ranks, %d per node\n", argv[1], argv[2], host, p.size, per_node);
    printf("block %ld transfer %ld segments %ld aggregate %ld bytes\n", p.block, p.xfer, p.segments,
           p.block * p.segments * p.size);
    fprintf(log, "began on %s at %ld\n", host, (long)time(NULL));
  }
  char* buf = malloc((size_t)p.xfer);
  CHECK(buf != NULL);
  for (long i = 0; i < p.reps; ++i) {
    phase(&p, 1, buf, log);
    double sum = phase(&p, 0, buf, log);
    if (p.rank == 0) printf("iter %ld sum %.6f\n", i, sum * (p.size + i) / 3.0);
  }
  free(buf);
  if (p.rank == 0) {
    fprintf(log, "finished at %ld\n", (long)time(NULL));
    CHECK(fclose(log) == 0);
  }
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
