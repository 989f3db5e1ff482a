/* A plain (non-MPI) program using most traced POSIX and stdio calls. It reads
 * input.dat (which it did not create: the test makes it), forks a child that
 * writes its own file, and runs a shell command (a traced program started by a
 * traced program must not disturb the trace). usage: nonmpi [records=16] */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static void posix_part(long records) {
  CHECK(mkdir("outdir", 0755) == 0 || access("outdir", F_OK) == 0);
  int fd = open("outdir/data.bin", O_RDWR | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  char rec[512];
  for (long i = 0; i < records; ++i) {
    memset(rec, 'a' + (int)(i % 26), sizeof rec);
    struct iovec iov[2] = {{rec, 256}, {rec + 256, 256}};
    CHECK(writev(fd, iov, 2) == 512);
  }
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
  CHECK(read(fd, rec, 100) == 100);
  CHECK(pread(fd, rec, 512, 512) == 512 && rec[0] == 'b');
  int copy = dup(fd), high = fcntl(fd, F_DUPFD, 50);
  CHECK(copy >= 0 && high >= 50);
  CHECK(pwrite(high, "Z", 1, 0) == 1);
  struct stat st;
  CHECK(fstat(copy, &st) == 0 && st.st_size == records * 512);
  CHECK(ftruncate(fd, records * 512 - 100) == 0 && fsync(fd) == 0);
  CHECK(close(copy) == 0 && close(high) == 0 && close(fd) == 0);
  CHECK(stat("outdir/data.bin", &st) == 0 && st.st_size == records * 512 - 100);
  CHECK(rename("outdir/data.bin", "outdir/renamed.bin") == 0);
  int tmp = creat("scratch.tmp", 0600);
  CHECK(tmp >= 0 && write(tmp, "scratch", 7) == 7 && close(tmp) == 0 && unlink("scratch.tmp") == 0);
  int in = open("input.dat", O_RDONLY);
  CHECK(in >= 0);
  char block[4096];
  long total = 0;
  ssize_t n;
  while ((n = read(in, block, sizeof block)) > 0) total += n;
  CHECK(close(in) == 0);
  printf("input bytes %ld\n", total);
}

static void stdio_part(long records) {
  FILE* f = fopen("notes.txt", "w+");
  CHECK(f != NULL);
  for (long i = 0; i < records; ++i) fprintf(f, "record %ld\n", i);
  fputs("tail\n", f);
  fputc('!', f);
  putc('\n', f);
  CHECK(fflush(f) == 0);
  rewind(f);
  char line[128];
  CHECK(fgets(line, sizeof line, f) && strcmp(line, "record 0\n") == 0);
  long v = -1;
  CHECK(fscanf(f, "record %ld\n", &v) == 1 && v == 1);
  CHECK(fgetc(f) == 'r' && getc(f) == 'e');
  CHECK(fseek(f, 0, SEEK_END) == 0 && ftell(f) > 0);
  CHECK(fclose(f) == 0);
  FILE* b = fopen("table.bin", "wb");
  double row[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (long i = 0; i < records; ++i) CHECK(fwrite(row, sizeof row, 1, b) == 1);
  CHECK(fclose(b) == 0);
  b = fopen("table.bin", "rb");
  CHECK(fread(row, sizeof row, 1, b) == 1 && row[7] == 8);
  CHECK(fclose(b) == 0);
}

int main(int argc, char** argv) {
  long records = arg_or(argc, argv, 1, 16);
  posix_part(records);
  stdio_part(records);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    FILE* c = fopen("child.txt", "w");
    fprintf(c, "written by the child\n");
    fclose(c);
    _exit(0);
  }
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(system("cat notes.txt > copied.txt") == 0);
  puts("nonmpi done");
  return 0;
}
