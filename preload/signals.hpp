// The program's signal handlers inside the tracer's (signals.cpp) and the
// stash their calls go to when they interrupted the tracer (signal_stash.cpp).
#pragma once

#include <cstdint>

#include "trace/event.hpp"
#include "trace/model.hpp"

namespace mpior::preload {

class Call;

// A record while a signal handler runs inside the tracer (it goes to the
// stash), or while stashed records wait: they go before, around or after it.
void record_beside_stash(trace::RawEvent& ev) noexcept;
// At a thread's first record: what its signal handlers stash after its last
// call is recorded when it exits.
void stash_thread_start() noexcept;

// The calls whose handler a signal handler's call defers (t_state.signal_stash:
// it interrupted the tracer, which may hold the file table's lock or be
// halfway through the fd table): their handlers run, in the order of the
// calls, when the thread records next.
// map, unmap, remap: mapping calls under ucm's hooks (ucm_bridge.cpp).
enum class Deferred : uint8_t {
  none,
  open,
  close,
  fd_io,
  fd_seek,
  stream_open,
  stream_close,
  stream_io,
  map,
  unmap,
  remap
};
struct DeferredArgs {
  int64_t ret;
  int64_t a[5];        // the handler's integer arguments, in its order
  const void* stream;  // stdio calls: the FILE*
  const char* path;    // open, fopen: copied into the stash
  const char* mode;    // fopen: copied too
};
// Keeps c's record and its handler's arguments in the stash; c is dropped.
void defer_call(Call& c, Deferred op, const DeferredArgs& args) noexcept;

// An intercepted call a signal handler made inside the tracer that no
// handler can record there (Call, call.hpp): counted, said at exit.
void lost_in_handler(trace::Kind k) noexcept;
// At exit: how many calls of signal handlers went unrecorded, per function.
void report_signal_losses() noexcept;
// The same counts for the rank trace (trace::RankTrace::unrecorded).
trace::KindTallies signal_unrecorded_tallies() noexcept;

}  // namespace mpior::preload
