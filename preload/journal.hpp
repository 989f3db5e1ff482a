// Crash journal (trace/journal_format.hpp): every raw record a thread
// pushes is also copied into a ring in a file under the trace directory,
// mapped shared, so that a process (an MPI rank, a standalone program)
// killed by SIGKILL before its next periodic flush leaves its records since
// the last rank-file write behind for mpior-post to fold. The ring holds the
// records since the last flush: when half of it is unflushed, the rank file
// is written early (flush_wanted: by the flush thread, or by the recording
// thread at its next call, crash.hpp), so memory stays bounded by events,
// not time.
#pragma once

#include <emmintrin.h>

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

inline constexpr uint32_t kMaxThreads = 4096;
extern std::atomic<Ring*> g_rings[kMaxThreads];
extern std::atomic<bool> g_started;

// Maps this thread's ring (its first record after start); nullptr when the
// journal is off or cannot be made.
Ring* open_ring(uint32_t thread) noexcept;
void want_flush() noexcept;

// One pass over the record's 16-byte halves copies it into the ring and
// sums (even words) and xors (odd words) it: trace::journal_check's value,
// without the copy to a local array and the scalar loop it costs in C++.
__attribute__((always_inline)) inline void store_record(trace::JournalRecord& out, const trace::RawEvent& ev,
                                                        uint64_t seq) noexcept {
  static_assert(sizeof(trace::RawEvent) % 16 == 0);
  const auto* src = reinterpret_cast<const __m128i*>(&ev);
  auto* dst = reinterpret_cast<__m128i*>(&out.ev);
  __m128i sum = _mm_setzero_si128(), mix = _mm_setzero_si128();
  for (size_t i = 0; i < sizeof(trace::RawEvent) / 16; ++i) {
    const __m128i v = _mm_loadu_si128(src + i);
    _mm_storeu_si128(dst + i, v);
    sum = _mm_add_epi64(sum, v);
    mix = _mm_xor_si128(mix, v);
  }
  const uint64_t s = seq + uint64_t(_mm_cvtsi128_si64(sum));
  const uint64_t m = 0x6a09e667f3bcc909ull ^ uint64_t(_mm_cvtsi128_si64(_mm_unpackhi_epi64(mix, mix)));
  out.seq = seq;
  out.check = (s * 0x9e3779b97f4a7c15ull) ^ (m + (m >> 29)) ^ seq;  // as journal_check (a unit test compares)
}

// The recorder's hot path: record number seq of recorder `thread`.
__attribute__((always_inline)) inline void append(uint32_t thread, const trace::RawEvent& ev, uint64_t seq) noexcept {
  if (__builtin_expect(thread >= kMaxThreads, 0)) return;
  Ring* r = g_rings[thread].load(std::memory_order_acquire);
  if (__builtin_expect(r == nullptr, 0)) {
    if (!g_started.load(std::memory_order_relaxed) || !(r = open_ring(thread))) return;
  }
  store_record(r->records[seq & r->mask], ev, seq);
  if (__builtin_expect((seq & 1023) == 0, 0) && seq - __atomic_load_n(&r->header->flushed, __ATOMIC_RELAXED) > r->half)
    want_flush();
}

// MPIOR_JOURNAL: records per thread ring (0: no journal).
bool enabled() noexcept;
// After MPI_Init (a standalone program: at its first recorded call):
// journals go to dir, named for rank (threads map theirs at their next
// record).
void start(const std::string& dir, int32_t rank) noexcept;
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
// The process finished normally: its journal files go.
void finish() noexcept;
// In a forked child: the parent's rings are not this process's.
void reset_after_fork() noexcept;

}  // namespace mpior::preload::journal
