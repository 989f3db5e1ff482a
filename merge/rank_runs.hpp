// A rank list kept compressed through the merge (issue 19): arithmetic runs
// (first, stride, count) read off a stored rank list without expanding it,
// joined member after member and stored again, so a tree step's cost follows
// the runs, not the ranks it merges. What store() writes is what
// add_rank_list (merge_params.hpp) writes for the same ranks, item for item.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "trace/value_seq.hpp"

namespace mpior::merge {

class RankRuns {
 public:
  struct Run {
    int64_t first = 0;
    int64_t stride = 0;
    uint64_t count = 0;
    int64_t last() const { return int64_t(uint64_t(first) + uint64_t(stride) * (count - 1)); }
  };

  // The values of a sequence in order: a loop of one scalar is one run, other
  // loops are stepped through (an irregular list costs its values).
  static RankRuns of(std::span<const trace::SeqItem> items);

  void append(int64_t first, int64_t stride, uint64_t count);
  void append(const RankRuns& o);
  bool empty() const { return size_ == 0; }
  uint64_t size() const { return size_; }
  int64_t front() const { return runs_.front().first; }
  int64_t back() const { return runs_.back().last(); }
  // Every value above the one before.
  bool ascending() const { return ascending_; }
  const std::vector<Run>& runs() const { return runs_; }
  std::vector<int64_t> expand() const;
  // add_rank_list's sequence of these ranks, in this order, in the arena.
  trace::SeqRef store(trace::SeqArena& arena) const;

 private:
  void walk(std::span<const trace::SeqItem> items, int64_t base);
  std::vector<Run> runs_;
  uint64_t size_ = 0;
  bool ascending_ = true;
};

}  // namespace mpior::merge
