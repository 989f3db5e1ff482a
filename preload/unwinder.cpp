#include "preload/unwinder.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>

namespace mpior::preload::unwinder {
namespace {

using BacktraceFn = int (*)(void**, int);
std::atomic<BacktraceFn> g_backtrace{nullptr};

// The fds a program may count on getting back (0-2 closed and reopened, the
// first files it opens): placeholders hold them while libunwind makes its pipe.
constexpr int kLowFds = 16;

}  // namespace

void load() noexcept {
  void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
  auto fn = lib ? reinterpret_cast<BacktraceFn>(dlsym(lib, "unw_backtrace")) : nullptr;
  if (!fn) return;
  int held[kLowFds];
  int n = 0;
  for (int fd; n < kLowFds && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) {
    if (fd >= kLowFds) {
      close(fd);
      break;
    }
    held[n++] = fd;
  }
  void* frames[4];
  fn(frames, 4);
  while (n > 0) close(held[--n]);
  g_backtrace.store(fn, std::memory_order_release);
}

int backtrace(void** frames, int size) noexcept {
  BacktraceFn fn = g_backtrace.load(std::memory_order_acquire);
  return fn ? fn(frames, size) : 0;
}

}  // namespace mpior::preload::unwinder
