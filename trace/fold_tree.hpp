// The online PRSD tree the stream builder folds events into: trace positions
// (leaf units) and loops (loop units whose body is a list of units), with
// every value kept in folders. Units live in pools and are reused, so a
// steady program allocates nothing once its structure is known.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "trace/event.hpp"
#include "trace/fold_time.hpp"
#include "trace/fold_values.hpp"
#include "trace/model.hpp"

namespace mpior::trace::fold {

// One event as the folder sees it: the raw record, its gap and duration in ns
// (computed once, in call order) and its signature.
struct Sample {
  RawEvent ev;
  int64_t gap = 0;
  int64_t dur = 0;
  uint64_t sig = 0;
};

inline uint64_t mix(uint64_t z) {  // splitmix64 finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Events are "the same" for folding when kind, depth, flags and call site
// agree (inline: every folded event asks it).
inline uint64_t event_key(const RawEvent& ev) {
  return uint64_t(ev.kind) | uint64_t(ev.depth) << 16 | uint64_t(ev.flags) << 24;
}
inline uint64_t event_signature(const RawEvent& ev) {
  return mix(ev.callsite ^ (event_key(ev) * 0x9E3779B97F4A7C15ull));
}

// A unit: leaf or loop index, told apart by the top bit.
using UnitRef = uint32_t;
inline constexpr UnitRef kLoopBit = 1u << 31;
inline bool is_loop(UnitRef r) { return (r & kLoopBit) != 0; }
inline uint32_t index_of(UnitRef r) { return r & ~kLoopBit; }

// The values of one occurrence a leaf folds: the arguments, then the return
// value and errno.
inline constexpr int kRet = kNumArgs, kErr = kNumArgs + 1, kRowSize = kNumArgs + 2;
using ValueRow = std::array<int64_t, kRowSize>;

inline ValueRow row_of(const RawEvent& ev) {
  ValueRow r;
  for (int i = 0; i < kNumArgs; ++i) r[size_t(i)] = ev.args[size_t(i)];
  r[kRet] = ev.ret;
  r[kErr] = ev.err;
  return r;
}

// While the values of a leaf are on runs, an occurrence that continues all
// of them costs a comparison of the row and an addition: the folders learn
// about the `extra` occurrences when the row next differs (or is read).
// Columns that were not on a run when the row started (an offset that is
// random, say) are left out of the comparison and appended to their folders
// at once (`direct`), so one irregular argument does not stop the row for
// the others on every occurrence.
struct FastRow {
  ValueRow expect{}, step{};
  ValueRow care{};      // all ones for the columns compared, 0 for direct ones
  uint32_t extra = 0;   // occurrences the compared columns' folders have not been told about
  uint32_t room = 0;    // occurrences left before a run would overflow; 0: off
  uint16_t direct = 0;  // bit i: column i is appended at once
  uint8_t moving = 0;   // bit p: columns 2p, 2p + 1 have a non-zero step (the others keep their expect)

  // Two columns at a time (SSE2, the x86-64 baseline): every folded
  // occurrence of a repeating call passes here, and the compiler leaves the
  // plain loops scalar at -O2.
  // Reads the record's columns where they lie (row_of's order: the
  // arguments, then ret and err), not a row copied out of it first.
  bool take(const RawEvent& ev) {
    if (room == 0) return false;
    static_assert(kRet == kNumArgs && kErr == kNumArgs + 1 && kNumArgs % 2 == 0);
    const Pair last = {ev.ret, int64_t(ev.err)};
    Pair diff = last ^ load(&expect[kRet]);
    if (direct == 0) {  // every column compared (regular calls): no mask
#pragma GCC unroll 8
      for (size_t i = 0; i < kNumArgs; i += 2) diff |= load(&ev.args[i]) ^ load(&expect[i]);
    } else {
      diff &= load(&care[kRet]);
#pragma GCC unroll 8
      for (size_t i = 0; i < kNumArgs; i += 2) diff |= (load(&ev.args[i]) ^ load(&expect[i])) & load(&care[i]);
    }
    if ((diff[0] | diff[1]) != 0) return false;
    // Mostly one pair moves (an offset): constant columns are not rewritten.
    for (uint32_t m = moving; m != 0; m &= m - 1) {
      const size_t i = 2 * size_t(std::countr_zero(m));
      const Pair next = load(&expect[i]) + load(&step[i]);
      __builtin_memcpy(&expect[i], &next, sizeof next);
    }
    ++extra;
    --room;
    return true;
  }
  // take() of each of the n records in turn while it holds, when every
  // column is compared (direct == 0): how many it took. The row stays in
  // registers across the run and every pair advances by its step (0 for
  // the constant ones), which costs less than picking the moving pairs out
  // per record.
  template <class Run>
  size_t take_run(Run ev, size_t n) {
    const size_t most = std::min<size_t>(n, room);
    Pair e[kRowSize / 2], s[kRowSize / 2];
    for (size_t p = 0; p < kRowSize / 2; ++p) {
      e[p] = load(&expect[2 * p]);
      s[p] = load(&step[2 * p]);
    }
    size_t i = 0;
    for (; i < most; ++i) {
      const Pair last = {ev[i].ret, int64_t(ev[i].err)};
      Pair diff = last ^ e[kNumArgs / 2];
#pragma GCC unroll 8
      for (size_t p = 0; p < kNumArgs / 2; ++p) diff |= load(&ev[i].args[2 * p]) ^ e[p];
      if ((diff[0] | diff[1]) != 0) break;
#pragma GCC unroll 8
      for (size_t p = 0; p < kRowSize / 2; ++p) e[p] += s[p];
    }
    for (size_t p = 0; p < kRowSize / 2; ++p) __builtin_memcpy(&expect[2 * p], &e[p], sizeof e[p]);
    extra += uint32_t(i);
    room -= uint32_t(i);
    return i;
  }
  // Occurrences column i's folder has not been told about.
  uint32_t extra_of(int i) const { return (direct >> i) & 1 ? 0 : extra; }

 private:
  using Pair = int64_t __attribute__((vector_size(16)));
  static_assert(kRowSize % 2 == 0);
  static Pair load(const int64_t* p) {
    Pair x;
    __builtin_memcpy(&x, p, sizeof x);
    return x;
  }
};

// A FastRow that exists only for leaves that repeat (most positions of an
// irregular trace occur once), copied with its leaf.
class RowBox {
 public:
  RowBox() = default;
  RowBox(const RowBox& o) : p_(o.p_ ? std::make_unique<FastRow>(*o.p_) : nullptr) {}
  RowBox& operator=(const RowBox& o) {
    if (!o.p_)
      reset();
    else if (p_)
      *p_ = *o.p_;
    else
      p_ = std::make_unique<FastRow>(*o.p_);
    return *this;
  }
  RowBox(RowBox&&) noexcept = default;
  RowBox& operator=(RowBox&&) noexcept = default;
  explicit operator bool() const { return p_ != nullptr; }
  FastRow* operator->() const { return p_.get(); }
  FastRow& make() {
    if (!p_) p_ = std::make_unique<FastRow>();
    return *p_;
  }
  void reset() {  // off, keeping the allocation for the leaf's next use
    if (p_) *p_ = FastRow{};
  }
  uint32_t extra_of(int i) const { return p_ ? p_->extra_of(i) : 0; }
  size_t heap_bytes() const { return p_ ? sizeof(FastRow) : 0; }

 private:
  std::unique_ptr<FastRow> p_;
};

struct LeafUnit {
  uint64_t sig = 0;
  Kind kind{};
  uint8_t depth = 0;
  uint8_t flags = 0;
  uint64_t callsite = 0;
  std::array<ValueFolder, kRowSize> values;  // args, ret, err
  RowBox row;                                // made when the leaf first repeats
  TimeAccum gap, dur;

  void add_row(const RawEvent& ev) {
    if (row && row->take(ev)) {
      if (row->direct) append_direct(row_of(ev));
      return;
    }
    add_row_slow(row_of(ev));
  }
  void append_direct(const ValueRow& v);
  void add_row_slow(const ValueRow& v);
  // Brings the folders up to date (the row is off until the next add).
  void sync();
  void start_fast_row();
};

// Exact times of a leaf, kept only for lossless streams.
struct ExactTimes {
  ValueFolder gap, dur;
};

// Elements that never move once made (a growing list of chunks twice as big
// as the one before), so growing the pool copies nothing.
template <typename T>
class StablePool {
 public:
  StablePool() = default;
  StablePool(const StablePool& o) : size_(o.size_) {
    for (size_t k = 0; k < o.chunks_.size(); ++k) {
      chunks_.push_back(std::make_unique<T[]>(chunk_size(k)));
      for (size_t i = 0; i < chunk_size(k); ++i) chunks_[k][i] = o.chunks_[k][i];
    }
  }
  StablePool& operator=(const StablePool&) = delete;

  T& operator[](uint32_t i) {
    auto [k, at] = locate(i);
    return chunks_[k][at];
  }
  const T& operator[](uint32_t i) const {
    auto [k, at] = locate(i);
    return chunks_[k][at];
  }
  uint32_t size() const { return size_; }
  uint32_t grow() {  // a new default element's index
    if (locate(size_).first == chunks_.size()) chunks_.push_back(std::make_unique<T[]>(chunk_size(chunks_.size())));
    return size_++;
  }
  size_t capacity() const { return chunks_.empty() ? 0 : (size_t(kFirst) << chunks_.size()) - kFirst; }
  size_t overhead_bytes() const { return chunks_.capacity() * sizeof(chunks_[0]); }

 private:
  static constexpr uint32_t kFirst = 16, kFirstLog = 4;
  static size_t chunk_size(size_t k) { return size_t(kFirst) << k; }
  static std::pair<size_t, size_t> locate(uint32_t i) {
    uint64_t x = uint64_t(i) + kFirst;
    unsigned k = unsigned(63 - std::countl_zero(x)) - kFirstLog;
    return {k, x - (uint64_t(kFirst) << k)};
  }
  std::vector<std::unique_ptr<T[]>> chunks_;
  uint32_t size_ = 0;
};

// A body entry carries what matching an event against it needs: the leaf's
// signature, or the signature of the first leaf a loop starts with.
struct BodyEntry {
  uint64_t match_sig = 0;
  UnitRef ref = 0;
};

struct LoopUnit {
  uint64_t sig = 0;        // structure of the body, whatever the counts
  uint64_t first_sig = 0;  // the first event of an iteration
  std::vector<BodyEntry> body;
  ValueFolder iters;  // iteration counts of finished occurrences
  uint64_t open = 0;  // iterations of the occurrence still going on (top level only)
};

class UnitTree {
 public:
  explicit UnitTree(bool lossless) : lossless_(lossless) {}

  UnitRef new_leaf(const Sample& s);
  // One more occurrence of a leaf.
  void add(UnitRef leaf_ref, const Sample& s) { add_values(leaf(leaf_ref), exact(leaf_ref), s.ev, s.gap, s.dur); }
  static void add_values(LeafUnit& u, ExactTimes* exact, const RawEvent& ev, int64_t gap, int64_t dur) {
    u.add_row(ev);
    u.gap.add(gap);
    u.dur.add(dur);
    if (exact) {
      exact->gap.append(gap);
      exact->dur.append(dur);
    }
  }
  // A leaf's exact times; null unless the stream is lossless.
  ExactTimes* exact(UnitRef leaf_ref) { return lossless_ ? &exact_[index_of(leaf_ref)] : nullptr; }

  // A loop over the given units (taken over, not copied), with no occurrence yet.
  UnitRef new_loop(std::span<const UnitRef> body);
  // A copy of a unit of another tree (and everything under it) in this one.
  UnitRef copy_of(const UnitTree& src, UnitRef r);
  // Returns a unit and everything under it to the pools.
  void release(UnitRef r);

  LeafUnit& leaf(UnitRef r) { return leaves_[index_of(r)]; }
  LoopUnit& loop(UnitRef r) { return loops_[index_of(r)]; }
  const LeafUnit& leaf(UnitRef r) const { return leaves_[index_of(r)]; }
  const LoopUnit& loop(UnitRef r) const { return loops_[index_of(r)]; }
  uint64_t sig(UnitRef r) const { return is_loop(r) ? loop(r).sig : leaf(r).sig; }
  uint64_t first_sig(UnitRef r) const { return is_loop(r) ? loop(r).first_sig : leaf(r).sig; }
  uint32_t body_len(UnitRef r) const { return is_loop(r) ? uint32_t(loop(r).body.size()) : 0; }

  // Same structure: same leaves in the same loops (counts and values aside).
  bool same_shape(UnitRef a, UnitRef b) const;
  // Moves the open occurrence of a loop into its finished counts.
  void close(UnitRef r);
  // Appends src's occurrences after dst's (same shape), then releases src.
  void merge(UnitRef dst, UnitRef src);

  // Appends a unit (pre-order) to a stream; a loop's open occurrence counts.
  void emit(UnitRef r, Stream& out) const;
  size_t memory_bytes() const;
  bool lossless() const { return lossless_; }

 private:
  void merge_leaf(uint32_t dst, uint32_t src);
  Leaf make_leaf(uint32_t index, Stream& out) const;

  bool lossless_;
  StablePool<LeafUnit> leaves_;
  StablePool<ExactTimes> exact_;  // lossless only, same indices as leaves_
  StablePool<LoopUnit> loops_;
  std::vector<uint32_t> free_leaves_, free_loops_;
  std::vector<UnitRef> scratch_;  // release() work list
  struct MergePair {
    UnitRef dst, src;
  };
  std::vector<MergePair> merge_work_;
};

// A sample on its own as a stream position (events not folded yet).
Leaf leaf_of_sample(const Sample& s, bool lossless, SeqArena& values);

}  // namespace mpior::trace::fold
