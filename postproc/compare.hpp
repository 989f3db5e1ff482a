// mpior-post --compare PLAN_A PLAN_B: are two plans the same run except for
// timing (scalaioextrap's verification C1)? Compares, rank by rank, the loop
// structure and every event — kind, call site, arguments, return value and
// errno — with files compared by path and attributes and communicators by
// members, so plans built differently (traced, extrapolated) compare equal
// when they replay the same calls. A loop that runs once at each entry
// compares equal to its body (the tracer folds such a loop into a plain
// call; an extrapolation may keep it).
#pragma once

#include <string>

#include "trace/model.hpp"

namespace mpior::postproc {

// Empty when identical except timing; otherwise the first difference,
// naming the rank, thread, event and what differs.
// events_only: the loop structure may differ (loops split where the tracer
// spilled, MPIOR_MEMORY), the events may not.
std::string compare_plans(const trace::Plan& a, const trace::Plan& b, bool events_only = false);

}  // namespace mpior::postproc
