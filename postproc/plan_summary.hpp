// summary.txt and summary.json of a plan that was not post-processed from
// traces (an extrapolated plan): the same documents, totalled by walking the
// plan's streams for every rank, so they describe exactly what replay runs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "trace/model.hpp"

namespace mpior::postproc {

struct PlanSummary {
  std::string text;
  nlohmann::json json;
};

// title: what the summary is of (the plan directory). Walks every event of
// every rank once.
PlanSummary summarize_plan(const trace::Plan& plan, const std::string& title);

}  // namespace mpior::postproc
