#include "preload/journal.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <mutex>

#include "preload/config.hpp"
#include "preload/crash.hpp"
#include "preload/log.hpp"
#include "preload/meta_journal.hpp"
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

// The trace directory and the trace file's name there. Never destroyed: the
// exit handler, registered before this file's statics may be made, runs
// after their destructors.
struct Where {
  std::string dir, name;
};
Where& where() {
  static Where* w = new Where;
  return *w;
}
std::mutex g_dir_mutex;  // the directory moves when a job the process launched moves its trace aside
int32_t g_rank = 0;
std::atomic<uint8_t> g_failed[kMaxThreads];
std::atomic<bool> g_flush_wanted{false};
std::atomic<bool> g_flushes_here{false};
std::atomic<uint64_t> g_covered[kMaxThreads];  // cover(): under the tracer's write flag
// One past the highest thread that has a ring or joined the shared one:
// flushed() moves the marks of those only, not of every possible thread.
std::atomic<uint32_t> g_threads{0};

void note_thread(uint32_t thread) noexcept {
  uint32_t seen = g_threads.load(std::memory_order_relaxed);
  while (seen <= thread && !g_threads.compare_exchange_weak(seen, thread + 1, std::memory_order_release)) {
  }
}

// Journal bytes the rings of their own may still take (start(): an eighth
// of MPIOR_MEMORY less the shared ring's; none left: a thread shares).
std::atomic<uint64_t> g_budget{0};

// The records MPIOR_JOURNAL asks of every ring, a power of two.
uint64_t wanted() noexcept {
  const uint64_t want = uint64_t(std::max<int64_t>(opt_journal.get(), int64_t(kMinRing)));
  return std::bit_ceil(want);
}

uint64_t ring_bytes(uint64_t records) noexcept {
  return trace::kJournalHeaderBytes + records * sizeof(trace::JournalRecord);
}

// A new ring's share of g_budget, taken from it; 0: none left.
uint64_t reserve() noexcept {
  uint64_t left = g_budget.load(std::memory_order_relaxed), take = 0;
  do {
    const uint64_t records = left > ring_bytes(0) ? (left - ring_bytes(0)) / sizeof(trace::JournalRecord) : 0;
    take = ring_records(wanted(), records);
  } while (take > 0 && !g_budget.compare_exchange_weak(left, left - ring_bytes(take), std::memory_order_relaxed));
  return take;
}

// The shared ring: threads beyond the budget (most of a process's threads
// when MPIOR_MEMORY is small and they are many) store their records in
// one ring, each taking the next slot. Rings of ever smaller size would
// not do: a thread's flush check comes every 1,024 records, and any number
// of rings of a floor size exceeds any bound; rings taken back from
// finished threads help only threads that come and go. A slot is reused
// only once the rank file holds the record in it (its thread's count in
// `flushed`): a thread that finds its slot unflushed asks for a flush and
// waits for it (kWaitMs at most, then overwrites: a flush that never
// comes must not stop the program), so that the loss stays bounded by
// events however many threads share it. Half of it unflushed has the rank
// file rewritten early, as a thread's own ring does.
struct Shared {
  trace::JournalHeader* header;
  uint64_t* flushed;  // by thread: its events the rank file holds
  trace::JournalRecord* records;
  uint64_t capacity;
  std::atomic<uint64_t> next{0};
};
constexpr long kWaitMs = 5000;
std::atomic<Shared*> g_shared{nullptr};
uint64_t g_shared_records = 0;  // start(): its size, kept out of g_budget
std::atomic<uint8_t> g_in_shared[kMaxThreads];
std::mutex g_shared_mutex;
bool g_shared_failed = false;  // under g_shared_mutex

// Raw records carry ticks: the conversion the recorder applies when it folds them.
void set_clock(trace::JournalHeader& h) noexcept {
  constexpr int64_t kSpan = int64_t(1) << 30;
  h.ns_per_tick = double(clock::duration_ns(kSpan)) / double(kSpan);
  h.zero_ns = clock::to_ns(0);
}

}  // namespace

bool enabled() noexcept { return opt_journal.get() > 0; }

uint64_t ring_records(uint64_t want, uint64_t left) noexcept {
  const uint64_t limit = std::min(want, left / 2 >= kMinRing ? left / 2 : left);
  return limit < kMinRing ? 0 : std::bit_floor(limit);
}

uint64_t shared_records(uint64_t bytes) noexcept {
  const uint64_t fit =
      bytes > trace::kJournalSharedRecords ? (bytes - trace::kJournalSharedRecords) / sizeof(trace::JournalRecord) : 0;
  return fit < kMinRing ? 0 : fit;
}

namespace {

std::string path_of(const std::string& name) {
  std::lock_guard<std::mutex> lk(g_dir_mutex);
  return where().dir + "/" + name;
}

// A file of `bytes` under the trace directory, mapped shared; nullptr (said) if not.
void* map_file(const std::string& name, size_t bytes) noexcept {
  const std::string path = path_of(name);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  void* map = MAP_FAILED;
  if (fd >= 0 && ftruncate(fd, off_t(bytes)) == 0)
    map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  if (map != MAP_FAILED) return map;
  log_error("crash journal: cannot map {}: {}", path, std::strerror(errno));
  return nullptr;
}

trace::JournalHeader* new_header(void* map, uint32_t thread, uint64_t capacity) noexcept {
  auto* h = new (map) trace::JournalHeader();
  h->record_size = sizeof(trace::JournalRecord);
  h->kinds = trace::kinds_fingerprint();
  h->rank = g_rank;
  h->thread = thread;
  h->capacity = capacity;
  set_clock(*h);
  return h;
}

// The thread's own ring; nullptr when none is left (*none_left) or it cannot be mapped.
Ring* open_ring(uint32_t thread, bool* none_left) noexcept {
  const uint64_t cap = reserve();
  if ((*none_left = cap == 0)) return nullptr;
  void* map = map_file(trace::journal_file_name(where().name, thread), ring_bytes(cap));
  Ring* r = map ? new (std::nothrow) Ring : nullptr;
  if (!r) return nullptr;
  trace::JournalHeader* h = new_header(map, thread, cap);
  *r = {h, reinterpret_cast<trace::JournalRecord*>(static_cast<char*>(map) + trace::kJournalHeaderBytes), cap - 1,
        cap / 2};
  g_rings[thread].store(r, std::memory_order_release);
  note_thread(thread);
  return r;
}

Shared* map_shared() noexcept {
  if (g_shared_records == 0) return nullptr;
  const uint64_t cap = g_shared_records;
  void* map = map_file(trace::journal_shared_name(where().name),
                       trace::kJournalSharedRecords + cap * sizeof(trace::JournalRecord));
  Shared* s = map ? new (std::nothrow) Shared : nullptr;
  if (!s) return nullptr;
  s->header = new_header(map, trace::kJournalShared, cap);
  s->flushed = reinterpret_cast<uint64_t*>(static_cast<char*>(map) + trace::kJournalHeaderBytes);
  s->records = reinterpret_cast<trace::JournalRecord*>(static_cast<char*>(map) + trace::kJournalSharedRecords);
  s->capacity = cap;
  return s;
}

// The thread stores its records in the shared ring from here on; false: there is none.
bool join_shared(uint32_t thread) noexcept {
  Shared* s = g_shared.load(std::memory_order_acquire);
  if (!s) {
    std::lock_guard<std::mutex> lk(g_shared_mutex);
    s = g_shared.load(std::memory_order_relaxed);
    if (!s && !g_shared_failed && !(s = map_shared())) g_shared_failed = true;
    if (s) g_shared.store(s, std::memory_order_release);
  }
  if (!s) {
    log_once_error("crash journal: MPIOR_MEMORY holds no more rings; threads from here keep none");
    return false;
  }
  g_in_shared[thread].store(1, std::memory_order_release);
  note_thread(thread);
  return true;
}

// The slot's record is in the rank file (or there is none).
bool slot_flushed(const Shared& s, const trace::JournalRecord& r) noexcept {
  const uint64_t word = __atomic_load_n(&r.opened, __ATOMIC_ACQUIRE);
  const uint64_t thread = word >> trace::kJournalThreadShift;
  const uint64_t seq = (word & ((uint64_t(1) << trace::kJournalThreadShift) - 1)) - 1;
  return word == 0 || thread >= kMaxThreads || seq < __atomic_load_n(&s.flushed[thread], __ATOMIC_ACQUIRE);
}

// Asks for a rewrite and waits (kWaitMs at most) until done() holds; at
// once when no flush thread runs: the calling thread's next call makes it.
template <class Done>
void wait_for_flush(Done done) noexcept {
  want_flush();
  if (!spill::request()) return;  // (wakes the flush thread again: harmless)
  // Sleeps that grow to 2 ms: many threads waiting at once must leave the
  // CPU to the flush thread they wait for.
  long waited_us = 0;
  for (long us = 50; waited_us < kWaitMs * 1000 && !done(); waited_us += us, us = std::min(2 * us, 2000L)) {
    const timespec step{0, us * 1000};
    nanosleep(&step, nullptr);
  }
}

void shared_append(uint32_t thread, const trace::RawEvent& ev, uint64_t seq) noexcept {
  Shared& s = *g_shared.load(std::memory_order_acquire);
  const uint64_t at = s.next.fetch_add(1, std::memory_order_relaxed);
  trace::JournalRecord& out = s.records[at % s.capacity];
  if (!slot_flushed(s, out)) wait_for_flush([&] { return slot_flushed(s, out); });
  store_record(out, ev, trace::journal_shared_word(thread, seq) - 1);
  if (!g_flush_wanted.load(std::memory_order_relaxed) &&
      !slot_flushed(s, s.records[(at + s.capacity / 2) % s.capacity]))
    want_flush();
}

}  // namespace

void append_cold(uint32_t thread, const trace::RawEvent& ev, uint64_t seq) noexcept {
  took_slow_path();
  if (!g_started.load(std::memory_order_acquire)) return;
  if (g_in_shared[thread].load(std::memory_order_acquire)) return shared_append(thread, ev, seq);
  if (g_failed[thread].load(std::memory_order_relaxed) || g_failed[thread].exchange(1)) return;  // tried: no retry
  TracerGuard guard;
  bool none_left = false;
  if (Ring* r = open_ring(thread, &none_left)) return store_record(r->records[seq & r->mask], ev, seq);
  if (none_left && join_shared(thread)) shared_append(thread, ev, seq);
}

void want_flush() noexcept {
  if (!g_flush_wanted.exchange(true, std::memory_order_relaxed)) crash::want_flush();
}

void ring_behind(const Ring& r, uint64_t seq) noexcept {
  took_slow_path();
  // The records up to the next check (1,024 on) take the slots of these.
  auto done = [&] { return seq + 1024 - __atomic_load_n(&r.header->flushed, __ATOMIC_ACQUIRE) <= r.mask + 1; };
  // Half a ring of slack is for a flush thread that may run late. Flushed
  // from this thread, the rewrite runs at the end of this very call, so the
  // ring may fill until the records up to the check after next would
  // overwrite unflushed ones: half the rewrites, the same bound on the loss.
  if (g_flushes_here.load(std::memory_order_relaxed) &&
      seq + 2048 - __atomic_load_n(&r.header->flushed, __ATOMIC_RELAXED) <= r.mask + 1)
    return;
  if (done())
    want_flush();
  else
    wait_for_flush(done);
}

void set_flushes_here(bool here) noexcept { g_flushes_here.store(here, std::memory_order_relaxed); }

bool take_flush_wanted() noexcept { return g_flush_wanted.exchange(false, std::memory_order_relaxed); }

void start(const std::string& dir, const std::string& trace_name, int32_t rank) noexcept {
  if (!enabled() || g_started.load()) return;
  TracerGuard guard;
  set_dir(dir);
  where().name = trace_name;
  g_rank = rank;
  // The rings' pages are the process's memory once touched, so they take
  // their part of MPIOR_MEMORY, an eighth, shared by the threads.
  // A quarter of that is kept for the shared ring (all of it when a
  // quarter would not hold kMinRing records).
  const uint64_t memory = spill::cap_bytes(), bytes = memory > 0 ? memory / 8 : UINT64_MAX;
  g_shared_records = memory == 0 ? 0 : shared_records(bytes / 4) ? shared_records(bytes / 4) : shared_records(bytes);
  const uint64_t shared =
      g_shared_records ? trace::kJournalSharedRecords + g_shared_records * sizeof(trace::JournalRecord) : 0;
  g_budget.store(bytes - std::min(bytes, shared), std::memory_order_relaxed);
  std::string meta = dir + "/" + trace::journal_meta_name(trace_name);
  if (!meta_journal::open(meta)) return log_error("crash journal: cannot open {}: {}", meta, std::strerror(errno));
  g_started.store(true, std::memory_order_release);
}

void note_file(int32_t id, const trace::FileEntry& f) noexcept {
  if (!g_started.load(std::memory_order_acquire)) return;
  TracerGuard guard;
  try {
    meta_journal::append(trace::journal_file_frame(id, f));
  } catch (...) {
  }
}

void note_comm(const trace::CommEntry& c) noexcept {
  if (!g_started.load(std::memory_order_acquire)) return;
  TracerGuard guard;
  try {
    meta_journal::append(trace::journal_comm_frame(c));
  } catch (...) {
  }
}

uint64_t cover(uint32_t thread, uint64_t events) noexcept {
  if (thread < kMaxThreads) g_covered[thread].store(events, std::memory_order_relaxed);
  return events;
}

void flushed() noexcept {
  if (!g_started.load(std::memory_order_acquire)) return;
  Shared* s = g_shared.load(std::memory_order_acquire);
  if (s) set_clock(*s->header);
  const uint32_t threads = g_threads.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < threads; ++i)
    if (Ring* r = g_rings[i].load(std::memory_order_acquire)) {
      set_clock(*r->header);
      __atomic_store_n(&r->header->flushed, g_covered[i].load(std::memory_order_relaxed), __ATOMIC_RELEASE);
    } else if (s && g_in_shared[i].load(std::memory_order_acquire)) {
      __atomic_store_n(&s->flushed[i], g_covered[i].load(std::memory_order_relaxed), __ATOMIC_RELEASE);
    }
}

void finish() noexcept {
  if (!g_started.exchange(false)) return;
  TracerGuard guard;
  for (uint32_t i = 0; i < kMaxThreads; ++i)
    if (g_rings[i].load(std::memory_order_acquire)) unlink(path_of(trace::journal_file_name(where().name, i)).c_str());
  if (g_shared.load(std::memory_order_acquire)) unlink(path_of(trace::journal_shared_name(where().name)).c_str());
  meta_journal::remove(path_of(trace::journal_meta_name(where().name)));
}

void set_dir(const std::string& dir) noexcept {
  try {
    std::lock_guard<std::mutex> lk(g_dir_mutex);
    where().dir = dir;
  } catch (...) {
  }
}

void reset_after_fork() noexcept {
  g_started.store(false);
  g_flush_wanted.store(false, std::memory_order_relaxed);
  for (uint32_t i = 0; i < kMaxThreads; ++i) {
    g_rings[i].store(nullptr, std::memory_order_relaxed);
    g_failed[i].store(0, std::memory_order_relaxed);
    g_covered[i].store(0, std::memory_order_relaxed);
    g_in_shared[i].store(0, std::memory_order_relaxed);
  }
  g_threads.store(0, std::memory_order_relaxed);
  g_shared.store(nullptr, std::memory_order_relaxed);  // the parent's file: the child maps its own
  new (&g_shared_mutex) std::mutex();
  g_shared_failed = false;
  new (&g_dir_mutex) std::mutex();
  meta_journal::reset_after_fork();
}

}  // namespace mpior::preload::journal
