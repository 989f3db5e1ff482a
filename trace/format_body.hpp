// Encoding of the model's documents inside a container (see format.hpp).
// Internal to trace/: other parts use format.hpp.
#pragma once

#include "trace/codec.hpp"
#include "trace/format.hpp"
#include "trace/model.hpp"

namespace mpior::trace::body {

void put(Encoder& e, const RankTrace& t);
// A rank trace is its head (process, file table), its communicator table
// (count, entries), its tail (streams, tallies, spill segments).
void put_rank_head(Encoder& e, const RankTrace& t);
void put_rank_tail(Encoder& e, const RankTrace& t);
// The job file: the record, then its layout (JobInfo::trace_files) when it
// has one; ranks checked below the job's size.
void put_job_file(Encoder& e, const JobInfo& j);
void put(Encoder& e, const Plan& p);  // format_plan.cpp
void put(Encoder& e, const SpillSegment& s);
void put(Encoder& e, const MergedJob& m);  // format_merged.cpp

RankTrace get_rank_trace(Decoder& d);
// Written at `version` (an older one's records lack the later fields).
JobInfo get_job_file(Decoder& d, uint32_t version);
Plan get_plan(Decoder& d, uint32_t version);
SpillSegment get_spill_segment(Decoder& d);
MergedJob get_merged_job(Decoder& d);

// Pieces the documents share (format_body.cpp; the records themselves run
// through their descriptions, format_fields.hpp). The checks of a stream
// read whole: tree nodes and rank-variant indices within the stream.
void check_stream(Decoder& d, const Stream& s);
// A stream of a job file stands for at most the ranks the file holds: a
// damaged rank sequence would otherwise expand until memory runs out.
void check_stream_ranks(Decoder& d, const std::vector<Stream>& streams, size_t ranks);
void put_placement(Encoder& e, const CpuPlacement& p);
CpuPlacement get_placement(Decoder& d);
void put_file(Encoder& e, const FileEntry& f);
FileEntry get_file(Decoder& d);
void put_comm(Encoder& e, const CommEntry& c);
CommEntry get_comm(Decoder& d);

}  // namespace mpior::trace::body
