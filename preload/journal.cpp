#include "preload/journal.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <mutex>

#include "preload/config.hpp"
#include "preload/crash.hpp"
#include "preload/log.hpp"
#include "preload/spill_writer.hpp"
#include "preload/thread_state.hpp"
#include "preload/trace_clock.hpp"
#include "trace/format.hpp"

namespace mpior::preload::journal {

std::atomic<Ring*> g_rings[kMaxThreads];
std::atomic<bool> g_started{false};

namespace {

constinit config::Option<int64_t> opt_journal{
    "MPIOR_JOURNAL", 65536,
    "records each thread keeps in its crash journal, a file under the trace directory that survives SIGKILL "
    "(128 bytes a record; half full, the rank's trace is rewritten early; the threads' rings share an eighth of "
    "MPIOR_MEMORY); 0: no journal"};
MPIOR_REGISTER_OPTION(opt_journal);

std::string g_dir, g_name;  // the trace directory, the trace file's name there
int32_t g_rank = 0;
int g_meta_fd = -1;
std::mutex g_meta_mutex;
std::atomic<uint8_t> g_failed[kMaxThreads];
std::atomic<bool> g_flush_wanted{false};
std::atomic<uint64_t> g_covered[kMaxThreads];  // cover(): under the tracer's write flag

// Records the process's rings may still take (start(); none left: a
// thread goes without).
std::atomic<uint64_t> g_budget{0};

// The records MPIOR_JOURNAL asks of every ring, a power of two.
uint64_t wanted() noexcept {
  const uint64_t want = uint64_t(std::max<int64_t>(opt_journal.get(), int64_t(kMinRing)));
  return std::bit_ceil(want);
}

// A new ring's share of g_budget, taken from it; 0: none left.
uint64_t reserve() noexcept {
  uint64_t left = g_budget.load(std::memory_order_relaxed), take = 0;
  do {
    take = ring_records(wanted(), left);
  } while (take > 0 && !g_budget.compare_exchange_weak(left, left - take, std::memory_order_relaxed));
  return take;
}

// Raw records carry ticks: the conversion the recorder applies when it folds them.
void set_clock(trace::JournalHeader& h) noexcept {
  constexpr int64_t kSpan = int64_t(1) << 30;
  h.ns_per_tick = double(clock::duration_ns(kSpan)) / double(kSpan);
  h.zero_ns = clock::to_ns(0);
}

void write_frame(const std::vector<uint8_t>& payload) noexcept {
  std::vector<uint8_t> frame(8 + payload.size());
  uint32_t len = uint32_t(payload.size()), crc = trace::crc32c(payload);
  std::memcpy(frame.data(), &len, 4);
  std::memcpy(frame.data() + 4, &crc, 4);
  std::memcpy(frame.data() + 8, payload.data(), payload.size());
  std::lock_guard<std::mutex> lk(g_meta_mutex);
  if (g_meta_fd >= 0 && write(g_meta_fd, frame.data(), frame.size()) != ssize_t(frame.size()))
    log_once_error("crash journal: cannot append to the meta journal");
}

}  // namespace

bool enabled() noexcept { return opt_journal.get() > 0; }

uint64_t ring_records(uint64_t want, uint64_t left) noexcept {
  const uint64_t limit = std::min(want, left / 2 >= kMinRing ? left / 2 : left);
  return limit < kMinRing ? 0 : std::bit_floor(limit);
}

Ring* open_ring(uint32_t thread) noexcept {
  if (!g_started.load(std::memory_order_acquire) || g_failed[thread].exchange(1)) return nullptr;
  TracerGuard guard;
  const uint64_t cap = reserve();
  if (cap == 0) {
    log_once_error("crash journal: MPIOR_MEMORY holds no more rings; threads from here keep none");
    return nullptr;  // g_failed stays set
  }
  const size_t bytes = trace::kJournalHeaderBytes + cap * sizeof(trace::JournalRecord);
  std::string path = g_dir + "/" + trace::journal_file_name(g_name, thread);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  void* map = MAP_FAILED;
  if (fd >= 0 && ftruncate(fd, off_t(bytes)) == 0)
    map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  Ring* r = map == MAP_FAILED ? nullptr : new (std::nothrow) Ring;
  if (!r) {
    log_error("crash journal: cannot map {}: {}", path, std::strerror(errno));
    return nullptr;  // g_failed stays set: no retry on every record
  }
  auto* h = new (map) trace::JournalHeader();
  h->record_size = sizeof(trace::JournalRecord);
  h->kinds = trace::kinds_fingerprint();
  h->rank = g_rank;
  h->thread = thread;
  h->capacity = cap;
  set_clock(*h);
  *r = {h, reinterpret_cast<trace::JournalRecord*>(static_cast<char*>(map) + trace::kJournalHeaderBytes), cap - 1,
        cap / 2};
  g_rings[thread].store(r, std::memory_order_release);
  return r;
}

void want_flush() noexcept {
  if (!g_flush_wanted.exchange(true, std::memory_order_relaxed)) crash::want_flush();
}

bool take_flush_wanted() noexcept { return g_flush_wanted.exchange(false, std::memory_order_relaxed); }

void start(const std::string& dir, const std::string& trace_name, int32_t rank) noexcept {
  if (!enabled() || g_started.load()) return;
  TracerGuard guard;
  g_dir = dir;
  g_name = trace_name;
  g_rank = rank;
  // The rings' pages are the process's memory once touched, so they take
  // their part of MPIOR_MEMORY, an eighth, shared by the threads.
  const uint64_t memory = spill::cap_bytes();
  g_budget.store(memory > 0 ? memory / 8 / sizeof(trace::JournalRecord) : UINT64_MAX, std::memory_order_relaxed);
  std::string meta = dir + "/" + trace::journal_meta_name(trace_name);
  g_meta_fd = open(meta.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (g_meta_fd < 0) return log_error("crash journal: cannot open {}: {}", meta, std::strerror(errno));
  g_started.store(true, std::memory_order_release);
}

void note_file(int32_t id, const trace::FileEntry& f) noexcept {
  if (!g_started.load(std::memory_order_acquire)) return;
  TracerGuard guard;
  try {
    write_frame(trace::journal_file_frame(id, f));
  } catch (...) {
  }
}

void note_comm(const trace::CommEntry& c) noexcept {
  if (!g_started.load(std::memory_order_acquire)) return;
  TracerGuard guard;
  try {
    write_frame(trace::journal_comm_frame(c));
  } catch (...) {
  }
}

uint64_t cover(uint32_t thread, uint64_t events) noexcept {
  if (thread < kMaxThreads) g_covered[thread].store(events, std::memory_order_relaxed);
  return events;
}

void flushed() noexcept {
  if (!g_started.load(std::memory_order_acquire)) return;
  for (uint32_t i = 0; i < kMaxThreads; ++i)
    if (Ring* r = g_rings[i].load(std::memory_order_acquire)) {
      set_clock(*r->header);
      __atomic_store_n(&r->header->flushed, g_covered[i].load(std::memory_order_relaxed), __ATOMIC_RELEASE);
    }
}

void finish() noexcept {
  if (!g_started.exchange(false)) return;
  TracerGuard guard;
  for (uint32_t i = 0; i < kMaxThreads; ++i)
    if (g_rings[i].load(std::memory_order_acquire)) unlink((g_dir + "/" + trace::journal_file_name(g_name, i)).c_str());
  std::lock_guard<std::mutex> lk(g_meta_mutex);
  unlink((g_dir + "/" + trace::journal_meta_name(g_name)).c_str());
  if (g_meta_fd >= 0) close(g_meta_fd);
  g_meta_fd = -1;
}

void reset_after_fork() noexcept {
  g_started.store(false);
  g_flush_wanted.store(false, std::memory_order_relaxed);
  for (uint32_t i = 0; i < kMaxThreads; ++i) {
    g_rings[i].store(nullptr, std::memory_order_relaxed);
    g_failed[i].store(0, std::memory_order_relaxed);
    g_covered[i].store(0, std::memory_order_relaxed);
  }
  new (&g_meta_mutex) std::mutex();
  if (g_meta_fd >= 0) close(g_meta_fd);
  g_meta_fd = -1;
}

}  // namespace mpior::preload::journal
