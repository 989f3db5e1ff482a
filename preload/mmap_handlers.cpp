// Recording hooks for memory-mapped files. Only mappings of traced files are
// kept (malloc's anonymous mappings pass through after one check). A readable
// mapping records reading its range within the file when mapped; a shared
// writable one writing at msync what the kernel holds dirty of the range
// (cachestat on the file, else the mapping's dirty-page count in
// /proc/self/smaps, read before the call), at munmap or exit
// its range (an upper bound: which pages were touched only the kernel knows,
// and its flusher may have cleaned some) or, once an msync counted it, only
// what the dirty-page count shows written since.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "preload/fd_table.hpp"
#include "preload/ucm_bridge.hpp"
#include "preload/wrapper_support.hpp"
#include "trace/arg_setters.hpp"

namespace mpior::preload {

using namespace trace;

namespace {

struct Mapping {
  uintptr_t addr;
  size_t len;
  int fd;
  int32_t file;
  int64_t offset;  // file offset of addr
  int64_t id;
  bool writes_back;  // MAP_SHARED with PROT_WRITE
  bool synced;       // an msync counted part of it: later counts ask the kernel
};

std::mutex g_mutex;
std::vector<Mapping>* g_maps = nullptr;  // never freed: exit handlers use it
std::atomic<int> g_count{0};             // fast path: no traced mapping at all
int64_t g_next_id = 1;

// The mapping holding addr (under g_mutex).
Mapping* find(uintptr_t addr) {
  if (!g_maps) return nullptr;
  for (Mapping& m : *g_maps)
    if (addr >= m.addr && addr < m.addr + m.len) return &m;
  return nullptr;
}

// Dirty bytes of the memory area holding addr, from /proc/self/smaps; -1 when
// it cannot be read. Pages an MS_SYNC wrote back are clean until written
// again. Area headers are the lines starting with a lowercase hex digit
// ("lo-hi perms ..."); field names start upper case.
int64_t dirty_bytes(uintptr_t addr) {
  int fd = ::open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, size_t(n));
  ::close(fd);
  int64_t dirty = -1;
  bool inside = false;
  auto field = [](const char* line, const char* name) {
    size_t len = std::strlen(name);
    return std::strncmp(line, name, len) == 0 ? std::strtol(line + len, nullptr, 10) * 1024 : -1;
  };
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    const char* line = text.c_str() + at;
    at = eol + 1;
    char c = line[0];
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
      if (inside) break;
      char* end = nullptr;
      uintptr_t lo = std::strtoul(line, &end, 16);
      uintptr_t hi = *end == '-' ? std::strtoul(end + 1, nullptr, 16) : 0;
      inside = addr >= lo && addr < hi;
      if (inside) dirty = 0;
    } else if (inside && (c == 'S' || c == 'P')) {
      int64_t b = field(line, c == 'S' ? "Shared_Dirty:" : "Private_Dirty:");
      if (b > 0) dirty += b;
    }
  }
  return dirty;
}

// Bytes of [addr, addr + len) of m to count as written at munmap or exit:
// all of it before any msync, else what the kernel holds dirty (dirty: -1 unknown).
int64_t unsynced_span(const Mapping& m, int64_t span, int64_t dirty) {
  if (!m.writes_back) return 0;
  if (!m.synced || dirty < 0) return span;
  return std::min(span, dirty);
}

thread_local int64_t t_unmap_dirty = -1;  // map_before_unmap -> map_unmap

// inline: the msync, munmap and mremap handlers take these stores in place
// (GCC's size estimate through the slot setters leaves it out of line).
inline void fill(Call& c, const Mapping& m, uintptr_t addr, size_t len) {
  auto& ev = c.ev();
  size_t skip = addr - m.addr;
  size_t span = std::min(len, m.len - skip);
  auto a = map_args_mut(ev);
  a.handle() = m.fd;
  a.file() = m.file;
  a.offset() = m.offset + int64_t(skip);
  a.count() = m.writes_back ? int64_t(span) : 0;
  a.map_len() = int64_t(len);
  a.map_id() = m.id;
}

}  // namespace

bool map_any() noexcept { return g_count.load(std::memory_order_relaxed) != 0; }

void map_fd(Call& c, void* ret, size_t len, int prot, int flags, int fd, int64_t offset) noexcept {
  t_map_wrapper_depth = 0;
  if (fd < 0 || (flags & MAP_ANONYMOUS)) return c.drop();
  FdTable::Slot* slot = fds().traced(fd);
  if (!slot) return c.drop();
  auto& ev = c.ev();
  auto a = map_args_mut(ev);
  a.handle() = fd;
  a.file() = slot->file.load(std::memory_order_relaxed);
  a.offset() = offset;
  a.map_prot() = prot;
  a.map_flags() = flags;
  a.map_len() = int64_t(len);
  ev.ret = ret == MAP_FAILED ? -1 : 0;
  c.failed_if(ret == MAP_FAILED);
  if (ret == MAP_FAILED) return;
  struct stat st;
  int64_t size = fstat(fd, &st) == 0 ? int64_t(st.st_size) : 0;
  a.count() = (prot & PROT_READ) ? std::clamp<int64_t>(size - offset, 0, int64_t(len)) : 0;
  bool writes_back = (flags & MAP_SHARED) && (prot & PROT_WRITE);
  try {
    std::lock_guard<std::mutex> lk(g_mutex);
    if (!g_maps) g_maps = new std::vector<Mapping>();
    int64_t id = g_next_id++;
    g_maps->push_back({reinterpret_cast<uintptr_t>(ret), len, fd, int32_t(a.file()), offset, id, writes_back, false});
    a.map_id() = id;
    g_count.store(int(g_maps->size()), std::memory_order_relaxed);
  } catch (...) {
  }
}

namespace {

// The file's dirty bytes in [offset, offset + len) from the page cache
// (cachestat, Linux 6.5: a look at that range only), through the mapping's
// fd if it is still open on the same file; -1 where that cannot be asked.
int64_t cached_dirty(const Mapping& m, int64_t offset, int64_t len) noexcept {
  static std::atomic<bool> unsupported{false};
  if (unsupported.load(std::memory_order_relaxed) || len <= 0) return -1;
  FdTable::Slot* slot = fds().traced(m.fd);
  if (!slot || slot->file.load(std::memory_order_relaxed) != m.file) return -1;
  struct {
    uint64_t off, len;
  } range = {uint64_t(offset), uint64_t(len)};
  struct {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
  } stat = {};
  constexpr long kCachestat = 451;  // the same number on every architecture
  int saved = errno;
  long r = syscall(kCachestat, m.fd, &range, &stat, 0);
  if (r != 0 && errno == ENOSYS) unsupported.store(true, std::memory_order_relaxed);
  errno = saved;
  if (r != 0) return -1;
  return int64_t(stat.nr_dirty + stat.nr_writeback) * int64_t(sysconf(_SC_PAGESIZE));
}

// The kernel's dirty bytes of the mapping holding addr (msync: of the range
// [addr, addr + len) of the file, where cachestat can tell), read before the
// real call (the call's time starts again after); -1 when not asked or
// unknown. msync asks always: it writes back exactly what is dirty (fio's
// mmap engine synced its whole 8 MiB mapping after every 16 writes of 4 KiB:
// counting the span made the replay write 128 times the bytes, +800%);
// munmap only after an msync, before which the span is the bound (the
// flusher may have cleaned pages the program wrote, which the kernel then no
// longer shows). /proc/self/smaps walks the page tables of the whole process
// (about 100 us for a small one, more with a large heap): the fallback.
int64_t dirty_before_call(Call& c, uintptr_t addr, size_t len, bool always) noexcept {
  if (g_count.load(std::memory_order_relaxed) == 0) return -1;
  int64_t dirty = -1;
  {
    TracerGuard guard;
    Mapping m;
    {
      std::lock_guard<std::mutex> lk(g_mutex);
      Mapping* found = find(addr);
      if (!found || !found->writes_back || !(always || found->synced)) return -1;
      m = *found;
    }
    size_t skip = addr - m.addr;
    if (always) dirty = cached_dirty(m, m.offset + int64_t(skip), int64_t(std::min(len, m.len - skip)));
    if (dirty < 0) try {
        dirty = dirty_bytes(addr);
      } catch (...) {
      }
  }
  c.restart();
  return dirty;
}

thread_local int64_t t_sync_dirty = -1;  // map_before_sync -> map_sync

}  // namespace

// MS_ASYNC needs no look (cachestat takes about 40 ns a cached page): it
// counts nothing (map_sync).
void map_before_sync(Call& c, void* addr, size_t len, int flags) noexcept {
  t_sync_dirty = flags & MS_SYNC ? dirty_before_call(c, reinterpret_cast<uintptr_t>(addr), len, true) : -1;
}

void map_sync(Call& c, int64_t ret, void* addr, size_t len, int flags) noexcept {
  int64_t dirty = std::exchange(t_sync_dirty, -1);
  if (g_count.load(std::memory_order_relaxed) == 0) return c.drop();
  std::lock_guard<std::mutex> lk(g_mutex);
  Mapping* m = find(reinterpret_cast<uintptr_t>(addr));
  if (!m) return c.drop();
  fill(c, *m, reinterpret_cast<uintptr_t>(addr), len);
  // MS_ASYNC writes nothing back (Linux returns at once; the flusher or a
  // later MS_SYNC, munmap or exit writes the pages, and that counts them).
  auto a = map_args_mut(c.ev());
  if (!(flags & MS_SYNC)) a.count() = 0;
  if (dirty >= 0) a.count() = std::min(a.count(), dirty);
  a.map_prot() = flags;
  c.ev().ret = ret;
  c.failed_if(ret != 0);
  if (ret != 0) a.count() = 0;
  if (ret == 0 && m->writes_back) m->synced = true;
}

void map_before_unmap(Call& c, void* addr, size_t len) noexcept {
  t_unmap_dirty = dirty_before_call(c, reinterpret_cast<uintptr_t>(addr), len, false);
}

void map_unmap(Call& c, int64_t ret, void* addr, size_t len) noexcept {
  t_map_wrapper_depth = 0;
  if (g_count.load(std::memory_order_relaxed) == 0) return c.drop();
  std::lock_guard<std::mutex> lk(g_mutex);
  uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  Mapping* m = find(a);
  if (!m) return c.drop();
  fill(c, *m, a, len);
  int64_t& count = map_args_mut(c.ev()).count();
  count = unsynced_span(*m, count, std::exchange(t_unmap_dirty, -1));
  c.ev().ret = ret;
  c.failed_if(ret != 0);
  if (ret != 0) {
    count = 0;
    return;
  }
  if (a == m->addr && len >= m->len) {  // the whole mapping: forget it
    *m = g_maps->back();
    g_maps->pop_back();
  } else if (a == m->addr) {  // the head
    m->offset += int64_t(len), m->addr += len, m->len -= len;
  } else {  // the tail (a hole in the middle keeps the rest as one)
    m->len = std::min(m->len, a - m->addr);
  }
  g_count.store(int(g_maps->size()), std::memory_order_relaxed);
}

void map_remap(Call& c, void* ret, void* old, size_t new_len) noexcept {
  t_map_wrapper_depth = 0;
  if (g_count.load(std::memory_order_relaxed) == 0) return c.drop();
  std::lock_guard<std::mutex> lk(g_mutex);
  Mapping* m = find(reinterpret_cast<uintptr_t>(old));
  if (!m) return c.drop();
  fill(c, *m, m->addr, new_len);
  map_args_mut(c.ev()).count() = 0;
  c.ev().ret = ret == MAP_FAILED ? -1 : 0;
  c.failed_if(ret == MAP_FAILED);
  if (ret == MAP_FAILED) return;
  m->addr = reinterpret_cast<uintptr_t>(ret);
  m->len = new_len;
}

void map_record_live() noexcept {
  std::lock_guard<std::mutex> lk(g_mutex);
  if (!g_maps) return;
  for (const Mapping& m : *g_maps) {
    if (!m.writes_back) continue;
    RawEvent ev;
    ev.kind = Kind::mpior_map_exit;
    ev.start = ev.end = clock::now();
    auto a = map_args_mut(ev);
    a.handle() = m.fd;
    a.file() = m.file;
    a.offset() = m.offset;
    int64_t dirty = -1;
    if (m.synced) try {
        dirty = dirty_bytes(m.addr);
      } catch (...) {
      }
    a.count() = unsynced_span(m, int64_t(m.len), dirty);
    a.map_len() = int64_t(m.len);
    a.map_id() = m.id;
    record_event(ev);
  }
  g_maps->clear();
  g_count.store(0, std::memory_order_relaxed);
}

}  // namespace mpior::preload
