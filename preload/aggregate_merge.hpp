// The structural merge at MPI_Finalize (issue 19): the ranks reduce their
// traces over a radix tree on the tracer's private communicator, each step
// merge/'s merge_jobs (what mpior-post reads back with rank_traces), and rank
// 0 writes one job trace, merged.mpior (trace::MergedJob). Until it is
// durable every rank's flush file stays; then the ranks remove theirs.
#pragma once

#include <cstdint>
#include <vector>

#include "preload/aggregate.hpp"

namespace mpior::preload::aggregate {

// MPIOR_MERGE_TREE: the tree's radix; 0 leaves the job to the aggregate files.
int64_t merge_radix();

// mine: this rank's encoded trace (empty: it keeps its own file, a spill or
// a trace that could not be made, and then no rank merges). Returns whether
// merged.mpior is durable, the same answer on every rank; rank 0 then fills
// layout. false: nothing was written and the caller falls back to the
// aggregate files. kill_rank: MPIOR_TEST_KILL_IN_MERGE. Collective over
// c.comm; never throws.
bool merge_in_job(const Context& c, const std::vector<uint8_t>& mine, int64_t kill_rank,
                  std::vector<trace::TraceFileRanks>* layout) noexcept;

}  // namespace mpior::preload::aggregate
