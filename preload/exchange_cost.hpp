// What online pruning adds to a traced blocking collective, measured once at
// MPI_Init and taken off the call's recorded duration (moved into the
// tracer's own time, left out of the next gap). With pruning, a Barrier is
// the decision exchange (an Iallreduce and its wait), which costs about
// twice a barrier (1.5 us against 0.74 us at 2 ranks); other collectives
// post the exchange before the call and wait for it after. The replay
// charges a collective its traced cost: unmeasured, the exchange made a
// program of 40,000 barriers replay 15% slower than it ran untraced.
#pragma once

#include <cstdint>

#include "mpi_abi.hpp"

namespace mpior::preload::exchange_cost {

// Collective over `comm` (a communicator of the tracer's own, over
// MPI_COMM_WORLD): times barriers, allreduces and the exchange beside them.
void measure(MPI_Comm comm) noexcept;

// Clock ticks to take off a pruned collective's duration: a Barrier replaced
// by the exchange, or another collective made beside it.
int64_t extra_ticks(bool replaced_barrier) noexcept;

}  // namespace mpior::preload::exchange_cost
