// syscall(SYS_write, ...) and its read/write siblings: a program (or a
// library) that calls the kernel through glibc's syscall() skips every
// wrapper. The I/O numbers are recorded as the functions of the same name;
// a change of directory drops the kept one (cwd_cache.hpp); every other
// number goes straight through after two comparisons. Code that
// issues the instruction itself (static runtimes, io_uring) stays unseen.
#include <stdarg.h>
#include <sys/syscall.h>

#include <atomic>

#include "preload/cwd_cache.hpp"
#include "preload/wrapper_support.hpp"

namespace mpior::preload {
namespace {

using SyscallFn = long (*)(long, ...);

std::atomic<SyscallFn> g_real_syscall{nullptr};

// The kind a read/write system call number is recorded as, or false.
bool io_kind(long n, trace::Kind& kind) noexcept {
  switch (n) {
    case SYS_read:
      kind = trace::Kind::read;
      return true;
    case SYS_write:
      kind = trace::Kind::write;
      return true;
    case SYS_pread64:
      kind = trace::Kind::pread64;
      return true;
    case SYS_pwrite64:
      kind = trace::Kind::pwrite64;
      return true;
    default:
      return false;
  }
}

}  // namespace
}  // namespace mpior::preload

using namespace mpior::preload;

extern "C" MPIOR_API long mpior_syscall(long n, ...) __asm__("syscall");

long mpior_syscall(long n, ...) {
  // The kernel takes six arguments at most; glibc's syscall() reads six too.
  va_list ap;
  va_start(ap, n);
  long a[6];
  for (long& x : a) x = va_arg(ap, long);
  va_end(ap);
  SyscallFn real = resolved_once(g_real_syscall, "syscall");
  mpior::trace::Kind kind;
  if (!io_kind(n, kind)) {
    const long r = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
    if ((n == SYS_chdir || n == SYS_fchdir) && r == 0) cwd::changed();
    return r;
  }
  Call call(kind, true);
  if (!call.active()) return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
  long ret = real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
  call.stop();
  bool positioned = n == SYS_pread64 || n == SYS_pwrite64;
  fd_io(call, ret, int(a[0]), a[2], positioned ? a[3] : expr::kAtCursor);
  return ret;
}
