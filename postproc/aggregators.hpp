// A cb_nodes what-if for the threaded replay (mpior-post --extrapolate N
// --cb-nodes K): the replay re-runs the POSIX writes ROMIO's two-phase I/O
// made under each collective MPI-IO write, on the ranks that made them.
// With K aggregators ROMIO would have made other ones, on other ranks; this
// deals them again: the call's file domain (first to last byte any rank's
// nested writes covered) in K contiguous domains of equal size, the j-th
// written by the call's j-th lowest rank (ROMIO's choice with cb_config_list
// *:*), each in requests that never cross a cb_buffer_size window of its
// domain (the max-blocksize rule). Only bytes written when traced are written.
#pragma once

#include <cstdint>

#include "trace/model.hpp"

namespace mpior::postproc {

struct Redealt {
  uint64_t calls = 0;   // collective writes whose nested writes were dealt again
  uint64_t writes = 0;  // POSIX writes they now make, over all ranks
  int32_t writers = 0;  // most ranks writing for one call
};

// Rewrites the plan's streams (rank by rank, then merged again). The nested
// POSIX reads and writes under collective writes are replaced (the data
// sieving reads of a traced hole go too). Throws ToolError when an aggregator
// never opened the file at the POSIX level (no descriptor to write with).
Redealt redeal_collective_writes(trace::Plan& plan, int aggregators, int64_t cb_buffer_size);

}  // namespace mpior::postproc
