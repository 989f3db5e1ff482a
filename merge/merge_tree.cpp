#include "merge/merge_tree.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>

#include "merge/merge.hpp"

namespace mpior::merge {
namespace {

class Tree {
 public:
  Tree(size_t radix, TreeStats* stats, size_t expand)
      : radix_(std::max<size_t>(radix, 2)), stats_(stats), expand_(expand) {}

  void add(std::vector<trace::Stream> node) {
    for (size_t level = 0;; ++level) {
      if (pending_.size() <= level) pending_.emplace_back();
      pending_[level].push_back(std::move(node));
      if (pending_[level].size() < radix_) return;
      node = merge(level);
    }
  }

  // Merges what waits on each level, from the lowest up, into the root.
  std::vector<trace::Stream> finish() {
    std::vector<trace::Stream> carry;
    bool have = false;
    for (size_t level = 0; level < pending_.size(); ++level) {
      // The carry from below holds the latest ranks: it goes last.
      if (have) pending_[level].push_back(std::move(carry));
      if (pending_[level].empty()) continue;
      carry = pending_[level].size() == 1 ? std::move(pending_[level][0]) : merge(level);
      pending_[level].clear();
      have = true;
    }
    return carry;
  }

 private:
  std::vector<trace::Stream> merge(size_t level) {
    auto start = std::chrono::steady_clock::now();
    std::vector<trace::Stream> all;
    for (auto& child : pending_[level]) std::move(child.begin(), child.end(), std::back_inserter(all));
    pending_[level].clear();
    std::vector<trace::Stream> out = merge_merged(std::move(all), expand_);
    if (stats_) {
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (stats_->level_max_s.size() <= level) stats_->level_max_s.resize(level + 1, 0);
      stats_->level_max_s[level] = std::max(stats_->level_max_s[level], s);
      if (stats_->level_steps_s.size() <= level) stats_->level_steps_s.resize(level + 1);
      stats_->level_steps_s[level].push_back(s);
      stats_->total_s += s;
      ++stats_->steps;
    }
    return out;
  }

  size_t radix_;
  TreeStats* stats_;
  size_t expand_;
  std::vector<std::vector<std::vector<trace::Stream>>> pending_;  // per level: nodes waiting, in rank order
};

}  // namespace

double TreeStats::critical_median_s() const {
  double sum = 0;
  for (std::vector<double> steps : level_steps_s) {
    if (steps.empty()) continue;
    std::nth_element(steps.begin(), steps.begin() + long(steps.size() / 2), steps.end());
    sum += steps[steps.size() / 2];
  }
  return sum;
}

std::vector<trace::Stream> reduce_tree(size_t n, const std::function<std::vector<trace::Stream>(size_t)>& leaf,
                                       size_t radix, TreeStats* stats, size_t expand_ranks) {
  Tree t(radix, stats, expand_ranks);
  for (size_t i = 0; i < n; ++i) t.add(leaf(i));
  return t.finish();
}

}  // namespace mpior::merge
