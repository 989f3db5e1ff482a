// Per-thread recording: a call's record is kept until the calls made inside
// it are known (streams are in call order: parent first), then goes into a
// fixed chunk; full chunks are converted (ticks to ns, return addresses to
// call-site signatures) and fed to the thread's StreamBuilder.
//
// Another thread that reads the builder (a snapshot for a flush, a memory
// measure) holds the recorder's lock only to take the chunk and freeze the
// builder: while it works, the recording thread parks its full chunks in a
// backlog instead of folding them, and the reader folds that backlog itself
// before it hands the builder back (the recording thread folds what is left,
// at most a chunk, as it does every chunk). The lock is never held for
// longer than a chunk's worth of work, whatever the trace's size.
//
// Fold behind (MPIOR_FOLD_BEHIND): while the flush thread runs, the recording
// thread parks every full chunk the same way and the flush thread folds them,
// woken every few chunks: folding irregular calls (random offsets) costs
// several hundred instructions per call, which then leave the application's
// thread. The backlog is bounded: past it, the recording thread folds itself.
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "preload/callsite.hpp"
#include "trace/builder.hpp"
#include "trace/event.hpp"

namespace mpior::preload {
namespace journal {
struct Ring;
}

class alignas(64) ThreadRecorder {
 public:
  ThreadRecorder(uint32_t index, trace::BuilderOptions opt);

  void record(trace::RawEvent& ev) noexcept;
  // record, inlined into record_event (recorder.cpp only).
  void record_inline(trace::RawEvent& ev) noexcept;
  // The stream so far (freezes the builder, see above; any thread may call
  // it); *events: how many of the thread's events it holds (with those
  // spilled before), the ones recorded before the freeze.
  trace::Stream snapshot(int32_t rank, uint64_t* events = nullptr);
  uint32_t index() const { return index_; }
  // Some thread is inside record (pushing, or holds the lock; signal handlers ask).
  bool locked() const noexcept {
    return pushing_.load(std::memory_order_relaxed) || lock_.test(std::memory_order_acquire);
  }
  // Locked, or another thread has the builder frozen (the crash child asks).
  bool busy() const noexcept { return locked() || owner_.test(std::memory_order_acquire); }
  // Events recorded so far (a relaxed read: any thread, no lock; the
  // pruning path asks it for every message sent).
  uint64_t events() const noexcept { return recorded_.load(std::memory_order_relaxed); }
  size_t memory_bytes();
  // Calls of kind k left out of the trace (online pruning), on this thread:
  // single-writer counters, so no locked instruction on the hot path.
  void count_pruned(trace::Kind k, int64_t ticks) noexcept {
    PrunedTally& t = pruned_[size_t(k)];
    t.calls.store(t.calls.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    t.ticks.store(t.ticks.load(std::memory_order_relaxed) + ticks, std::memory_order_relaxed);
  }
  void add_pruned_to(trace::KindTallies& out, std::vector<int64_t>& ticks) const noexcept;

  // Memory cap (spill_writer.hpp): this thread's folded events want to go to the
  // spill file; take them (allocates the empty folder first, then swaps it
  // in under the lock); or say they cannot go yet (no spill file before
  // MPI_Init).
  bool spill_pending() const noexcept { return spill_state_.load(std::memory_order_acquire) != kIdle; }
  trace::FoldedPart take_folded();
  void spill_refused() noexcept;
  // Before a periodic flush: a folded part of at least min_bytes that more
  // than doubled since the last flush (irregular events, not a steady loop
  // structure) is better spilled (a swap) than snapshotted under the lock.
  // eager (the crash journal asks for a flush every half ring): one that
  // grew at all, since each flush's snapshot and encoding briefly take
  // about twice the part's size, and at the journal's rate they would keep
  // the peak that far above the cap.
  bool spill_before_flush(size_t min_bytes, bool eager) noexcept;
  // Fold behind: the flush thread folds the chunks this thread parked.
  bool fold_wanted() const noexcept { return fold_wanted_.load(std::memory_order_acquire); }
  bool primed() const noexcept { return primed_.load(std::memory_order_relaxed); }
  void fold_parked() noexcept;
  // In a crash child: the chunk's records copied out of the ring, which the
  // parent's other threads may go on writing while this copy writes the trace.
  void keep_chunk_private() noexcept;

 private:
  static constexpr size_t kChunk = 256;
  void push(const trace::RawEvent& ev) noexcept;
  void record_nested(trace::RawEvent& ev) noexcept;  // record's path for a nested call or its parent
  void flush_locked() noexcept;
  void chunk_full() noexcept;  // push's chunk is full: fold or park it, under the lock
  // Ticks to ns, then into the builder; the caller owns the builder.
  template <size_t Stride>
  void fold(trace::EventRun<Stride> ev, size_t n) noexcept;
  // Calls f with the chunk's records from slot `from` on, where they lie.
  template <typename F>
  void with_chunk(size_t from, F&& f) noexcept;
  // Runs f with the builder to itself (the recording thread keeps a backlog
  // meanwhile), then folds the backlog and hands the builder back.
  // recycle: fold behind's round, with the spare buffers (spare_).
  template <typename F>
  auto with_builder(F&& f, bool recycle = false);
  void ready_spares() noexcept;
  void freeze(std::vector<trace::RawEvent>& older, std::vector<trace::RawEvent>& newer) noexcept;
  void thaw(std::vector<trace::RawEvent>& batch) noexcept;
  void check_memory() noexcept;
  void after_record_spill() noexcept;
  // Held for a chunk's worth of work at most; a holder preempted on a busy
  // node is waited for by yielding, not by spinning through its time slice.
  void lock() noexcept {
    for (unsigned spins = 0; lock_.test_and_set(std::memory_order_acquire); ++spins)
      if (spins < 128)
        __builtin_ia32_pause();
      else
        sched_yield();
  }
  void unlock() noexcept { lock_.clear(std::memory_order_release); }

  // What every recorded call reads or writes (record_inline, push) comes
  // first, within the object's first cache line (the class is aligned to
  // one): after a system call the hot path finds its data in as few pages
  // and lines as can be, and a page missed in the TLB (which every system
  // call empties where the kernel isolates its page tables without PCID)
  // costs a page walk.
  uint32_t index_;
  int depth_;  // call-site stack depth
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  std::atomic_flag owner_ = ATOMIC_FLAG_INIT;  // a thread other than the recording one uses the builder
  std::atomic<bool> fold_wanted_{false};       // fold behind: parked chunks wait for the flush thread
  std::atomic<uint8_t> pushing_{0};            // the recording thread is inside push (signal handlers ask)
  enum : uint8_t { kIdle, kWanted, kRequested, kMustSpill };
  // Memory accounting (check_memory): the folded size is measured (O(units))
  // when the events reach next_check_, set from the growth per event seen so far.
  std::atomic<uint8_t> spill_state_{kIdle};
  // The chunk without the lock: only the recording thread writes it, at
  // slot recorded_ - chunk_first_, then publishes the record by a release
  // store of recorded_; another thread (freeze) takes the slots below that
  // under the lock and marks them taken, and the recording thread takes the
  // lock only to fold or park a full chunk. A locked instruction per call
  // was the hot path's dearest.
  std::atomic<uint64_t> recorded_{0};  // events pushed (written by the recording thread only)
  uint64_t chunk_first_ = 0;           // recorded_ at chunk_[0] (written under the lock)
  // A chunk's records lie in the thread's own crash journal ring once it
  // has one (ring_, set at a chunk's start under the lock by the recording
  // thread): each record is then stored once and folded where it lies. A
  // chunk starts at a multiple of kChunk, so its slots in the ring (a power
  // of two of at least journal::kMinRing records) are contiguous. Without
  // a ring of its own (no journal yet, none left), the chunk is chunk_.
  const journal::Ring* ring_ = nullptr;
  std::vector<trace::RawEvent> held_;  // records waiting for their parent (deeper calls)
  size_t taken_ = 0;                   // under the lock: chunk_'s first slots a freeze took
  struct PrunedTally {
    std::atomic<uint64_t> calls{0};
    std::atomic<int64_t> ticks{0};
  };
  PrunedTally pruned_[trace::kNumKinds];
  bool frozen_ = false;                   // under the lock: full chunks go to backlog_
  uint64_t frozen_events_ = 0;            // recorded_ when the builder was last frozen
  std::vector<trace::RawEvent> backlog_;  // under the lock: chunks recorded while frozen (ticks)
  trace::RawEvent chunk_[kChunk];
  // Fold behind's buffers, held by the owner_ between its rounds: what the
  // recording thread parks into next and the folding thread's batch. They
  // go round (the recording thread gets one, the folder takes its backlog)
  // and keep kSpareChunks of capacity, touched by the folding thread when
  // made: the recording thread then parks without allocating or taking a
  // page fault (callgrind/perf: they were its startup cost).
  // The flush thread makes them at its first round with the recorder
  // (primed_), before the recording thread parks anything.
  static constexpr size_t kSpareChunks = 32;
  std::vector<trace::RawEvent> spare_[2];
  std::atomic<bool> primed_{false};  // set by the flush thread, read by any owner_ of the builder
  CallsiteCache callsites_;
  trace::StreamBuilder builder_;
  uint64_t next_check_ = 0;
  uint64_t last_events_ = 0;
  size_t last_bytes_ = 0;
  size_t flush_bytes_ = 0;  // folded size at the last periodic flush
};

// Hands a record to this thread's recorder, the signal stash aside (record_event).
void record_now(trace::RawEvent& ev) noexcept;

// Calls left out of the trace (online pruning): per kind, how many and their
// time in clock ticks.
void count_pruned(trace::Kind k, int64_t ticks) noexcept;
trace::KindTallies pruned_tallies();
// Calls left out because they name an excluded path (MPIOR_EXCLUDE).
void count_excluded(trace::Kind k) noexcept;
trace::KindTallies excluded_tallies();

// In a forked child: forget the parent's recorders and tallies.
void reset_after_fork() noexcept;
// Every thread's recorder, in creation order (recorders outlive their threads).
std::vector<ThreadRecorder*> all_recorders();
// In a crash child (crash.cpp): no thread was caught holding the registry or a
// recorder, so a snapshot sees consistent state.
bool recorders_idle() noexcept;
// Then: every recorder's chunk is the child's own (keep_chunk_private).
void recorders_keep_chunks_private() noexcept;
// Options for recorders created from now on.
void set_builder_options(trace::BuilderOptions opt);
// The flush thread started (true: recording threads park full chunks for it
// when MPIOR_FOLD_BEHIND says so, or `always`) or stops (false: they fold
// themselves again).
void set_fold_behind(bool running, bool always = false) noexcept;
// On the flush thread: folds what recording threads parked for it.
void fold_behind_service() noexcept;

}  // namespace mpior::preload
