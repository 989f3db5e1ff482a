#include "postproc/entered_collectives.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "postproc/comms.hpp"
#include "postproc/rank_events.hpp"
#include "postproc/restream.hpp"
#include "trace/arg_views.hpp"

namespace mpior::postproc {
namespace {

// The collectives CollectiveChecker counts and hashes per member (all but
// Reduce/Gather to a root, checked apart).
bool tallied(const trace::Event& ev) {
  if (!trace::is_mpi(ev.kind) || !trace::is_collective(ev.op())) return false;
  const trace::MpiArgs a = mpi_args(ev);
  return !(trace::is_all_to_one(ev.op()) && a.root() >= 0 && a.remote_size() <= 0);
}

// Those a member can be given as entered (entered_collectives.hpp).
bool completable(const trace::Event& ev) {
  const trace::OpClass op = ev.op();
  return ev.depth == 0 && (trace::is_all_to_all(op) || trace::is_one_to_all(op)) && mpi_args(ev).remote_size() <= 0 &&
         !(ev.flags & trace::flag::neighbor);
}

int32_t global_comm(const CommResolution& comms, int32_t rank, const trace::Event& ev) {
  const std::vector<int32_t>& to_global = comms.local_to_global[size_t(rank)];
  int64_t local = mpi_args(ev).comm();
  return local >= 0 && uint64_t(local) < to_global.size() ? to_global[size_t(local)] : -1;
}

int32_t local_comm(const CommResolution& comms, int32_t rank, int32_t g) {
  const std::vector<int32_t>& to_global = comms.local_to_global[size_t(rank)];
  auto it = std::find(to_global.begin(), to_global.end(), g);
  return it == to_global.end() ? -1 : int32_t(it - to_global.begin());
}

// Per rank: its tallied collectives per global communicator, and the thread
// that made its last one (where a completed call goes).
struct Counts {
  std::vector<std::vector<uint64_t>> per_comm;
  std::vector<uint32_t> thread;
};

Counts count_collectives(const TraceSet& set, const CommResolution& comms) {
  Counts c;
  c.per_comm.assign(size_t(set.size()), std::vector<uint64_t>(comms.comms.size(), 0));
  c.thread.assign(size_t(set.size()), 0);
  for (int32_t r = 0; r < set.size(); ++r) {
    const trace::RankTrace& t = set.ranks[size_t(r)];
    if (!t.streams.empty()) c.thread[size_t(r)] = t.streams.front().thread;
    RankEvents events(t, r);
    trace::Event ev;
    EventPos pos;
    while (events.next(ev, pos)) {
      if (!tallied(ev)) continue;
      int32_t g = global_comm(comms, r, ev);
      if (g < 0) continue;
      ++c.per_comm[size_t(r)][size_t(g)];
      c.thread[size_t(r)] = ev.thread;
    }
  }
  return c;
}

// A rank's calls on communicator g from its from-th on, in its order.
std::vector<trace::Event> calls_from(const TraceSet& set, const CommResolution& comms, int32_t rank, int32_t g,
                                     uint64_t from) {
  std::vector<trace::Event> out;
  RankEvents events(set.ranks[size_t(rank)], rank);
  trace::Event ev;
  EventPos pos;
  uint64_t n = 0;
  while (events.next(ev, pos))
    if (tallied(ev) && global_comm(comms, rank, ev) == g && n++ >= from) out.push_back(ev);
  return out;
}

// The thread's stream again, the calls appended where it ends, 0 s long.
void append_calls(trace::RankTrace& t, int32_t rank, uint32_t thread, std::vector<trace::RawEvent>& calls) {
  auto s = std::find_if(t.streams.begin(), t.streams.end(), [&](const trace::Stream& x) { return x.thread == thread; });
  if (s == t.streams.end()) return;
  Restream b(s->lossless);
  b.begin(*s, rank);
  trace::EventCursor c(*s, rank, Restream::cursor_options());
  trace::Event ev;
  int64_t end = 0;
  while (c.next(ev)) {
    b.copy(ev.raw());
    end = std::max(end, ev.end_ns);
  }
  for (trace::RawEvent& call : calls) {
    call.start = call.end = end;
    b.insert(call);
  }
  *s = b.finish(rank, thread);
  t.process.end_ns = std::max(t.process.end_ns, end);
}

}  // namespace

void complete_entered_collectives(TraceSet& set) {
  auto unfinished = [&](int32_t r) {
    return !set.ranks[size_t(r)].process.finished && !std::binary_search(set.missing.begin(), set.missing.end(), r);
  };
  bool any = false;
  for (int32_t r = 0; r < set.size(); ++r) any = any || unfinished(r);
  if (!any || set.size() < 2) return;
  const CommResolution comms = resolve_comms(set);
  const Counts counts = count_collectives(set, comms);
  std::map<int32_t, std::vector<trace::Event>> donated;  // per dead rank, in the donors' order
  for (size_t g = 0; g < comms.comms.size(); ++g) {
    int32_t donor = -1;
    for (int32_t m : comms.comms[g].members)
      if (!std::binary_search(set.missing.begin(), set.missing.end(), m) &&
          (donor < 0 || counts.per_comm[size_t(m)][g] > counts.per_comm[size_t(donor)][g]))
        donor = m;
    if (donor < 0) continue;
    for (int32_t d : comms.comms[g].members) {
      uint64_t have = counts.per_comm[size_t(d)][g], want = counts.per_comm[size_t(donor)][g];
      if (!unfinished(d) || have >= want) continue;
      std::vector<trace::Event> calls = calls_from(set, comms, donor, int32_t(g), have);
      if (calls.empty() || !std::all_of(calls.begin(), calls.end(), completable)) continue;  // the check refuses it
      set.entered.push_back({d, int32_t(g), donor, calls.size(), std::string(trace::name(calls.front().kind))});
      set.warnings.push_back(fmt::format(
          "rank {} died inside a collective: its trace lacks the last {} collective call(s) rank {} completed on "
          "communicator {} (from {}, collective #{}); completed as entered, 0 s long",
          d, calls.size(), donor, g, trace::name(calls.front().kind), mpi_args(calls.front()).coll_seq()));
      std::vector<trace::Event>& mine = donated[d];
      for (trace::Event& ev : calls) {
        mpi_args(ev).comm() = local_comm(comms, d, int32_t(g));
        mine.push_back(ev);
      }
    }
  }
  for (auto& [d, calls] : donated) {
    std::stable_sort(calls.begin(), calls.end(),
                     [](const trace::Event& a, const trace::Event& b) { return a.start_ns < b.start_ns; });
    std::vector<trace::RawEvent> raw;
    for (const trace::Event& ev : calls) raw.push_back(ev.raw());
    append_calls(set.ranks[size_t(d)], d, counts.thread[size_t(d)], raw);
  }
}

}  // namespace mpior::postproc
