/* Irregular I/O that loop folding cannot shrink: pread/pwrite of 64 bytes at
 * random offsets of a per-rank 1 MiB file, alternating. Prints its calls,
 * bytes, peak RSS (VmHWM), the loop's time, the loop's CPU time and page
 * faults on the calling thread (what the tracer adds to the application's
 * own thread, steadier than the time on a loaded machine) per rank.
 * usage: random_io [calls=1000000] [kill_after_ms=0: SIGKILL itself that long after the calls] */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static long vmhwm_kb(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kb = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return kb;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long calls = arg_or(argc, argv, 1, 1000000), kill_after = arg_or(argc, argv, 2, 0);
  enum { kFile = 1 << 20, kBlock = 64 };
  char name[64], buf[kBlock];
  snprintf(name, sizeof name, "random_io.%d.dat", rank);
  int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  CHECK(ftruncate(fd, kFile) == 0);
  memset(buf, 'a' + rank % 26, sizeof buf);
  uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(rank + 1);
  long bytes = 0;
  struct timespec t0, t1, c0, c1;
  struct rusage r0, r1;
  getrusage(RUSAGE_THREAD, &r0);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < calls; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    off_t off = (off_t)(x % (kFile / kBlock)) * kBlock;
    ssize_t n = (i & 1) ? pwrite(fd, buf, kBlock, off) : pread(fd, buf, kBlock, off);
    CHECK(n == kBlock);
    bytes += n;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  getrusage(RUSAGE_THREAD, &r1);
  CHECK(close(fd) == 0);
  long loop_ns = (t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec);
  long cpu_ns = (c1.tv_sec - c0.tv_sec) * 1000000000L + (c1.tv_nsec - c0.tv_nsec);
  /* Fixed widths: the line's length (printf's return value, traced) is the same every run. */
  printf("random_io rank=%d calls=%ld bytes=%ld vmhwm_kb=%10ld loop_ns=%16ld cpu_ns=%16ld faults=%10ld\n", rank, calls,
         bytes, vmhwm_kb(), loop_ns, cpu_ns, r1.ru_minflt - r0.ru_minflt);
  fflush(stdout);
  if (kill_after > 0) {
    struct timespec ts = {kill_after / 1000, (kill_after % 1000) * 1000000};
    nanosleep(&ts, NULL);
    kill(getpid(), SIGKILL);
  }
  MPI_Finalize();
  return 0;
}
