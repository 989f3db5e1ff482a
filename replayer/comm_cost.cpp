#include "replayer/comm_cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <vector>

#include "trace/arg_views.hpp"
#include "trace/cursor.hpp"

namespace mpior::replay {

using trace::OpClass;

namespace {

bool collective(OpClass op) {
  return op == OpClass::barrier || op == OpClass::allcoll || op == OpClass::bcast || op == OpClass::scatter ||
         op == OpClass::reduce || op == OpClass::gather;
}

// The share of a class's traced durations that hold no waiting for a
// partner. A collective's members leave together at the last arrival plus
// its cost: the last arriver's duration (one in comm_size, the shortest) is
// all cost, the others' also hold waiting, which the replay reproduces by
// waiting. A receive completes when both sides came: in an exchange one of
// the two partners came second, and its receive or Wait is all cost. Counted
// whole, a checkpoint's imbalance (one rank's fsync longer than the other's,
// absorbed by the next halo Waitall) would make a Wait cost the file
// system's imbalance, charged again on top of the replay's own waiting.
double cost_fraction(const CostKey& k) {
  if (collective(k.op)) return k.comm_size >= 2 ? 1.0 / double(k.comm_size) : 1.0;
  bool receives = k.op == OpClass::recv || k.op == OpClass::wait || k.op == OpClass::sendrecv;
  return receives ? 0.5 : 1.0;
}

// All to one (Gather, Reduce): pruning keeps the root's call and drops the
// members' that had no I/O, and the replay then never makes the root wait
// for them. An instance whose members were pruned has its root's duration
// only, waiting and all, which is what the replay must charge: the share of
// last arrivers is the roots' calls among those traced, 1/comm_size when
// every member's call was kept, 1 when only the roots' were (charging the
// shorter half of the roots' calls would run the replay short).
double rooted_fraction(const CostKey& k, uint64_t root_calls, uint64_t calls) {
  double least = cost_fraction(k);
  if (!trace::is_all_to_one(k.op) || calls == 0) return least;
  return std::clamp(double(root_calls) / double(calls), least, 1.0);
}

// The communicator ev's rank names in its comm slot (null: none known).
const trace::PlanComm* comm_of(const trace::Plan& plan, const trace::Event& ev, int64_t local) {
  if (ev.rank < 0 || size_t(ev.rank) >= plan.ranks.size()) return nullptr;
  const auto& comms = plan.ranks[size_t(ev.rank)].comms;
  if (local < 0 || size_t(local) >= comms.size()) return nullptr;
  int32_t g = comms[size_t(local)];
  return g >= 0 && size_t(g) < plan.comms.size() ? &plan.comms[size_t(g)] : nullptr;
}

// Whether ev's rank is its rooted collective's root.
bool at_root(const trace::Plan& plan, const trace::Event& ev) {
  int64_t root = mpi_args(ev).root();
  const trace::PlanComm* c = root >= 0 ? comm_of(plan, ev, mpi_args(ev).comm()) : nullptr;
  return c && size_t(root) < c->members.size() && c->members[size_t(root)] == ev.rank;
}

}  // namespace

namespace {

// The shortest `fraction` of d's durations as (value, occurrences) pieces:
// each histogram bin at its middle, clipped to the observed range.
std::vector<std::pair<double, double>> lower_share(const trace::TimeStats& d, double fraction) {
  std::vector<std::pair<double, double>> out;
  double want = std::max(1.0, std::min(1.0, fraction) * double(d.count())), took = 0;
  for (auto [bin, n] : d.histogram()) {
    int64_t lo = std::max(trace::TimeStats::bin_low(bin), d.min());
    int64_t hi = std::min(trace::TimeStats::bin_high(bin), d.max());
    double mid = hi <= lo ? double(lo) : (double(lo) + double(hi)) / 2, take = std::min(double(n), want - took);
    out.emplace_back(mid, take);
    took += take;
    if (took >= want) break;
  }
  return out;
}

// The weighted median of pieces sorted by value.
double median_of(const std::vector<std::pair<double, double>>& pieces) {
  double total = 0, took = 0;
  for (const auto& p : pieces) total += p.second;
  for (const auto& p : pieces)
    if ((took += p.second) >= total / 2) return p.first;
  return pieces.empty() ? 0 : pieces.back().first;
}

}  // namespace

double lower_robust(const trace::TimeStats& d, double fraction) {
  if (d.count() <= 1 || d.histogram().empty()) return d.mean();
  std::vector<std::pair<double, double>> share = lower_share(d, fraction);
  double fence = kOutlierFactor * median_of(share), took = 0, sum = 0;
  for (auto [mid, n] : share)
    if (mid <= fence) sum += mid * n, took += n;
  return took > 0 ? sum / took : d.mean();
}

bool CommCosts::pruned_root(const trace::Event& ev) {
  OpClass op = ev.op();
  return (op == OpClass::reduce || op == OpClass::gather) && mpi_args(ev).remote_size() <= 0 &&
         mpi_args(ev).root() >= 0 && mpi_args(ev).contributors() > 0;
}

bool CommCosts::charged(OpClass op) {
  switch (op) {
    case OpClass::send:
    case OpClass::isend:
    case OpClass::recv:
    case OpClass::sendrecv:
    case OpClass::wait:
    case OpClass::test:
      return true;
    default:
      return trace::is_meeting(op);
  }
}

bool CommCosts::mpiio_collective(const trace::Event& ev) {
  OpClass op = ev.op();
  if (!trace::is_mpiio(ev.kind) || (op != OpClass::mpiio_read && op != OpClass::mpiio_write)) return false;
  int64_t flags = mpiio_args(ev).flags();
  return (flags & trace::fio::kColl) && !(flags & trace::fio::kEnd);
}

CostKey CommCosts::mpiio_key(const trace::Plan& plan, const trace::Event& ev) {
  CostKey k;
  k.op = ev.op();
  int64_t bytes = mpiio_args(ev).count();
  k.size_class = uint8_t(bytes > 0 ? std::bit_width(uint64_t(bytes)) : 0);
  if (const trace::PlanComm* c = comm_of(plan, ev, mpiio_args(ev).fcomm())) k.comm_size = uint32_t(c->members.size());
  return k;
}

int64_t CommCosts::mpiio_cost(const trace::Plan& plan, const trace::Event& ev) const {
  if (!mpiio_collective(ev)) return 0;
  auto it = table_.find(mpiio_key(plan, ev));
  return it == table_.end() ? 0 : int64_t(it->second.cost_ns);
}

CostKey CommCosts::key_of(const trace::Plan& plan, const trace::Event& ev) {
  CostKey k;
  k.op = ev.op();
  bool has_comm = ev.op() != OpClass::wait && ev.op() != OpClass::test;
  int64_t bytes = has_comm ? mpi_args(ev).bytes() : 0;
  k.size_class = uint8_t(bytes > 0 ? std::bit_width(uint64_t(bytes)) : 0);
  const trace::PlanComm* c = has_comm ? comm_of(plan, ev, mpi_args(ev).comm()) : nullptr;
  if (c) k.comm_size = uint32_t(c->members.size());
  return k;
}

namespace {

// Positions whose durations calibrate something: charged calls' costs and
// communicator creations' floors.
bool calibrates(OpClass op) { return CommCosts::charged(op) || op == OpClass::comm_create; }

}  // namespace

CommCosts::CommCosts(const trace::Plan& plan) {
  std::map<CostKey, trace::TimeStats> merged;  // every position's durations (a collective's: every member's)
  std::map<CreationKey, trace::TimeStats> creations;
  std::map<CostKey, uint64_t> root_calls;  // all to one: the roots' among them
  std::map<CostKey, OwnTime> own;          // collective MPI-IO
  for (const trace::Stream& s : plan.streams) {
    std::vector<int64_t> ranks = s.rank_list();
    if (!ranks.empty()) calibrate(plan, s, int32_t(ranks.front()), merged, creations, root_calls, own);
  }
  for (auto& [key, stats] : merged)
    table_[key].cost_ns = lower_robust(stats, rooted_fraction(key, root_calls[key], stats.count()));
  for (auto& [key, stats] : creations)
    creation_floor_[key] = int64_t(lower_robust(stats, key.second >= 2 ? 1.0 / double(key.second) : 1.0));
  // The last arrivers' durations less the longest a member's file-system
  // calls took: every member leaves after the slowest aggregator's writes
  // (a two-phase sender waits for its aggregator's round to end).
  for (auto& [key, o] : own) {
    double last = lower_robust(o.dur, key.comm_size >= 2 ? 1.0 / double(key.comm_size) : 1.0);
    table_[key].cost_ns = std::max(0.0, last - o.nested_ns);
  }
}

// One stream's positions, walked on its first rank until each was seen (a
// collective MPI-IO position's nested calls included).
void CommCosts::calibrate(const trace::Plan& plan, const trace::Stream& s, int32_t rank,
                          std::map<CostKey, trace::TimeStats>& merged,
                          std::map<CreationKey, trace::TimeStats>& creations, std::map<CostKey, uint64_t>& root_calls,
                          std::map<CostKey, OwnTime>& own) {
  size_t todo = 0;
  std::vector<bool> seen(s.leaves.size(), false);
  for (const trace::Leaf& l : s.leaves) {
    trace::OpClass op = trace::info(l.kind).op;
    todo += l.depth == 0 && (calibrates(op) || op == OpClass::mpiio_read || op == OpClass::mpiio_write);
  }
  trace::EventCursor cursor(s, rank);
  trace::Event ev;
  OwnTime* parent = nullptr;  // the collective MPI-IO position whose nested calls come
  double nested = 0;
  auto close_parent = [&] {
    if (parent) parent->nested_ns = std::max(parent->nested_ns, nested);
    parent = nullptr, nested = 0;
  };
  while (cursor.next(ev)) {
    if (ev.depth != 0) {
      // Each nested call as its position takes it over every call, not as
      // this first call took it (a first write's stall made the class free).
      if (parent && ev.depth == 1 && trace::is_io(ev.kind)) nested += lower_robust(s.leaves[ev.leaf].dur, 1.0);
      continue;
    }
    close_parent();
    if (todo == 0) break;
    bool mpiio = mpiio_collective(ev);
    if (seen[ev.leaf] || !(mpiio || calibrates(ev.op()))) continue;
    seen[ev.leaf] = true;
    --todo;
    const trace::TimeStats& d = s.leaves[ev.leaf].dur;
    if (d.count() == 0) continue;
    if (mpiio) {
      CostKey key = mpiio_key(plan, ev);
      parent = &own[key];
      parent->dur.merge(d);
      CostEntry& e = table_[key];
      e.calls += d.count();
      ++e.positions;
      continue;
    }
    CostKey key = key_of(plan, ev);
    if (key.op == OpClass::comm_create)
      creations[{ev.kind, key.comm_size}].merge(d);
    else
      add_position(key, d, merged);
    if (trace::is_all_to_one(key.op) && at_root(plan, ev)) root_calls[key] += d.count();
  }
  close_parent();
}

void CommCosts::add_position(const CostKey& key, const trace::TimeStats& d,
                             std::map<CostKey, trace::TimeStats>& merged) {
  CostEntry& e = table_[key];
  merged[key].merge(d);
  e.calls += d.count();
  ++e.positions;
}

int64_t CommCosts::floor_ns(const trace::Plan& plan, const trace::Event& ev, const trace::TimeStats& position) const {
  int64_t least = position.count() > 0 ? position.min() : 0;
  if (ev.op() != OpClass::comm_create) return least;
  auto it = creation_floor_.find({ev.kind, key_of(plan, ev).comm_size});
  return it == creation_floor_.end() ? least : std::min(least, it->second);
}

int64_t CommCosts::cost(const trace::Plan& plan, const trace::Event& ev) const {
  if (!charged(ev.op()) || table_.empty()) return 0;
  CostKey k = key_of(plan, ev);
  auto it = table_.find(k);
  if (it != table_.end()) return int64_t(it->second.cost_ns);
  // Another size class of the same operation and communicator size: the nearest one.
  auto lo = table_.lower_bound({k.op, 0, 0});
  const CostEntry* best = nullptr;
  int dist = 1 << 30;
  for (; lo != table_.end() && lo->first.op == k.op; ++lo) {
    if (lo->first.comm_size != k.comm_size) continue;
    int d = std::abs(int(lo->first.size_class) - int(k.size_class));
    if (d < dist) dist = d, best = &lo->second;
  }
  return best ? int64_t(best->cost_ns) : 0;
}

nlohmann::json CommCosts::to_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [k, e] : table_)
    out.push_back({{"op", std::string(trace::name(k.op))},
                   {"bytes_below", k.size_class ? (uint64_t(1) << std::min<int>(63, k.size_class)) : 1},
                   {"comm_size", k.comm_size},
                   {"cost_us", e.cost_ns / 1e3},
                   {"calls", e.calls},
                   {"positions", e.positions}});
  return out;
}

std::string pruned_time_warning(const trace::Plan& plan) {
  int64_t pruned = 0, traced = 0;
  for (const trace::KindTally& t : plan.pruned) pruned += t.time_ns;
  for (const trace::PlanRank& r : plan.ranks) traced += r.traced_ns;
  if (traced <= 0 || pruned * 20 < traced) return {};
  return fmt::format(
      "{:.6f} s of the traced time ({:.0f}% over all ranks) was spent in MPI calls pruned from the trace "
      "(MPIOR_PRUNE=1); the replay passes them as compute, so whatever they waited for a slower rank when traced "
      "is replayed as it was, whatever the target; trace with MPIOR_PRUNE=0 to replay that synchronisation",
      double(pruned) / 1e9, double(pruned) / double(traced) * 100);
}

}  // namespace mpior::replay
