// Online values of one Param (an argument, return value, errno, exact time or
// loop count over a trace position's occurrences), for the stream builder's
// hot path. The common cases, a value that never changes or changes by a
// fixed stride, cost one comparison per value and no allocation; anything
// else is folded by a SeqBuilder, allocated the first time a run breaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "trace/value_seq.hpp"

namespace mpior::trace {

class ValueFolder {
 public:
  ValueFolder() = default;
  ValueFolder(const ValueFolder& o);
  ValueFolder& operator=(const ValueFolder& o);
  ValueFolder(ValueFolder&&) noexcept = default;
  ValueFolder& operator=(ValueFolder&&) noexcept = default;

  void append(int64_t v) {
    if (v == next_ && run_ >= 2 && run_ < kMaxRun) {
      ++run_;
      next_ += stride_;
      return;
    }
    append_slow(v);
  }
  // Appends every value of o, in order, folding structurally (cost follows
  // o's folded size, not its length).
  void append_all(const ValueFolder& o);
  // Forgets the values; keeps the allocated capacity for reuse.
  void clear();

  uint64_t length() const { return (seq_ ? seq_->length() : 0) + run_; }
  bool empty() const { return length() == 0; }
  // The run goes on for n more values (FastRow's deferred appends).
  void extend_run(uint32_t n) {
    run_ += n;
    next_ += int64_t(n) * stride_;
  }
  // How many more values may continue the run in place (0 unless the run
  // has a stride yet), the value that would and the stride.
  uint32_t run_room() const { return run_ >= 2 ? kMaxRun - run_ : 0; }
  // The last values make a run worth predicting: a repeat, or three on a stride.
  bool on_run() const { return run_ >= 3 || (run_ == 2 && stride_ == 0); }
  int64_t next_value() const { return next_; }
  int64_t stride() const { return stride_; }

  // The values (and `more` values continuing the run) as a folded sequence
  // in the arena (nothing for "always 0").
  SeqRef emit(SeqArena& arena, uint32_t more = 0) const;
  // Same, with one more value at the end (a loop's open occurrence).
  SeqRef emit_with(SeqArena& arena, int64_t last) const;
  size_t heap_bytes() const;

 private:
  static constexpr uint32_t kMaxRun = 0xFFFFFFFFu;
  // Folding window of the sequence: a value pattern repeats once it is found
  // within this many top-level groups (say, offsets of an inner loop whose
  // trip count cycles through a few values).
  static constexpr unsigned kSeqWindow = 8;
  int64_t first() const { return next_ - int64_t(run_) * stride_; }
  void set_run(int64_t first, int64_t stride, uint32_t run) {
    stride_ = stride;
    run_ = run;
    next_ = first + int64_t(run) * stride;
  }
  void append_slow(int64_t v);
  SeqBuilder& seq();
  bool has_seq() const { return seq_ && seq_->length() != 0; }
  void flush_run();

  // Values are the SeqBuilder's (if any) followed by the run of run_ values
  // first(), first() + stride_, ...; next_ is the value that would continue it.
  int64_t next_ = 0;
  int64_t stride_ = 0;
  uint32_t run_ = 0;
  std::unique_ptr<SeqBuilder> seq_;
};

}  // namespace mpior::trace
