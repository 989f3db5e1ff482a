// The program's signal handlers inside the tracer's (signals.cpp) and the
// stash their calls go to when they interrupted the tracer (signal_stash.cpp).
#pragma once

#include <cstdint>

#include "trace/event.hpp"

namespace mpior::preload {

// A record while a signal handler runs inside the tracer (it goes to the
// stash), or while stashed records wait: they go before, around or after it.
void record_beside_stash(trace::RawEvent& ev) noexcept;
// At a thread's first record: what its signal handlers stash after its last
// call is recorded when it exits.
void stash_thread_start() noexcept;

}  // namespace mpior::preload
