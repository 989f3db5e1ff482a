// summary.txt and summary.json from an analysis.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "postproc/analyze.hpp"
#include "postproc/trace_set.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

// Global file ids, most bytes moved first (then most calls, then id).
std::vector<int32_t> files_by_bytes(const Analysis& a);

// What the summary says of the job besides the analysis: where it came from,
// the job record and each rank's host.
struct SummaryHeader {
  std::string dir;
  trace::JobInfo job;
  std::vector<std::string> hosts;
  std::vector<trace::CpuPlacement> placements;  // per rank, as traced (empty: not known)
  bool complete = true;                         // false: the job ended early; the traces stop where it did
  int32_t size() const { return int32_t(hosts.size()); }
};
SummaryHeader header_of(const TraceSet& set);

std::string summary_text(const SummaryHeader& h, const Analysis& a);
// summary.json's document (summary_json_text, summary_writer.hpp, read back).
nlohmann::json summary_json(const SummaryHeader& h, const Analysis& a);
// The same without its two arrays of an object per file and per rank ("files",
// "per_rank"), which summary_json_text writes directly.
nlohmann::json summary_json_lean(const SummaryHeader& h, const Analysis& a);
std::string summary_text(const TraceSet& set, const Analysis& a);
// Keys: ranks, ops, files, mpi, time (the contract), plus job, op_totals,
// per_rank, messages, collectives, comms, warnings.
nlohmann::json summary_json(const TraceSet& set, const Analysis& a);

// The plan's streams after the cross-rank merge: how many, and which ranks
// each stands for ("0-3,5,8-1022:2"), for summary.txt and summary.json's
// "plan" key.
std::string plan_streams_text(const trace::Plan& plan);
nlohmann::json plan_streams_json(const trace::Plan& plan);
// Ascending ranks as ranges: runs of three or more on one stride as
// first-last (":stride" unless 1), others one by one; cut after max_chars.
std::string rank_ranges(const std::vector<int64_t>& ranks, size_t max_chars = 60);

}  // namespace mpior::postproc
