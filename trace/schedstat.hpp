// How long the calling thread has waited on a run queue for a CPU: the
// kernel's schedstat run_delay. The tracer leaves it out of the computation
// it records (preload/stolen_time.cpp); the replayer reports its own threads'
// against the traced run's (replayer/pacing_clock.cpp).
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace mpior::trace {

// Nanoseconds, -1 when unknown. Raw system calls: nothing here reaches an
// intercepted symbol (the tracer's own reads are not the program's), and
// ThreadSanitizer does not take the descriptor numbers, recycled between
// threads, for shared objects. Opened per reading: a descriptor kept per
// thread would survive fork() and read the parent's thread.
inline int64_t thread_run_delay_ns() noexcept {
  int fd = int(syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return -1;
  char buf[96];
  long n = syscall(SYS_pread64, fd, buf, sizeof buf - 1, 0);
  syscall(SYS_close, fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char* field = nullptr;  // "<on cpu ns> <run queue ns> <timeslices>"
  std::strtoll(buf, &field, 10);
  if (field == buf) return -1;
  char* rest = nullptr;
  long long delay = std::strtoll(field, &rest, 10);
  return rest == field || delay < 0 ? -1 : delay;
}

}  // namespace mpior::trace
