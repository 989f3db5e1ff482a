// Elastic value sequences: every value one argument took over a trace
// position's occurrences, kept exactly and folded into loops, so a value that
// is constant, strided, or strided inside strides costs a few items whatever
// the number of iterations (scalaioextrap §II, "elastic" parameters).
//
// A sequence is a flattened pre-order list of items. A scalar item is one
// value. A loop item repeats the `span` items after it `count` times, adding
// `v` (the shift) to every value of the body on each iteration:
//   {v=0,count=4,span=1} {v=7}            -> 7 7 7 7          (constant run)
//   {v=4096,count=3,span=1} {v=0}         -> 0 4096 8192       (strided run)
//   {v=100,count=2,span=2} {v=1,count=3,span=1} {v=0}
//                                          -> 0 1 2 100 101 102 (nested strides)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace mpior::trace {

struct SeqItem {
  int64_t v = 0;       // scalar value, or the loop's shift per iteration
  uint32_t count = 0;  // 0 for a scalar; iterations for a loop
  uint32_t span = 0;   // loop: number of items in its body

  bool is_loop() const { return count != 0; }
  bool operator==(const SeqItem&) const = default;
};

// A sequence stored in a stream's arena. len == 0 means "zero every time":
// arguments a kind does not use cost nothing.
struct SeqRef {
  uint32_t off = 0;
  uint32_t len = 0;
  bool operator==(const SeqRef&) const = default;
};

class SeqArena {
 public:
  SeqRef add(std::span<const SeqItem> items);
  SeqRef add_scalar(int64_t v);
  std::span<const SeqItem> view(SeqRef r) const { return {items_.data() + r.off, r.len}; }
  const std::vector<SeqItem>& items() const { return items_; }
  std::vector<SeqItem>& items() { return items_; }
  bool operator==(const SeqArena&) const = default;

 private:
  std::vector<SeqItem> items_;
};

// Number of values a sequence expands to (0 for an empty sequence; a count
// beyond 2^64 - 1, possible only in a damaged one, saturates there).
uint64_t seq_length(std::span<const SeqItem> items);
// True when items are well formed: spans stay inside their parent.
bool seq_valid(std::span<const SeqItem> items);
// Expands everything (tests and small tools only: memory grows with values).
std::vector<int64_t> seq_expand(std::span<const SeqItem> items);
// The greatest and least value, without expanding (0 for an empty sequence).
int64_t seq_max(std::span<const SeqItem> items);
int64_t seq_min(std::span<const SeqItem> items);
// True when some value of the sequence equals v (rank lists).
bool seq_contains(std::span<const SeqItem> items, int64_t v);
// Adds delta to every value (shifts every scalar).
void seq_shift(std::span<SeqItem> items, int64_t delta);
// Same loop structure; values may differ. Returns the shift b - a if every
// value of b equals the matching value of a plus one common shift.
bool seq_same_shape(std::span<const SeqItem> a, std::span<const SeqItem> b);
bool seq_shifted(std::span<const SeqItem> a, std::span<const SeqItem> b, int64_t* shift);

// Reads a sequence front to back in O(nesting) memory. An empty sequence
// yields zeros forever.
class SeqCursor {
 public:
  SeqCursor() = default;
  explicit SeqCursor(std::span<const SeqItem> items);
  // Next value; past the end the last value repeats (callers know lengths).
  int64_t next();
  bool at_end() const;

 private:
  struct Frame {
    uint32_t body;  // index of the first body item
    uint32_t end;   // one past the last body item
    uint32_t iter;  // current iteration
    uint32_t count;
    int64_t shift;
  };
  void descend();
  std::span<const SeqItem> items_;
  uint32_t pos_ = 0;
  int64_t base_ = 0;  // sum of iter*shift over open frames
  int64_t last_ = 0;
  std::vector<Frame> stack_;
};

// Builds a sequence online, one value at a time, folding repeats as they
// appear. State is the items themselves plus the top-level positions; cost per
// value is bounded by the fold window.
class SeqBuilder {
 public:
  explicit SeqBuilder(unsigned window = 4) : window_(window) {}
  void append(int64_t v);
  // The same items as append() of first, first + stride, ... (n values), but
  // the values that only add iterations to the last loop cost one step
  // together: the cost follows the fold window, not n (rank lists, issue 19).
  void append_stride(int64_t first, int64_t stride, uint64_t n);
  const std::vector<SeqItem>& items() const { return items_; }
  uint64_t length() const { return length_; }
  size_t memory_bytes() const { return items_.capacity() * sizeof(SeqItem) + tops_.capacity() * 4; }

 private:
  friend class ValueFolder;  // appends whole runs and folded groups (fold_values.hpp)
  void fold();
  bool scalar_fold_possible() const;
  bool try_extend();
  bool try_create();
  bool try_arith3();
  // Appends one top-level group (a scalar, or a loop and its body) and folds.
  void append_group(std::span<const SeqItem> group);
  // Appends first, first+stride, ... (n values) in O(1).
  void append_run(int64_t first, int64_t stride, uint64_t n);
  // How many of n values first, first + stride, ... append() would only count
  // into the last top-level loop, folding nothing else.
  uint64_t loop_room(int64_t first, int64_t stride, uint64_t n) const;
  void clear_keep_capacity();
  unsigned window_;
  uint64_t length_ = 0;
  std::vector<SeqItem> items_;
  std::vector<uint32_t> tops_;  // start index of each top-level item
  uint32_t scalar_tail_ = 0;    // how many of the last top-level items are scalars
};

}  // namespace mpior::trace
