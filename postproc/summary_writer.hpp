// summary.json, written straight into one string: what nlohmann's dump with
// an indent of 2 writes, without a JSON object per file and per rank (8,192
// and more of each in an extrapolated plan).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "postproc/summary_files.hpp"

namespace mpior::postproc {

// summary_json_lean(h, a), with extra's members added (replacing any of the
// same name) and the arrays "files" (most bytes first) and "per_rank", as
// dump(2, ' ', false, replace) + "\n" would write it.
std::string summary_json_text(const SummaryHeader& h, const Analysis& a, const nlohmann::json& extra);

}  // namespace mpior::postproc
