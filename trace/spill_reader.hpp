// A rank's trace read back whole: the segments of its spill file
// (rank-NNNNNN.spill.mpior, written when the tracer's memory reached
// MPIOR_MEMORY) followed, per thread, by what the rank file holds.
#pragma once

#include <string>
#include <vector>

#include "trace/model.hpp"

namespace mpior::trace {

// Appends src's positions after dst's (same thread; rank traces only: no
// rank variants). Each position keeps its own values and timing, so counts,
// bytes and statistics over the result are those of both parts.
void append_stream(Stream& dst, const Stream& src);

// The rank file of `rank` in `dir` with its spill file, if any, in front of
// its streams. Only the first RankTrace::spill_segments segments count (a
// segment appended after the rank file was last written holds events the
// rank file has too); a torn or missing segment adds a warning.
RankTrace read_rank_trace_with_spill(const std::string& dir, int32_t rank, std::vector<std::string>* warnings);

}  // namespace mpior::trace
