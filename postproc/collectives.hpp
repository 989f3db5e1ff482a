// Collective instances: the n-th collective call each member makes on a
// communicator is instance n (numbered by the tracer, arg::coll_seq, exact
// even when several threads of a rank call collectives), and every member
// must agree on what it is (same operation class and, for rooted ones, the
// same root). Each member keeps a count and an order-free hash of (number,
// call); only when they disagree are the two ranks' instances sorted by
// number to name the first that differs.
//
// Reduce and Gather (all to one) are checked apart: with online pruning a
// member keeps its call only when it had I/O to pass to the root, and the
// root lists the members whose calls were kept. Every member's kept
// instances (numbered by the tracer, arg::coll_seq) must be exactly those the
// roots expect of it: both sides are summed into order-free hashes.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "postproc/comms.hpp"
#include "postproc/scope.hpp"
#include "postproc/trace_set.hpp"
#include "trace/event.hpp"

namespace mpior::postproc {

// The tracer's number of each collective on its communicator (arg::coll_seq;
// a communicator creation's slot holds the new communicator, so its number
// is the new entry's parent_seq, or follows the last one when it made none).
class CollectiveNumbers {
 public:
  explicit CollectiveNumbers(const TraceSet& set) : set_(&set) {}
  // Call in each rank's event order.
  int64_t of(int32_t rank, const trace::Event& ev);

 private:
  const TraceSet* set_;
  std::vector<std::vector<int64_t>> parent_seq_;  // per rank, per local comm id
  std::vector<std::map<int64_t, int64_t>> last_;  // per rank, per local comm id
};

struct CollectiveStats {
  uint64_t instances = 0;          // over all communicators
  std::vector<uint64_t> per_comm;  // by global communicator id (their sum is instances)
};

class CollectiveChecker {
 public:
  CollectiveChecker(const TraceSet& set, const CommResolution& comms);
  // Any event; collectives (trace::is_collective) are counted.
  void observe(const RankScope& scope, const trace::Event& ev, const EventPos& pos);
  // Throws ToolError naming the first instance members disagree on.
  CollectiveStats finish();

 private:
  struct Tally {
    uint64_t count = 0;
    uint64_t hash = 0;
  };
  bool absent(int32_t comm, size_t member) const;  // a rank without a trace
  [[noreturn]] void diagnose(int32_t comm, size_t a, size_t b) const;
  [[noreturn]] void diagnose_rooted(int32_t comm, size_t member) const;
  void observe_all_to_one(const RankScope& scope, int32_t comm, const trace::Event& ev);
  void close_root();

  // All to one, per global communicator and member position: what the member
  // kept, and what the roots expected it to keep.
  struct Rooted {
    std::vector<uint64_t> kept, expected;
  };
  std::vector<Rooted> rooted_;
  struct OpenRoot {  // a root's record whose member list may follow
    int32_t comm = -1;
    uint64_t instance = 0;
    int64_t listed = -1;  // -1: every member contributed
    std::vector<int32_t> members;
    int depth = 0;  // its member records are one deeper
  } open_;
  std::vector<uint64_t> rooted_instances_;  // per global communicator, counted at the root

  const TraceSet* set_;
  const CommResolution* comms_;
  CollectiveNumbers numbers_;
  std::vector<std::vector<Tally>> tallies_;  // per global communicator, per member position
};

}  // namespace mpior::postproc
