#include "trace/fold_values.hpp"

namespace mpior::trace {

ValueFolder::ValueFolder(const ValueFolder& o) : next_(o.next_), stride_(o.stride_), run_(o.run_) {
  if (o.seq_) seq_ = std::make_unique<SeqBuilder>(*o.seq_);
}

ValueFolder& ValueFolder::operator=(const ValueFolder& o) {
  if (this == &o) return *this;
  next_ = o.next_;
  stride_ = o.stride_;
  run_ = o.run_;
  if (!o.seq_) {
    if (seq_) seq_->clear_keep_capacity();
  } else if (seq_) {
    *seq_ = *o.seq_;  // vector assignment reuses the capacity
  } else {
    seq_ = std::make_unique<SeqBuilder>(*o.seq_);
  }
  return *this;
}

SeqBuilder& ValueFolder::seq() {
  if (!seq_) seq_ = std::make_unique<SeqBuilder>(kSeqWindow);
  return *seq_;
}

void ValueFolder::flush_run() {
  if (run_ == 0) return;
  seq().append_run(first(), stride_, run_);
  run_ = 0;
}

// Keeps the run as long as the values stay on one stride. A run of two
// unequal values says nothing about a stride yet, so when a third breaks it
// only the first leaves (as SeqBuilder would fold it: three in a row make a
// strided run, a pair does not).
void ValueFolder::append_slow(int64_t v) {
  if (run_ == 0) return set_run(v, 0, 1);
  if (run_ == 1) return set_run(first(), v - first(), 2);
  if (run_ == 2 && stride_ != 0 && v != next_) {
    int64_t second = first() + stride_;
    seq().append(first());
    return set_run(second, v - second, 2);
  }
  flush_run();
  set_run(v, 0, 1);
}

void ValueFolder::append_all(const ValueFolder& o) {
  if (o.empty()) return;
  if (empty()) {
    *this = o;
    return;
  }
  if (o.has_seq()) {
    flush_run();
    const SeqBuilder& src = *o.seq_;
    const auto& items = src.items_;
    const auto& tops = src.tops_;
    for (size_t i = 0; i < tops.size(); ++i) {
      size_t end = i + 1 < tops.size() ? tops[i + 1] : items.size();
      seq().append_group({items.data() + tops[i], end - tops[i]});
    }
    set_run(o.first(), o.stride_, o.run_);
    return;
  }
  // o is one run: continue ours when it is the same run going on.
  if (o.run_ <= 2) {
    append(o.first());
    if (o.run_ == 2) append(o.first() + o.stride_);
    return;
  }
  if (run_ == 1 && o.first() - first() == o.stride_ && uint64_t(o.run_) + 1 < kMaxRun)
    return set_run(first(), o.stride_, o.run_ + 1);
  if (run_ >= 2 && o.first() == next_ && o.stride_ == stride_ && uint64_t(run_) + o.run_ < kMaxRun)
    return set_run(first(), stride_, run_ + o.run_);
  flush_run();
  set_run(o.first(), o.stride_, o.run_);
}

void ValueFolder::clear() {
  run_ = 0;
  next_ = stride_ = 0;
  if (seq_) seq_->clear_keep_capacity();
}

SeqRef ValueFolder::emit(SeqArena& arena, uint32_t more) const {
  const uint32_t run = run_ + more;
  if (!has_seq() && (run <= 1 || stride_ == 0)) return arena.add_scalar(first());
  SeqBuilder b = seq_ ? *seq_ : SeqBuilder(kSeqWindow);
  b.append_run(first(), stride_, run);
  return arena.add(b.items());
}

SeqRef ValueFolder::emit_with(SeqArena& arena, int64_t last) const {
  ValueFolder copy(*this);
  copy.append(last);
  return copy.emit(arena);
}

size_t ValueFolder::heap_bytes() const { return seq_ ? sizeof(SeqBuilder) + seq_->memory_bytes() : 0; }

}  // namespace mpior::trace
