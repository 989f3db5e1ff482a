// Spill segments: see spill_writer.hpp and docs/tracer-internals.md (Bounded memory).
#include "preload/spill_writer.hpp"

#include <fcntl.h>
#include <semaphore.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "preload/config.hpp"
#include "preload/journal.hpp"
#include "preload/log.hpp"
#include "preload/recorder.hpp"
#include "preload/session.hpp"
#include "preload/thread_state.hpp"
#include "trace/format.hpp"

namespace mpior::preload::spill {
namespace {

constinit config::Option<std::string_view> opt_memory{
    "MPIOR_MEMORY", "64M",
    "cap on a rank's in-memory trace, in bytes (suffix K, M, G); the older part of each thread's stream goes to "
    "rank-NNNNNN.spill.mpior beyond it; 0: no cap"};
MPIOR_REGISTER_OPTION(opt_memory);

constexpr uint64_t kDefaultCap = uint64_t(64) << 20;
// A folded part this large (about 30,000 irregular calls) takes milliseconds
// to snapshot: a periodic flush spills it instead when it is growing.
constexpr size_t kFlushSpillBytes = size_t(1) << 20;

std::atomic<uint64_t> g_segments{0};
std::atomic<bool> g_flusher{false};
sem_t g_wake;
std::atomic<bool> g_sem_ready{false};

bool parse_size(std::string_view t, uint64_t* out) {
  uint64_t v = 0;
  size_t i = 0;
  for (; i < t.size() && t[i] >= '0' && t[i] <= '9'; ++i) v = v * 10 + uint64_t(t[i] - '0');
  if (i == 0 || i + 1 < t.size()) return false;
  int shift = 0;
  if (i < t.size()) {
    char c = t[i];
    shift = (c == 'K' || c == 'k') ? 10 : (c == 'M' || c == 'm') ? 20 : (c == 'G' || c == 'g') ? 30 : -1;
    if (shift < 0) return false;
  }
  *out = v << shift;
  return true;
}

uint64_t read_cap() noexcept {
  uint64_t v = kDefaultCap;
  if (!parse_size(opt_memory.get(), &v)) {
    log_warn("MPIOR_MEMORY={}: not a size (bytes, suffix K, M or G); using 64M", opt_memory.get());
    v = kDefaultCap;
  }
  return v;
}

// Appends the whole segment or nothing (a failed write is cut off again).
bool append(const std::string& path, const std::vector<uint8_t>& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  struct stat st;
  off_t before = ::fstat(fd, &st) == 0 ? st.st_size : -1;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  if (done != bytes.size() && before >= 0) (void)!::ftruncate(fd, before);  // leave no torn segment behind
  return ::close(fd) == 0 && done == bytes.size();
}

// The caller holds the write flag.
void spill_locked(ThreadRecorder& r) noexcept {
  if (!r.spill_pending()) return;
  std::string path;
  int32_t rank = 0;
  if (!session::spill_target(&path, &rank)) return r.spill_refused();
  try {
    trace::FoldedPart part = r.take_folded();
    trace::SpillSegment seg;
    seg.rank = rank;
    seg.seq = g_segments.load();
    uint64_t events = part.events();
    seg.stream = part.finish(rank, r.index());
    std::vector<uint8_t> bytes = trace::encode(seg);
    seg.stream = {};
    if (!append(path, bytes)) {
      log_error("rank {}: cannot append to {}: {}; {} events lost", rank, path, std::strerror(errno), events);
      return;
    }
    g_segments.fetch_add(1);
    log_debug("rank {}: thread {} spilled {} events ({} bytes) to {}", rank, r.index(), events, bytes.size(), path);
  } catch (...) {
    log_once_error("out of memory while spilling the trace; events were lost");
  }
}

}  // namespace

uint64_t cap_bytes() noexcept {
  static const uint64_t cap = read_cap();
  return cap;
}

uint64_t segments() noexcept { return g_segments.load(); }

void set_flusher(bool running) noexcept {
  if (running && !g_sem_ready.exchange(true)) sem_init(&g_wake, 0, 0);
  g_flusher.store(running);
}

bool request() noexcept {
  if (!g_flusher.load()) return false;
  sem_post(&g_wake);
  return true;
}

void wait(long ms) noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) ts.tv_sec += 1, ts.tv_nsec -= 1000000000;
  while (sem_timedwait(&g_wake, &ts) != 0 && errno == EINTR) {
  }
}

void service() noexcept {
  TracerGuard guard;
  try {
    for (ThreadRecorder* r : all_recorders()) {
      if (!r->spill_pending()) continue;
      session::lock_writes();
      spill_locked(*r);
      session::release_writes();
    }
  } catch (...) {
  }
}

void before_flush() noexcept {
  if (cap_bytes() == 0) return;
  try {
    bool any = false;
    const bool eager = journal::g_started.load(std::memory_order_relaxed);
    for (ThreadRecorder* r : all_recorders()) any = r->spill_before_flush(kFlushSpillBytes, eager) || any;
    if (any) service();
  } catch (...) {
  }
}

void spill_now(ThreadRecorder& r) noexcept {
  TracerGuard guard;
  session::lock_writes();
  spill_locked(r);
  session::release_writes();
}

void reset_after_fork() noexcept {
  g_segments.store(0);
  g_flusher.store(false);
}

}  // namespace mpior::preload::spill
