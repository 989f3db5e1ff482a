// What an MPI call costs beyond waiting for its partners, calibrated from the
// plan's own timings. Waiting is what the replay reproduces through its
// semaphores and barriers; the rest of a traced call (latency, copies, the
// scheduler handing the partner a core) is charged on top: before the post
// for a send, after the synchronisation for everything else.
//
// A position's traced duration is its waiting plus its cost. The replay
// walks the plan on its mean timeline, where ranks of an SPMD step arrive
// together: what the traced call spent beyond that (latency, copies) is
// cost. So a call is charged the durations of the positions of its class —
// operation, size class (log2 of the bytes), communicator size — and waits
// on top for partners that the replay itself finds late (slower I/O on the
// target).
// Collectives: the members leave together, so the last arriver's duration is
// all cost and the others' hold waiting that the replay reproduces itself;
// their class is charged its shortest 1/comm_size durations (every
// member's, from the positions' histograms), not all of them (that would
// count the waiting twice);
// Every class's durations are taken robustly (lower_robust): a call whose
// partner the scheduler held off a core when traced lasted that long (on a
// loaded machine, hundreds of times the call's own cost), and the replay, on
// the same kind of machine, meets that again in its own waiting; their
// plain mean would charge it twice.
// a Gather's or Reduce's whose members' calls were pruned, the roots' share
// of its calls (the root's whole duration: the replay never makes it wait
// for a pruned member).
// Receives and Waits alike: the shortest half (in an exchange one partner
// came second). A receive that waited is released when its message was
// posted: the replay's own hand-off between threads after that is taken off
// the cost, which holds MPICH's (what stays above the traced time is the
// known limit below).
// Known limit: where one side always waited when traced (members of a gather
// for a root doing I/O), that waiting is counted in the cost too.
// Collective MPI-IO reads and writes: the threads' replay meets at the call
// and replays the file-system calls ROMIO made under it, but ROMIO's own
// exchange (the Allgathers of offsets, two-phase's data exchange) holds
// rounds in which every rank, the last arriver too, needs its partners on a
// core. That own time is charged like a collective's cost: the last
// arrivers' share of the durations, less the longest any member's nested
// file-system calls take (each nested position's durations over all its
// calls), by operation, size class and the file's communicator size.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "trace/event.hpp"
#include "trace/model.hpp"
#include "trace/timing.hpp"

namespace mpior::replay {

struct CostKey {
  trace::OpClass op{};
  uint8_t size_class = 0;  // bit width of the bytes: 0 for none, 1 for 1, 11 for 1 KiB...
  uint32_t comm_size = 0;
  auto operator<=>(const CostKey&) const = default;
};

struct CostEntry {
  double cost_ns = 0;  // its positions' durations, robustly (lower_robust)
  uint64_t calls = 0;  // traced calls behind it
  uint32_t positions = 0;
};

// Durations above this many times the median of those taken are a partner
// (or the call itself) held off a core, not what the call costs.
inline constexpr double kOutlierFactor = 4;

// The mean of the shortest `fraction` of d's durations (from its histogram)
// without those over kOutlierFactor times their median; d's mean when it
// has a single duration.
double lower_robust(const trace::TimeStats& d, double fraction);

class CommCosts {
 public:
  CommCosts() = default;
  // Walks each stream once (its first rank) until every MPI position was seen.
  explicit CommCosts(const trace::Plan& plan);

  // The event's class; comm_size 0 when its communicator is unknown.
  static CostKey key_of(const trace::Plan& plan, const trace::Event& ev);
  // What to charge the event, in ns (0 for calls the replay does not charge).
  int64_t cost(const trace::Plan& plan, const trace::Event& ev) const;
  // Whether the cost comes before the post (sends) rather than after the wait.
  static bool charged_before(trace::OpClass op) { return op == trace::OpClass::send || op == trace::OpClass::isend; }
  static bool charged(trace::OpClass op);
  // The root's record of a Reduce or Gather some of whose members' calls were
  // pruned (the mpior_member records after it name the ones kept).
  static bool pruned_root(const trace::Event& ev);
  // A collective MPI-IO read or write (not a split collective's end).
  static bool mpiio_collective(const trace::Event& ev);
  // What ROMIO's own part of such a call costs beyond the replay's meeting
  // and its nested file-system calls, in ns (0 for other calls).
  int64_t mpiio_cost(const trace::Plan& plan, const trace::Event& ev) const;

  // The least an uncharged call takes after its start: its position's
  // shortest traced duration, and for a communicator's creation (collective
  // over its parent: MPICH agrees on a context id) no more than the shortest
  // 1/comm_size of its class's durations — every member's, every position of
  // that kind and parent size — taken robustly: its last arrivers'. A
  // creation traced once held the wait for the slowest member on every rank
  // but the last: taken whole, a rank the replay brought there with the
  // others would pass that wait again on top. A class with a single
  // duration (one rank's only creation of that kind) has it as its floor:
  // nothing tells its waiting from its cost.
  int64_t floor_ns(const trace::Plan& plan, const trace::Event& ev, const trace::TimeStats& position) const;

  const std::map<CostKey, CostEntry>& table() const { return table_; }
  nlohmann::json to_json() const;

 private:
  // A creation call's class: its kind and its parent's size.
  using CreationKey = std::pair<trace::Kind, uint32_t>;
  // A collective MPI-IO class's durations over its positions, and the
  // longest time a position's nested file-system calls take a call (each
  // nested position's durations taken robustly).
  struct OwnTime {
    trace::TimeStats dur;
    double nested_ns = 0;
  };
  static CostKey mpiio_key(const trace::Plan& plan, const trace::Event& ev);
  void add_position(const CostKey& key, const trace::TimeStats& d, std::map<CostKey, trace::TimeStats>& merged);
  void calibrate(const trace::Plan& plan, const trace::Stream& s, int32_t rank,
                 std::map<CostKey, trace::TimeStats>& merged, std::map<CreationKey, trace::TimeStats>& creations,
                 std::map<CostKey, uint64_t>& root_calls, std::map<CostKey, OwnTime>& own);
  std::map<CostKey, CostEntry> table_;
  std::map<CreationKey, int64_t> creation_floor_;
};

// Calls pruned from the trace (MPIOR_PRUNE) pass as compute, waiting and all:
// a slower rank's delay on the traced file system stays in the gaps wherever
// the plan is replayed, so the replay of a pruned trace on another file
// system runs long or short by it. A warning when they took 5% or more of
// the ranks' traced time (empty: none).
std::string pruned_time_warning(const trace::Plan& plan);

}  // namespace mpior::replay
