// Snapshots: the stream so far, without disturbing the folder.
#include <algorithm>

#include "trace/fold.hpp"

namespace mpior::trace::fold {

Folder::Folder(const Folder& o, size_t from)
    : tree_(o.tree_.lossless()), window_(o.window_), max_pending_(o.max_pending_) {
  for (size_t i = from; i < o.top_.size(); ++i) {
    const TopEntry& t = o.top_[i];
    top_.push_back({t.sig, tree_.copy_of(o.tree_, t.ref), t.body_len});
  }
  if (!o.matching_) return;
  // Matching the same events from the start of the iteration gives the same
  // pointer and pending steps, now over the copied units.
  frames_.push_back({top_.back().ref, 0, 1});
  matching_ = true;
  for (const Sample& s : o.pending_) match(s);
}

// The last loop would fold with what precedes it once something follows it;
// the snapshot does so in a copy of the last units (as many as a fold can
// reach), as if the loop were complete, and leaves the builder as it is.
void Folder::snapshot(Stream& out) const {
  if (!last_is_loop()) return emit(out);
  const size_t from = top_.size() - std::min<size_t>(top_.size(), 4 * size_t(window_) + 1);
  Folder tail(*this, from);
  if (tail.matching_) tail.complete_iteration();
  while (tail.last_is_loop() && tail.fold_tail()) {
  }
  emit_units(out, 0, from);
  tail.emit(out);
}

void Folder::finish(Stream& out) {
  if (matching_) complete_iteration();
  while (last_is_loop() && fold_tail()) {
  }
  emit(out);
}

// When the events matched so far make a whole iteration (the pointer is at
// the end of the body, or inside inner loops that end the body), counts it.
void Folder::complete_iteration() {
  for (size_t i = 0; i < frames_.size(); ++i) {
    size_t body = tree_.loop(frames_[i].loop).body.size();
    bool innermost = i + 1 == frames_.size();
    if (frames_[i].index != (innermost ? body : body - 1)) return;
  }
  while (frames_.size() > 1) {
    ops_.push_back({frames_.back().loop, frames_.back().count});
    frames_.pop_back();
    ++frames_.back().index;
  }
  commit();
}

void Folder::emit_units(Stream& out, size_t begin, size_t end) const {
  for (size_t i = begin; i < end; ++i) tree_.emit(top_[i].ref, out);
}

// The units, then the events still waiting, as they are.
void Folder::emit(Stream& out) const {
  emit_units(out, 0, top_.size());
  for (const Sample& s : pending_) {
    out.nodes.push_back({false, uint32_t(out.leaves.size()), {}});
    out.leaves.push_back(leaf_of_sample(s, tree_.lossless(), out.values));
  }
}

}  // namespace mpior::trace::fold
