// Recording hooks for memory-mapped files. Only mappings of traced files are
// kept (malloc's anonymous mappings pass through after one check). A readable
// mapping records reading its range within the file when mapped; a shared
// writable one writing at msync what the kernel holds dirty of the range
// (cachestat on the file, else the mapping's dirty-page count in
// /proc/self/smaps, read before the call), at munmap or exit
// its range (an upper bound: which pages were touched only the kernel knows,
// and its flusher may have cleaned some) or, once an msync counted it, only
// what the dirty-page count shows written since. A range ends once: a
// munmap of part of a mapping leaves the rest mapped (split around a hole),
// one spanning several mappings ends each, and an mmap with MAP_FIXED or an
// mremap over traced mappings ends what it covered (a munmap record of its own).
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
  int64_t offset;    // file offset of addr
  int64_t id;        // the pieces a partial unmapping leaves keep their mapping's id
  bool writes_back;  // MAP_SHARED with PROT_WRITE
  bool synced;       // an msync counted part of it: later counts ask the kernel
};

std::mutex g_mutex;
std::vector<Mapping>* g_maps = nullptr;  // never freed: exit handlers use it
std::atomic<int> g_count{0};             // fast path: no traced mapping at all
// Ids grow: a call that unmaps or moves captures the next id before the
// system call (lock-free: a signal handler may interrupt the tracer) and acts
// on older mappings only. One mapped meanwhile at an address the call just
// freed (a signal handler's or another thread's mmap) is not the one it ended.
std::atomic<int64_t> g_next_id{1};
constexpr int64_t kAnyId = INT64_MAX;

// The id limit a prepare hook stored in the call's map_id slot (none: every
// mapping, as the signal stash's deferred calls may come without one).
int64_t captured_limit(Call& c) noexcept {
  int64_t id = map_args_mut(c.ev()).map_id();
  return id > 0 ? id : kAnyId;
}

uintptr_t page_end(uintptr_t at) noexcept {
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  return (at + page - 1) / page * page;
}

// The mapping holding addr older than limit (under g_mutex).
Mapping* find(uintptr_t addr, int64_t limit = kAnyId) {
  if (!g_maps) return nullptr;
  for (Mapping& m : *g_maps)
    if (m.id < limit && addr >= m.addr && addr < m.addr + m.len) return &m;
  return nullptr;
}

// The first mapping older than limit with bytes in [lo, hi) (under g_mutex).
Mapping* first_in(uintptr_t lo, uintptr_t hi, int64_t limit) {
  Mapping* first = nullptr;
  for (Mapping& m : *g_maps)
    if (m.id < limit && m.addr < hi && m.addr + m.len > lo && (!first || m.addr < first->addr)) first = &m;
  return first;
}

// Takes m out of the table, leaving in it the parts of m outside [lo, hi)
// (the kernel unmaps whole pages: hi is rounded up). m is a copy.
void cut(const Mapping* at, uintptr_t lo, uintptr_t hi) {
  const Mapping m = *at;
  g_maps->erase(g_maps->begin() + (at - g_maps->data()));
  if (lo > m.addr) {
    Mapping head = m;
    head.len = lo - m.addr;
    g_maps->push_back(head);
  }
  hi = page_end(hi);
  if (hi < m.addr + m.len) {
    Mapping tail = m;
    tail.addr = hi;
    tail.len = m.addr + m.len - hi;
    tail.offset = m.offset + int64_t(hi - m.addr);
    g_maps->push_back(tail);
  }
  g_count.store(int(g_maps->size()), std::memory_order_relaxed);
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

// A record of the part [lo, hi) of m that a call naming another range ended
// (an mmap with MAP_FIXED or an mremap over it, a munmap spanning several
// mappings): a munmap of that part, the kernel's own, at the call's start and
// depth, before the call's own record; counted written as munmap counts (an
// upper bound).
void record_covered(const Call& c, const Mapping& m, uintptr_t lo, uintptr_t hi) noexcept {
  RawEvent ev;
  ev.kind = Kind::mpior_map_covered;
  ev.depth = c.ev().depth;
  ev.start = ev.end = c.ev().start;
  ev.callsite = c.ev().callsite;
  auto a = map_args_mut(ev);
  a.handle() = m.fd;
  a.file() = m.file;
  a.offset() = m.offset + int64_t(lo - m.addr);
  a.count() = unsynced_span(m, int64_t(hi - lo), -1);
  a.map_len() = int64_t(hi - lo);
  a.map_id() = m.id;
  record_event(ev);
}

// Ends [lo, hi) of every mapping older than limit: one record each (under g_mutex).
void close_range(const Call& c, uintptr_t lo, uintptr_t hi, int64_t limit) noexcept {
  if (!g_maps) return;
  hi = page_end(hi);
  try {
    while (Mapping* m = first_in(lo, hi, limit)) {
      record_covered(c, *m, std::max(lo, m->addr), std::min(page_end(hi), m->addr + m->len));
      cut(m, lo, hi);
    }
  } catch (...) {
  }
}

}  // namespace

bool map_any() noexcept { return g_count.load(std::memory_order_relaxed) != 0; }

// The range a MAP_FIXED mapping took ends every traced mapping there
// (whatever the new one maps: the program's file, another, anonymous memory);
// a mapping without it only lands where nothing is left mapped (an unmapping
// in flight closes its own).
void map_fd(Call& c, void* ret, size_t len, int prot, int flags, int fd, int64_t offset) noexcept {
  t_map_wrapper_depth = 0;
  if ((flags & MAP_FIXED) && ret != MAP_FAILED && map_any()) {
    std::lock_guard<std::mutex> lk(g_mutex);
    uintptr_t at = reinterpret_cast<uintptr_t>(ret);
    close_range(c, at, at + len, kAnyId);
  }
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
    int64_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
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
// unknown. msync asks always: it writes back exactly what is dirty (a program
// that syncs a whole large mapping after a few small writes would otherwise
// be replayed writing the whole span each time);
// munmap only after an msync, before which the span is the bound (the
// flusher may have cleaned pages the program wrote, which the kernel then no
// longer shows). /proc/self/smaps walks the page tables of the whole process
// (far slower than cachestat, more so with a large heap): the fallback.
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

// MS_ASYNC needs no look (cachestat's cost grows with the cached pages): it
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

void map_capture(Call& c) noexcept { map_args_mut(c.ev()).map_id() = g_next_id.load(std::memory_order_relaxed); }

void map_before_unmap(Call& c, void* addr, size_t len) noexcept {
  map_capture(c);
  t_unmap_dirty = dirty_before_call(c, reinterpret_cast<uintptr_t>(addr), len, false);
}

// The call's record is of the first mapping the range held (older than the
// call: see g_next_id); any other there gets a record of its own.
void map_unmap(Call& c, int64_t ret, void* addr, size_t len) noexcept {
  t_map_wrapper_depth = 0;
  const int64_t limit = captured_limit(c);
  const int64_t dirty = std::exchange(t_unmap_dirty, -1);
  if (g_count.load(std::memory_order_relaxed) == 0) return c.drop();
  std::lock_guard<std::mutex> lk(g_mutex);
  const uintptr_t lo = reinterpret_cast<uintptr_t>(addr), hi = page_end(lo + len);
  Mapping* m = find(lo, limit);
  if (!m) m = g_maps ? first_in(lo, hi, limit) : nullptr;
  if (!m) return c.drop();
  const uintptr_t from = std::max(lo, m->addr);
  fill(c, *m, from, std::min(hi, m->addr + m->len) - from);
  int64_t& count = map_args_mut(c.ev()).count();
  count = unsynced_span(*m, count, m->addr <= lo ? dirty : -1);
  c.ev().ret = ret;
  c.failed_if(ret != 0);
  if (ret != 0) {
    count = 0;
    return;
  }
  try {
    cut(m, lo, hi);
  } catch (...) {
  }
  close_range(c, lo, hi, limit);
}

void map_before_remap(Call& c, void*, size_t, size_t, int, void*) noexcept { map_capture(c); }

// The part [old, old + old_len) of a mapping moves to ret, resized: a
// shrink unmaps its tail, counted written as munmap would (the record's
// offset is then the tail's); the new range ends what was mapped there
// (MREMAP_FIXED).
void map_remap(Call& c, void* ret, void* old, size_t old_len, size_t new_len) noexcept {
  t_map_wrapper_depth = 0;
  const int64_t limit = captured_limit(c);
  if (g_count.load(std::memory_order_relaxed) == 0) return c.drop();
  std::lock_guard<std::mutex> lk(g_mutex);
  const uintptr_t lo = reinterpret_cast<uintptr_t>(old);
  Mapping* m = find(lo, limit);
  if (!m) return c.drop();
  const size_t part = std::min(old_len, m->len - (lo - m->addr));
  fill(c, *m, lo, new_len);
  auto a = map_args_mut(c.ev());
  a.count() = new_len < part ? unsynced_span(*m, int64_t(part - new_len), -1) : 0;
  c.ev().ret = ret == MAP_FAILED ? -1 : 0;
  c.failed_if(ret == MAP_FAILED);
  if (ret == MAP_FAILED) {
    a.count() = 0;
    return;
  }
  Mapping moved = *m;
  moved.addr = reinterpret_cast<uintptr_t>(ret);
  moved.len = new_len;
  moved.offset = a.offset();
  if (a.count() > 0) a.offset() += int64_t(new_len);  // the range counted: the tail
  try {
    if (old_len) cut(m, lo, lo + part);
    close_range(c, moved.addr, moved.addr + new_len, limit);
    g_maps->push_back(moved);
  } catch (...) {
  }
  g_count.store(int(g_maps->size()), std::memory_order_relaxed);
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
