// Ranks' clocks aligned at MPI_Init: each rank's CLOCK_MONOTONIC against
// rank 0's, from the fastest of a few ping-pongs on the tracer's private
// communicator (Cristian's estimate: rank 0's reading lies half a round trip
// after the request left). The offset goes into the rank trace
// (ProcessInfo::clock_offset_ns); mpior-post puts every rank's trace start on
// rank 0's clock with it (PlanRank::start_ns), so cross-rank times compare.
#pragma once

#include <cstdint>

#include "preload/mpi_abi.hpp"

namespace mpior::preload::clock_align {

// Collective over `comm` (rank 0 exchanges with each rank in turn): what to
// add to this rank's clock readings to get rank 0's; 0 on rank 0.
int64_t offset_to_rank0(MPI_Comm comm, int rank, int size) noexcept;

// Test hook (MPIOR_TEST_CLOCK_SKEW_NS=N): rank r's clock reads N x r ns
// ahead, in its trace start and in the exchange, as if its clock were off.
int64_t test_skew_ns(int rank) noexcept;

}  // namespace mpior::preload::clock_align
