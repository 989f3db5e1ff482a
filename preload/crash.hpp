// Crash-safe traces (crash.cpp): the rank's trace is written when the process
// dies by a signal the tracer can catch, and every MPIOR_FLUSH_INTERVAL by a
// background thread, so a SIGKILL loses at most the last interval.
#pragma once

#include <atomic>

namespace mpior::preload::crash {

// Starts the flush thread and installs the signal handlers (once the rank
// may write its trace).
void start();
// The signal handlers now, the flush thread at the first recorded call
// (standalone programs, children).
void start_lazily();
// A forked child: the parent's flush thread is not there; a traced child
// starts its own at its first recorded call.
void after_fork_child(bool traced);
// Before an exec: the flush thread stops (its write would be cut short); if
// the exec fails it starts again at the next recorded call.
void stop_for_exec();
// Stops the flush thread (before the final write).
void stop();

// Set while a flush thread is to start at the next recorded call (call.hpp).
inline std::atomic<bool> g_flusher_wanted{false};
void start_wanted_flusher() noexcept;

// A signal that arrived while this thread held its recorder's lock, raised
// again when the record is done (call.hpp).
inline std::atomic<int> g_pending_signal{0};
void raise_pending() noexcept;

}  // namespace mpior::preload::crash
