#include "postproc/behalf.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "postproc/restream.hpp"
#include "trace/arg_views.hpp"
#include "trace/builder.hpp"
#include "trace/cursor.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace {

struct Insert {
  int64_t position = 0;  // events the sender's thread had recorded before the send
  int64_t start_ns = 0;
  trace::Kind kind{};
  int32_t comm = -1;  // global id
  int32_t dest = 0;   // the receiver, a rank in comm
  int64_t tag = 0, bytes = 0;
};

using Key = std::pair<int32_t, uint32_t>;  // sender rank, thread

int32_t position_in(const std::vector<int32_t>& members, int32_t rank) {
  auto it = std::find(members.begin(), members.end(), rank);
  return it == members.end() ? -1 : int32_t(it - members.begin());
}

void collect(const TraceSet& set, const CommResolution& comms, std::map<Key, std::vector<Insert>>& out) {
  for (int32_t r = 0; r < set.size(); ++r) {
    const auto& to_global = comms.local_to_global[size_t(r)];
    for (const trace::Stream& s : set.ranks[size_t(r)].streams) {
      trace::EventCursor c(s, r);
      trace::Event ev;
      while (c.next(ev)) {
        if (!(ev.flags & trace::flag::on_behalf)) continue;
        const trace::MpiArgs a = mpi_args(std::as_const(ev));
        int64_t local = a.comm();
        if (local < 0 || size_t(local) >= to_global.size())
          throw ToolError(set.path(r) + ": a send logged for its sender names unknown communicator " +
                          std::to_string(local));
        int32_t g = to_global[size_t(local)];
        const auto& members = comms.comms[size_t(g)].members;
        int64_t sender = a.peer();
        if (sender < 0 || size_t(sender) >= members.size())
          throw ToolError(set.path(r) + ": a send logged for its sender names rank " + std::to_string(sender) +
                          " outside communicator " + std::to_string(g));
        Insert ins{a.sender_position(), a.sender_start(), ev.kind, g, position_in(members, r), a.tag(), a.bytes()};
        out[{members[size_t(sender)], uint32_t(a.sender_thread())}].push_back(ins);
      }
    }
  }
}

int32_t local_id(const std::vector<int32_t>& to_global, int32_t g) {
  for (size_t l = 0; l < to_global.size(); ++l)
    if (to_global[l] == g) return int32_t(l);
  return -1;
}

// The sender's stream again, with its missing sends where they happened.
// Times come from the stream (restream.hpp); an inserted send keeps its own
// start within the gap it fell in.
trace::Stream rebuild(const trace::Stream& s, int32_t rank, std::vector<Insert>& inserts,
                      const std::vector<int32_t>& to_global) {
  std::stable_sort(inserts.begin(), inserts.end(), [](const Insert& a, const Insert& b) {
    return a.position != b.position ? a.position < b.position : a.start_ns < b.start_ns;
  });
  Restream b(s.lossless);
  b.begin(s, rank);
  trace::EventCursor c(s, rank, Restream::cursor_options());
  trace::Event ev;
  int64_t index = 0, last_end = 0;
  size_t next = 0;
  auto emit_inserts = [&](int64_t upto_start) {
    for (; next < inserts.size() && inserts[next].position <= index; ++next) {
      const Insert& in = inserts[next];
      trace::RawEvent send;
      send.kind = in.kind;
      send.start = send.end = std::clamp(in.start_ns, last_end, std::max(last_end, upto_start));
      auto a = mpi_args(send);
      a.comm() = local_id(to_global, in.comm);
      a.peer() = in.dest;
      a.tag() = in.tag;
      a.bytes() = in.bytes;
      b.insert(send);
      last_end = send.end;
    }
  };
  while (c.next(ev)) {
    if (ev.depth == 0) emit_inserts(ev.start_ns);
    b.copy(ev.raw());
    if (ev.depth == 0) last_end = ev.end_ns;
    ++index;
  }
  emit_inserts(INT64_MAX);
  return b.finish(rank, s.thread);
}

}  // namespace

size_t move_sends_to_senders(TraceSet& set, const CommResolution& comms) {
  std::map<Key, std::vector<Insert>> inserts;
  collect(set, comms, inserts);
  size_t moved = 0;
  for (auto& [key, list] : inserts) {
    auto [sender, thread] = key;
    trace::RankTrace& t = set.ranks[size_t(sender)];
    auto it =
        std::find_if(t.streams.begin(), t.streams.end(), [&](const trace::Stream& s) { return s.thread == thread; });
    if (it == t.streams.end())
      throw ToolError(set.path(sender) + ": receivers logged sends of thread " + std::to_string(thread) +
                      ", which has no stream");
    *it = rebuild(*it, sender, list, comms.local_to_global[size_t(sender)]);
    for (const Insert& in : list) {
      trace::KindTally& tally = t.pruned[size_t(in.kind)];
      if (tally.calls) --tally.calls;  // logged after all: no longer a pruned call
    }
    moved += list.size();
  }
  return moved;
}

}  // namespace mpior::postproc
