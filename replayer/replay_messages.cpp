#include "replayer/replay_messages.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "report/timeline_ids.hpp"
#include "trace/arg_views.hpp"

namespace mpior::replay {

using report::FlowEnd;
using report::PlanNames;
using report::TableNames;
using report::timeline_pid;
using report::timeline_tid;

namespace {

using trace::OpClass;

using ChannelKey = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // comm, source, dest (world), tag

struct Ends {
  std::vector<FlowEnd> sends, recvs;
};

class Matcher {
 public:
  explicit Matcher(const PlanNames& names) : names_(names) {}

  void observe(const replay::ThreadCalls& t, const replay::ReplayedCall& c) {
    const trace::Event& ev = c.ev;
    OpClass op = ev.op();
    TableNames rn = names_.rank(t.rank);
    FlowEnd at{timeline_pid(t.rank), timeline_tid(t.rank, t.thread), c.start_ns};
    auto args = trace::try_mpi_args(ev);
    if (!args) return;                                   // messages are MPI calls and their completion records
    if (ev.ret != 0 && op != OpClass::complete) return;  // failed calls moved nothing
    int64_t comm = rn.comm(args->comm());
    if (ev.depth == 0 && (op == OpClass::send || op == OpClass::isend || op == OpClass::sendrecv)) {
      int64_t dest = rn.world(comm, args->peer());
      if (dest >= 0) channels_[{comm, t.rank, dest, args->tag()}].sends.push_back(at);
    }
    bool receive = (ev.depth == 0 && (op == OpClass::recv || op == OpClass::sendrecv)) ||
                   (op == OpClass::complete && args->req_kind() == trace::kReqRecv);
    if (!receive) return;
    int64_t source = rn.world(comm, args->src());
    if (source >= 0) channels_[{comm, source, t.rank, args->stag()}].recvs.push_back(at);
  }

  std::vector<ReplayMessage> pairs() const {
    std::vector<ReplayMessage> out;
    for (const auto& [key, e] : channels_)
      for (size_t k = 0; k < std::min(e.sends.size(), e.recvs.size()); ++k) out.push_back({e.sends[k], e.recvs[k]});
    return out;
  }

 private:
  const PlanNames& names_;
  std::map<ChannelKey, Ends> channels_;
};

}  // namespace

std::vector<ReplayMessage> replay_messages(const replay::Report& rep, const PlanNames& names) {
  // Per rank, the threads' calls in time order (MPI orders a rank's calls by time).
  struct Item {
    const replay::ThreadCalls* t;
    const replay::ReplayedCall* c;
  };
  std::vector<Item> items;
  for (const replay::ThreadCalls& t : rep.calls)
    for (const replay::ReplayedCall& c : t.calls) items.push_back({&t, &c});
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return std::tie(a.t->rank, a.c->start_ns) < std::tie(b.t->rank, b.c->start_ns);
  });
  Matcher m(names);
  for (const Item& i : items) m.observe(*i.t, *i.c);
  return m.pairs();
}

}  // namespace mpior::replay
