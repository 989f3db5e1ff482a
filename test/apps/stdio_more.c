/* The rest of stdio: getline/getdelim, the _unlocked forms, putchar,
 * vfscanf, fgetpos/fsetpos, dprintf/vdprintf. Built twice: as is, and with
 * -D_FORTIFY_SOURCE=2 (stdio_more_chk), where the compiler calls the _chk
 * forms and glibc's headers inline the character-at-a-time _unlocked macros
 * (those are not calls: this program uses fputc/fgetc there instead).
 * usage: stdio_more [lines=20]; lines.txt is lines * 10 + 102 bytes. */
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static int scan(FILE* f, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfscanf(f, fmt, ap);
  va_end(ap);
  return r;
}

static int dp(int fd, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vdprintf(fd, fmt, ap);
  va_end(ap);
  return r;
}

#ifdef __OPTIMIZE__ /* the header macros would inline these */
#define PUTC2(c, f) (fputc(c, f) == (c) && fputc(c, f) == (c))
#define GETC2(f) (fgetc(f) != EOF && fgetc(f) != EOF)
#else
#define PUTC2(c, f) (fputc_unlocked(c, f) == (c) && putc_unlocked(c, f) == (c))
#define GETC2(f) (fgetc_unlocked(f) != EOF && getc_unlocked(f) != EOF)
#endif

static void write_lines(long lines) {
  FILE* f = fopen("lines.txt", "w");
  CHECK(f != NULL);
  char line[32], block[100];
  for (long i = 0; i < lines; ++i) {
    snprintf(line, sizeof line, "line %04ld\n", i);
    CHECK(fputs_unlocked(line, f) >= 0);
  }
  memset(block, 'b', sizeof block);
  CHECK(fwrite_unlocked(block, 1, sizeof block, f) == sizeof block);
  CHECK(PUTC2('\n', f));
  CHECK(fclose(f) == 0);
}

static void read_lines(long lines) {
  FILE* f = fopen("lines.txt", "r");
  CHECK(f != NULL);
  char* lp = NULL;
  size_t cap = 0;
  long i = 0;
  for (; i < lines / 2; ++i) CHECK(getline(&lp, &cap, f) == 10);
  fpos_t pos;
  char buf[64];
  /* Sizes known only at run time: fortified builds call the _chk forms. */
  int room = (int)sizeof buf - (lines < 0);
  CHECK(fgetpos(f, &pos) == 0);
  CHECK(fgets_unlocked(buf, room, f) != NULL && strlen(buf) == 10);
  size_t ten = strlen(buf);
  CHECK(fsetpos(f, &pos) == 0);
  CHECK(getdelim(&lp, &cap, '\n', f) == 10); /* the same line again */
  int v = -1;
  CHECK(scan(f, "line %d", &v) == 1 && v == i + 1 && fgetc(f) == '\n');
  CHECK(fread_unlocked(buf, 1, ten, f) == 10 && fread(buf, 1, ten, f) == 10);
  CHECK(fgets(buf, room, f) != NULL);
  CHECK(GETC2(f));                   /* "li" */
  CHECK(getline(&lp, &cap, f) == 8); /* "ne 00NN\n" */
  while (getline(&lp, &cap, f) > 0) {
  }
  free(lp);
  CHECK(fclose(f) == 0);
}

int main(int argc, char** argv) {
  long lines = arg_or(argc, argv, 1, 20);
  write_lines(lines);
  read_lines(lines);
  int fd = open("dprintf.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0 && dprintf(fd, "value %d\n", 42) == 9 && dp(fd, "%s-%d\n", "abc", 7) == 6 && close(fd) == 0);
  CHECK(putchar('o') == 'o' && putchar('k') == 'k' && putchar('\n') == '\n');
  return 0;
}
