// Extension of the last top-level loop by matching events against its body.
#include <algorithm>

#include "trace/fold.hpp"
#include "trace/journal_format.hpp"

namespace mpior::trace::fold {

Folder::Folder(const BuilderOptions& opt)
    : tree_(opt.lossless), window_(std::max(1u, opt.fold_window)), max_pending_(std::max(1u, opt.fold_pending)) {
  frames_.reserve(16);
  pending_.reserve(std::min(max_pending_, 64u));
  ops_.reserve(std::min(max_pending_, 64u));
}

void Folder::add_slow(const Sample& s) {
  step(s, true);
  if (!work_.empty()) drain();
}

template <size_t Stride>
void Folder::add_batch(EventRun<Stride> ev, const int64_t* gap, const int64_t* dur, const uint64_t* sig, size_t n,
                       size_t* done) {
  for (size_t i = 0; i < n;) {
    if (!hot_.leaf || sig[i] != hot_.sig) {
      add_slow(Sample{ev[i], gap[i], dur[i], sig[i]});
      *done = ++i;
      continue;
    }
    const HotLoop hot = hot_;  // a run leaves it as it is: rows only fold into the leaf's own values
    size_t end = i;
    auto times = [&] {  // of the rows folded, also when a row's folder could not grow
      hot.leaf->gap.add_many(gap + i, end - i);
      hot.leaf->dur.add_many(dur + i, end - i);
      if (hot.exact)
        for (size_t k = i; k < end; ++k) {
          hot.exact->gap.append(gap[k]);
          hot.exact->dur.append(dur[k]);
        }
      hot.loop->open += end - i;
      *done = i = end;
    };
    size_t run = i;
    while (run < n && sig[run] == hot.sig) ++run;
    try {
      while (end < run) {
        const RowBox& row = hot.leaf->row;
        if (row && row->direct == 0 && row->room != 0) {
          end += row->take_run(ev + end, run - end);
          if (end == run) break;
        }
        hot.leaf->add_row(ev[end]);
        ++end;
      }
    } catch (...) {
      times();
      throw;
    }
    times();
  }
}

template void Folder::add_batch(EventArray, const int64_t*, const int64_t*, const uint64_t*, size_t, size_t*);
template void Folder::add_batch(EventRun<sizeof(JournalRecord)>, const int64_t*, const int64_t*, const uint64_t*,
                                size_t, size_t*);

void Folder::drain() {
  while (!work_.empty()) {
    Work w = work_.back();
    work_.pop_back();
    step(w.s, w.may_extend);
  }
}

void Folder::step(const Sample& s, bool may_extend) {
  if (matching_) {
    if (match(s)) return;
    if (!pending_.empty()) {
      give_back(s);
      return;
    }
    reset_match();
    may_extend = false;  // the last loop has just refused this event
  }
  for (;;) {
    if (may_extend && last_is_loop() && start_match(s)) return;
    // The last loop is complete: it may now fold with what precedes it, and
    // the loop that results may take the event.
    if (!last_is_loop() || !fold_tail()) break;
    may_extend = true;
  }
  append_leaf(s);
  fold_tail();
}

bool Folder::start_match(const Sample& s) {
  UnitRef last = top_.back().ref;
  if (tree_.loop(last).first_sig != s.sig) return false;
  frames_.clear();
  frames_.push_back({last, 0, 1});
  matching_ = true;
  if (match(s)) {
    const LoopUnit& loop = tree_.loop(last);
    UnitRef body = loop.body[0].ref;
    if (loop.body.size() == 1 && !is_loop(body))
      hot_ = {&tree_.leaf(body), tree_.exact(body), &tree_.loop(last), loop.first_sig};
    return true;
  }
  reset_match();
  return false;
}

// Moves the body pointer over s: into inner loops, around them again or out
// of them (greedily: another iteration when s starts one), to the leaf s is.
bool Folder::match(const Sample& s) {
  for (;;) {
    Frame& f = frames_.back();
    const LoopUnit& loop = tree_.loop(f.loop);
    if (f.index == loop.body.size()) {
      if (frames_.size() == 1) {  // the iteration ended with an inner loop, which s does not continue
        commit();
        continue;
      }
      if (loop.first_sig == s.sig) {
        f.index = 0;
        ++f.count;
        continue;
      }
      ops_.push_back({f.loop, f.count});
      frames_.pop_back();
      ++frames_.back().index;
      continue;
    }
    const BodyEntry& e = loop.body[f.index];
    if (e.match_sig != s.sig) return false;
    if (is_loop(e.ref)) {
      frames_.push_back({e.ref, 0, 1});
      continue;
    }
    return match_leaf(s, f, loop, e.ref);
  }
}

bool Folder::match_leaf(const Sample& s, Frame& f, const LoopUnit& loop, UnitRef leaf) {
  const bool root = frames_.size() == 1;
  if (root && loop.body.size() == 1) {  // a one-event body: no need to wait
    tree_.add(leaf, s);
    ++tree_.loop(f.loop).open;
    return true;
  }
  if (pending_.size() >= max_pending_) return false;
  ops_.push_back({leaf, uint32_t(pending_.size())});
  pending_.push_back(s);
  ++f.index;
  if (root && f.index == loop.body.size()) commit();
  return true;
}

void Folder::commit() {
  for (const PendingOp& op : ops_) {
    if (is_loop(op.unit))
      tree_.loop(op.unit).iters.append(op.value);
    else
      tree_.add(op.unit, pending_[op.value]);
  }
  ++tree_.loop(frames_[0].loop).open;
  ops_.clear();
  pending_.clear();
  frames_.resize(1);
  frames_[0].index = 0;
}

// The iteration differs from the body after all: its events (and s) are
// processed again as new units, the first without trying this loop again.
void Folder::give_back(const Sample& current) {
  work_.push_back({current, true});
  for (size_t i = pending_.size(); i-- > 0;) work_.push_back({pending_[i], i != 0});
  reset_match();
}

void Folder::reset_match() {
  hot_ = {};
  matching_ = false;
  frames_.clear();
  pending_.clear();
  ops_.clear();
}

size_t Folder::memory_bytes() const {
  return tree_.memory_bytes() + top_.capacity() * sizeof(TopEntry) + frames_.capacity() * sizeof(Frame) +
         pending_.capacity() * sizeof(Sample) + ops_.capacity() * sizeof(PendingOp) + work_.capacity() * sizeof(Work) +
         scratch_.capacity() * sizeof(UnitRef);
}

}  // namespace mpior::trace::fold
