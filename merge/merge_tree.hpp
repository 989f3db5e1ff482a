// The cross-rank merge as a tree reduction (ScalaTrace's radix tree): ranks'
// streams go in rank order; every `radix` nodes of a level merge into one of
// the next (merge_merged: structurally equal streams -> rank list and rank
// variants). Streaming: at most radix nodes wait per level, so memory is
// bounded by radix x levels x the merged size, never by the ranks.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "trace/model.hpp"

namespace mpior::merge {

struct TreeStats {
  std::vector<double> level_max_s;  // per level, the slowest merge step (a job runs a level's steps at once)
  // Per level, every step's time: the median step is the merge's own cost;
  // the slowest of thousands is mostly this machine's noise (an interrupt,
  // a page fault), which grows with the number of samples.
  std::vector<std::vector<double>> level_steps_s;
  double critical_median_s() const;
  double total_s = 0;  // every step, one after the other
  size_t steps = 0;
};

// Rank i's streams are leaf(i), i = 0..n-1. Returns the root's streams.
// expand_ranks: merge_merged's.
std::vector<trace::Stream> reduce_tree(size_t n, const std::function<std::vector<trace::Stream>(size_t)>& leaf,
                                       size_t radix, TreeStats* stats = nullptr, size_t expand_ranks = 256);

}  // namespace mpior::merge
