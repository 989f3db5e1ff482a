// The tracer's time around each intercepted call that its two clock readings
// do not see: the end of one wrapper after its last reading (restoring errno,
// the depth, the returns) and the start of the next before its first (the
// record's fields, the checks). It falls in the gap between two depth-0 calls
// and would be replayed as the program's computation: in an event-dense
// program (comm_split: 120,000 fwrites and 240,000 pruned collectives a rank,
// 150 ns of traced computation a step where the untraced program spends
// 75-95) it made the replay 10-13% long.
#pragma once

namespace mpior::preload {

// Measures it once, on the loading thread while nothing else runs (the least
// of five rounds of 200 dropped calls, so an interrupt in one does not count),
// and sets g_call_residual_ticks, which each depth-0 call adds to the time
// left out of the gap before it.
void measure_call_residual() noexcept;

}  // namespace mpior::preload
