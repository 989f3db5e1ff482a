// Crash journal (trace/journal_format.hpp): every raw record a thread
// pushes is stored in a ring in a file under the trace directory (a ring
// of the thread's own is also where its recorder folds it from),
// mapped shared, so that a process (an MPI rank, a standalone program, a
// process one of them started) killed by SIGKILL before its next periodic flush leaves its records since
// the last rank-file write behind for mpior-post to fold. The ring holds the
// records since the last flush: when half of it is unflushed, the rank file
// is written early (flush_wanted: by the flush thread, or by the recording
// thread at its next call, crash.hpp), so memory stays bounded by events,
// not time.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "trace/journal_format.hpp"

namespace mpior::preload::journal {

struct Ring {
  trace::JournalHeader* header;
  trace::JournalRecord* records;
  uint64_t mask;
  uint64_t half;
};

inline constexpr uint32_t kMaxThreads = trace::kJournalThreads;
extern std::atomic<Ring*> g_rings[kMaxThreads];
extern std::atomic<bool> g_started;

// A record of a thread without a ring in g_rings: maps the thread's ring
// (its first record after start) and stores the record there, or, when
// MPIOR_MEMORY holds no more rings, stores it in the shared ring.
void append_cold(uint32_t thread, const trace::RawEvent& ev, uint64_t seq) noexcept;
void want_flush() noexcept;
// Without a flush thread (crash.cpp: a single-threaded program) the
// rewrite a ring asks for runs on the calling thread at the end of the
// call that asked, so the ring asks later (ring_behind).
void set_flushes_here(bool here) noexcept;
// A thread's ring is half full of records the rank file lacks at record
// seq: asks for a rewrite and, when the records up to the next check would
// overwrite some it still lacks, waits for it (a flush thread makes it;
// without one the calling thread does, after this call).
void ring_behind(const Ring& r, uint64_t seq) noexcept;

// The record stored as trace::JournalRecord says: its opening word, the
// event, its commit word last. The compiler must keep that order; the
// hardware does for recovery, which reads the file after the process died:
// a thread killed between two stores leaves every store before them in
// memory and none after.
__attribute__((always_inline)) inline void store_record(trace::JournalRecord& out, const trace::RawEvent& ev,
                                                        uint64_t seq) noexcept {
  __atomic_store_n(&out.opened, seq + 1, __ATOMIC_RELAXED);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  __builtin_memcpy(&out.ev, &ev, sizeof ev);
  __atomic_store_n(&out.commit, seq + 1, __ATOMIC_RELEASE);
}

// Record number seq of a thread into its own ring r.
__attribute__((always_inline)) inline void append_to(const Ring& r, const trace::RawEvent& ev, uint64_t seq) noexcept {
  store_record(r.records[seq & r.mask], ev, seq);
  if (__builtin_expect((seq & 1023) == 0, 0) && seq - __atomic_load_n(&r.header->flushed, __ATOMIC_RELAXED) > r.half)
    ring_behind(r, seq);
}

// Record number seq of recorder `thread`, wherever its journal is.
__attribute__((always_inline)) inline void append(uint32_t thread, const trace::RawEvent& ev, uint64_t seq) noexcept {
  if (__builtin_expect(thread >= kMaxThreads, 0)) return;
  Ring* r = g_rings[thread].load(std::memory_order_acquire);
  if (__builtin_expect(r == nullptr, 0)) return append_cold(thread, ev, seq);
  append_to(*r, ev, seq);
}

// The ring of the thread's own, once mapped (nullptr before and for a
// thread without one): records appended to it stay there until the
// recorder folds them (recorder.cpp).
inline const Ring* own_ring(uint32_t thread) noexcept {
  return thread < kMaxThreads ? g_rings[thread].load(std::memory_order_acquire) : nullptr;
}

// MPIOR_JOURNAL: records per thread ring (0: no journal).
bool enabled() noexcept;
// A new thread's ring, in records: `want` (a power of two), at most half of
// the `left` the process's rings may still take (threads still to come
// share the other half; the last ones take what remains), a power of two
// of at least kMinRing; 0 when `left` holds none. The rings of any number
// of threads stay within the process's share of MPIOR_MEMORY: a quarter of
// it is kept for one ring the threads that find none left share
// (shared_records), so that every thread stays crash-safe.
inline constexpr uint64_t kMinRing = 1024;
uint64_t ring_records(uint64_t want, uint64_t left) noexcept;
// The shared ring's records within `bytes` (its file: header, table,
// records), 0 when fewer than kMinRing fit.
uint64_t shared_records(uint64_t bytes) noexcept;
// After MPI_Init (a standalone program, a child process: at its first
// recorded call): journals go to dir, named for the process's trace file
// trace_name (threads map theirs at their next record).
void start(const std::string& dir, const std::string& trace_name, int32_t rank) noexcept;
// Table entries made after start, appended to the meta journal.
void note_file(int32_t id, const trace::FileEntry& f) noexcept;
void note_comm(const trace::CommEntry& c) noexcept;
// The trace being encoded holds recorder thread's first `events` events
// (the count its snapshot froze: events recorded meanwhile stay in the
// ring for recovery); returns events. flushed(): that trace is written.
uint64_t cover(uint32_t thread, uint64_t events) noexcept;
void flushed() noexcept;
// The flusher: a ring is half full of unflushed records (clears it).
bool take_flush_wanted() noexcept;
// The journal's files were moved to dir (a job this process launched moved
// its trace aside): rings made from now on go there too.
void set_dir(const std::string& dir) noexcept;
// The process finished normally: its journal files go.
void finish() noexcept;
// In a forked child: the parent's rings are not this process's.
void reset_after_fork() noexcept;

}  // namespace mpior::preload::journal
