/* The idiom a program uses to put a pipe on its standard input (tar's child
 * feeding gzip): close(0), then dup() must return 0, the lowest free fd. The
 * close is the program's first traced call, so the tracer starts its crash
 * journal at its end: a file the tracer keeps open must not take fd 0.
 * Exits 0 when dup gave 0; then writes through the pipe and reads it back. */
#include <string.h>
#include <unistd.h>

#include "common.h"

int main(void) {
  int p[2];
  CHECK(pipe(p) == 0);
  CHECK(close(0) == 0);
  int in = dup(p[0]);
  CHECK(in == 0);
  CHECK(write(p[1], "lowest", 6) == 6);
  char buf[8] = {0};
  CHECK(read(0, buf, 6) == 6 && strcmp(buf, "lowest") == 0);
  return 0;
}
