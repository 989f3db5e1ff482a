#include "preload/cwd_cache.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

#include "preload/wrapper_support.hpp"

namespace mpior::preload::cwd {

namespace {

// Published copies of the directory, written once each and then only read:
// a reader copies the one g_current points at without a lock, so a signal
// handler's call may resolve a path too. A copy is rewritten only after
// kCopies later publications, far longer than any reader holds one.
struct Copy {
  size_t length;
  char path[PATH_MAX];
};
constexpr unsigned kCopies = 8;
Copy g_copies[kCopies];
std::atomic<unsigned> g_next{0};
std::atomic<const Copy*> g_current{nullptr};
std::atomic<uint64_t> g_changes{0};  // chdir/fchdir seen: a copy read before one is not published

void publish(const char* dir, size_t length, uint64_t changes_before) noexcept {
  Copy& c = g_copies[g_next.fetch_add(1, std::memory_order_relaxed) % kCopies];
  std::memcpy(c.path, dir, length);
  c.length = length;
  const Copy* none = nullptr;
  if (!g_current.compare_exchange_strong(none, &c, std::memory_order_release)) return;
  const Copy* mine = &c;  // a change came between getcwd and here: withdraw it
  if (g_changes.load(std::memory_order_acquire) != changes_before)
    g_current.compare_exchange_strong(mine, nullptr, std::memory_order_release);
}

}  // namespace

bool append_to(std::string& out) noexcept {
  try {
    if (const Copy* c = g_current.load(std::memory_order_acquire)) {
      out.append(c->path, c->length);
      return true;
    }
    const uint64_t changes = g_changes.load(std::memory_order_acquire);
    char buf[PATH_MAX];
    const int saved = errno;
    const bool ok = getcwd(buf, sizeof buf) != nullptr;
    errno = saved;
    if (!ok) return false;
    const size_t n = std::strlen(buf);
    publish(buf, n, changes);
    out.append(buf, n);
    return true;
  } catch (...) {  // out of memory: resolved as if the directory were unknown
    return false;
  }
}

void changed() noexcept {
  g_changes.fetch_add(1, std::memory_order_acq_rel);
  g_current.store(nullptr, std::memory_order_release);
}

}  // namespace mpior::preload::cwd

using namespace mpior::preload;

namespace {
using ChdirFn = int (*)(const char*);
using FchdirFn = int (*)(int);
std::atomic<ChdirFn> g_real_chdir{nullptr};
std::atomic<FchdirFn> g_real_fchdir{nullptr};
}  // namespace

// Not traced calls: intercepted only to drop the kept directory.
extern "C" __attribute__((visibility("default"))) int chdir(const char* path) {
  const int r = resolved_once(g_real_chdir, "chdir")(path);
  if (r == 0) cwd::changed();
  return r;
}

extern "C" __attribute__((visibility("default"))) int fchdir(int fd) {
  const int r = resolved_once(g_real_fchdir, "fchdir")(fd);
  if (r == 0) cwd::changed();
  return r;
}
