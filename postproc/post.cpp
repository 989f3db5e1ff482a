#include "post.hpp"

#include <filesystem>
#include <ostream>

#include "analyze.hpp"
#include "plan.hpp"
#include "report.hpp"
#include "trace_set.hpp"

namespace mpior::postproc {

std::string default_plan_dir(const std::string& trace_dir) {
  return (std::filesystem::path(trace_dir) / "plan").string();
}

void post_process(const std::string& trace_dir, const std::string& plan_dir, std::ostream& log, std::ostream& warn,
                  PairSink sink) {
  TraceSet set = read_trace_dir(trace_dir);
  Analysis a = analyze(set, std::move(sink));
  std::string text = summary_text(set, a);
  std::string json = summary_json(set, a).dump(2) + "\n";
  size_t ranks = size_t(set.size());
  trace::Plan plan = build_plan(std::move(set), a);
  write_plan_dir(plan_dir, plan, text, json);
  for (const std::string& w : a.warnings) warn << "mpior-post: warning: " << w << "\n";
  log << "mpior-post: wrote " << plan_dir << ": " << ranks << " ranks, " << plan.streams.size() << " streams, "
      << plan.files.size() << " files, " << plan.comms.size() << " communicators, " << a.messages.messages
      << " messages, " << a.collectives.instances << " collective instances\n";
}

}  // namespace mpior::postproc
