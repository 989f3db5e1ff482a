#include "replayer/replay_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/collect.hpp"
#include "report/html_report.hpp"
#include "report/plan_names.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

using report::is_record;
using report::loops_text;
using report::PlanNames;
using report::render_html;
using report::ReportCollector;
using report::ReportData;
using report::TableNames;
using report::write_file;

namespace {

void job_info(ReportData& d, const trace::Plan& plan, const replay::Report& rep) {
  d.title = "mpior replay report: " + rep.plan;
  bool capped = std::any_of(rep.calls.begin(), rep.calls.end(), [](const auto& t) { return t.capped; });
  d.job = {{"plan", rep.plan},
           {"target (--fs)", rep.fs},
           {"command traced", plan.job.cmdline},
           {"ranks", std::to_string(rep.ranks)},
           {"replay threads", std::to_string(rep.threads)},
           {"CPU placement (--bind)", rep.placement},
           {"traced time (s)", fmt::format("{:.6f}", double(rep.traced_ns) / 1e9)},
           {"replay time (s)", fmt::format("{:.6f}", double(rep.replay_ns) / 1e9)},
           {"error", fmt::format("{:+.1f}%", rep.error_pct())},
           {"failed calls", std::to_string(rep.errors)},
           {"calls shown", capped ? "the first calls of each thread (--timeline-max-events)" : "all"}};
  int64_t io = 0, compute = 0, comm = 0, wait = 0, cpu_wait = 0;
  for (const replay::ThreadSummary& t : rep.per_thread)
    io += t.io_ns, compute += t.compute_ns, comm += t.comm_ns, wait += t.wait_ns, cpu_wait += t.cpu_wait_ns;
  d.job.push_back({"predicted time by part (all threads, s)",
                   fmt::format("I/O {:.6f}, compute {:.6f}, communication {:.6f}, waiting {:.6f}", io / 1e9,
                               compute / 1e9, comm / 1e9, wait / 1e9)});
  d.job.push_back({"waiting for a CPU (all threads, s)",
                   fmt::format("replay {:.6f}, traced {:.6f}", cpu_wait / 1e9, rep.cpu_wait_ns / 1e9)});
  if (plan.extrap.target) d.job.push_back({"extrapolated to", std::to_string(plan.extrap.target) + " ranks"});
}

}  // namespace

void write_replay_html(const std::string& file, const trace::Plan& plan, const replay::Report& rep) {
  ReportData d;
  job_info(d, plan, rep);
  ReportCollector c(rep.ranks, rep.replay_ns);
  PlanNames names(plan);
  for (const replay::ThreadCalls& t : rep.calls) {
    TableNames rn = names.rank(t.rank);
    for (const replay::ReplayedCall& call : t.calls)
      if (!is_record(call.ev)) c.add(t.rank, call.start_ns, call.end_ns - call.start_ns, call.ev, rn);
  }
  c.add_pruned(plan.pruned);
  c.fill(d);
  std::map<int32_t, double> replayed;
  for (const replay::ThreadSummary& t : rep.per_thread)
    replayed[t.rank] = std::max(replayed[t.rank], double(t.replay_ns) / 1e9);
  for (const auto& [rank, s] : replayed)
    d.replay.push_back({rank, double(plan.ranks[size_t(rank)].traced_ns) / 1e9, s});
  std::vector<const trace::Stream*> streams;
  std::vector<std::string> headers;
  for (const trace::Stream& s : plan.streams) {
    streams.push_back(&s);
    headers.push_back("stream of " + std::to_string(s.rank_list().size()) + " rank(s), thread " +
                      std::to_string(s.thread));
  }
  d.loops = loops_text(streams, headers);
  if (!write_file(file, render_html(d))) throw ToolError("cannot write --html " + file);
}

}  // namespace mpior::replay
