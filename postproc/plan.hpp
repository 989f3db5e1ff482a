// The plan mpior-replay runs, and the plan directory: plan.mpior,
// summary.txt, summary.json.
#pragma once

#include <string>

#include "postproc/analyze.hpp"
#include "postproc/trace_set.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

// The ranks' streams (rank-local file and communicator ids), merged across
// ranks (merge.hpp): streams of equal structure become one with a rank list;
// the global tables and each rank's maps into them. Takes the set by value:
// its streams move into the plan.
trace::Plan build_plan(TraceSet set, const Analysis& a);

// Creates dir with its parents and writes the three files; a plan.mpior left
// from an earlier run is removed first so a failed write never leaves a plan
// that does not match its summary.
void write_plan_dir(const std::string& dir, const trace::Plan& plan, const std::string& summary_txt,
                    const std::string& summary_json);

// Writes the three files into a fresh sibling directory first and moves them
// into dir only when all are written: a failure leaves no partial plan (and
// no dir, when it did not exist before).
// The summary alone, for a job whose plan is refused (ranks missing): any
// earlier plan in dir is removed, so no replay reads one of another run.
void write_summary_only(const std::string& dir, const std::string& summary_txt, const std::string& summary_json);

void write_plan_dir_atomic(const std::string& dir, const trace::Plan& plan, const std::string& summary_txt,
                           const std::string& summary_json);

}  // namespace mpior::postproc
