// Bounded tracer memory (spill_writer.cpp): when a thread's folded trace reaches its
// share of MPIOR_MEMORY, its folder is swapped for an empty one (under the
// recorder's lock, no copy) and the old one is encoded and appended to the
// rank's spill file as a checksummed segment, by the flush thread (or by the
// thread itself when there is none or it fell behind).
#pragma once

#include <cstdint>

namespace mpior::preload {
class ThreadRecorder;
}

namespace mpior::preload::spill {

// MPIOR_MEMORY in bytes; 0: no cap.
uint64_t cap_bytes() noexcept;
// Segments appended to this rank's spill file so far (the rank file names
// how many of them precede it; read while holding the write flag).
uint64_t segments() noexcept;
// A recorder wants to spill: wakes the flush thread; false when there is no
// flush thread to do it (the caller spills itself).
bool request() noexcept;
// The flush thread: waits up to ms milliseconds or until a request.
void wait(long ms) noexcept;
void set_flusher(bool running) noexcept;
// Spills every recorder that asked (the flush thread).
void service() noexcept;
// Before a periodic flush (the flush thread): spills the threads whose
// folded part grew large since the last one, so that the flush's snapshot,
// taken under each recorder's lock, stays short (and, with the crash
// journal's frequent flushes, its memory within the cap).
void before_flush() noexcept;
// Spills r now, on its own thread.
void spill_now(ThreadRecorder& r) noexcept;
void reset_after_fork() noexcept;

}  // namespace mpior::preload::spill
