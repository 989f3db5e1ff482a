// The merge's promise, checked: for every rank and thread, the plan stream
// that stands for it yields exactly the events the rank's own trace stream
// yields (every field; gap, duration, start and end only when the stream is
// lossless, since merged statistical streams share their timing statistics).
// Walks every event: for tests and `mpior-post --verify`, not the default path.
// The set is what the plan was built from: the traces after every change
// post_process makes before the merge (on-behalf sends moved to their senders).
#pragma once

#include <cstdint>
#include <string>

#include "postproc/trace_set.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

// The first difference between the events of `own` and those of `merged` read
// for `rank`, as text ("event 17 (pwrite): off is 4096, want 0"); empty when
// there is none. Counts the events compared in *events when given.
std::string first_difference(const trace::Stream& own, const trace::Stream& merged, int32_t rank,
                             uint64_t* events = nullptr);

// Checks every rank and thread of the set against the plan: each has exactly
// one plan stream, which reads back its events; the plan has no stream for a
// rank and thread the set does not have. Throws ToolError naming plan_name and
// the rank's trace file. Returns the number of events compared.
uint64_t check_plan(const TraceSet& set, const trace::Plan& plan, const std::string& plan_name);

// check_plan on the plan as written: encoded and decoded again, so the file
// format's round trip is checked too. For `mpior-post --verify`, before the
// plan is written (a plan that fails is never written).
uint64_t check_encoded_plan(const TraceSet& set, const trace::Plan& plan, const std::string& plan_name);

}  // namespace mpior::postproc
