// mpior-post's main job: trace directory in, plan directory out.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

#include "postproc/pairing.hpp"
#include "postproc/trace_set.hpp"
#include "trace/model.hpp"

namespace mpior::postproc {

struct Analysis;

// What mpior-post does besides the plan, given the trace set as read (before
// the sends receivers logged move to their senders) and its analysis: the
// timeline and the HTML report (report/).
using ReportHook = std::function<void(const TraceSet&, const Analysis&)>;

// Reads and checks every rank of trace_dir, resolves and pairs, and only then
// writes plan_dir (created with its parents). Progress goes to log, warnings
// to warn. Throws ToolError or trace::FormatError, naming the file(s). With
// verify, checks before writing that the plan, as encoded, reads back every
// rank's events (merge_check.hpp; walks every event once more).
//
// A job some of whose ranks left no trace (killed before their first flush)
// still gets its summary and reports for the ranks traced; the plan is then
// refused (ToolError naming the missing ranks), or with partial written
// without them (trace::Plan::missing).
struct PostOptions {
  PairSink sink = {};
  bool verify = false;
  bool partial = false;
  ReportHook reports = {};
};
void post_process(const std::string& trace_dir, const std::string& plan_dir, std::ostream& log, std::ostream& warn,
                  const PostOptions& options = {});

// The plan post_process would write for trace_dir, in memory (warnings
// dropped): what --extrapolate reads when given trace directories.
trace::Plan plan_of_trace_dir(const std::string& trace_dir);
// DIR/plan.mpior when DIR holds one, else plan_of_trace_dir(DIR): an input
// of --extrapolate. Throws ToolError, FormatError.
trace::Plan plan_of_dir(const std::string& dir);

// DIR/plan.
std::string default_plan_dir(const std::string& trace_dir);

}  // namespace mpior::postproc
