// Per-thread recording: a call's record is kept until the calls made inside
// it are known (streams are in call order: parent first), then goes into a
// fixed chunk; full chunks are converted (ticks to ns, return addresses to
// call-site signatures) and fed to the thread's StreamBuilder.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "callsite.hpp"
#include "trace/builder.hpp"
#include "trace/event.hpp"

namespace mpior::preload {

class ThreadRecorder {
 public:
  ThreadRecorder(uint32_t index, trace::BuilderOptions opt);

  void record(trace::RawEvent& ev) noexcept;
  // The stream so far (takes the recorder's lock; any thread may call it).
  trace::Stream snapshot(int32_t rank);
  uint32_t index() const { return index_; }
  // Some thread is inside record/snapshot (signal handlers ask).
  bool locked() const noexcept { return lock_.test(std::memory_order_acquire); }
  uint64_t events();
  size_t memory_bytes();

 private:
  static constexpr size_t kChunk = 256;
  void push(const trace::RawEvent& ev) noexcept;
  void flush_locked() noexcept;
  void lock() noexcept {
    while (lock_.test_and_set(std::memory_order_acquire)) __builtin_ia32_pause();
  }
  void unlock() noexcept { lock_.clear(std::memory_order_release); }

  uint32_t index_;
  int depth_;  // call-site stack depth
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  size_t used_ = 0;
  trace::RawEvent chunk_[kChunk];
  std::vector<trace::RawEvent> held_;  // records waiting for their parent (deeper calls)
  CallsiteCache callsites_;
  trace::StreamBuilder builder_;
};

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
// Options for recorders created from now on.
void set_builder_options(trace::BuilderOptions opt);

}  // namespace mpior::preload
