#include "replayer/replay_timeline.hpp"

#include <fstream>
#include <map>

#include "replayer/replay_messages.hpp"
#include "report/event_view.hpp"
#include "report/plan_names.hpp"
#include "report/timeline_ids.hpp"
#include "report/timeline_writer.hpp"
#include "trace/arg_views.hpp"
#include "trace/tool_error.hpp"

namespace mpior::replay {

using report::category;
using report::event_args;
using report::FlowEnd;
using report::is_record;
using report::PlanNames;
using report::TableNames;
using report::timeline_pid;
using report::timeline_tid;
using report::TimelineWriter;

namespace {

void name_tracks(TimelineWriter& w, const trace::Plan& plan, const replay::Report& rep) {
  for (size_t r = 0; r < plan.ranks.size(); ++r) {
    const std::string& host = plan.ranks[r].host;
    w.process(timeline_pid(int64_t(r)), "rank " + std::to_string(r) + (host.empty() ? "" : " (" + host + ")"),
              int64_t(r));
  }
  for (const replay::ThreadCalls& t : rep.calls)
    w.thread(timeline_pid(t.rank), timeline_tid(t.rank, t.thread), "thread " + std::to_string(t.thread));
}

}  // namespace

void write_replay_timeline(const std::string& file, const trace::Plan& plan, const replay::Report& rep,
                           uint64_t max_events) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw ToolError("cannot write --timeline " + file);
  TimelineWriter w(out, max_events);
  name_tracks(w, plan, rep);
  PlanNames names(plan);
  std::map<std::pair<int64_t, int64_t>, FlowEnd> collectives;  // (comm, instance) -> first member drawn
  for (const replay::ThreadCalls& t : rep.calls) {
    if (t.capped) w.mark_capped();
    TableNames rn = names.rank(t.rank);
    for (const replay::ReplayedCall& c : t.calls) {
      if (is_record(c.ev)) continue;  // receive completions: where arrows end
      FlowEnd at{timeline_pid(t.rank), timeline_tid(t.rank, t.thread), c.start_ns};
      if (!w.slice(at, c.end_ns - c.start_ns, std::string(trace::name(c.ev.kind)), category(c.ev),
                   event_args(c.ev, rn)))
        break;
      if (!trace::is_collective(c.ev.op())) continue;
      int64_t comm = rn.comm(mpi_args(c.ev).comm());
      int64_t instance = mpi_args(c.ev).coll_seq();
      auto [it, first] = collectives.try_emplace({comm, instance}, at);
      if (!first)
        w.flow(it->second, at,
               std::string(trace::name(c.ev.kind)) + " comm " + std::to_string(comm) + " #" + std::to_string(instance),
               "collective");
    }
  }
  for (const ReplayMessage& m : replay_messages(rep, names)) w.flow(m.send, m.recv, "message", "message");
  nlohmann::json meta = {{"tool", "mpior-replay"},
                         {"plan", rep.plan},
                         {"fs", rep.fs},
                         {"ranks", rep.ranks},
                         {"replay_s", double(rep.replay_ns) / 1e9},
                         {"traced_s", double(rep.traced_ns) / 1e9}};
  if (!w.finish(std::move(meta))) throw ToolError("cannot write --timeline " + file);
}

}  // namespace mpior::replay
