// Crash-safe traces (crash.cpp): the rank's trace is written when the process
// dies by a signal the tracer can catch, and every MPIOR_FLUSH_INTERVAL, by a
// background thread or, in a single-threaded program with a crash journal,
// by the program's own thread at its next call.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "preload/hot_data.hpp"

namespace mpior::preload::crash {

// Starts the flush thread and installs the signal handlers (once the rank
// may write its trace).
void start();
// The signal handlers now, the rest at the first recorded call (standalone
// programs, children): the flush thread, or with `journaled` (a crash
// journal wanted) the journal, and flushes from the calling thread for as
// long as the program has no thread of its own.
void start_lazily(bool journaled);
// A forked child: the parent's flush thread and journal are not there; a
// traced child starts its own at its first recorded call.
void after_fork_child(bool traced);
// Before an exec: the flush thread stops (its write would be cut short); if
// the exec fails it starts again at the next recorded call.
void stop_for_exec();
// Stops the flush thread (before the final write).
void stop();

// When the next depth-0 call's end (clock ticks) runs due(): the flush
// thread to start, a flush from the calling thread (call.hpp).
// kDueNow: at the next call; kDueNever: none.
inline constexpr int64_t kDueNow = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kDueNever = std::numeric_limits<int64_t>::max();
MPIOR_HOT_EXTERN std::atomic<int64_t> g_due;  // hot_data.cpp: kDueNever
void due() noexcept;
// The crash journal wants the trace written (a ring half full): the flush
// thread is woken, or the next call flushes.
void want_flush() noexcept;

// A signal that arrived while this thread held its recorder's lock, raised
// again when the record is done (call.hpp).
MPIOR_HOT_EXTERN std::atomic<int> g_pending_signal;
void raise_pending() noexcept;

}  // namespace mpior::preload::crash
