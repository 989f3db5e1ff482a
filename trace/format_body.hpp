// Encoding of the model's documents inside a container (see format.hpp).
// Internal to trace/: other parts use format.hpp.
#pragma once

#include "codec.hpp"
#include "format.hpp"
#include "model.hpp"

namespace mpior::trace::body {

void put(Encoder& e, const RankTrace& t);
void put(Encoder& e, const JobInfo& j);
void put(Encoder& e, const Plan& p);
void put(Encoder& e, const SpillSegment& s);

RankTrace get_rank_trace(Decoder& d);
JobInfo get_job(Decoder& d);
Plan get_plan(Decoder& d);
SpillSegment get_spill_segment(Decoder& d);

// The job record's layout (JobInfo::trace_files); ranks checked below size.
void put_layout(Encoder& e, const std::vector<TraceFileRanks>& files);
std::vector<TraceFileRanks> get_layout(Decoder& d, int32_t size);

}  // namespace mpior::trace::body
