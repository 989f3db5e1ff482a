// Crash-safe traces (crash.cpp): the rank's trace is written when the process
// dies by a signal the tracer can catch, and every MPIOR_FLUSH_INTERVAL by a
// background thread, so a SIGKILL loses at most the last interval.
#pragma once

#include <atomic>

namespace mpior::preload::crash {

// Starts the flush thread and installs the signal handlers (once the rank
// may write its trace).
void start();
// The signal handlers alone (standalone programs write only at exit).
void start_signals_only();
// Stops the flush thread (before the final write).
void stop();

// A signal that arrived while this thread held its recorder's lock, raised
// again when the record is done (call.hpp).
inline std::atomic<int> g_pending_signal{0};
void raise_pending() noexcept;

}  // namespace mpior::preload::crash
