// A cb_nodes what-if for the threaded replay (mpior-post --extrapolate N
// --cb-nodes K): the replay re-runs the POSIX reads and writes ROMIO's
// two-phase I/O made under each collective MPI-IO read or write, on the
// ranks that made them. With other hints ROMIO would have made other ones,
// on other ranks; this deals them again as ROMIO places them
// (postproc/romio_layout.hpp): the call's bytes, first to last any rank's
// nested transfers covered, in one file domain per aggregator, each moved
// in requests that never cross a cb_buffer_size window of its domain.
// Writes write only the bytes written when traced; reads read each window
// from its first to its last byte read when traced, in one request, as
// ROMIO reads a window whole.
//
// Every collective call that made nested transfers is dealt, as ROMIO does
// with romio_cb_read/romio_cb_write=enable. Under their default,
// automatic, ROMIO moves the data of a call whose ranks' accesses do not
// interleave with independent I/O instead; the plan does not say what each
// rank asked for (only what ROMIO then did), so that choice is not made
// again here.
#pragma once

#include <cstdint>

#include "postproc/romio_layout.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

struct Redealt {
  uint64_t calls = 0;       // collective reads and writes whose nested transfers were dealt again
  uint64_t transfers = 0;   // POSIX reads and writes they now make, over all ranks
  int32_t aggregators = 0;  // most ranks moving data for one call
};

// Rewrites the plan's streams (rank by rank, then merged again). The nested
// POSIX reads and writes under collective calls are replaced (the data
// sieving reads of a traced write's hole go too). The ranks' nodes are the
// plan's host names. Throws ToolError for hints check_hints refuses and when
// an aggregator never opened the file at the POSIX level (no descriptor).
Redealt redeal_collective_io(trace::Plan& plan, const CollectiveHints& hints);

}  // namespace mpior::postproc
