// The job's ranks merged into one trace (trace::MergedJob, merged.mpior):
// what the tracer builds over a tree at MPI_Finalize (each step merge_jobs)
// and what mpior-post reads back rank by rank (rank_traces), one
// implementation both link. Streams keep rank-local file and communicator
// ids, so ranks that did the same thing merge as in a plan; the tables are
// held once per distinct entry (files by path bytes and open flags,
// communicators by origin, lineage and members) and each rank keeps its
// local ids as indices into them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trace/model.hpp"

namespace mpior::merge {

// One rank's trace as a merged job of that one rank.
trace::MergedJob job_of_rank(trace::RankTrace t);

// Merges parts of one job covering disjoint rank ranges, given in ascending
// rank order: tables united, streams merged (merge_merged, expand_ranks as
// there).
trace::MergedJob merge_jobs(std::vector<trace::MergedJob> parts, size_t expand_ranks = 256);

// Each rank's trace back, in the order of m.ranks: every stream expanded for
// the rank (its values, rank variants resolved), the tables by index. The
// statistical timing of a merged position is split between the stream's
// ranks: each takes its own occurrences (from its loops' iteration counts)
// at the merged mean, and counts, sums and histogram bins add up to the
// merged ones again, so the ranks' summaries add up to the merged plan's.
// Throws trace::FormatError naming `name` when a stream names a rank the file
// does not hold or a rank no variant covers.
std::vector<trace::RankTrace> rank_traces(const trace::MergedJob& m, const std::string& name);

}  // namespace mpior::merge
