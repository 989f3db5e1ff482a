#include "postproc/collectives.hpp"

#include <algorithm>
#include <optional>

#include "postproc/rank_events.hpp"
#include "trace/arg_views.hpp"
#include "trace/tool_error.hpp"

namespace mpior::postproc {

namespace arg = trace::arg;
using trace::OpClass;

namespace {

// What members must agree on: the operation class and, if rooted, the root.
uint64_t signature(const trace::Event& ev) {
  OpClass op = ev.op();
  // On an intercommunicator (remote_size > 0) the root's group names no root.
  bool inter = mpi_args(ev).remote_size() > 0;
  uint64_t root = trace::is_rooted(op) && !inter ? uint64_t(uint32_t(mpi_args(ev).root())) : 0;
  return (uint64_t(op) << 32) | root;
}

uint64_t fold(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}

std::string call_text(const trace::Event& ev) {
  std::string s(trace::name(ev.kind));
  if (trace::is_rooted(ev.op())) s += " (root " + std::to_string(mpi_args(ev).root()) + ")";
  return s;
}

// One rank's collectives on one global communicator, in its MPI order.
class CollectiveWalk {
 public:
  CollectiveWalk(const TraceSet& set, const CommResolution& comms, int32_t rank, int32_t comm)
      : events_(set.ranks[size_t(rank)], rank), to_global_(comms.local_to_global[size_t(rank)]), comm_(comm) {}

  bool next(trace::Event& ev) {
    EventPos pos;
    while (events_.next(ev, pos)) {
      if (!trace::is_mpi(ev.kind) || !trace::is_collective(ev.op())) continue;
      int64_t local = mpi_args(ev).comm();
      if (local >= 0 && uint64_t(local) < to_global_.size() && to_global_[size_t(local)] == comm_) return true;
    }
    return false;
  }

 private:
  RankEvents events_;
  const std::vector<int32_t>& to_global_;
  int32_t comm_;
};

}  // namespace

int64_t CollectiveNumbers::of(int32_t rank, const trace::Event& ev) {
  const trace::MpiArgs a = mpi_args(ev);
  if (size_t(rank) >= last_.size()) {
    last_.resize(size_t(rank) + 1);
    parent_seq_.resize(size_t(rank) + 1);
  }
  std::vector<int64_t>& made = parent_seq_[size_t(rank)];
  if (made.empty()) {
    made.push_back(-1);  // filled: nothing left to look up
    for (const trace::CommEntry& e : set_->ranks[size_t(rank)].comms) {
      if (e.id < 0 || e.id >= (1 << 24)) continue;  // resolve_comms refuses those
      if (size_t(e.id) >= made.size()) made.resize(size_t(e.id) + 1, -1);
      made[size_t(e.id)] = int64_t(e.parent_seq);
    }
  }
  int64_t comm = a.comm(), n = a.coll_seq();
  auto [last, fresh] = last_[size_t(rank)].try_emplace(comm, -1);
  if (ev.op() == OpClass::comm_create) {
    int64_t made_id = a.newcomm();
    bool known = made_id > 0 && uint64_t(made_id) < made.size() && made[size_t(made_id)] >= 0;
    // MPI_COMM_NULL (a split with MPI_UNDEFINED): the instance the tracer recorded.
    n = known ? made[size_t(made_id)] : made_id < 0 ? a.create_seq() : last->second + 1;
  }
  last->second = n;
  return n;
}

CollectiveChecker::CollectiveChecker(const TraceSet& set, const CommResolution& comms)
    : set_(&set), comms_(&comms), numbers_(set) {
  tallies_.resize(comms.comms.size());
  rooted_.resize(comms.comms.size());
  rooted_instances_.resize(comms.comms.size());
  for (size_t g = 0; g < comms.comms.size(); ++g) {
    tallies_[g].resize(comms.comms[g].members.size());
    rooted_[g].kept.resize(comms.comms[g].members.size());
    rooted_[g].expected.resize(comms.comms[g].members.size());
  }
}

namespace {
// One kept instance, for the order-free sums.
uint64_t instance_hash(uint64_t instance, uint64_t sig) { return fold(fold(0x51ED27u, instance), sig); }
}  // namespace

// The root's expectations are settled once its member list (if any) is read.
void CollectiveChecker::close_root() {
  if (open_.comm < 0) return;
  Rooted& r = rooted_[size_t(open_.comm)];
  uint64_t h = open_.instance;
  auto expect = [&](int32_t m) {
    if (m >= 0 && size_t(m) < r.expected.size()) r.expected[size_t(m)] += h;
  };
  if (open_.listed < 0) {
    for (size_t m = 0; m < r.expected.size(); ++m) expect(int32_t(m));
  } else {
    for (int32_t m : open_.members) expect(m);
  }
  open_ = {};
}

void CollectiveChecker::observe_all_to_one(const RankScope& scope, int32_t g, const trace::Event& ev) {
  const trace::MpiArgs a = mpi_args(ev);
  int32_t me = scope.position(ev);
  uint64_t h = instance_hash(uint64_t(a.coll_seq()), signature(ev));
  if (me != a.root()) {
    rooted_[size_t(g)].kept[size_t(me)] += h;
    return;
  }
  ++rooted_instances_[size_t(g)];
  // The root expects itself too, so its own entry balances.
  open_ = {g, h, a.contributors() > 0 ? a.contributors() - 1 : -1, {me}, ev.depth};
  rooted_[size_t(g)].kept[size_t(me)] += h;
}

void CollectiveChecker::observe(const RankScope& scope, const trace::Event& ev, const EventPos& pos) {
  if (ev.op() == OpClass::member && open_.comm >= 0) {
    open_.members.push_back(int32_t(mpi_args(ev).member()));
    return;
  }
  // Anything but a member record at the root's depth or above ends its list
  // (a root nested in an MPI-IO call is followed by its siblings).
  if (ev.depth <= open_.depth) close_root();
  if (!trace::is_mpi(ev.kind) || !trace::is_collective(ev.op())) return;
  int32_t g = scope.comm(ev, pos);
  // Root -1: every member calls alike; an intercommunicator names its roles.
  if (trace::is_all_to_one(ev.op()) && mpi_args(ev).root() >= 0 && mpi_args(ev).remote_size() <= 0)
    return observe_all_to_one(scope, g, ev);
  // Summed, not folded in order: a rank's threads may call collectives on one
  // communicator, and their order across threads is only as exact as the
  // trace's timing; the tracer's number (arg::coll_seq) is exact.
  Tally& t = tallies_[size_t(g)][size_t(scope.position(ev))];
  ++t.count;
  t.hash += instance_hash(uint64_t(numbers_.of(scope.rank(), ev)), signature(ev));
}

bool CollectiveChecker::absent(int32_t comm, size_t m) const {
  const std::vector<int32_t>& missing = set_->missing;
  return std::binary_search(missing.begin(), missing.end(), comms_->comms[size_t(comm)].members[m]);
}

// Ranks without a trace (TraceSet::missing) are left out of the checks: the
// others' collectives are checked among themselves.
CollectiveStats CollectiveChecker::finish() {
  close_root();
  CollectiveStats stats;
  stats.per_comm.resize(tallies_.size());
  for (size_t g = 0; g < rooted_.size(); ++g) {
    const Rooted& r = rooted_[g];
    bool any_absent = false;
    for (size_t m = 0; m < r.kept.size(); ++m) any_absent = any_absent || absent(int32_t(g), m);
    for (size_t m = 0; m < r.kept.size() && !any_absent; ++m)
      if (r.kept[m] != r.expected[m]) diagnose_rooted(int32_t(g), m);
  }
  for (size_t g = 0; g < rooted_instances_.size(); ++g) {
    stats.per_comm[g] += rooted_instances_[g];
    stats.instances += rooted_instances_[g];
  }
  for (size_t g = 0; g < tallies_.size(); ++g) {
    const auto& members = tallies_[g];
    size_t first = 0;
    while (first < members.size() && absent(int32_t(g), first)) ++first;
    if (first >= members.size()) continue;
    for (size_t i = first + 1; i < members.size(); ++i)
      if (!absent(int32_t(g), i) &&
          (members[i].count != members[first].count || members[i].hash != members[first].hash))
        diagnose(int32_t(g), first, i);
    stats.per_comm[g] += members[first].count;
    stats.instances += members[first].count;
  }
  return stats;
}

namespace {

// The all-to-one call `rank` kept as instance n on comm, if any.
std::optional<trace::Event> rooted_instance(const TraceSet& set, const CommResolution& comms, int32_t rank,
                                            int32_t comm, int64_t n) {
  CollectiveWalk w(set, comms, rank, comm);
  trace::Event ev;
  while (w.next(ev))
    if (trace::is_all_to_one(ev.op()) && mpi_args(ev).coll_seq() == n) return ev;
  return std::nullopt;
}

struct Numbered {
  int64_t n;
  trace::Event ev;
};

// The collectives (not all to one) `rank` made on comm, by the tracer's number.
std::vector<Numbered> instances_by_number(const TraceSet& set, const CommResolution& comms, int32_t rank,
                                          int32_t comm) {
  CollectiveWalk w(set, comms, rank, comm);
  CollectiveNumbers numbers(set);
  std::vector<Numbered> out;
  trace::Event ev;
  while (w.next(ev)) {
    int64_t n = numbers.of(rank, ev);
    if (!trace::is_all_to_one(ev.op()) || mpi_args(ev).root() < 0) out.push_back({n, ev});
  }
  std::stable_sort(out.begin(), out.end(), [](const Numbered& x, const Numbered& y) { return x.n < y.n; });
  return out;
}

}  // namespace

// Names the first instance of member m that another member saw differently,
// or says which kept instance its root did not wait for.
void CollectiveChecker::diagnose_rooted(int32_t comm, size_t m) const {
  const auto& members = comms_->comms[size_t(comm)].members;
  int32_t rm = members[m];
  std::string g = std::to_string(comm);
  CollectiveWalk w(*set_, *comms_, rm, comm);
  trace::Event em;
  while (w.next(em)) {
    if (!trace::is_all_to_one(em.op())) continue;
    int64_t n = mpi_args(em).coll_seq();
    for (size_t p = 0; p < members.size(); ++p) {
      if (p == m) continue;
      auto ep = rooted_instance(*set_, *comms_, members[p], comm, n);
      if (!ep || signature(*ep) == signature(em)) continue;
      bool first = members[p] < rm;
      const trace::Event& ea = first ? *ep : em;
      const trace::Event& eb = first ? em : *ep;
      throw ToolError("collective #" + std::to_string(n) + " on communicator " + g + ": rank " +
                      std::to_string(std::min(rm, members[p])) + " called " + call_text(ea) + ", rank " +
                      std::to_string(std::max(rm, members[p])) + " called " + call_text(eb));
    }
  }
  throw ToolError("communicator " + g + ": the Reduce/Gather calls rank " + std::to_string(rm) + " (" + set_->path(rm) +
                  ") kept are not the ones its roots waited for (traces from different runs?)");
}

void CollectiveChecker::diagnose(int32_t comm, size_t a, size_t b) const {
  const auto& members = comms_->comms[size_t(comm)].members;
  int32_t ra = members[a], rb = members[b];
  std::string g = std::to_string(comm), sa = "rank " + std::to_string(ra), sb = "rank " + std::to_string(rb);
  std::vector<Numbered> ea = instances_by_number(*set_, *comms_, ra, comm);
  std::vector<Numbered> eb = instances_by_number(*set_, *comms_, rb, comm);
  for (size_t i = 0; i < std::max(ea.size(), eb.size()); ++i) {
    bool has_a = i < ea.size(), has_b = i < eb.size();
    std::string at = "collective #" + std::to_string((has_a ? ea[i] : eb[i]).n) + " on communicator " + g + ": ";
    if (has_a != has_b)
      throw ToolError("communicator " + g + ": " + sa + " made " + std::to_string(tallies_[size_t(comm)][a].count) +
                      " collective calls, " + sb + " made " + std::to_string(tallies_[size_t(comm)][b].count) + " (" +
                      at +
                      (has_a ? sa + " called " + call_text(ea[i].ev) + ", " + sb + " none"
                             : sa + " none, " + sb + " called " + call_text(eb[i].ev)) +
                      ")");
    if (ea[i].n != eb[i].n)
      throw ToolError(at + sa + " numbered it #" + std::to_string(ea[i].n) + ", " + sb + " #" +
                      std::to_string(eb[i].n) + " (a collective missing on one of them)");
    if (signature(ea[i].ev) != signature(eb[i].ev))
      throw ToolError(at + sa + " called " + call_text(ea[i].ev) + ", " + sb + " called " + call_text(eb[i].ev));
  }
  throw ToolError("communicator " + g + ": " + sa + " and " + sb + " disagree on their collective calls");
}

}  // namespace mpior::postproc
