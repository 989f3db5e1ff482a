// summary.txt and summary.json of a plan that was not post-processed from
// traces (an extrapolated plan): the same documents, totalled by walking the
// plan's streams for every rank, so they describe exactly what replay runs.
#pragma once

#include <string>

#include "postproc/summary.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

struct PlanSummary {
  std::string text;
  std::string json;  // summary.json's bytes
};

// title: what the summary is of (the plan directory).
PlanSummary summarize_plan(const trace::Plan& plan, const std::string& title);

// The totals of the summary: the events of one rank of each class of ranks
// whose calls the totals cannot tell apart (summary_classes.hpp), counted for
// each of them; every_rank: each rank's events (what the classes must equal).
Summary plan_totals(const trace::Plan& plan, const std::string& title, bool every_rank = false);

}  // namespace mpior::postproc
