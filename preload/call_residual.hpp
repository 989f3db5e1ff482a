// The tracer's time around each intercepted call that its two clock readings
// do not see: the end of one wrapper after its last reading (restoring errno,
// the depth, the returns) and the start of the next before its first (the
// record's fields, the checks). It falls in the gap between two depth-0 calls
// and would be replayed as the program's computation: in an event-dense
// program that time is of the order of the computation between calls, and
// the replay would run long by it.
#pragma once

#include <cstdint>

namespace mpior::preload {

// Measures it once, on the loading thread while nothing else runs: five
// rounds of 200 dropped calls made inline (the least, so an interrupt in one
// does not count), and seven of 200 through a real wrapper, ftell on an
// untraced memory stream against the real ftell (the median): a call the
// program makes enters and leaves a wrapper through its symbol, which costs
// about twice the inline figure, so the inline one alone would leave part of
// the tracer's time in the computation.
// Sets g_call_residual_ticks, which each depth-0 call adds to the time left
// out of the gap before it, and g_call_inside_ticks, the readings' own time
// between them, taken off every depth-0 call's duration without nested calls.
// Returns what it measured (all 0 when it did not: recording off, inside a
// call).
struct CallResidual {
  int64_t inline_ticks = 0;   // outside the readings, inline
  int64_t wrapped_ticks = 0;  // outside the readings, through ftell's wrapper (0: no memory stream)
  int64_t inside_ticks = 0;   // the readings' own, between them
};
CallResidual measure_call_residual() noexcept;

}  // namespace mpior::preload
