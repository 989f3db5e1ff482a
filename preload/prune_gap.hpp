// Online pruning's second reason to keep a synchronisation (MPIOR_PRUNE_GAP_US):
// it follows a long computation. The thesis' rule (preload/piggyback/) keeps only
// what follows I/O, which is exact when every rank's compute phases take
// what they took when traced; they do not: on any machine they jitter from
// run to run, and a collective or an exchange makes every rank wait for the
// slowest (noise amplification). A pruned plan replays the traced waits as
// fixed compute, so its ranks drift apart instead and the replay runs short
// of an unpruned one on a slower file system. Kept after
// long computations only, the synchronisation costs the trace one record per
// millisecond of computation at most.
#pragma once

#include "preload/call.hpp"

namespace mpior::preload::mpi {

// MPI_Init, pruning on: the threshold in clock ticks.
void start_gap_rule() noexcept;

// At a pruning decision of a depth-0 call: when this call site has followed
// long computations (MPIOR_PRUNE_GAP_US) twice in a row, now and from then on
// every time, the node array is cleared as by I/O, so the decision keeps the
// synchronisation with every peer not yet met since. A gap in which the
// thread was preempted (oversubscribed ranks) does not count: it is the
// machine's, not the program's.
void note_computation(const Call& c) noexcept;

}  // namespace mpior::preload::mpi
