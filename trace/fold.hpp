// Online loop compression of one thread's events (ScalaTrace's intra-node
// compression: RSDs, and PRSDs for loops in loops), fed one event at a time.
//
// The trace so far is a list of top-level units. Two mechanisms fold it:
//  - extension (fold_match.cpp): when the last unit is a loop, incoming
//    events are matched against its body with a pointer that walks the body
//    (entering inner loops, repeating or leaving them). Matched events wait in
//    a bounded buffer until the iteration is complete, then their values go
//    into the body's folders and the loop counts one more iteration. This is
//    the steady state of a long loop: no search, no allocation.
//  - tail folding (fold_tail.cpp): when a unit is complete, the last units are
//    compared, by structural signature within a window, with the units just
//    before them: [U][U] becomes a loop of two iterations, [loop{U}][U] one
//    more iteration of the loop. Values merge structurally.
// An iteration that turns out different (or longer than the buffer) is given
// back: its events are appended as units and tail folding sorts them out.
#pragma once

#include <cstdint>
#include <vector>

#include "trace/builder.hpp"
#include "trace/fold_tree.hpp"

namespace mpior::trace::fold {

class Folder {
 public:
  explicit Folder(const BuilderOptions& opt);

  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;

  void add(const RawEvent& ev, int64_t gap, int64_t dur, uint64_t sig) {
    // The steady state of a loop of one call: straight into its position.
    if (hot_.leaf && sig == hot_.sig) {
      UnitTree::add_values(*hot_.leaf, hot_.exact, ev, gap, dur);
      ++hot_.loop->open;
      return;
    }
    add_slow(Sample{ev, gap, dur, sig});
  }
  // add() of each of n events in order (the builder's append_all); *done
  // counts those folded. A run of them on the hot loop's leaf folds its rows
  // one at a time and its times as one batch.
  template <size_t Stride>
  void add_batch(EventRun<Stride> ev, const int64_t* gap, const int64_t* dur, const uint64_t* sig, size_t n,
                 size_t* done);
  // The units, then the events of an iteration still being matched.
  void snapshot(Stream& out) const;
  // The same, folding in place: the folder is not used afterwards.
  void finish(Stream& out);
  size_t memory_bytes() const;

 private:
  struct TopEntry {
    uint64_t sig;
    UnitRef ref;
    uint32_t body_len;
  };
  struct Frame {
    UnitRef loop;
    uint32_t index;  // next body entry to match
    uint32_t count;  // iterations begun in this occurrence
  };
  // A matched step of the pending iteration, applied at commit: a leaf
  // occurrence (value = index in pending_) or an inner loop's count.
  struct PendingOp {
    UnitRef unit;
    uint32_t value;
  };
  struct Work {
    Sample s;
    bool may_extend;
  };

  // A folder holding copies of o's top-level units from `from` on, matching
  // the same pending events (fold_snapshot.cpp).
  Folder(const Folder& o, size_t from);
  void emit(Stream& out) const;
  void emit_units(Stream& out, size_t begin, size_t end) const;
  void add_slow(const Sample& s);
  void step(const Sample& s, bool may_extend);
  void drain();
  bool last_is_loop() const { return !top_.empty() && is_loop(top_.back().ref); }

  // extension (fold_match.cpp)
  bool start_match(const Sample& s);
  bool match(const Sample& s);
  bool match_leaf(const Sample& s, Frame& f, const LoopUnit& body_of, UnitRef leaf);
  void commit();
  void complete_iteration();
  void give_back(const Sample& current);
  void reset_match();

  // tail folding (fold_tail.cpp)
  void append_leaf(const Sample& s);
  bool fold_tail();
  bool extends_loop_at(size_t p, size_t len) const;
  bool repeats_before(size_t len) const;
  void extend_loop_at(size_t p);
  void create_loop(size_t len);

  UnitTree tree_;
  unsigned window_;
  unsigned max_pending_;
  std::vector<TopEntry> top_;

  bool matching_ = false;
  std::vector<Frame> frames_;  // frames_[0]: the last top-level loop
  std::vector<Sample> pending_;
  std::vector<PendingOp> ops_;
  std::vector<Work> work_;  // events given back, next one at the back
  std::vector<UnitRef> scratch_;
  // While the last loop's body is one leaf and events are being matched
  // against it: that leaf and loop (pool elements never move).
  struct HotLoop {
    LeafUnit* leaf = nullptr;
    ExactTimes* exact = nullptr;
    LoopUnit* loop = nullptr;
    uint64_t sig = 0;
  } hot_;
};

}  // namespace mpior::trace::fold
