// The stack's return addresses, through libunwind loaded privately
// (RTLD_LOCAL). Linked, libunwind.so would put its _Unwind_RaiseException and
// backtrace before libgcc's and glibc's in every traced program, so C++
// exceptions would go through it: loaded this way, only the tracer uses it.
#pragma once

namespace mpior::preload::unwinder {

// At load, before the program runs: finds libunwind and unwinds once, so the
// pipe libunwind keeps open for the process's life (it validates addresses
// by writing them into it) is made now, above the low fds, which stay the
// program's: `close(0); dup(pipe)` must still give 0.
void load() noexcept;
// Up to `size` return addresses of the calling thread's stack, innermost
// first; 0 when libunwind could not be loaded.
int backtrace(void** frames, int size) noexcept;

}  // namespace mpior::preload::unwinder
