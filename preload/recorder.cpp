#include "preload/recorder.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "preload/call.hpp"
#include "preload/config.hpp"
#include "preload/journal.hpp"
#include "preload/log.hpp"
#include "preload/piggyback/pruner.hpp"
#include "preload/signals.hpp"
#include "preload/spill_writer.hpp"

namespace mpior::preload {
namespace {

std::mutex g_registry_mutex;
std::vector<ThreadRecorder*>* g_registry = nullptr;  // never freed: threads may outlive exit handlers
std::atomic<uint32_t> g_recorders{0};
trace::BuilderOptions g_builder_options;

ThreadRecorder* create_recorder() noexcept {
  TracerGuard guard;
  try {
    std::lock_guard<std::mutex> lk(g_registry_mutex);
    if (!g_registry) g_registry = new std::vector<ThreadRecorder*>();
    auto* r = new ThreadRecorder(uint32_t(g_registry->size()), g_builder_options);
    g_registry->push_back(r);
    g_recorders.store(uint32_t(g_registry->size()), std::memory_order_relaxed);
    return r;
  } catch (...) {
    return nullptr;  // out of memory: this thread goes unrecorded rather than crash the app
  }
}

std::atomic<uint64_t> g_excluded[trace::kNumKinds];

constinit config::Option<std::string_view> opt_fold_behind{
    "MPIOR_FOLD_BEHIND", "auto",
    "compress each thread's calls on the flush thread (MPIOR_FLUSH_INTERVAL > 0) instead of the calling thread, which "
    "still does it when the flush thread falls behind; auto: when the process may use more cores than the node has "
    "ranks of the job (MPI_LOCALNRANKS, OMPI_COMM_WORLD_LOCAL_SIZE), so the flush thread has a core of its own",
    "auto|1|0"};
MPIOR_REGISTER_OPTION(opt_fold_behind);

std::atomic<bool> g_fold_behind{false};
// Parked chunks that wake the flush thread, and the most a thread parks
// before it folds them itself (the flush thread is behind).
constexpr size_t kWakeChunks = 4, kMaxParkedChunks = 32;

}  // namespace

namespace {
// This thread's recorder, made at its first call.
ThreadRecorder* this_thread_recorder() noexcept {
  ThreadRecorder* r = t_state.recorder;
  if (__builtin_expect(r == nullptr, 0)) {
    took_slow_path();
    r = create_recorder();
    if (!r) return nullptr;
    t_state.recorder = r;
    stash_thread_start();
    spill::request();  // fold behind: the flush thread makes its buffers now (fold_behind_service)
  }
  return r;
}
}  // namespace

void count_pruned(trace::Kind k, int64_t ticks) noexcept {
  if (ThreadRecorder* r = this_thread_recorder()) r->count_pruned(k, ticks);
}

void ThreadRecorder::add_pruned_to(trace::KindTallies& out, std::vector<int64_t>& ticks) const noexcept {
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    out[k].calls += pruned_[k].calls.load(std::memory_order_relaxed);
    ticks[k] += pruned_[k].ticks.load(std::memory_order_relaxed);
  }
}

trace::KindTallies pruned_tallies() {
  trace::KindTallies out{};
  std::vector<int64_t> ticks(trace::kNumKinds, 0);
  for (ThreadRecorder* r : all_recorders()) r->add_pruned_to(out, ticks);
  for (size_t k = 0; k < trace::kNumKinds; ++k) out[k].time_ns = clock::duration_ns(ticks[k]);
  return out;
}

void count_excluded(trace::Kind k) noexcept { g_excluded[size_t(k)].fetch_add(1, std::memory_order_relaxed); }

trace::KindTallies excluded_tallies() {
  trace::KindTallies out{};
  for (size_t k = 0; k < trace::kNumKinds; ++k) out[k].calls = g_excluded[k].load(std::memory_order_relaxed);
  return out;
}

ThreadRecorder::ThreadRecorder(uint32_t index, trace::BuilderOptions opt)
    : index_(index), depth_(stack_depth()), builder_(opt) {
  held_.reserve(16);
}

// Every recorded call passes here: inlined into record_event, one call
// from the wrapper's Call down to the chunk.
__attribute__((always_inline)) inline void ThreadRecorder::record_inline(trace::RawEvent& ev) noexcept {
  ev.callsite = callsites_.signature(ev.callsite, depth_);
  if (__builtin_expect(ev.depth == 0 && held_.empty(), 1)) return push(ev);
  record_nested(ev);
}

void ThreadRecorder::record(trace::RawEvent& ev) noexcept { record_inline(ev); }

void ThreadRecorder::record_nested(trace::RawEvent& ev) noexcept {
  took_slow_path();
  if (ev.depth == 0) {
    push(ev);
    for (const auto& child : held_) push(child);
    held_.clear();
    return;
  }
  // Calls made inside this one finished first and sit at the end of held_:
  // deeper than it and started after it. The parent goes before them.
  size_t pos = held_.size();
  while (pos > 0 && held_[pos - 1].depth > ev.depth && held_[pos - 1].start >= ev.start) --pos;
  try {
    held_.insert(held_.begin() + long(pos), ev);
  } catch (...) {
  }
}

// The one place a finished record (ticks, call-site signature, parent
// before its nested calls) goes into the thread's chunk.
__attribute__((always_inline)) inline void ThreadRecorder::push(const trace::RawEvent& ev) noexcept {
  pushing_.store(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const uint64_t n = recorded_.load(std::memory_order_relaxed);
  if (const journal::Ring* r = ring_) {
    journal::append_to(*r, ev, n);
  } else {
    chunk_[n - chunk_first_] = ev;
    journal::append(index_, ev, n);
  }
  recorded_.store(n + 1, std::memory_order_release);
  if (n + 1 - chunk_first_ == kChunk) [[unlikely]]
    chunk_full();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  pushing_.store(0, std::memory_order_relaxed);
  if (__builtin_expect(spill_state_.load(std::memory_order_relaxed) != kIdle, 0)) after_record_spill();
}

__attribute__((hot)) void record_now(trace::RawEvent& ev) noexcept {
  ThreadRecorder* r = this_thread_recorder();
  if (__builtin_expect(r == nullptr, 0)) return;
  if (ev.depth == 0 && trace::is_io(ev.kind)) piggyback::note_io();
  r->record_inline(ev);
}

__attribute__((hot)) void record_event(trace::RawEvent& ev) noexcept {
  ThreadState& t = t_state;
  if (__builtin_expect(t.signal_stash | t.stashed, 0)) return record_beside_stash(ev);
  record_now(ev);
}

// A thread's share of the cap: its folded events spill at a quarter of it
// (the part being written and the folder growing meanwhile share the rest);
// at half, the thread spills them itself.
static size_t spill_mark() {
  return size_t(spill::cap_bytes() / 4 / std::max<uint32_t>(1, g_recorders.load(std::memory_order_relaxed)));
}

void ThreadRecorder::check_memory() noexcept {
  const size_t bytes = builder_.memory_bytes(), mark = spill_mark();
  const uint64_t events = builder_.events();
  uint8_t state = spill_state_.load(std::memory_order_relaxed);
  if (bytes >= mark && state == kIdle)
    spill_state_.store(kWanted, std::memory_order_release);
  else if (bytes >= 2 * mark && state != kIdle)
    spill_state_.store(kMustSpill, std::memory_order_release);
  size_t rate = events > last_events_ && bytes > last_bytes_ ? (bytes - last_bytes_) / (events - last_events_) : 0;
  rate = std::clamp<size_t>(rate, 32, 4096);
  const size_t target = bytes < mark ? mark : 2 * mark;
  next_check_ = events + std::max<uint64_t>(kChunk, (target > bytes ? target - bytes : 0) / rate);
  last_events_ = events;
  last_bytes_ = bytes;
}

void ThreadRecorder::after_record_spill() noexcept {
  took_slow_path();
  uint8_t state = spill_state_.load(std::memory_order_acquire);
  if (state == kWanted) {
    if (spill_state_.compare_exchange_strong(state, kRequested) && !spill::request()) spill::spill_now(*this);
  } else if (state == kMustSpill) {
    spill::spill_now(*this);
  }
}

// Out of push's line: the hot path then keeps few registers to save.
__attribute__((noinline, cold)) void ThreadRecorder::chunk_full() noexcept {
  took_slow_path();
  lock();
  flush_locked();
  unlock();
}

template <size_t Stride>
void ThreadRecorder::fold(trace::EventRun<Stride> ev, size_t n) noexcept {
  TracerGuard guard;
  try {
    builder_.append_ticks(ev, n, clock::scale());
  } catch (...) {
    log_once_error("out of memory while compressing the trace; events were lost");
  }
}

template <typename F>
void ThreadRecorder::with_chunk(size_t from, F&& f) noexcept {
  static_assert(journal::kMinRing % kChunk == 0, "a chunk's slots in a ring do not wrap");
  if (ring_)
    return f(trace::EventRun<sizeof(trace::JournalRecord)>{&ring_->records[(chunk_first_ + from) & ring_->mask].ev});
  f(trace::EventArray{chunk_ + from});
}

namespace {
template <size_t Stride>
void append_records(std::vector<trace::RawEvent>& to, trace::EventRun<Stride> ev, size_t n) {
  for (size_t i = 0; i < n; ++i) to.push_back(ev[i]);
}
}  // namespace

// Folds the full chunk (or parks it for the thread that has the builder or
// folds behind), then starts the next one, in the thread's ring if it now
// has one.
void ThreadRecorder::flush_locked() noexcept {
  const size_t used = size_t(recorded_.load(std::memory_order_relaxed) - chunk_first_);
  const size_t from = taken_, n = used - taken_;
  const bool behind =
      !frozen_ && g_fold_behind.load(std::memory_order_relaxed) && backlog_.size() < kMaxParkedChunks * kChunk;
  if (frozen_ || behind) {  // another thread has the builder, or folds behind: keep the chunk for it
    with_chunk(from, [&](auto ev) {
      try {
        append_records(backlog_, ev, n);
      } catch (...) {
        log_once_error("out of memory while keeping events during a trace flush; events were lost");
      }
    });
    if (behind && backlog_.size() >= kWakeChunks * kChunk && !fold_wanted_.exchange(true, std::memory_order_acq_rel))
      spill::request();
  } else {
    if (!backlog_.empty()) {  // left over by the last thaw: older than the chunk
      fold(trace::EventArray{backlog_.data()}, backlog_.size());
      backlog_.clear();
    }
    with_chunk(from, [&](auto ev) { fold(ev, n); });
    if (builder_.events() >= next_check_ && spill::cap_bytes() != 0) check_memory();
  }
  chunk_first_ += used;
  taken_ = 0;
  ring_ = journal::own_ring(index_);
}

// Takes the events not folded yet (what the last thaw left to the recording
// thread, then the chunk so far) and freezes the builder: from here to
// thaw() only this thread touches it. `older` comes reserved: the recording
// thread's backlog gets its capacity.
void ThreadRecorder::freeze(std::vector<trace::RawEvent>& older, std::vector<trace::RawEvent>& newer) noexcept {
  lock();
  older.swap(backlog_);
  const uint64_t recorded = recorded_.load(std::memory_order_acquire);  // the records up to it are whole
  const size_t used = size_t(recorded - chunk_first_);
  newer.clear();
  with_chunk(taken_,
             [&](auto ev) { append_records(newer, ev, used - taken_); });  // reserved for a chunk: no allocation
  taken_ = used;
  frozen_ = true;
  frozen_events_ = recorded;
  unlock();
}

// Folds what the recording thread parked meanwhile, a batch at a time
// without the lock, and hands the builder back once at most a chunk is left
// (or after kRounds batches: a thread that records faster than this one
// folds catches up on its own).
void ThreadRecorder::thaw(std::vector<trace::RawEvent>& batch) noexcept {
  constexpr int kRounds = 64;
  std::vector<trace::RawEvent> small;  // the backlog's next buffer, when it grew large meanwhile
  try {
    small.reserve(kChunk);
  } catch (...) {
  }
  for (int round = 0;; ++round) {
    batch.clear();
    lock();
    if (backlog_.size() <= kChunk || round == kRounds) {
      if (backlog_.capacity() > kSpareChunks * kChunk && backlog_.size() <= small.capacity()) {
        small.assign(backlog_.begin(), backlog_.end());  // no allocation
        small.swap(backlog_);                            // the large buffer is freed below, unlocked
      }
      frozen_ = false;
      unlock();
      return;
    }
    batch.swap(backlog_);  // the recording thread goes on with this batch's (cleared) capacity
    unlock();
    fold(trace::EventArray{batch.data()}, batch.size());
  }
}

// Made or remade on the folding thread: kSpareChunks of capacity, every
// page written once (resize), so the recording thread that gets one does not
// fault them in; one the recording thread grew past that is let go.
void ThreadRecorder::ready_spares() noexcept {
  for (auto& v : spare_) {
    v.clear();
    if (v.capacity() == kSpareChunks * kChunk) continue;
    try {
      std::vector<trace::RawEvent>().swap(v);
      v.resize(kSpareChunks * kChunk);
      v.clear();
    } catch (...) {
    }
  }
}

template <typename F>
auto ThreadRecorder::with_builder(F&& f, bool recycle) {
  std::vector<trace::RawEvent> older, newer;
  while (owner_.test_and_set(std::memory_order_acquire)) sched_yield();
  // Once fold behind made spares, every round goes through them: a fresh
  // buffer given to the recording thread (a snapshot's) would come back to
  // the next round too small and be made again, every page of it.
  recycle = recycle || primed();
  if (recycle) {
    ready_spares();
    older.swap(spare_[0]);
    newer.swap(spare_[1]);
  }
  if (older.capacity() < 4 * kChunk) older.reserve(4 * kChunk);
  if (newer.capacity() < kChunk) newer.reserve(kChunk);
  freeze(older, newer);
  fold(trace::EventArray{older.data()}, older.size());
  fold(trace::EventArray{newer.data()}, newer.size());
  struct Done {  // also when f throws
    ThreadRecorder* r;
    std::vector<trace::RawEvent>& older;
    std::vector<trace::RawEvent>& batch;
    bool recycle;
    ~Done() {
      r->thaw(batch);
      if (recycle) {  // the buffers this round ended with are the next one's
        r->spare_[0].swap(older);
        r->spare_[1].swap(batch);
      }
      r->owner_.clear(std::memory_order_release);
    }
  } done{this, older, newer, recycle};
  return f();
}

trace::FoldedPart ThreadRecorder::take_folded() {
  trace::FoldedPart spare = builder_.spare();
  while (owner_.test_and_set(std::memory_order_acquire)) sched_yield();  // not while a snapshot has it frozen
  lock();
  trace::FoldedPart part = builder_.swap(std::move(spare));
  last_bytes_ = 0;
  flush_bytes_ = 0;
  last_events_ = builder_.events();
  next_check_ = last_events_ + kChunk;
  spill_state_.store(kIdle, std::memory_order_release);
  unlock();
  owner_.clear(std::memory_order_release);
  return part;
}

bool ThreadRecorder::spill_before_flush(size_t min_bytes, bool eager) noexcept {
  size_t bytes = 0;
  try {
    bytes = with_builder([&] { return builder_.memory_bytes(); });
  } catch (...) {
    return false;
  }
  lock();
  const bool grew = bytes >= min_bytes && bytes > (eager ? 1 : 2) * flush_bytes_;
  flush_bytes_ = bytes;
  uint8_t idle = kIdle;
  if (grew) spill_state_.compare_exchange_strong(idle, kWanted);
  unlock();
  return grew;
}

void ThreadRecorder::spill_refused() noexcept {
  lock();
  next_check_ = events() + (uint64_t(1) << 20);
  spill_state_.store(kIdle, std::memory_order_release);
  unlock();
}

void ThreadRecorder::fold_parked() noexcept {
  fold_wanted_.store(false, std::memory_order_release);
  try {
    with_builder(
        [&] {
          if (builder_.events() >= next_check_ && spill::cap_bytes() != 0) check_memory();
          return 0;
        },
        true);
    primed_.store(true, std::memory_order_relaxed);
  } catch (...) {
  }
}

namespace {

long env_count(const char* name) {
  const char* v = getenv(name);
  return v && *v ? std::max(0L, strtol(v, nullptr, 10)) : 0;
}

// On a node whose cores all run ranks, a flush thread folding for its rank
// takes time from another rank: fold behind only with a core to spare.
bool fold_behind_wanted() noexcept {
  const std::string_view v = opt_fold_behind.get();
  if (v != "auto") return v == "1";
  cpu_set_t set;
  const long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  long local = env_count("MPI_LOCALNRANKS");
  if (local == 0) local = env_count("OMPI_COMM_WORLD_LOCAL_SIZE");
  return cpus > std::max(1L, local);
}

}  // namespace

void set_fold_behind(bool running, bool always) noexcept {
  g_fold_behind.store(running && (always || fold_behind_wanted()), std::memory_order_relaxed);
}

void fold_behind_service() noexcept {
  if (!g_fold_behind.load(std::memory_order_relaxed)) return;
  TracerGuard guard;
  try {
    for (ThreadRecorder* r : all_recorders())
      if (r->fold_wanted() || !r->primed()) r->fold_parked();  // a new recorder gets its spares now
  } catch (...) {
  }
}

trace::Stream ThreadRecorder::snapshot(int32_t rank, uint64_t* events) {
  return with_builder([&] {
    if (events) *events = frozen_events_;  // folded now; later ones are parked
    return builder_.snapshot(rank, index_);
  });
}

size_t ThreadRecorder::memory_bytes() {
  size_t n = with_builder([&] {
    return builder_.memory_bytes() + (spare_[0].capacity() + spare_[1].capacity()) * sizeof(trace::RawEvent);
  });
  lock();
  n += sizeof(*this) + held_.capacity() * sizeof(trace::RawEvent) + backlog_.capacity() * sizeof(trace::RawEvent);
  unlock();
  return n;
}

std::vector<ThreadRecorder*> all_recorders() {
  std::lock_guard<std::mutex> lk(g_registry_mutex);
  return g_registry ? *g_registry : std::vector<ThreadRecorder*>{};
}

bool recorders_idle() noexcept {
  if (!g_registry_mutex.try_lock()) return false;
  bool idle = true;
  if (g_registry)
    for (ThreadRecorder* r : *g_registry) idle = idle && !r->busy();
  g_registry_mutex.unlock();
  return idle;
}

void ThreadRecorder::keep_chunk_private() noexcept {
  if (!ring_) return;
  const size_t used = size_t(recorded_.load(std::memory_order_relaxed) - chunk_first_);
  with_chunk(0, [&](auto ev) {
    for (size_t i = 0; i < used; ++i) chunk_[i] = ev[i];
  });
  ring_ = nullptr;
}

void recorders_keep_chunks_private() noexcept {
  std::lock_guard<std::mutex> lk(g_registry_mutex);
  if (g_registry)
    for (ThreadRecorder* r : *g_registry) r->keep_chunk_private();
}

void set_builder_options(trace::BuilderOptions opt) { g_builder_options = opt; }

void reset_after_fork() noexcept {
  // The parent's other threads are gone and may have held the mutex; their
  // recorders (and this thread's, with the parent's events) stay behind
  // unfreed: the child's memory is a copy, and its trace starts empty.
  new (&g_registry_mutex) std::mutex();
  g_registry = nullptr;
  g_recorders.store(0, std::memory_order_relaxed);
  g_fold_behind.store(false, std::memory_order_relaxed);
  t_state.recorder = nullptr;
  spill::reset_after_fork();
  for (size_t k = 0; k < trace::kNumKinds; ++k) {
    g_excluded[k].store(0, std::memory_order_relaxed);
  }
}

}  // namespace mpior::preload
