#include "preload/meta_journal.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

#include "preload/high_fd.hpp"
#include "preload/log.hpp"
#include "trace/codec.hpp"

namespace mpior::preload::meta_journal {

namespace {

constexpr size_t kFirstBytes = size_t(64) << 10;

std::mutex g_mutex;
int g_fd = -1;
uint8_t* g_map = nullptr;  // the file's first g_mapped bytes; nullptr: frames written with pwrite
size_t g_mapped = 0;
size_t g_used = 0;  // bytes of whole frames

// Room for `need` more bytes in the mapping: the file and its mapping grown
// (doubled, at least to fit); false when either cannot grow.
bool make_room(size_t need) noexcept {
  if (g_map && g_used + need <= g_mapped) return true;
  size_t size = std::max(g_mapped ? g_mapped * 2 : kFirstBytes, g_used + need);
  size = (size + 4095) & ~size_t(4095);
  if (ftruncate(g_fd, off_t(size)) != 0) return false;
  void* m = g_map ? mremap(g_map, g_mapped, size, MREMAP_MAYMOVE)
                  : mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, g_fd, 0);
  if (m == MAP_FAILED) return false;
  g_map = static_cast<uint8_t*>(m);
  g_mapped = size;
  return true;
}

void unmap() noexcept {
  if (g_map) munmap(g_map, g_mapped);
  g_map = nullptr;
  g_mapped = g_used = 0;
}

}  // namespace

bool open(const std::string& path) noexcept {
  std::lock_guard<std::mutex> lk(g_mutex);
  g_fd = hold_high_fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  g_used = 0;
  return g_fd >= 0;
}

void append(std::span<const uint8_t> payload) noexcept {
  const uint32_t len = uint32_t(payload.size()), crc = trace::crc32c(payload);
  std::lock_guard<std::mutex> lk(g_mutex);
  if (g_fd < 0) return;
  const size_t need = 8 + payload.size();
  if (g_map || g_used == 0) {
    if (make_room(need)) {
      // The length last: a process killed mid-copy leaves a zero length, the end to a reader.
      uint8_t* at = g_map + g_used;
      std::memcpy(at + 8, payload.data(), payload.size());
      std::memcpy(at + 4, &crc, 4);
      std::memcpy(at, &len, 4);
      g_used += need;
      return;
    }
    // A full disk or no address space: the frames copied stay in the file, the next ones follow them there.
    const size_t used = g_used;
    unmap();
    g_used = used;
  }
  uint8_t head[8];
  std::memcpy(head, &len, 4);
  std::memcpy(head + 4, &crc, 4);
  if (pwrite(g_fd, head, 8, off_t(g_used)) != 8 ||
      pwrite(g_fd, payload.data(), payload.size(), off_t(g_used + 8)) != ssize_t(payload.size()))
    return log_once_error("crash journal: cannot append to the meta journal");
  g_used += need;
}

void remove(const std::string& path) noexcept {
  std::lock_guard<std::mutex> lk(g_mutex);
  unlink(path.c_str());
  unmap();
  if (g_fd >= 0) close(g_fd);
  g_fd = -1;
}

void reset_after_fork() noexcept {
  new (&g_mutex) std::mutex();
  if (g_fd >= 0) close(g_fd);
  g_fd = -1;
  unmap();
}

}  // namespace mpior::preload::meta_journal
