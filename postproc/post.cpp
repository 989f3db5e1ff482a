#include "postproc/post.hpp"

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
  if (std::filesystem::is_regular_file(plan_file, ec)) return trace::read_plan(plan_file);
  return plan_of_trace_dir(dir);
}

trace::Plan plan_of_trace_dir(const std::string& trace_dir) {
  TraceSet set = read_trace_dir(trace_dir);
  Analysis a = analyze(set);
  move_sends_to_senders(set, a.comms);
  return build_plan(std::move(set), a);
}

namespace {

std::string rank_list(const std::vector<int32_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < 16; ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 16) out += " and " + std::to_string(ranks.size() - 16) + " more";
  return out;
}

void warn_all(const std::vector<std::string>& warnings, std::ostream& warn) {
  for (const std::string& w : warnings) warn << "mpior-post: warning: " << w << "\n";
}

}  // namespace

void post_process(const std::string& trace_dir, const std::string& plan_dir, std::ostream& log, std::ostream& warn,
                  PairSink sink, bool verify, const ReportHook& reports) {
  TraceSet set = read_trace_dir(trace_dir, MissingRanks::keep);
  Analysis a = analyze(set, std::move(sink));
  if (reports) reports(set, a);
  std::string text = summary_text(set, a);
  SummaryHeader header = header_of(set);
  nlohmann::json extra = nlohmann::json::object();  // summary.json's members besides summary_json's
  std::vector<int32_t> missing = set.missing;
  if (!missing.empty()) {
    text += "missing ranks (no trace): " + rank_list(missing) + "\n";
    extra["missing_ranks"] = missing;
  }
  if (!missing.empty()) {
    write_summary_only(plan_dir, text, summary_json_text(header, a, extra));
    warn_all(a.warnings, warn);
    throw ToolError(trace_dir + ": " + std::to_string(missing.size()) + " of " + std::to_string(set.size()) +
                    " ranks have no trace (rank" + (missing.size() > 1 ? "s " : " ") + rank_list(missing) +
                    "); wrote the summary of the others to " + plan_dir + " but no replay plan");
  }
  size_t ranks = size_t(set.size()), children = set.children;
  move_sends_to_senders(set, a.comms);
  std::optional<TraceSet> unmerged;  // --verify: what the merged plan must read back
  if (verify) unmerged = set;
  trace::Plan plan = build_plan(std::move(set), a);
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
  if (unmerged)
    log << "mpior-post: verified " << plan_file(plan_dir) << ": its " << plan.streams.size()
        << " streams give back the " << verified << " events of " << ranks << " ranks exactly\n";
}

}  // namespace mpior::postproc
