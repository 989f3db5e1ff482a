#include "postproc/post.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>

#include "postproc/analyze.hpp"
#include "postproc/behalf.hpp"
#include "postproc/merge_check.hpp"
#include "postproc/plan.hpp"
#include "postproc/summary_files.hpp"
#include "postproc/summary_writer.hpp"
#include "postproc/trace_set.hpp"
#include "trace/format.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {
std::string plan_file(const std::string& plan_dir) {
  return (std::filesystem::path(plan_dir) / trace::kPlanFileName).string();
}
}  // namespace

std::string default_plan_dir(const std::string& trace_dir) {
  return (std::filesystem::path(trace_dir) / "plan").string();
}

trace::Plan plan_of_dir(const std::string& dir) {
  std::string plan_file = (std::filesystem::path(dir) / trace::kPlanFileName).string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(plan_file, ec)) return plan_of_trace_dir(dir);
  trace::Plan plan = trace::read_plan(plan_file);
  if (!plan.missing.empty())
    throw ToolError(plan_file + ": a partial plan (rank" + (plan.missing.size() > 1 ? "s " : " ") +
                    rank_list(plan.missing) + " left no trace); extrapolate from complete runs");
  return plan;
}

trace::Plan plan_of_trace_dir(const std::string& trace_dir) {
  TraceSet set = read_trace_dir(trace_dir);
  Analysis a = analyze(set);
  move_sends_to_senders(set, a.comms);
  return build_plan(std::move(set), a);
}

namespace {

void warn_all(const std::vector<std::string>& warnings, std::ostream& warn) {
  for (const std::string& w : warnings) warn << "mpior-post: warning: " << w << "\n";
}

// Per missing rank, the collective instances its part is absent from: every
// one on a communicator that lists it.
nlohmann::json absent_parts(const TraceSet& set, const Analysis& a) {
  nlohmann::json out = nlohmann::json::array();
  for (int32_t r : set.missing) {
    uint64_t n = 0;
    for (size_t g = 0; g < a.comms.comms.size(); ++g) {
      const std::vector<int32_t>& m = a.comms.comms[g].members;
      if (std::find(m.begin(), m.end(), r) != m.end() && g < a.collectives.per_comm.size())
        n += a.collectives.per_comm[g];
    }
    out.push_back({{"rank", r}, {"collectives_without_it", n}});
  }
  return out;
}

// Per rank that died inside collectives: the calls completed as entered
// (entered_collectives.hpp).
void add_entered(const TraceSet& set, std::string& text, nlohmann::json& extra) {
  if (set.entered.empty()) return;
  nlohmann::json out = nlohmann::json::array();
  text += "collectives completed as entered (ranks that died inside them):";
  for (const EnteredCollectives& e : set.entered) {
    out.push_back({{"rank", e.rank}, {"comm", e.comm}, {"calls", e.calls}, {"first", e.call}, {"as_rank", e.donor}});
    text += " rank " + std::to_string(e.rank) + ": " + std::to_string(e.calls) + " on communicator " +
            std::to_string(e.comm) + " (" + e.call + ");";
  }
  text.back() = '\n';
  extra["entered_collectives"] = out;
}

}  // namespace

void post_process(const std::string& trace_dir, const std::string& plan_dir, std::ostream& log, std::ostream& warn,
                  const PostOptions& o) {
  TraceSet set = read_trace_dir(trace_dir, MissingRanks::keep);
  Analysis a = analyze(set, o.sink);
  if (o.reports) o.reports(set, a);
  std::string text = summary_text(set, a);
  SummaryHeader header = header_of(set);
  nlohmann::json extra = nlohmann::json::object();  // summary.json's members besides summary_json's
  add_entered(set, text, extra);
  std::vector<int32_t> missing = set.missing;
  if (!missing.empty()) {
    text += "missing ranks (no trace): " + rank_list(missing) + "\n";
    extra["missing_ranks"] = missing;
    extra["missing_parts"] = absent_parts(set, a);
  }
  std::string missing_text = std::to_string(missing.size()) + " of " + std::to_string(set.size()) +
                             " ranks have no trace (rank" + (missing.size() > 1 ? "s " : " ") + rank_list(missing) +
                             ")";
  if (!a.unmatched.empty()) {
    text += "ranks stopped at different points: " + a.unmatched + "\n";
    extra["unmatched"] = a.unmatched;
    write_summary_only(plan_dir, text, summary_json_text(header, a, extra));
    warn_all(a.warnings, warn);
    throw ToolError(trace_dir + ": the job did not end and its ranks stopped at different points (" + a.unmatched +
                    "); wrote the summary to " + plan_dir + " but no replay plan");
  }
  if (!missing.empty() && !o.partial) {
    write_summary_only(plan_dir, text, summary_json_text(header, a, extra));
    warn_all(a.warnings, warn);
    throw ToolError(trace_dir + ": " + missing_text + "; wrote the summary of the others to " + plan_dir +
                    " but no replay plan (--partial writes one without them)");
  }
  size_t ranks = size_t(set.size()), children = set.children;
  move_sends_to_senders(set, a.comms);
  std::optional<TraceSet> unmerged;  // --verify: what the merged plan must read back
  if (o.verify) unmerged = set;
  trace::Plan plan = build_plan(std::move(set), a);
  plan.missing = missing;
  uint64_t verified = unmerged ? check_encoded_plan(*unmerged, plan, plan_file(plan_dir)) : 0;
  // The merged plan's streams: the one part of the summary not from the traces.
  text += plan_streams_text(plan);
  extra["plan"] = plan_streams_json(plan);
  write_plan_dir(plan_dir, plan, text, summary_json_text(header, a, extra));
  warn_all(a.warnings, warn);
  log << "mpior-post: wrote " << plan_dir << ": " << ranks << " ranks, " << plan.streams.size() << " streams, "
      << plan.files.size() << " files, " << plan.comms.size() << " communicators, " << a.messages.messages
      << " messages, " << a.collectives.instances << " collective instances";
  if (children) log << ", " << children << " processes the ranks started (folded in as threads)";
  log << "\n";
  if (!missing.empty()) log << "mpior-post: partial plan: " << missing_text << "; their parts are left out\n";
  if (unmerged)
    log << "mpior-post: verified " << plan_file(plan_dir) << ": its " << plan.streams.size()
        << " streams give back the " << verified << " events of " << ranks << " ranks exactly\n";
}

}  // namespace mpior::postproc
