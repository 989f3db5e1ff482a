// summary.txt and summary.json from an analysis.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyze.hpp"
#include "trace_set.hpp"

namespace mpior::postproc {

// Global file ids, most bytes moved first (then most calls, then id).
std::vector<int32_t> files_by_bytes(const Analysis& a);

std::string summary_text(const TraceSet& set, const Analysis& a);
// Keys: ranks, ops, files, mpi, time (the contract), plus job, op_totals,
// per_rank, messages, collectives, comms, warnings.
nlohmann::json summary_json(const TraceSet& set, const Analysis& a);

}  // namespace mpior::postproc
