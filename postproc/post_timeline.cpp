#include "postproc/post_timeline.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "report/event_view.hpp"
#include "report/timeline_writer.hpp"
#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

using report::category;
using report::event_args;
using report::FlowEnd;
using report::is_record;
using report::RankNames;
using report::timeline_pid;
using report::timeline_tid;
using report::TimelineWriter;

using postproc::MessageEnd;
using postproc::MessagePair;
using postproc::TraceSet;

namespace {

struct EndKey {
  int32_t rank;
  uint32_t thread;
  uint64_t event;
  bool operator==(const EndKey&) const = default;
};
struct EndHash {
  size_t operator()(const EndKey& k) const {
    return std::hash<uint64_t>()(k.event * 0x9e3779b97f4a7c15ULL ^ (uint64_t(k.rank) << 20) ^ k.thread);
  }
};

// The names of one traced rank: its file table, its communicators resolved.
class TraceNames : public RankNames {
 public:
  TraceNames(const TraceSet& set, const postproc::Analysis& a, int32_t rank) : set_(set), a_(a), rank_(rank) {}
  std::string path(int64_t f) const override {
    const auto& files = set_.ranks[size_t(rank_)].files;
    return f >= 0 && size_t(f) < files.size() ? files[size_t(f)].path : std::string();
  }
  int64_t comm(int64_t c) const override {
    const auto& l2g = a_.comms.local_to_global[size_t(rank_)];
    return c >= 0 && size_t(c) < l2g.size() ? l2g[size_t(c)] : -1;
  }
  int64_t world(int64_t g, int64_t r) const override {
    if (g < 0 || size_t(g) >= a_.comms.comms.size()) return -1;
    const auto& m = a_.comms.comms[size_t(g)].members;
    return r >= 0 && size_t(r) < m.size() ? m[size_t(r)] : -1;
  }

 private:
  const TraceSet& set_;
  const postproc::Analysis& a_;
  int32_t rank_;
};

class TraceTimeline {
 public:
  TraceTimeline(std::ostream& out, const TraceSet& set, const postproc::Analysis& a,
                const std::vector<MessagePair>& pairs, uint64_t max_events)
      : w_(out, max_events), set_(set), a_(a), pairs_(pairs), placed_(pairs.size() * 2) {
    for (size_t i = 0; i < pairs.size(); ++i) {
      const MessagePair& p = pairs[i];
      wanted_[{p.send.rank, p.send.thread, p.send.event}].push_back(2 * i);
      wanted_[{p.recv.rank, p.recv.thread, p.recv.event}].push_back(2 * i + 1);
    }
    int64_t first = INT64_MAX;
    for (const auto& r : set.ranks) first = std::min(first, r.process.clock_real_ns);
    for (const auto& r : set.ranks) origin_.push_back(r.process.clock_real_ns - first);
    size_t streams = 0;
    for (const auto& r : set.ranks) streams += r.streams.size();
    budget_ = std::max<uint64_t>(1, max_events / std::max<size_t>(1, streams));
  }

  bool write() {
    name_tracks();
    for (int32_t r = 0; r < set_.size(); ++r)
      for (const trace::Stream& s : set_.ranks[size_t(r)].streams) walk(r, s);
    link_messages();
    nlohmann::json meta = {{"tool", "mpior-post"},
                           {"trace_dir", set_.dir},
                           {"ranks", set_.size()},
                           {"cmdline", set_.job.cmdline},
                           {"messages", a_.messages.messages},
                           {"collective_instances", a_.collectives.instances}};
    return w_.finish(std::move(meta));
  }

 private:
  void name_track(int32_t rank, uint32_t thread) {
    if (named_.insert({rank, thread}).second)
      w_.thread(timeline_pid(rank), timeline_tid(rank, thread), "thread " + std::to_string(thread));
  }
  void name_tracks() {
    for (int32_t r = 0; r < set_.size(); ++r) {
      const auto& p = set_.ranks[size_t(r)].process;
      w_.process(timeline_pid(r), "rank " + std::to_string(r) + (p.host.empty() ? "" : " (" + p.host + ")"), r);
      for (const trace::Stream& s : set_.ranks[size_t(r)].streams) name_track(r, s.thread);
    }
  }
  void walk(int32_t rank, const trace::Stream& s);
  bool draw(int32_t rank, const trace::Event& ev, const RankNames& names, FlowEnd& at);
  void link_collective(int32_t rank, const trace::Event& ev, const RankNames& names, const FlowEnd& at);
  void link_messages();

  TimelineWriter w_;
  const TraceSet& set_;
  const postproc::Analysis& a_;
  const std::vector<MessagePair>& pairs_;
  std::unordered_map<EndKey, std::vector<size_t>, EndHash> wanted_;  // end -> 2*pair + (0 send, 1 recv)
  std::vector<std::optional<FlowEnd>> placed_;
  std::map<std::pair<int64_t, int64_t>, FlowEnd> collectives_;  // (comm, instance) -> its first member drawn
  std::set<std::pair<int32_t, uint32_t>> named_;
  std::vector<int64_t> origin_;
  uint64_t budget_ = 0;
};

void TraceTimeline::walk(int32_t rank, const trace::Stream& s) {
  trace::EventCursor cursor(s, rank);
  TraceNames names(set_, a_, rank);
  trace::Event ev;
  uint64_t drawn = 0;
  for (uint64_t index = 0; cursor.next(ev); ++index) {
    FlowEnd at{timeline_pid(rank), timeline_tid(rank, s.thread), origin_[size_t(rank)] + ev.start_ns};
    if (!is_record(ev)) {
      if (drawn >= budget_) {
        w_.mark_capped();
        return;
      }
      if (!draw(rank, ev, names, at)) return;
      ++drawn;
    }
    auto it = wanted_.find({rank, s.thread, index});
    if (it != wanted_.end())
      for (size_t end : it->second) placed_[end] = at;
  }
}

// Draws one call; a send the receiver logged for its sender goes on the
// sender's track, at the time the sender made it.
bool TraceTimeline::draw(int32_t rank, const trace::Event& ev, const RankNames& names, FlowEnd& at) {
  nlohmann::json args = event_args(ev, names);
  int64_t dur = ev.dur_ns;
  if (ev.flags & trace::flag::on_behalf) {
    int64_t sender = names.world(names.comm(mpi_args(ev).comm()), mpi_args(ev).peer());
    if (sender >= 0 && sender < set_.size()) {
      uint32_t sender_thread = uint32_t(mpi_args(ev).sender_thread());
      name_track(int32_t(sender), sender_thread);
      at = {timeline_pid(sender), timeline_tid(sender, sender_thread),
            origin_[size_t(sender)] + mpi_args(ev).sender_start()};
      args["logged_by_rank"] = rank;
      args["duration_known"] = false;
      dur = 0;
    }
  }
  if (!w_.slice(at, dur, std::string(trace::name(ev.kind)), category(ev), std::move(args))) return false;
  if (ev.depth == 0 && trace::is_collective(ev.op())) link_collective(rank, ev, names, at);
  return true;
}

void TraceTimeline::link_collective(int32_t, const trace::Event& ev, const RankNames& names, const FlowEnd& at) {
  int64_t comm = names.comm(mpi_args(ev).comm());
  int64_t instance = mpi_args(ev).coll_seq();
  auto [it, first] = collectives_.try_emplace({comm, instance}, at);
  if (!first)
    w_.flow(it->second, at,
            std::string(trace::name(ev.kind)) + " comm " + std::to_string(comm) + " #" + std::to_string(instance),
            "collective");
}

void TraceTimeline::link_messages() {
  for (size_t i = 0; i < pairs_.size(); ++i) {
    const auto& from = placed_[2 * i];
    const auto& to = placed_[2 * i + 1];
    if (!from || !to) continue;  // cut by the cap
    const postproc::Channel& c = pairs_[i].channel;
    w_.flow(*from, *to, "message comm " + std::to_string(c.comm) + " tag " + std::to_string(c.tag), "message");
  }
}

}  // namespace

void write_trace_timeline(const std::string& file, const TraceSet& set, const postproc::Analysis& a,
                          const std::vector<MessagePair>& pairs, uint64_t max_events) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw ToolError("cannot write --timeline " + file);
  TraceTimeline t(out, set, a, pairs, max_events);
  if (!t.write()) throw ToolError("cannot write --timeline " + file);
}

}  // namespace mpior::postproc
