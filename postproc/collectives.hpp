// Collective instances: the n-th collective call each member makes on a
// communicator is instance n, and every member must agree on what it is
// (same operation class and, for rooted ones, the same root). Each member
// keeps a count and a running hash; only when they disagree are the two
// ranks walked again to name the first instance that differs.
#pragma once

#include <cstdint>
#include <vector>

#include "comms.hpp"
#include "event.hpp"
#include "scope.hpp"
#include "trace_set.hpp"

namespace mpior::postproc {

struct CollectiveStats {
  uint64_t instances = 0;          // over all communicators
  std::vector<uint64_t> per_comm;  // by global communicator id
};

class CollectiveChecker {
 public:
  CollectiveChecker(const TraceSet& set, const CommResolution& comms);
  // Any event; collectives (trace::is_collective) are counted.
  void observe(const RankScope& scope, const trace::Event& ev, const EventPos& pos);
  // Throws PostError naming the first instance members disagree on.
  CollectiveStats finish() const;

 private:
  struct Tally {
    uint64_t count = 0;
    uint64_t hash = 0;
  };
  [[noreturn]] void diagnose(int32_t comm, size_t a, size_t b) const;

  const TraceSet* set_;
  const CommResolution* comms_;
  std::vector<std::vector<Tally>> tallies_;  // per global communicator, per member position
};

}  // namespace mpior::postproc
