// Tail folding: repeats among the last top-level units, found by signature
// within the window, become loops (ScalaTrace's RSD / PRSD creation).
#include <algorithm>

#include "trace/fold.hpp"

namespace mpior::trace::fold {

void Folder::append_leaf(const Sample& s) {
  UnitRef r = tree_.new_leaf(s);
  top_.push_back({s.sig, r, 0});
}

// Called when the last unit is complete. At most one fold: the loop it makes
// or extends is last and may still grow.
bool Folder::fold_tail() {
  const size_t n = top_.size();
  if (n < 2) return false;
  const size_t max_len = std::min<size_t>(window_, n - 1);
  const uint64_t last_sig = top_[n - 1].sig;
  for (size_t len = 1; len <= max_len; ++len) {
    const size_t p = n - 1 - len;
    if (top_[p].body_len == len && extends_loop_at(p, len)) {
      extend_loop_at(p);
      return true;
    }
    if (2 * len <= n && top_[p].sig == last_sig && repeats_before(len)) {
      create_loop(len);
      return true;
    }
  }
  return false;
}

// [.. loop{B1..Bk} V1..Vk] with every Vi shaped like Bi.
bool Folder::extends_loop_at(size_t p, size_t len) const {
  const LoopUnit& loop = tree_.loop(top_[p].ref);
  for (size_t i = 0; i < len; ++i)
    if (tree_.sig(loop.body[i].ref) != top_[p + 1 + i].sig) return false;
  for (size_t i = 0; i < len; ++i)
    if (!tree_.same_shape(loop.body[i].ref, top_[p + 1 + i].ref)) return false;
  return true;
}

// [.. U1..Uk V1..Vk] with every Vi shaped like Ui.
bool Folder::repeats_before(size_t len) const {
  const size_t v = top_.size() - len, u = v - len;
  for (size_t i = 0; i < len; ++i)
    if (top_[u + i].sig != top_[v + i].sig) return false;
  for (size_t i = 0; i < len; ++i)
    if (!tree_.same_shape(top_[u + i].ref, top_[v + i].ref)) return false;
  return true;
}

void Folder::extend_loop_at(size_t p) {
  const UnitRef loop = top_[p].ref;
  const size_t len = top_[p].body_len;
  for (size_t i = 0; i < len; ++i) tree_.merge(tree_.loop(loop).body[i].ref, top_[p + 1 + i].ref);
  ++tree_.loop(loop).open;
  top_.resize(p + 1);
}

void Folder::create_loop(size_t len) {
  const size_t v = top_.size() - len, u = v - len;
  scratch_.clear();
  for (size_t i = 0; i < len; ++i) {
    UnitRef first = top_[u + i].ref;
    if (is_loop(first)) tree_.close(first);  // its occurrence ends inside the new loop's first iteration
    tree_.merge(first, top_[v + i].ref);
    scratch_.push_back(first);
  }
  UnitRef loop = tree_.new_loop(scratch_);
  tree_.loop(loop).open = 2;
  top_.resize(u);
  top_.push_back({tree_.sig(loop), loop, uint32_t(len)});
}

}  // namespace mpior::trace::fold
